// Times one ONNX model in onnxruntime-node: node ort_speed.js MODEL THREADS REPEAT
// Feeds random float32 inputs of the declared shapes (dynamic dimensions = 1); prints
// {"best_s": ..., "runs": N} after one warm-up run.
const path = require('path');
const ort = require(process.env.AMANDA_ORT_NODE_MODULES
  ? path.join(process.env.AMANDA_ORT_NODE_MODULES, 'onnxruntime-node')
  : path.join(__dirname, '..', 'js', 'node_modules', 'onnxruntime-node'));

(async () => {
  const [model, threads, repeat] = [process.argv[2], parseInt(process.argv[3], 10), parseInt(process.argv[4], 10)];
  const s = await ort.InferenceSession.create(model, { intraOpNumThreads: threads, interOpNumThreads: 1 });
  const feeds = {};
  for (const name of s.inputNames) {
    const meta = (s.inputMetadata || []).find ? s.inputMetadata.find((m) => m.name === name) : null;
    const dims = meta && meta.shape ? meta.shape.map((d) => (typeof d === 'number' && d > 0 ? d : 1)) : [1, 3, 224, 224];
    const n = dims.reduce((a, b) => a * b, 1);
    const data = new Float32Array(n);
    for (let i = 0; i < n; i++) data[i] = Math.random() * 2 - 1;
    feeds[name] = new ort.Tensor('float32', data, dims);
  }
  await s.run(feeds);
  let best = Infinity;
  for (let r = 0; r < repeat; r++) {
    const t0 = process.hrtime.bigint();
    await s.run(feeds);
    best = Math.min(best, Number(process.hrtime.bigint() - t0) / 1e9);
  }
  console.log(JSON.stringify({ best_s: best, runs: repeat }));
})();
