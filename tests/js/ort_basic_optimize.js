// onnxruntime's basic-level graph optimizer as the peer of `amanda optimize` (tests/passes/peer.py):
// for each model, creates a session with graphOptimizationLevel 'basic' and optimizedModelFilePath,
// which makes onnxruntime write the graph it optimized, and times the session creation.
//   node ort_basic_optimize.js MODEL.onnx OUT.onnx [MODEL.onnx OUT.onnx ...]
// Prints one JSON array: [{"model", "out", "seconds", "cpu_seconds"} | {"model", "error"}]. Each
// creation is timed once after a warm-up creation of the first model (the first creation in a process
// also loads onnxruntime's libraries): wall time, and the CPU time of the whole process (every
// thread, user + system) over the creation.
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
      const c0 = process.cpuUsage();
      const t0 = process.hrtime.bigint();
      const s = await ort.InferenceSession.create(model, { graphOptimizationLevel: 'basic', optimizedModelFilePath: out });
      const t1 = process.hrtime.bigint();
      const c = process.cpuUsage(c0);
      results.push({ model, out, seconds: Number(t1 - t0) / 1e9, cpu_seconds: (c.user + c.system) / 1e6 });
      await s.release();
    } catch (e) {
      results.push({ model, error: String(e.message || e) });
    }
  }
  console.log(JSON.stringify(results));
})();
