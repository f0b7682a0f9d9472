// node ort_outputs.js MODEL.onnx OUT.json: runs a model whose inputs all have initializers (a
// SameDiff graph's constants and placeholders with values) in onnxruntime (CPU) and writes every
// output as {name: {dims, type, data}}, or {"error": ...}.
const fs = require('fs');
const path = require('path');
const ort = require(path.join(__dirname, '..', 'js', 'node_modules', 'onnxruntime-node'));

(async () => {
  try {
    const s = await ort.InferenceSession.create(process.argv[2]);
    const out = await s.run({});
    const res = {};
    for (const n of s.outputNames) {
      const t = out[n];
      res[n] = { dims: t.dims, type: t.type, data: Array.from(t.data, (x) => (typeof x === 'bigint' ? Number(x) : x)) };
    }
    fs.writeFileSync(process.argv[3], JSON.stringify(res));
  } catch (e) {
    fs.writeFileSync(process.argv[3], JSON.stringify({ error: String(e.message || e) }));
  }
})();
