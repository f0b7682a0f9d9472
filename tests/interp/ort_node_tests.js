// Runs ONNX backend node tests in onnxruntime-node (CPU) for tests/interp/node_tests.py.
//   node ort_node_tests.js JOBS.json
// JOBS.json: [{"model": "...", "inputs": [{"name", "dtype", "shape", "file"}], "out": "PREFIX"}]
// Numeric inputs are raw little-endian bytes; string inputs a JSON list. Each output k goes to
// PREFIX.k.bin (raw bytes, or JSON for strings); PREFIX.json lists {name, type, dims} or {error}.
const fs = require('fs');
const path = require('path');
const ortPath = process.env.AMANDA_ORT_NODE_MODULES
  ? path.join(process.env.AMANDA_ORT_NODE_MODULES, 'onnxruntime-node')
  : path.join(__dirname, '..', 'js', 'node_modules', 'onnxruntime-node');
const ort = require(ortPath);

const arrays = {
  float32: Float32Array, float64: Float64Array, int8: Int8Array, uint8: Uint8Array, int16: Int16Array,
  uint16: Uint16Array, int32: Int32Array, uint32: Uint32Array, int64: BigInt64Array, uint64: BigUint64Array,
  bool: Uint8Array, float16: Uint16Array,
};

(async () => {
  const jobs = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  const threads = parseInt(process.env.AMANDA_THREADS || '0', 10);
  for (const job of jobs) {
    try {
      const opts = {};
      if (threads > 0) { opts.intraOpNumThreads = threads; opts.interOpNumThreads = 1; }
      const s = await ort.InferenceSession.create(job.model, opts);
      const feeds = {};
      for (const x of job.inputs) {
        if (x.dtype === 'string') {
          feeds[x.name] = new ort.Tensor('string', JSON.parse(fs.readFileSync(x.file, 'utf8')), x.shape);
          continue;
        }
        const A = arrays[x.dtype];
        if (!A) throw new Error(`input ${x.name}: type ${x.dtype} is not supported by this driver`);
        const buf = fs.readFileSync(x.file);
        const copy = new Uint8Array(buf.length);
        copy.set(buf);
        const data = new A(copy.buffer, 0, buf.length / A.BYTES_PER_ELEMENT);
        feeds[x.name] = new ort.Tensor(x.dtype, x.dtype === 'bool' ? Uint8Array.from(data) : data, x.shape);
      }
      const out = await s.run(feeds);
      const meta = [];
      s.outputNames.forEach((n, k) => {
        const t = out[n];
        meta.push({ name: n, type: t.type, dims: t.dims });
        if (t.type === 'string') fs.writeFileSync(`${job.out}.${k}.bin`, JSON.stringify(t.data));
        else fs.writeFileSync(`${job.out}.${k}.bin`, Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength));
      });
      fs.writeFileSync(`${job.out}.json`, JSON.stringify({ outputs: meta }));
    } catch (e) {
      fs.writeFileSync(`${job.out}.json`, JSON.stringify({ error: String(e.message || e) }));
    }
  }
})();
