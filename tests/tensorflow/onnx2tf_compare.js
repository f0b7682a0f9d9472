// Runs ONNX models in onnxruntime-node and their conversions (TF.js graph models written by
// `amanda convert X.onnx -o DIR/model.json`) in TF.js (pure-JS CPU backend) on the same inputs and
// compares every output (tests/tensorflow/onnx2tf_ops_test.py, onnx2tf_models_test.py).
//   node onnx2tf_compare.js JOBS.json
// JOBS.json: [{"id", "onnx", "tfjs", "inputs": [{"name", "dtype", "shape", "file"}]}] (raw
// little-endian data; int64 inputs are given to TF.js as int32). Prints a JSON array, per job:
// {"id", "outputs": n, "max_abs", "max_rel" (|x - y| / max(1, |x|)), "max_ref", "nonzero",
//  "mismatches" (integer/bool elements that differ), "tfjs_ms"} or {"id", "error"}.
const fs = require('fs');
const path = require('path');
const ort = require(path.join(__dirname, '../js/node_modules/onnxruntime-node'));
const tf = require(path.join(__dirname, 'js/node_modules/@tensorflow/tfjs'));

const ARRAYS = {float32: Float32Array, float64: Float64Array, int32: Int32Array, int64: BigInt64Array, bool: Uint8Array, uint8: Uint8Array, int8: Int8Array};

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
  return {json, artifacts: {modelTopology: json.modelTopology, weightSpecs: specs,
                            weightData: all.buffer.slice(all.byteOffset, all.byteOffset + all.byteLength),
                            format: json.format, generatedBy: json.generatedBy, convertedBy: json.convertedBy,
                            signature: json.signature}};
}

function load(input) {
  const b = fs.readFileSync(input.file);
  const A = ARRAYS[input.dtype];
  return new A(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
}

async function runJob(job) {
  const feedsOrt = {};
  const feedsTf = {};
  const {json, artifacts} = readModel(job.tfjs);
  const sig = json.signature || {};
  for (const i of job.inputs) {
    const data = load(i);
    feedsOrt[i.name] = new ort.Tensor(i.dtype === 'bool' ? 'bool' : i.dtype, i.dtype === 'bool' ? Uint8Array.from(data) : data, i.shape);
    const tname = ((sig.inputs || {})[i.name] || {}).name || i.name;
    let tfdata = data, tfdtype = i.dtype;
    if (i.dtype === 'int64') { tfdata = Int32Array.from(data, (v) => Number(v)); tfdtype = 'int32'; }
    if (i.dtype === 'float64') { tfdata = Float32Array.from(data); tfdtype = 'float32'; }
    if (i.dtype === 'bool') { tfdata = Uint8Array.from(data); tfdtype = 'bool'; }
    feedsTf[tname.replace(/:0$/, '')] = tf.tensor(tfdata, i.shape, tfdtype);
  }
  const session = await ort.InferenceSession.create(job.onnx);
  const ref = await session.run(feedsOrt);
  const model = await tf.loadGraphModel(tf.io.fromMemory(artifacts));
  const names = session.outputNames;
  const tnames = names.map((n) => ((sig.outputs || {})[n] || {}).name || n);
  const t0 = process.cpuUsage();
  let outs = await model.executeAsync(feedsTf, tnames);
  const c = process.cpuUsage(t0);
  if (!Array.isArray(outs)) outs = [outs];
  let maxAbs = 0, maxRel = 0, maxRef = 0, nonzero = 0, mismatches = 0;
  for (let k = 0; k < names.length; ++k) {
    const r = ref[names[k]];
    const o = outs[k];
    const rs = Array.from(r.dims).map(Number);
    if (JSON.stringify(rs) !== JSON.stringify(o.shape)) throw new Error(`${names[k]}: shape ${JSON.stringify(o.shape)}, onnxruntime's ${JSON.stringify(rs)}`);
    const got = await o.data();
    const isFloat = r.type === 'float32' || r.type === 'float64';
    for (let i = 0; i < r.data.length; ++i) {
      const x = Number(r.data[i]);
      const y = Number(got[i]);
      if (x !== 0) ++nonzero;
      maxRef = Math.max(maxRef, Math.abs(x));
      if (isFloat) {
        if (Number.isNaN(x) && Number.isNaN(y)) continue;
        const d = Math.abs(x - y);
        if (Number.isNaN(d)) { maxAbs = Infinity; maxRel = Infinity; continue; }
        maxAbs = Math.max(maxAbs, d);
        maxRel = Math.max(maxRel, d / Math.max(1, Math.abs(x)));
      } else if (x !== y) {
        ++mismatches;
      }
    }
  }
  return {id: job.id, outputs: names.length, max_abs: maxAbs, max_rel: maxRel, max_ref: maxRef, nonzero, mismatches,
          tfjs_ms: (c.user + c.system) / 1e3};
}

async function main() {
  await tf.setBackend('cpu');
  const jobs = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  const results = [];
  for (const job of jobs) {
    try {
      results.push(await runJob(job));
    } catch (e) {
      results.push({id: job.id, error: String(e && e.message ? e.message : e).slice(0, 500)});
    }
  }
  process.stdout.write(JSON.stringify(results));
}
main().catch((e) => { console.error(e); process.exit(2); });
