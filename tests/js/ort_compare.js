// Runs ONNX models in onnxruntime (CPU) on the same random input and prints, per model, the max
// absolute difference of each output from the reference model's.
//   node ort_compare.js REFERENCE.onnx CANDIDATE.onnx [CANDIDATE.onnx ...]
// Prints one JSON object: {"reference": ..., "max_abs_reference": m, "results": [{"model", "max_abs_diff"} | {"model", "error"}]}
// The input is seeded (deterministic); symbolic or unknown dimensions are taken as 1.
//
//   node ort_compare.js --jobs JOBS.json
// Batch mode (tests/mapping/rule_graphs_test.py): many references in one process, each with its own
// inputs. JOBS.json is [{"id", "reference", "candidates": [...], "inputs": {NAME: {"type", "dims",
// "file" (raw little-endian data) | "strings": [...]}}}]. Prints one JSON array, per job:
// {"id", "reference_error"} when onnxruntime cannot run the reference, else {"id", "max_abs_reference",
// "results": [{"model", "max_abs_diff", "mismatches"} | {"model", "error"}]}: max_abs_diff over the
// floating-point outputs (NaN against NaN counts as equal), max_rel_diff = max |x - y| / max(1, |x|), mismatches = elements of the other outputs
// (integers, bools, strings) that differ, or floating-point NaN against a number. Element types and
// dimensions must be the same as the reference's, else the result is an error. A job may also have
// "expected": [{"type", "dims", "file"}, ...] (one per output, in order): the reference outputs used
// when onnxruntime cannot run the reference model (then "expected_used": true); when it can, every
// result also gets "vs_expected" (the same comparison against them) and the job
// "reference_vs_expected" (onnxruntime's own output of the reference against them).
const fs = require('fs');
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

const FLOAT_TYPES = new Set(['float32', 'float64', 'float16']);
const ARRAYS = {
  float32: Float32Array, float64: Float64Array, float16: Uint16Array, int8: Int8Array, uint8: Uint8Array,
  int16: Int16Array, uint16: Uint16Array, int32: Int32Array, uint32: Uint32Array, int64: BigInt64Array,
  uint64: BigUint64Array, bool: Uint8Array,
};

function halfToFloat(h) {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const f = h & 0x3ff;
  if (e === 0) return s * f * 2 ** -24;
  if (e === 31) return f ? NaN : s * Infinity;
  return s * (1 + f / 1024) * 2 ** (e - 15);
}

function loadInput(spec) {
  if (spec.type === 'string') return new ort.Tensor('string', spec.strings, spec.dims);
  const A = ARRAYS[spec.type];
  if (!A) throw new Error(`input type ${spec.type} is not supported here`);
  const buf = fs.readFileSync(spec.file);
  const n = spec.dims.reduce((a, b) => a * b, 1);
  const data = new A(n);
  new Uint8Array(data.buffer).set(new Uint8Array(buf.buffer, buf.byteOffset, n * A.BYTES_PER_ELEMENT));
  return new ort.Tensor(spec.type, data, spec.dims);
}

async function runTensors(path, feeds) {
  const s = await ort.InferenceSession.create(path, { graphOptimizationLevel: 'disabled' });
  try {
    const out = await s.run(feeds);
    return s.outputNames.map((n) => out[n]);
  } finally {
    if (s.release) await s.release();
  }
}

function compareTensors(base, got) {
  if (got.length !== base.length) throw new Error(`${got.length} outputs, reference has ${base.length}`);
  let d = 0;
  let rel = 0;  // max |x - y| / max(1, |x|): the opset sweep's tolerance
  let mismatches = 0;
  base.forEach((b, k) => {
    const o = got[k];
    if (o.type !== b.type) throw new Error(`output ${k} is ${o.type}, reference ${b.type}`);
    if (JSON.stringify(o.dims) !== JSON.stringify(b.dims)) {
      throw new Error(`output ${k} has dims ${JSON.stringify(o.dims)}, reference ${JSON.stringify(b.dims)}`);
    }
    const isFloat = FLOAT_TYPES.has(b.type);
    const conv = b.type === 'float16' ? halfToFloat : (x) => x;
    for (let i = 0; i < b.data.length; ++i) {
      const x = conv(b.data[i]);
      const y = conv(o.data[i]);
      if (isFloat) {
        const xn = Number.isNaN(x);
        const yn = Number.isNaN(y);
        if (xn || yn) {
          if (xn !== yn) ++mismatches;
        } else if (x !== y) {
          const e = Math.abs(x - y);
          if (Number.isNaN(e)) ++mismatches;  // infinities of opposite signs
          else {
            d = Math.max(d, e);
            rel = Math.max(rel, Number.isFinite(x) ? e / Math.max(1, Math.abs(x)) : Infinity);
          }
        }
      } else if (x !== y) {
        ++mismatches;
      }
    }
  });
  return { max_abs_diff: d, max_rel_diff: rel, mismatches };
}

async function runJobs(file) {
  const jobs = JSON.parse(fs.readFileSync(file, 'utf8'));
  const out = [];
  for (const job of jobs) {
    let feeds;
    let base;
    let expectedUsed = false;
    let fed = false;
    try {
      feeds = {};
      for (const [name, spec] of Object.entries(job.inputs)) feeds[name] = loadInput(spec);
      fed = true;
      base = await runTensors(job.reference, feeds);
    } catch (e) {
      // onnxruntime cannot run the reference: the outputs ONNX's reference implementation gave for
      // these inputs (a node test's test_data_set_0/output_*.pb), when the job has them.
      if (!job.expected || !fed) {
        out.push({ id: job.id, reference_error: String(e.message || e) });
        continue;
      }
      base = job.expected.map(loadInput);
      expectedUsed = true;
    }
    let maxRef = 0;
    for (const t of base) {
      if (!FLOAT_TYPES.has(t.type)) continue;
      const conv = t.type === 'float16' ? halfToFloat : (x) => x;
      for (const v of t.data) if (Number.isFinite(conv(v))) maxRef = Math.max(maxRef, Math.abs(conv(v)));
    }
    // Where onnxruntime ran the reference and the job has expected outputs, each model is also
    // compared with those (ONNX's reference implementation): onnxruntime's own kernel for the
    // original can be the one that is off (its float32 DFT is, by 2e-4 relative).
    let expected = null;
    let referenceVsExpected = null;
    if (!expectedUsed && job.expected) {
      try {
        expected = job.expected.map(loadInput);
        referenceVsExpected = compareTensors(expected, base);
      } catch (e) {
        expected = null;
      }
    }
    const results = [];
    for (const c of job.candidates) {
      try {
        const got = await runTensors(c, feeds);
        const r = { model: c, ...compareTensors(base, got) };
        if (expected) {
          try {
            r.vs_expected = compareTensors(expected, got);
          } catch (e) {
            r.vs_expected = { error: String(e.message || e) };
          }
        }
        results.push(r);
      } catch (e) {
        results.push({ model: c, error: String(e.message || e) });
      }
    }
    out.push({ id: job.id, max_abs_reference: maxRef, results, expected_used: expectedUsed,
               reference_vs_expected: referenceVsExpected });
  }
  console.log(JSON.stringify(out));
}

(async () => {
  if (process.argv[2] === '--jobs') {
    await runJobs(process.argv[3]);
    return;
  }
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
