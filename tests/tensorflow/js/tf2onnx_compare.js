// A TensorFlow graph converted to ONNX by `amanda convert` computes what TF.js computes: the TF.js
// model (the reference, TF.js's pure-JS CPU backend, loaded with tf.io.fromMemory) and the ONNX
// model (onnxruntime-node) run on the same deterministic random inputs, and every output must agree
// within `tol` relative to max(1, |x|), with the same shape; integer outputs exactly.
//
//   node tf2onnx_compare.js model MODEL.json MODEL.onnx        the signature's inputs, seeds 1 and 2
//   node tf2onnx_compare.js cases CASES.json                   per-op cases: [{name, tfjs, onnx, inputs:
//                                                              [{name, shape, dtype}]}], one line each
// Prints one JSON line per model/case: {name, ok, max_diff, values, nonzero, error}. Exit 1 when any
// is not ok (a model whose outputs are all zero is not ok: the comparison would prove nothing).
const fs = require('fs');
const path = require('path');
const tf = require('@tensorflow/tfjs');
const ort = require(path.join(__dirname, '../../js/node_modules/onnxruntime-node'));

const tol = parseFloat(process.env.TF2ONNX_TOL || '1e-4');

function readModel(file) {
  const json = JSON.parse(fs.readFileSync(file, 'utf8'));
  const dir = path.dirname(file);
  const specs = [];
  const buffers = [];
  for (const group of json.weightsManifest || []) {
    for (const p of group.paths) buffers.push(fs.readFileSync(path.join(dir, p)));
    specs.push(...group.weights);
  }
  const all = Buffer.concat(buffers);
  const weightData = all.buffer.slice(all.byteOffset, all.byteOffset + all.byteLength);
  return {json, artifacts: {modelTopology: json.modelTopology, weightSpecs: specs, weightData,
                            format: json.format, generatedBy: json.generatedBy, convertedBy: json.convertedBy,
                            signature: json.signature, userDefinedMetadata: json.userDefinedMetadata}};
}

function rng(seed) {  // mulberry32, as tfjs_run.js
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6D2B79F5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function signatureInputs(json) {
  const sig = (json.signature || (json.userDefinedMetadata || {}).signature || {}).inputs || {};
  return Object.entries(sig).map(([key, info]) => ({
    name: info.name || key,
    shape: ((info.tensorShape || {}).dim || []).map(d => Math.max(1, parseInt(d.size, 10))),
    dtype: String(info.dtype).replace('DT_', '').toLowerCase().replace('float', 'float32').replace('float3232', 'float32'),
  }));
}

function makeInputs(specs, seed) {
  const next = rng(seed);
  const out = [];
  for (const s of specs) {
    const n = s.shape.reduce((a, b) => a * b, 1);
    let data;
    if (s.dtype === 'uint8') data = Uint8Array.from({length: n}, () => Math.floor(next() * 256));
    else if (s.dtype === 'int32') data = Int32Array.from({length: n}, () => Math.floor(next() * (s.range || 256)) + (s.low || 0));
    else if (s.dtype === 'bool') data = Uint8Array.from({length: n}, () => (next() < 0.5 ? 1 : 0));
    else data = Float32Array.from({length: n}, () => (s.low !== undefined ? s.low + next() * s.range : next() * 2 - 1));
    out.push({...s, data});
  }
  return out;
}

const tfName = n => (n.includes(':') ? n : n + ':0');

// Samplers (random ops): no two implementations draw the same numbers, so the outputs are compared
// as distributions: same shape and dtype, means within 5 standard errors of each other (0.05 of
// the spread at least), spreads within 5%; integer outputs (class indices, uniform
// integers) by the frequency of each value, within 0.02 of each other.
function compareSamples(label, wd, hd, exact) {
  const a = Array.from(wd, Number), b = Array.from(hd, Number);
  const stats = v => {
    const m = v.reduce((s, x) => s + x, 0) / v.length;
    const sd = Math.sqrt(v.reduce((s, x) => s + (x - m) * (x - m), 0) / v.length);
    return {m, sd, lo: Math.min(...v), hi: Math.max(...v)};
  };
  const sa = stats(a), sb = stats(b);
  if (!(sa.sd > 0)) throw new Error(`${label}: TF.js's samples are all equal (${sa.m}): nothing to compare`);
  const se = Math.max(sa.sd / Math.sqrt(a.length), 0.01 * sa.sd);
  if (Math.abs(sa.m - sb.m) > Math.max(5 * Math.SQRT2 * se, 0.05 * sa.sd) || Math.abs(sa.sd - sb.sd) > 0.05 * sa.sd)
    throw new Error(`${label}: mean/sd ${sa.m.toFixed(4)}/${sa.sd.toFixed(4)} (TF.js) vs ${sb.m.toFixed(4)}/${sb.sd.toFixed(4)} (onnxruntime)`);
  if (exact) {
    const freq = v => { const f = new Map(); for (const x of v) f.set(x, (f.get(x) || 0) + 1 / v.length); return f; };
    const fa = freq(a), fb = freq(b);
    for (const k of new Set([...fa.keys(), ...fb.keys()]))
      if (Math.abs((fa.get(k) || 0) - (fb.get(k) || 0)) > 0.02)
        throw new Error(`${label}: value ${k} drawn ${(fa.get(k) || 0).toFixed(3)} (TF.js) vs ${(fb.get(k) || 0).toFixed(3)} (onnxruntime) of the time`);
  }
  return Math.abs(sa.m - sb.m) / Math.max(1, sa.sd);
}

async function compare(name, tfjsFile, onnxFile, specs, seeds, samples) {
  const {artifacts} = readModel(tfjsFile);
  const model = await tf.loadGraphModel(tf.io.fromMemory(artifacts));
  const session = await ort.InferenceSession.create(onnxFile);
  let maxDiff = 0, values = 0, nonzero = 0;
  for (const seed of seeds) {
    const inputs = makeInputs(specs, seed);
    const feeds = {}, ortFeeds = {};
    for (const i of inputs) {
      // (TF.js has no uint8 tensors: an image input is fed as int32, as TF.js's own callers do)
      feeds[i.name.replace(/:0$/, '')] = i.dtype === 'uint8' ? tf.tensor(Int32Array.from(i.data), i.shape, 'int32')
          : tf.tensor(i.dtype === 'bool' ? Array.from(i.data, x => !!x) : i.data, i.shape, i.dtype);
      const onnxName = session.inputNames.find(n => n === tfName(i.name) || n === i.name);
      if (!onnxName) throw new Error(`input ${i.name}: the ONNX model has ${session.inputNames}`);
      ortFeeds[onnxName] = new ort.Tensor(i.dtype === 'int32' ? 'int32' : i.dtype === 'bool' ? 'bool' : i.dtype === 'uint8' ? 'uint8' : 'float32',
                                          i.dtype === 'bool' ? Uint8Array.from(i.data) : i.data, i.shape);
    }
    const names = session.outputNames;
    let outs = await model.executeAsync(feeds, names.map(n => n.replace(/:0$/, '')));
    if (!Array.isArray(outs)) outs = [outs];
    const got = await session.run(ortFeeds);
    for (let k = 0; k < names.length; ++k) {
      const want = outs[k], have = got[names[k]];
      const wd = await want.data();
      if (JSON.stringify(want.shape) !== JSON.stringify(Array.from(have.dims).map(Number)))
        throw new Error(`${names[k]}: shape ${JSON.stringify(want.shape)} (TF.js) vs ${JSON.stringify(Array.from(have.dims).map(Number))} (onnxruntime)`);
      const hd = have.data;
      const exact = want.dtype === 'int32' || want.dtype === 'bool';
      if (samples) {
        if (want.dtype !== (have.type === 'int64' ? 'int32' : have.type)) throw new Error(`${names[k]}: dtype ${want.dtype} (TF.js) vs ${have.type} (onnxruntime)`);
        maxDiff = Math.max(maxDiff, compareSamples(names[k], wd, hd, exact));
        values += wd.length;
        nonzero += wd.filter(x => x !== 0).length;
        continue;
      }
      for (let i = 0; i < wd.length; ++i) {
        const x = Number(wd[i]), y = Number(hd[i]);
        values++;
        if (x !== 0) nonzero++;
        if (Number.isNaN(x) && Number.isNaN(y)) continue;
        const d = Math.abs(x - y) / Math.max(1, Math.abs(x));
        if (exact && x !== y) throw new Error(`${names[k]}[${i}]: ${x} (TF.js) vs ${y} (onnxruntime)`);
        if (!(d <= maxDiff)) maxDiff = Number.isNaN(d) ? Infinity : d;
      }
    }
  }
  model.dispose();
  const ok = (samples || maxDiff <= tol) && nonzero > 0;
  return {name, ok, max_diff: maxDiff, values, nonzero, error: ok ? undefined : nonzero ? `max difference ${maxDiff} > ${tol}` : 'every expected output is zero'};
}

async function main() {
  await tf.setBackend('cpu');
  const [cmd, ...args] = process.argv.slice(2);
  const results = [];
  if (cmd === 'model') {
    const {json} = readModel(args[0]);
    results.push(await compare(path.basename(args[0]), args[0], args[1], signatureInputs(json), [1, 2])
                     .catch(e => ({name: args[0], ok: false, error: String(e.message || e)})));
  } else if (cmd === 'cases') {
    const dir = path.dirname(args[0]);
    for (const c of JSON.parse(fs.readFileSync(args[0], 'utf8'))) {
      results.push(await compare(c.name, path.join(dir, c.tfjs), path.join(dir, c.onnx), c.inputs, [1, 2], c.samples)
                       .catch(e => ({name: c.name, ok: false, error: String(e.stack || e).split("\n").slice(0, 3).join(" | ")})));
    }
  } else {
    console.error('usage: tf2onnx_compare.js model MODEL.json MODEL.onnx | cases CASES.json');
    process.exit(2);
  }
  for (const r of results) console.log(JSON.stringify(r));
  process.exit(results.every(r => r.ok) ? 0 : 1);
}

main().catch(e => { console.error(e.stack || String(e)); process.exit(1); });
