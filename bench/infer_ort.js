// ONNX Runtime (npm's onnxruntime-node, CPU) peer of bench/infer: forward
// latency of the ResNets scripts/make_resnet.py exported (MODEL.onnx) on
// the inputs bench/infer wrote, with intraOpNumThreads 2 and
// interOpNumThreads 1.
//
// For each model M and batch B, reads WORK/input_bB.f32 (B x 3 x S x S
// float32), times ITERS runs after WARMUP ones, writes the logits of the
// last run to WORK/M_bB.ort.f32 and prints name=value lines:
//   M_bB_ort_ms=...          best run, milliseconds
//   M_bB_ort_median_ms=...   median run
//
// Usage: node infer_ort.js MODEL_DIR WORK MODELS BATCHES IMAGE_SIZE ITERS
//                          WARMUP
// (MODELS and BATCHES comma-separated). onnxruntime-node is found through
// NODE_PATH (bench/infer sets it to the folder scripts/bench.sh installs
// the package into); exit status 3 when it cannot be loaded.
'use strict';
const fs = require('fs');
const path = require('path');

function loadOrt() {
  try {
    return require('onnxruntime-node');
  } catch (e) {
    console.error('infer_ort: cannot load onnxruntime-node (' + e.message +
                  '); install it with `npm install --ignore-scripts ' +
                  'onnxruntime-node` into the folder NODE_PATH names');
    process.exit(3);
  }
}

function readInput(work, b, s) {
  const buf = fs.readFileSync(path.join(work, 'input_b' + b + '.f32'));
  const data = new Float32Array(buf.buffer, buf.byteOffset, buf.length / 4);
  if (data.length !== b * 3 * s * s) {
    throw new Error('input_b' + b + '.f32: ' + data.length +
                    ' floats; expected ' + b * 3 * s * s);
  }
  return data;
}

function median(v) {
  const s = [...v].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

async function timed(session, feeds, iters, warmup) {
  let out = null;
  for (let i = 0; i < warmup; ++i) out = await session.run(feeds);
  const times = [];
  for (let i = 0; i < iters; ++i) {
    const t0 = process.hrtime.bigint();
    out = await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return {best: Math.min(...times), med: median(times), out: out};
}

async function main(argv) {
  if (argv.length !== 7) {
    console.error('usage: node infer_ort.js MODEL_DIR WORK MODELS BATCHES ' +
                  'IMAGE_SIZE ITERS WARMUP');
    process.exit(2);
  }
  const [modelDir, work, models, batches] = argv;
  const [s, iters, warmup] = argv.slice(4).map(Number);
  const ort = loadOrt();
  const version = ort.env && ort.env.versions ? ort.env.versions.common : '?';
  console.log('ort_version=' + version + ' ort_intra_threads=2');
  const options = {intraOpNumThreads: 2, interOpNumThreads: 1,
                   executionMode: 'sequential', graphOptimizationLevel: 'all',
                   executionProviders: ['cpu']};
  for (const name of models.split(',')) {
    const session = await ort.InferenceSession.create(
        path.join(modelDir, name + '.onnx'), options);
    for (const b of batches.split(',').map(Number)) {
      const x = new ort.Tensor('float32', readInput(work, b, s), [b, 3, s, s]);
      const r = await timed(session, {data: x}, Math.max(iters, 1), warmup);
      const tag = name + '_b' + b;
      const y = r.out.logits.data;
      fs.writeFileSync(path.join(work, tag + '.ort.f32'),
                       Buffer.from(y.buffer, y.byteOffset, y.byteLength));
      console.log(tag + '_ort_ms=' + r.best.toFixed(3));
      console.log(tag + '_ort_median_ms=' + r.med.toFixed(3));
    }
  }
}

main(process.argv.slice(2)).catch((e) => {
  console.error('infer_ort: ' + (e && e.stack ? e.stack : e));
  process.exit(1);
});
