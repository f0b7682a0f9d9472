// Runs ONNX models in onnxruntime (CPU) on the same random input and prints, per model, the max
// absolute difference of each output from the reference model's.
//   node ort_compare.js REFERENCE.onnx CANDIDATE.onnx [CANDIDATE.onnx ...]
// Prints one JSON object: {"reference": ..., "max_abs_reference": m, "results": [{"model", "max_abs_diff"} | {"model", "error"}]}
// The input is seeded (deterministic); symbolic or unknown dimensions are taken as 1.
const ort = require('onnxruntime-node');

function rng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6D2B79F5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function makeInputs(session, shapes) {
  const r = rng(1234);
  const feeds = {};
  for (const name of session.inputNames) {
    const shape = shapes[name] || [1, 3, 224, 224];
    const n = shape.reduce((a, b) => a * b, 1);
    const data = new Float32Array(n);
    for (let i = 0; i < n; ++i) data[i] = r() * 2 - 1;
    feeds[name] = new ort.Tensor('float32', data, shape);
  }
  return feeds;
}

async function run(path, feeds) {
  const s = await ort.InferenceSession.create(path, { graphOptimizationLevel: 'disabled' });
  const out = await s.run(feeds);
  return s.outputNames.map((n) => out[n].data);
}

(async () => {
  const [ref, ...cands] = process.argv.slice(2);
  const shapes = process.env.AMANDA_INPUT_SHAPES ? JSON.parse(process.env.AMANDA_INPUT_SHAPES) : {};
  const s = await ort.InferenceSession.create(ref, { graphOptimizationLevel: 'disabled' });
  const feeds = makeInputs(s, shapes);
  const base = await run(ref, feeds);
  let maxRef = 0;
  for (const o of base) for (const v of o) maxRef = Math.max(maxRef, Math.abs(Number(v)));
  const results = [];
  for (const c of cands) {
    try {
      const got = await run(c, feeds);
      let d = 0;
      if (got.length !== base.length) throw new Error(`${got.length} outputs, reference has ${base.length}`);
      got.forEach((o, k) => {
        if (o.length !== base[k].length) throw new Error(`output ${k} has ${o.length} elements, reference ${base[k].length}`);
        for (let i = 0; i < o.length; ++i) d = Math.max(d, Math.abs(Number(o[i]) - Number(base[k][i])));
      });
      results.push({ model: c, max_abs_diff: d });
    } catch (e) {
      results.push({ model: c, error: String(e.message || e) });
    }
  }
  console.log(JSON.stringify({ reference: ref, max_abs_reference: maxRef, results }));
})().catch((e) => {
  console.error(e);
  process.exit(2);
});
