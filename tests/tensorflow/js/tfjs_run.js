// Runs TF.js graph models with TF.js itself (pure-JavaScript CPU backend: no native addon, nothing
// downloaded), each loaded from memory through tf.io.fromMemory (model.json + its shards read
// here), on deterministic random inputs of the signature's shapes (-1 -> 1), and prints the
// outputs as JSON: {model: {output: {shape, dtype, data}}}. Also times the load.
//
//   node tfjs_run.js run DIR/model.json [SEED]      outputs of one model
//   node tfjs_run.js load-time DIR/a.json ...       TF.js's own load (read + parse + weights), CPU ms
//   node tfjs_run.js same A/model.json B/model.json  exit 0 when both give the same outputs (bit for
//                                                   bit, on two seeds), and they are not all zero
const fs = require('fs');
const path = require('path');
const tf = require('@tensorflow/tfjs');

function readModel(file) {
  const json = JSON.parse(fs.readFileSync(file, 'utf8'));
  const dir = path.dirname(file);
  const specs = [];
  const buffers = [];
  for (const group of json.weightsManifest) {
    for (const p of group.paths) buffers.push(fs.readFileSync(path.join(dir, p)));
    specs.push(...group.weights);
  }
  const all = Buffer.concat(buffers);
  const weightData = all.buffer.slice(all.byteOffset, all.byteOffset + all.byteLength);
  return {json, artifacts: {modelTopology: json.modelTopology, weightSpecs: specs, weightData,
                            format: json.format, generatedBy: json.generatedBy, convertedBy: json.convertedBy,
                            signature: json.signature, userDefinedMetadata: json.userDefinedMetadata}};
}

// A small deterministic generator (mulberry32): the same inputs in every run.
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6D2B79F5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function inputsOf(model, json) {
  const sig = (json.signature || (json.userDefinedMetadata || {}).signature || {}).inputs;
  const out = [];
  if (sig) {
    for (const [key, info] of Object.entries(sig)) {
      const shape = ((info.tensorShape || {}).dim || []).map(d => Math.max(1, parseInt(d.size, 10)));
      out.push({name: info.name || key, shape, dtype: info.dtype});
    }
  } else {
    for (const i of model.inputs) out.push({name: i.name, shape: i.shape.map(d => (d == null || d < 0 ? 1 : d)), dtype: i.dtype});
  }
  return out;
}

async function run(file, seed) {
  const {json, artifacts} = readModel(file);
  const model = await tf.loadGraphModel(tf.io.fromMemory(artifacts));
  const next = rng(seed);
  const feeds = {};
  for (const i of inputsOf(model, json)) {
    const n = i.shape.reduce((a, b) => a * b, 1);
    const dt = String(i.dtype).replace('DT_', '').toLowerCase();
    if (dt === 'int32' || dt === 'uint8') {
      feeds[i.name] = tf.tensor(Int32Array.from({length: n}, () => Math.floor(next() * 256)), i.shape, 'int32');
    } else {
      feeds[i.name] = tf.tensor(Float32Array.from({length: n}, () => next()), i.shape, 'float32');
    }
  }
  const names = model.outputs.map(o => o.name);
  let outs = await model.executeAsync(feeds, names);
  if (!Array.isArray(outs)) outs = [outs];
  const result = {};
  for (let k = 0; k < names.length; ++k) result[names[k]] = {shape: outs[k].shape, dtype: outs[k].dtype, data: Array.from(await outs[k].data())};
  return result;
}

async function main() {
  await tf.setBackend('cpu');
  const [cmd, ...args] = process.argv.slice(2);
  if (cmd === 'run') {
    process.stdout.write(JSON.stringify(await run(args[0], parseInt(args[1] || '1', 10))));
  } else if (cmd === 'same') {
    for (const seed of [1, 2]) {
      const a = await run(args[0], seed), b = await run(args[1], seed);
      const names = Object.keys(a);
      if (JSON.stringify(names) !== JSON.stringify(Object.keys(b))) throw new Error('different outputs: ' + names + ' vs ' + Object.keys(b));
      let nonzero = 0, values = 0;
      for (const n of names) {
        if (JSON.stringify(a[n].shape) !== JSON.stringify(b[n].shape) || a[n].dtype !== b[n].dtype)
          throw new Error(`${n}: shape/dtype ${a[n].shape} ${a[n].dtype} vs ${b[n].shape} ${b[n].dtype}`);
        for (let i = 0; i < a[n].data.length; ++i) {
          const x = a[n].data[i], y = b[n].data[i];
          if (!(Object.is(x, y) || (Number.isNaN(x) && Number.isNaN(y)))) throw new Error(`${n}[${i}]: ${x} vs ${y}`);
          nonzero += x !== 0;
        }
        values += a[n].data.length;
      }
      if (nonzero === 0) throw new Error('every output is zero: the comparison would prove nothing');
      console.log(`seed ${seed}: ${names.length} outputs, ${values} values identical (${nonzero} nonzero)`);
    }
  } else if (cmd === 'load-time') {
    const times = {};
    for (const f of args) {
      let best = Infinity;
      for (let r = 0; r < 5; ++r) {
        // CPU time (user + system), as the Amanda side is measured: a loaded machine distorts
        // wall time.
        const c0 = process.cpuUsage();
        const {artifacts} = readModel(f);
        const m = await tf.loadGraphModel(tf.io.fromMemory(artifacts));
        const c = process.cpuUsage(c0);
        best = Math.min(best, (c.user + c.system) / 1e3);
        m.dispose();
      }
      times[path.basename(f, '.json')] = best;
    }
    process.stdout.write(JSON.stringify(times));
  } else {
    console.error('usage: tfjs_run.js run MODEL.json [SEED] | load-time MODEL.json...');
    process.exit(2);
  }
}

main().catch(e => { console.error(e.stack || String(e)); process.exit(1); });
