// Runs ONNX models in onnxruntime (CPU) on given float32 inputs and writes the outputs.
//   node ort_run.js JOBS.json
// JOBS.json: [{"model": "m.onnx", "inputs": {"name": {"file": "x.bin", "shape": [1, 3, 224, 224]}}, "out": "prefix"}]
// For each job, output k goes to PREFIX.k.bin (float32 little-endian) and its shape to PREFIX.json;
// a failure goes to PREFIX.json as {"error": ...}. One process for many models keeps it fast.
const fs = require('fs');
const ort = require('onnxruntime-node');

(async () => {
  const jobs = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  for (const job of jobs) {
    try {
      const s = await ort.InferenceSession.create(job.model, { graphOptimizationLevel: 'disabled' });
      const feeds = {};
      for (const [name, x] of Object.entries(job.inputs)) {
        const buf = fs.readFileSync(x.file);
        const data = new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4);
        feeds[name] = new ort.Tensor('float32', Float32Array.from(data), x.shape);
      }
      const out = await s.run(feeds);
      const shapes = [];
      s.outputNames.forEach((n, k) => {
        const t = out[n];
        shapes.push({ name: n, shape: t.dims, type: t.type });
        fs.writeFileSync(`${job.out}.${k}.bin`, Buffer.from(Float32Array.from(t.data, Number).buffer));
      });
      fs.writeFileSync(`${job.out}.json`, JSON.stringify({ outputs: shapes }));
    } catch (e) {
      fs.writeFileSync(`${job.out}.json`, JSON.stringify({ error: String(e.message || e) }));
    }
  }
})();
