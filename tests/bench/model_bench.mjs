// The model benchmark: GPT-2 small's shapes (12 layers x 12 heads, n_embd 768, vocab 50 257,
// n_positions 1024) with random F32 weights (548 MB with the attn.bias buffers, as Hugging Face's
// file; written once by tests/models/make_model.py),
// in headless Chromium: loadModel({files}) of the folder to the heads view's first frame, the whole
// forward for T = 16, 64, 256 with GFLOP/s, and the peak wasm memory beside the model's F32 size.
// Prints a table (stdout), adds "models" to results.json. Not a test: slow numbers never fail it.
// usage: node tests/bench/model_bench.mjs [--dist DIR] [--out FILE] [--model-dir DIR] [--quick]
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { serveStatic, launchBrowser } from "../e2e/harness.mjs";
import { HERE, ROOT, option, QUICK, DIST, OUT } from "./options.mjs";

const MODEL_DIR = path.resolve(ROOT, option("--model-dir", path.join(HERE, "out/gpt2-small-random")));
const SHAPE = { layers: 12, heads: 12, embd: 768, positions: 1024 };
const Ts = QUICK ? [16, 64] : [16, 64, 256];
const GOALS = { forward_T64_ms: 1000, file_to_first_frame_ms: 3000, peak_memory_ratio: 1.3 };
const log = (...a) => console.error("[model bench]", ...a);

// The model folder, made once (reused while its config matches).
function ensureModel() {
  const config = path.join(MODEL_DIR, "config.json");
  const weights = path.join(MODEL_DIR, "model.safetensors");
  if (fs.existsSync(config) && fs.existsSync(weights)) {
    const c = JSON.parse(fs.readFileSync(config, "utf8"));
    if (c.n_layer === SHAPE.layers && c.n_head === SHAPE.heads && c.n_embd === SHAPE.embd && c.n_positions === SHAPE.positions) return;
  }
  log(`writing GPT-2 small's shapes with random weights into ${MODEL_DIR} (548 MB, once)`);
  execFileSync("/usr/bin/python3", [path.join(ROOT, "tests/models/make_model.py"), "--out", MODEL_DIR,
    "--layers", String(SHAPE.layers), "--heads", String(SHAPE.heads), "--embd", String(SHAPE.embd),
    "--positions", String(SHAPE.positions), "--dtype", "F32", "--buffers", "--std", "0.02", "--seed", "7"], { stdio: ["ignore", "ignore", "inherit"] });
}

// In the page: an input of its own (Playwright hands it the files by path, as a learner's chooser
// would), then loadModel → heads view → two animation frames. Memory sampled while it loads.
async function loadAndTime(page, files) {
  await page.evaluate(() => {
    const input = Object.assign(document.createElement("input"), { type: "file", multiple: true, id: "bench-files" });
    input.style.display = "none";
    document.body.appendChild(input);
  });
  await page.setInputFiles("#bench-files", files);
  return page.evaluate(async () => {
    const api = window.attentionExplainer;
    let peak = Module.HEAPU8.length;
    const sampler = setInterval(() => { peak = Math.max(peak, Module.HEAPU8.length); }, 20);
    const files = document.getElementById("bench-files").files;
    const t0 = performance.now();
    const model = await api.loadModel({ files });
    const loaded = performance.now();
    api.setState({ view: "heads" });
    await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
    const frame = performance.now();
    clearInterval(sampler);
    return { model, load_ms: loaded - t0, file_to_first_frame_ms: frame - t0, heap_after_load: Math.max(peak, Module.HEAPU8.length) };
  });
}

const fmt = (x, digits = 1) => (x === undefined || x === null ? "—" : Number(x).toFixed(digits));

async function main() {
  if (!fs.existsSync(path.join(DIST, "index.html"))) throw new Error(`${DIST}: no site (./build_wasm.sh site)`);
  ensureModel();
  const weightsBytes = fs.statSync(path.join(MODEL_DIR, "model.safetensors")).size;
  const files = fs.readdirSync(MODEL_DIR).map((f) => path.join(MODEL_DIR, f));
  const server = await serveStatic(DIST);
  const browser = await launchBrowser();
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.goto(server.url);
    await page.evaluate(() => window.attentionExplainer.ready.then(() => true));
    const heapAtStart = await page.evaluate(() => Module.HEAPU8.length);
    log("loading the model from files");
    const load = await loadAndTime(page, files);
    const forward = [];
    for (const T of Ts) {
      log(`forward T = ${T}`);
      const r = await page.evaluate((t) => window.attentionExplainer.benchModel({ T: t, reps: t >= 256 ? 1 : 3 }), T);
      forward.push({ T, ms: r.ms, gflops: r.flops / 1e9, gflop_per_s: r.flops / 1e6 / r.ms });
    }
    const heapPeak = await page.evaluate(() => Module.HEAPU8.length);  // wasm memory never shrinks
    const floatBytes = load.model.params * 4;
    const result = {
      model: load.model, weights_file_bytes: weightsBytes, float_bytes: floatBytes,
      load_ms: load.load_ms, file_to_first_frame_ms: load.file_to_first_frame_ms,
      forward, heap_at_start: heapAtStart, heap_after_load: load.heap_after_load, heap_peak: heapPeak,
      peak_memory_ratio: heapPeak / weightsBytes, peak_over_float_params: heapPeak / floatBytes, goals: GOALS, page_errors: errors,
    };
    const f64 = forward.find((f) => f.T === 64);
    const rows = [
      ["GPT-2 small shapes (random F32)", `${load.model.layers} × ${load.model.heads}, d ${load.model.d_model}, ${(load.model.params / 1e6).toFixed(1)} M params`, ""],
      ["file → first frame of the heads view", `${fmt(load.file_to_first_frame_ms, 0)} ms (load ${fmt(load.load_ms, 0)} ms)`,
        `goal < ${GOALS.file_to_first_frame_ms} ms: ${load.file_to_first_frame_ms < GOALS.file_to_first_frame_ms ? "met" : "NOT met"}`],
      ...forward.map((f) => [`forward T = ${f.T}`, `${fmt(f.ms, 0)} ms, ${fmt(f.gflop_per_s, 2)} GFLOP/s (${fmt(f.gflops, 1)} GFLOP)`,
        f.T === 64 ? `goal < ${GOALS.forward_T64_ms} ms: ${f.ms < GOALS.forward_T64_ms ? "met" : "NOT met"}` : ""]),
      ["peak wasm memory", `${fmt(heapPeak / 1048576, 0)} MiB = ${fmt(result.peak_memory_ratio, 2)} × the ${fmt(weightsBytes / 1048576, 0)} MiB file ` +
        `(${fmt(heapPeak / floatBytes, 2)} × the parameters as floats)`,
        `goal < ${GOALS.peak_memory_ratio}×: ${result.peak_memory_ratio < GOALS.peak_memory_ratio ? "met" : "NOT met"}`],
    ];
    const w0 = Math.max(...rows.map((r) => r[0].length)), w1 = Math.max(...rows.map((r) => r[1].length));
    console.log("\nModels in the browser (headless Chromium, wasm SIMD, one thread)");
    for (const r of rows) console.log(`  ${r[0].padEnd(w0)}  ${r[1].padEnd(w1)}  ${r[2]}`);
    if (f64 === undefined) console.log("  (T = 64 not measured)");
    if (errors.length) console.log(`  page errors: ${errors.join(" | ")}`);
    let all = {};
    if (fs.existsSync(OUT)) { try { all = JSON.parse(fs.readFileSync(OUT, "utf8")); } catch (e) { all = {}; } }
    all.models = result;
    fs.mkdirSync(path.dirname(OUT), { recursive: true });
    fs.writeFileSync(OUT, JSON.stringify(all, null, 2));
    log(`wrote ${OUT}`);
  } finally {
    await browser.close();
    await server.close();
  }
}

main().catch((e) => { console.error(`[model bench] ${e.message}`); process.exit(1); });
