// Runs ONNX models in onnxruntime (CPU) on given inputs of any numeric or bool type and writes the
// outputs as they are (ort_run.js converts everything to float32; the per-op PyTorch tests need
// int64 indices, bool masks and exact integer results).
//   node ort_run_typed.js JOBS.json
// JOBS.json: [{"model": "m.onnx", "inputs": {"name": {"file": "x.bin", "shape": [2, 3], "type": "int64"}}, "out": "prefix"}]
// ("type" defaults to float32; files are raw little-endian data, bool one byte per element.)
// For each job, output k goes to PREFIX.k.bin (its own type, raw) and names, types and shapes to
// PREFIX.json; a failure goes to PREFIX.json as {"error": ...}. One process for many models.
const fs = require('fs');
const ort = require('onnxruntime-node');

const ARRAYS = {
  float32: Float32Array, float64: Float64Array, int8: Int8Array, uint8: Uint8Array, int16: Int16Array,
  int32: Int32Array, int64: BigInt64Array, bool: Uint8Array,
};

function load(x) {
  const type = x.type || 'float32';
  const A = ARRAYS[type];
  if (!A) throw new Error(`input type ${type} is not supported here`);
  const buf = fs.readFileSync(x.file);
  const n = x.shape.reduce((a, b) => a * b, 1);
  const data = new A(n);
  new Uint8Array(data.buffer).set(new Uint8Array(buf.buffer, buf.byteOffset, n * A.BYTES_PER_ELEMENT));
  return new ort.Tensor(type, type === 'bool' ? Uint8Array.from(data) : data, x.shape);
}

function bytes(t) {
  const d = t.data;
  if (t.type === 'bool') return Buffer.from(Uint8Array.from(d, (v) => (v ? 1 : 0)));
  return Buffer.from(d.buffer, d.byteOffset, d.byteLength);
}

(async () => {
  const jobs = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  for (const job of jobs) {
    try {
      const s = await ort.InferenceSession.create(job.model, { graphOptimizationLevel: 'disabled' });
      const feeds = {};
      for (const [name, x] of Object.entries(job.inputs)) feeds[name] = load(x);
      const out = await s.run(feeds);
      const outputs = [];
      s.outputNames.forEach((n, k) => {
        const t = out[n];
        outputs.push({ name: n, shape: t.dims, type: t.type });
        fs.writeFileSync(`${job.out}.${k}.bin`, bytes(t));
      });
      fs.writeFileSync(`${job.out}.json`, JSON.stringify({ outputs }));
    } catch (e) {
      fs.writeFileSync(`${job.out}.json`, JSON.stringify({ error: String(e.message || e) }));
    }
  }
})();
