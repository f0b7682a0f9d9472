// node ort_outputs.js MODEL.onnx OUT.json [FEEDS.json]: runs a model in onnxruntime (CPU) and writes
// every output as {name: {dims, type, data}}, or {"error": ...}. The inputs that have initializers
// (a SameDiff graph's constants) need no feed; FEEDS.json gives the others (its placeholders) as
// {name: {type: "float32" | "int32" | "int64" | "bool", dims, data}}.
const fs = require('fs');
const path = require('path');
const ort = require(path.join(__dirname, '..', 'js', 'node_modules', 'onnxruntime-node'));

(async () => {
  try {
    const s = await ort.InferenceSession.create(process.argv[2]);
    const feeds = {};
    if (process.argv[4]) {
      const kinds = { float32: Float32Array, int32: Int32Array, int64: BigInt64Array, bool: Uint8Array };
      for (const [n, f] of Object.entries(JSON.parse(fs.readFileSync(process.argv[4], 'utf8')))) {
        const data = f.type === 'int64' ? f.data.map((x) => BigInt(x)) : f.data;
        feeds[n] = new ort.Tensor(f.type, kinds[f.type].from(data), f.dims);
      }
    }
    const out = await s.run(feeds);
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
