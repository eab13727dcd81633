// onnxruntime-web (its wasm build, 1 thread) under node on GPT-2 small's matrix products, timed in
// CPU time like attn_bench --matmul's lines (the wasm build of attn_bench under the same node):
// on a loaded machine CPU time is steadier than the browser's wall clock. Not a test.
// usage: node tests/bench/ort_node_matmul.mjs [--T 16,64,256] [--min-ms 150]  (JSON lines on stdout)
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { MATMUL_SHAPES, writeModels } from "./matmul_bench.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const ort = require("onnxruntime-web");
ort.env.wasm.numThreads = 1;

const args = process.argv.slice(2);
const option = (name, fallback) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : fallback; };
const Ts = option("--T", "16,64,256").split(",").map(Number);
const minMs = Number(option("--min-ms", "150"));
const cpuMs = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
const randomArray = (n, seed) => {
  const out = new Float32Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; ++i) { s = (Math.imul(s, 1664525) + 1013904223) >>> 0; out[i] = (s / 4294967296) * 2 - 1; }
  return out;
};

for (const shape of MATMUL_SHAPES) {
  const models = writeModels(shape, path.join(HERE, "out/models"));
  for (const form of ["gemm-const", "gemm"]) {
    const m = models[form];
    const session = await ort.InferenceSession.create(fs.readFileSync(m.file), { executionProviders: ["wasm"] });
    for (const T of Ts) {
      const feeds = { A: new ort.Tensor("float32", randomArray(T * shape.K, 21), [T, shape.K]) };
      if (!m.constB) feeds.B = new ort.Tensor("float32", randomArray(shape.K * shape.N, 22), m.transB ? [shape.N, shape.K] : [shape.K, shape.N]);
      if (m.bias) feeds.C = new ort.Tensor("float32", randomArray(shape.N, 23), [shape.N]);
      for (const w0 = performance.now(); performance.now() - w0 < 100;) await session.run(feeds);  // warm-up
      const t0 = cpuMs();
      await session.run(feeds);
      const reps = Math.max(5, Math.min(400, Math.floor(minMs / Math.max(cpuMs() - t0, 1e-3))));
      const cpu = [], wall = [];
      for (let r = 0; r < reps; ++r) {
        const w0 = performance.now(), c0 = cpuMs();
        await session.run(feeds);
        cpu.push(cpuMs() - c0);
        wall.push(performance.now() - w0);
      }
      const median = (v) => [...v].sort((a, b) => a - b)[v.length >> 1];
      console.log(JSON.stringify({ op: "matmul", name: shape.name, M: T, K: shape.K, N: shape.N, layout: shape.layout,
        bias: shape.bias, backend: `ort-${form}`, flavour: `onnxruntime-web ${ort.env.versions.web || "?"} wasm, 1 thread, node`,
        ms: median(wall), cpu_ms: median(cpu), min_cpu_ms: Math.min(...cpu), reps }));
    }
    await session.release();
  }
}
