// onnxruntime's basic-level graph optimizer as the peer of `amanda optimize` (tests/passes/peer.py):
// for each model, creates a session with graphOptimizationLevel 'basic' and optimizedModelFilePath,
// which makes onnxruntime write the graph it optimized, and times the session creation.
//   node ort_basic_optimize.js MODEL.onnx OUT.onnx [MODEL.onnx OUT.onnx ...]
// Prints one JSON array: [{"model", "out", "seconds"} | {"model", "error"}]. Each creation is timed
// once after a warm-up creation of the first model (the first creation in a process also loads
// onnxruntime's libraries).
const ort = require('onnxruntime-node');

(async () => {
  const args = process.argv.slice(2);
  const results = [];
  if (args.length >= 2) {
    try {
      await ort.InferenceSession.create(args[0], { graphOptimizationLevel: 'disabled' });
    } catch (e) { /* reported below */ }
  }
  for (let i = 0; i + 1 < args.length; i += 2) {
    const model = args[i], out = args[i + 1];
    try {
      const t0 = process.hrtime.bigint();
      await ort.InferenceSession.create(model, { graphOptimizationLevel: 'basic', optimizedModelFilePath: out });
      const t1 = process.hrtime.bigint();
      results.push({ model, out, seconds: Number(t1 - t0) / 1e9 });
    } catch (e) {
      results.push({ model, error: String(e.message || e) });
    }
  }
  console.log(JSON.stringify(results));
})();
