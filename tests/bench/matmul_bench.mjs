// The matrix-product benchmark: our matmul (attentionExplainer.benchMatmul: simd, eigen) beside
// onnxruntime-web (1 thread) on GPT-2 small's shapes, in the benchmark page; bench.mjs calls it in
// its Chromium run. Alone: node tests/bench/matmul_bench.mjs [--quick] [--dist DIR] [--out FILE]
// [--native FILE] [--numpy FILE]. Not a test: it never fails on a slow number.
// ORT gets three forms and the fastest counts: "gemm" (Gemm with b and the bias as inputs, transB
// for the LM head), "gemm-const" (b a constant of the graph: ORT packs it once at load, as it does
// a real model's weights) and "matmul" (MatMul [+ Add], b an input already (K, N)).
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";

const require = createRequire(import.meta.url);
const { onnx } = require("onnx-proto");
const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, "../..");
const FLOAT = onnx.TensorProto.DataType.FLOAT;

// C = 768: attention's c_attn and c_proj, the MLP's c_fc and c_proj (x·W + b), the tied LM head (x·wteᵀ).
export const MATMUL_SHAPES = [
  { name: "c_attn", K: 768, N: 2304, layout: "NN", bias: true },
  { name: "attn.c_proj", K: 768, N: 768, layout: "NN", bias: true },
  { name: "mlp.c_fc", K: 768, N: 3072, layout: "NN", bias: true },
  { name: "mlp.c_proj", K: 3072, N: 768, layout: "NN", bias: true },
  { name: "lm_head", K: 768, N: 50257, layout: "NT", bias: false },
];
export const MATMUL_TS = [16, 64, 256];
const EIGEN_MAX_GFLOP = 2;  // Eigen has no wasm SIMD: past this a call takes seconds
const gflop = (M, K, N) => (2 * M * K * N) / 1e9;

function randomBytes(n, seed) {  // n floats uniform(-1, 1) as little-endian bytes
  const out = new Float32Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; ++i) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = (s / 4294967296) * 2 - 1;
  }
  return new Uint8Array(out.buffer);
}

function valueInfo(name, dims) {
  return onnx.ValueInfoProto.create({ name, type: { tensorType: { elemType: FLOAT,
    shape: { dim: dims.map((d) => (typeof d === "string" ? { dimParam: d } : { dimValue: d })) } } } });
}

/** One ONNX model for a shape and form; a's rows are a free dimension "T" (one model for every T). */
export function matmulModel(shape, form) {
  const { K, N, layout, bias } = shape;
  const transB = layout === "NT" && form !== "matmul";
  const bDims = transB ? [N, K] : [K, N];
  const constB = form === "gemm-const";
  const inputs = [valueInfo("A", ["T", K])], initializer = [], nodes = [];
  if (constB) initializer.push(onnx.TensorProto.create({ name: "B", dims: bDims, dataType: FLOAT, rawData: randomBytes(K * N, 22) }));
  else inputs.push(valueInfo("B", bDims));
  if (bias) inputs.push(valueInfo("C", [N]));
  if (form === "matmul") {
    nodes.push(onnx.NodeProto.create({ opType: "MatMul", input: ["A", "B"], output: [bias ? "AB" : "Y"], name: "matmul" }));
    if (bias) nodes.push(onnx.NodeProto.create({ opType: "Add", input: ["AB", "C"], output: ["Y"], name: "add" }));
  } else {
    nodes.push(onnx.NodeProto.create({ opType: "Gemm", input: bias ? ["A", "B", "C"] : ["A", "B"], output: ["Y"], name: "gemm",
      attribute: [onnx.AttributeProto.create({ name: "transB", i: transB ? 1 : 0, type: onnx.AttributeProto.AttributeType.INT })] }));
  }
  const graph = onnx.GraphProto.create({ name: `${shape.name}-${form}`, node: nodes, initializer, input: inputs,
    output: [valueInfo("Y", ["T", N])] });
  const model = onnx.ModelProto.create({ irVersion: 8, producerName: "attention-explainer-bench", graph,
    opsetImport: [{ domain: "", version: 17 }] });
  return { bytes: onnx.ModelProto.encode(model).finish(), constB, transB, bias };
}

/** Writes the models (once: they are deterministic) under dir; returns {form: {file, constB, transB, bias}}. */
function writeModels(shape, dir) {
  fs.mkdirSync(dir, { recursive: true });
  const out = {};
  for (const form of ["gemm", "gemm-const", "matmul"]) {
    const file = path.join(dir, `${shape.name}-${form}.onnx`);
    const m = fs.existsSync(file) ? null : matmulModel(shape, form);
    if (m) fs.writeFileSync(file, m.bytes);
    out[form] = { file, constB: form === "gemm-const", transB: shape.layout === "NT" && form !== "matmul",
      bias: shape.bias };
  }
  return out;
}

/** Times every shape x T in the page (bench.html, set up by benchSetup); returns one row per shape x T. */
export async function benchMatmuls(page, { serverUrl, quick = false, log = () => {} }) {
  const modelDir = path.join(HERE, "out/models");
  const Ts = quick ? [16, 256] : MATMUL_TS;
  const rows = [];
  for (const shape of MATMUL_SHAPES) {
    const files = writeModels(shape, modelDir);
    const models = {};
    for (const [form, m] of Object.entries(files))
      models[form] = { ...m, url: serverUrl + path.relative(ROOT, m.file).split(path.sep).join("/") };
    for (const T of Ts) {
      const backends = ["simd"];
      if (gflop(T, shape.K, shape.N) <= EIGEN_MAX_GFLOP) backends.push("eigen");
      const big = gflop(T, shape.K, shape.N) > 1;
      const r = await page.evaluate((cfg) => window.benchMatmulShape(cfg), { M: T, K: shape.K, N: shape.N,
        layout: shape.layout, bias: shape.bias, models, backends, minRounds: big ? 4 : 7, maxRounds: quick ? 5 : 15,
        budgetMs: big ? 6000 : 3000 });
      r.name = shape.name;
      r.gflop = gflop(T, shape.K, shape.N);
      const forms = Object.entries(r.impls).filter(([n]) => n.startsWith("ort-")).sort((a, b) => a[1].ms - b[1].ms);
      if (forms.length) {
        r.ort_ms = forms[0][1].ms;
        r.ort_form = forms[0][0].slice(4);
        r.ort_min_ms = Math.min(...forms.map(([, v]) => v.min_ms));
      }
      for (const v of Object.values(r.impls)) v.gflops = r.gflop / (v.ms / 1e3);
      rows.push(r);
      log(`matmul ${shape.name} T=${T}: ` + Object.entries(r.impls).map(([n, v]) => `${n} ${v.ms.toFixed(2)}`).join(", ") +
        (Object.keys(r.errors).length ? " errors: " + JSON.stringify(r.errors) : ""));
    }
    await page.evaluate(() => window.matmulRelease());
  }
  return rows;
}

const fmt = (ms) => (ms === undefined || ms === null ? "-" : ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms.toFixed(2));

/** The tables: browser rows (benchMatmuls) and native lines (attn_bench --matmul, numpy_bench.py --matmul). */
export function matmulTables(rows, native = [], numpy = []) {
  const lines = [];
  const pad = (s, n) => String(s).padStart(n);
  lines.push("Matmul, browser (headless Chromium, 1 thread): median ms per call, GFLOP/s = 2·M·K·N / time; " +
    "simd/ORT = our time / ORT's best form's time (below 1: we are faster); [min] = the same from each one's fastest sample");
  const cols = ["shape", "T", "K", "N", "simd", "eigen", "ORT", "ORT form", "simd GF/s", "ORT GF/s", "simd/ORT", "[min]"];
  const w = [12, 4, 5, 6, 8, 8, 8, 11, 9, 9, 9, 6];
  lines.push(cols.map((c, i) => pad(c, w[i])).join(" "));
  for (const r of rows) {
    const ms = (n) => r.impls[n] && r.impls[n].ms;
    lines.push([r.name, r.M, r.K, r.N, fmt(ms("simd")), fmt(ms("eigen")), fmt(r.ort_ms), r.ort_form || "-",
      ms("simd") ? (r.gflop / (ms("simd") / 1e3)).toFixed(1) : "-", r.ort_ms ? (r.gflop / (r.ort_ms / 1e3)).toFixed(1) : "-",
      ms("simd") && r.ort_ms ? (ms("simd") / r.ort_ms).toFixed(2) : "-",
      r.impls.simd && r.ort_min_ms ? (r.impls.simd.min_ms / r.ort_min_ms).toFixed(2) : "-"].map((c, i) => pad(c, w[i])).join(" "));
  }
  const forms = [...new Set(rows.flatMap((r) => Object.keys(r.impls).filter((n) => n.startsWith("ort-"))))];
  if (forms.length) {
    lines.push("ORT's forms, ms: " + forms.join(", "));
    for (const r of rows) lines.push(`  ${r.name.padEnd(11)} T=${String(r.M).padEnd(4)} ` + forms.map((f) => fmt(r.impls[f] && r.impls[f].ms)).join(" / "));
  }
  const mm = native.filter((e) => e.op === "matmul");
  if (mm.length) {
    const np = new Map(numpy.filter((e) => e.op === "matmul").map((e) => [`${e.name}/${e.M}`, e]));
    lines.push("");
    lines.push(`Matmul, native (1 thread): median ms per call (CPU time); simd = ${mm[0].flavour}; numpy = ${numpy.length ? numpy[0].flavour : "not run"}`);
    const nc = ["shape", "T", "simd", "eigen", "numpy", "simd GF/s", "simd/numpy"];
    const nw = [12, 4, 9, 9, 9, 9, 10];
    lines.push(nc.map((c, i) => pad(c, nw[i])).join(" "));
    const byKey = new Map();
    for (const e of mm) {
      const k = `${e.name}/${e.M}`;
      if (!byKey.has(k)) byKey.set(k, { name: e.name, M: e.M, K: e.K, N: e.N });
      byKey.get(k)[e.backend] = e;
    }
    for (const [k, row] of byKey) {
      const n = np.get(k);
      lines.push([row.name, row.M, fmt(row.simd && row.simd.cpu_ms), fmt(row.eigen && row.eigen.cpu_ms), fmt(n && n.cpu_ms),
        row.simd ? (gflop(row.M, row.K, row.N) / (row.simd.cpu_ms / 1e3)).toFixed(1) : "-",
        row.simd && n ? (row.simd.cpu_ms / n.cpu_ms).toFixed(2) : "-"].map((c, i) => pad(c, nw[i])).join(" "));
    }
  }
  return lines.join("\n");
}

// Alone: its own server, browser and page, then the table; the results go to --out (JSON).
async function main() {
  const args = process.argv.slice(2);
  const option = (name, fallback) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : fallback; };
  const quick = args.includes("--quick");
  const dist = path.resolve(ROOT, option("--dist", "dist"));
  const outFile = option("--out", path.join(HERE, "out/matmul.json"));
  const readLines = (f) => (f && fs.existsSync(f) ? fs.readFileSync(f, "utf8").split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l)) : []);
  const native = readLines(option("--native", path.join(HERE, "out/native_matmul.jsonl")));
  const numpy = readLines(option("--numpy", path.join(HERE, "out/numpy_matmul.jsonl")));
  const { serveStatic, launchBrowser } = await import("../e2e/harness.mjs");
  const server = await serveStatic(ROOT);
  const browser = await launchBrowser();
  const log = (...a) => console.error("[matmul]", ...a);
  let rows;
  try {
    const page = await (await browser.newContext({ viewport: { width: 1000, height: 700 } })).newPage();
    page.on("pageerror", (e) => log("page error", String(e)));
    await page.goto(`${server.url}tests/bench/bench.html`);
    const appUrl = `${server.url}${path.relative(ROOT, dist).split(path.sep).join("/")}/index.html`;
    log("setup", JSON.stringify(await page.evaluate((cfg) => window.benchSetup(cfg), { appUrl })));
    rows = await benchMatmuls(page, { serverUrl: server.url, quick, log });
  } finally {
    await browser.close();
    await server.close();
  }
  const table = matmulTables(rows, native, numpy);
  console.log(table);
  fs.mkdirSync(path.dirname(outFile), { recursive: true });
  fs.writeFileSync(outFile, JSON.stringify({ date: new Date().toISOString(), browser: rows, native, numpy, table }, null, 1));
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) main().catch((e) => { console.error(e); process.exit(1); });
