// The model benchmark: models of real checkpoints' shapes with random weights, loaded from
// files in headless Chromium as a learner's chooser would: SmolLM2-135M's shape (llama; BF16, as
// the checkpoint ships, and F32), Qwen3-0.6B's (BF16, 1.2 GB: runs under the 4 GB wasm limit) and
// optionally GPT-2 small's (F32) and BERT-base's (an encoder: 12 × 12, hidden 768, 512 positions, 2 token
// types, the masked-LM head, BERT-base-uncased's real WordPiece vocabulary; F32, 438 MB). Per model, in
// a fresh page (wasm memory never shrinks):
// loadModel({files}) to the heads view's first frame, the forward as the page runs it where no worker runs
// (a second page with the worker's script blocked; attentionExplainer.benchModel: every layer and head, the
// trace the views keep, the LM head at the selected position only; tests/bench/native_bench.cpp --forward has
// it over every position) at T = 64 and 256 with GFLOP/s, and
// the wasm memory (Module.HEAPU8.length) after the load and after each forward, against the file; for a
// decoder, appending one token at T = 64 and 256 (writeToken's round trip through the model's worker, in
// full and incremental, beside the page's own full forward) and typing 30 characters into the text box
// (the gaps between frames, and the new text on screen after the last key). GPT-2 small's shape:
// --models gpt2-f32.
// Prints a table (stdout), adds "models" to results.json. Not a test: slow numbers never fail it.
// The folders are written by tests/models/make_family_model.py (make_model.py for GPT-2,
// make_encoder_model.py for BERT) under
// --model-root (default /tmp/attn-bench-models) and deleted after the run unless --keep-models.
// usage: node tests/bench/model_bench.mjs [--dist DIR] [--out FILE] [--quick]
//        [--models smollm2-bf16,smollm2-f32,qwen3-bf16[,gpt2-f32][,bert-f32]] [--model-root DIR] [--keep-models]
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { serveStatic, launchBrowser, holdKey } from "../e2e/harness.mjs";
import { ROOT, option, QUICK, DIST, OUT } from "./options.mjs";

const MODEL_ROOT = path.resolve(option("--model-root", "/tmp/attn-bench-models"));
const KEEP = process.argv.includes("--keep-models");
const LLAMA_SMOLLM2 = ["--family", "llama", "--layers", "30", "--heads", "9", "--kv-heads", "3", "--head-dim", "64",
  "--d-model", "576", "--d-ff", "1536", "--tokenizer", "llama2", "--vocab", "49152", "--tied", "--rope-theta", "100000"];
const QWEN3_06B = ["--family", "qwen3", "--layers", "28", "--heads", "16", "--kv-heads", "8", "--head-dim", "128",
  "--d-model", "1024", "--d-ff", "3072", "--tokenizer", "qwen3", "--vocab", "151936", "--tied", "--rope-theta", "1000000"];
const MODELS = {
  "smollm2-bf16": { label: "SmolLM2-135M shape, BF16", args: [...LLAMA_SMOLLM2, "--dtype", "BF16"] },
  "smollm2-f32": { label: "SmolLM2-135M shape, F32", args: [...LLAMA_SMOLLM2, "--dtype", "F32"] },
  "qwen3-bf16": { label: "Qwen3-0.6B shape, BF16", args: [...QWEN3_06B, "--dtype", "BF16"] },
  "gpt2-f32": { label: "GPT-2 small shape, F32", gpt2: true },
  "bert-f32": { label: "BERT-base shape (an encoder), F32", encoder: true },
};
const BERT_BASE = ["--family", "bert", "--layers", "12", "--heads", "12", "--d-model", "768", "--d-ff", "3072", "--max-positions", "512",
  "--type-vocab", "2", "--tokenizer", "wordpiece", "--prefix", "--std", "0.02", "--dtype", "F32"];
const CHOSEN = option("--models", QUICK ? "smollm2-bf16" : "smollm2-bf16,smollm2-f32,qwen3-bf16").split(",").filter(Boolean);
const Ts = QUICK ? [64] : [64, 256];
const GOALS = { forward_T64_ms: 500, file_to_first_frame_ms: 2000, peak_memory_ratio_16bit: 1.15 };
const FRAME_GOAL = (key) => key.startsWith("smollm2") || key.startsWith("bert");  // file → first frame < 2 s: SmolLM2's, BERT-base's
const log = (...a) => console.error("[model bench]", ...a);

// The model folder, written once per run (reused while its config matches, with --keep-models).
function ensureModel(key) {
  const m = MODELS[key];
  if (!m) throw new Error(`--models: unknown model ${key} (${Object.keys(MODELS).join(", ")})`);
  const dir = path.join(MODEL_ROOT, key), stamp = path.join(dir, "bench-args.json");
  const args = m.gpt2 ? ["--layers", "12", "--heads", "12", "--embd", "768", "--positions", "1024", "--dtype", "F32", "--buffers",
    "--std", "0.02", "--seed", "7"] : m.encoder ? [...BERT_BASE, "--seed", "7"] : [...m.args, "--seed", "7"];
  if (fs.existsSync(stamp) && fs.readFileSync(stamp, "utf8") === JSON.stringify(args)) return dir;
  fs.rmSync(dir, { recursive: true, force: true });
  log(`writing ${m.label} with random weights into ${dir}`);
  const script = m.gpt2 ? "tests/models/make_model.py" : m.encoder ? "tests/models/make_encoder_model.py" : "tests/models/make_family_model.py";
  execFileSync("/usr/bin/python3", [path.join(ROOT, script), "--out", dir, ...args], { stdio: ["ignore", "ignore", "inherit"] });
  fs.writeFileSync(stamp, JSON.stringify(args));
  return dir;
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
    let frameError = null;  // the heads view's frame failing is reported, and the forward still timed
    try {
      api.setState({ view: "heads" });
      await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
    } catch (e) {
      frameError = typeof e === "number" ? `a C++ exception escaped the wasm (pointer ${e})` : String(e && e.message || e);
    }
    const frame = performance.now();
    clearInterval(sampler);
    // the next 4 s (the weights move into the model's worker): the longest gap between frames
    let last = performance.now(), longest = 0;
    await new Promise((resolve) => {
      const step = (t) => { longest = Math.max(longest, t - last); last = t; if (t - frame < 4000) requestAnimationFrame(step); else resolve(); };
      requestAnimationFrame(step);
    });
    return { model, load_ms: loaded - t0, file_to_first_frame_ms: frameError ? null : frame - t0, frame_error: frameError,
      heap_after_load: Math.max(peak, Module.HEAPU8.length), after_load_longest_gap_ms: longest };
  });
}

const jsHeap = (page) => page.evaluate(() => (performance.memory ? performance.memory.usedJSHeapSize : null));

// From a Chromium trace: the renderer main thread's (the one that ran the most tasks) top-level tasks
// ("RunTask") less the time they wait in "Commit" (handing the frame to the compositor: with SwiftShader that
// waits for its software GL, the browser's rendering rather than the page's code), summed into windows of one
// frame (16.7 ms) from the first task to the last: p50 / p99 of the page's own time per window, the longest
// task so counted, and the share of the time spent in Commit.
function mainThreadTime(trace) {
  const events = trace.traceEvents || trace;
  const mains = new Set(events.filter((e) => e.ph === "M" && e.name === "thread_name" && e.args.name === "CrRendererMain").map((e) => `${e.pid}:${e.tid}`));
  const byThread = new Map();
  for (const e of events)
    if (e.ph === "X" && (e.name === "RunTask" || e.name === "Commit") && mains.has(`${e.pid}:${e.tid}`)) {
      const key = `${e.pid}:${e.tid}`;
      if (!byThread.has(key)) byThread.set(key, []);
      byThread.get(key).push(e);
    }
  const thread = [...byThread.values()].sort((a, b) => b.length - a.length)[0] || [];
  const all = thread.filter((e) => e.name === "RunTask").sort((a, b) => a.ts - b.ts);
  const tasks = [];  // the outermost only (a task run inside another is part of its time)
  for (const t of all) if (!tasks.length || t.ts >= tasks[tasks.length - 1].ts + (tasks[tasks.length - 1].dur || 0)) tasks.push(t);
  if (!tasks.length) return null;
  const FRAME = 16667, start = tasks[0].ts, end = Math.max(...tasks.map((t) => t.ts + (t.dur || 0)));
  const busy = new Array(Math.ceil((end - start) / FRAME) + 1).fill(0);
  const spread = (from, dur, sign) => {  // time into the windows it spans
    for (let at = from, left = dur; left > 0;) {
      const w = Math.floor((at - start) / FRAME), part = Math.min(left, start + (w + 1) * FRAME - at);
      busy[w] += sign * part, at += part, left -= part;
    }
  };
  const commits = thread.filter((e) => e.name === "Commit");
  for (const t of tasks) spread(t.ts, t.dur || 0, 1);
  for (const c of commits) spread(c.ts, c.dur || 0, -1);
  const own = (t) => (t.dur || 0) - commits.filter((c) => c.ts >= t.ts && c.ts < t.ts + (t.dur || 0)).reduce((sum, c) => sum + (c.dur || 0), 0);
  const sorted = busy.map((us) => Math.max(0, us) / 1000).sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  const commitMs = commits.reduce((sum, c) => sum + (c.dur || 0), 0) / 1000;
  return { windows: sorted.length, p50_ms: at(0.5), p99_ms: at(0.99), longest_task_ms: Math.max(...tasks.map(own)) / 1000,
    commit_share: commitMs / ((end - start) / 1000) };
}

// The page's own forward, where no worker runs (the model's worker script blocked): benchModel at each T
// (and T + 1, beside the worker's append), then what a learner does with it: the longest text the page takes
// (128 tokens, kMaxTokens) typed in, the heads view drawn, then another layer chosen (its detail recomputed
// from the trace's streams). Timed: setState to the frame after it.
async function benchPageForward(browser, serverUrl, files, weightsBytes, model, key) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  try {
    const page = await context.newPage();
    await page.route("**/model_worker.js", (r) => r.fulfill({ status: 404, body: "blocked: the page's own forward" }));
    await page.goto(serverUrl);
    await page.evaluate(() => window.attentionExplainer.ready.then(() => true));
    await loadAndTime(page, files);
    const forward = [];
    for (const T of Ts.flatMap((t) => (model.causal !== false ? [t, t + 1] : [t]))) {
      log(`${key}: the page's own forward T = ${T}`);
      const r = await page.evaluate((t) => window.attentionExplainer.benchModel({ T: t, reps: t >= 256 ? 1 : 3 }), T);
      const heap = await page.evaluate(() => Module.HEAPU8.length);
      forward.push({ T, ms: r.ms, gflops: r.flops / 1e9, gflop_per_s: r.flops / 1e6 / r.ms, heap_after: heap, heap_ratio: heap / weightsBytes });
    }
    log(`${key}: the page's own text of 128 tokens, then layer ${Math.floor(model.layers / 2)}`);
    const pageText = await page.evaluate(async (layer) => {
      const api = window.attentionExplainer, frame = () => new Promise((res) => requestAnimationFrame(() => requestAnimationFrame(res)));
      const words = "the quick brown fox jumps over the lazy dog while".split(" ");  // 10: the text repeats them
      const textOf = (n) => Array.from({ length: n }, (_, i) => words[i % words.length]).join(" ");
      const tokens = (n) => api.setState({ sentence: textOf(n) }).tokens.length;  // (computed at once: the page has the weights)
      const t10 = tokens(10), perTen = tokens(20) - t10;
      let n = Math.floor(((128 - t10) / perTen) * 10) + 10;
      while (n > 1 && tokens(n) > 128) n -= 1;
      api.setState({ view: "heads", layer: 0, sentence: words[0] });
      await frame();
      let t0 = performance.now();
      api.setState({ sentence: textOf(n) });
      await frame();
      const text_ms = performance.now() - t0;
      t0 = performance.now();
      api.setState({ layer });
      await frame();
      return { T: api.getState().tokens.length, text_ms, layer_ms: performance.now() - t0, heap_after: Module.HEAPU8.length };
    }, Math.floor(model.layers / 2));
    pageText.heap_ratio = pageText.heap_after / weightsBytes;
    return { forward, pageText };
  } finally {
    await context.close();
  }
}

async function benchOne(browser, serverUrl, key) {
  const dir = ensureModel(key);
  const weightsBytes = fs.statSync(path.join(dir, "model.safetensors")).size;
  const files = fs.readdirSync(dir).filter((f) => f !== "bench-args.json").map((f) => path.join(dir, f));
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  try {
    const page = await context.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.goto(serverUrl);
    await page.evaluate(() => window.attentionExplainer.ready.then(() => true));
    const heapAtStart = await page.evaluate(() => Module.HEAPU8.length);
    log(`${key}: loading ${(weightsBytes / 1048576).toFixed(0)} MiB from files`);
    const load = await loadAndTime(page, files);
    const jsAfterLoad = await jsHeap(page);
    // The page's own forward (where no worker runs: the page keeps the weights then), in a page whose
    // worker's script answers 404; this page's weights move into its worker.
    const { forward, pageText } = await benchPageForward(browser, serverUrl, files, weightsBytes, load.model, key);
    // Appending one token (a causal model), in the model's worker as a learner gets it: writeToken at T
    // tokens to the frame that shows the new text, twice (the worker's first text computes every row, its
    // cache empty; the second only the new one): the round trip and the worker's own forward
    // (model_run.last_ms). Beside it the page's own full forward of T + 1 tokens (benchModel).
    const append = [];
    if (load.model.causal !== false) {
      for (const T of Ts) {
        log(`${key}: append one token at T = ${T}`);
        // the worker's own forward (no round trip): whole, and appending one token to a cache of T
        const worker = await page.evaluate((t) => window.attentionExplainer.benchModelWorker({ T: t, reps: t >= 256 ? 3 : 5 }), T);
        // writeToken's round trip, where the page shows the text (kMaxTokens = 128 tokens)
        const inWorker = T >= 128 ? null : await page.evaluate(async (t) => {
          const api = window.attentionExplainer, frame = () => new Promise((res) => requestAnimationFrame(res));
          for (let i = 0; i < 600 && api.getState().model_run.where !== "worker"; i++) await frame();
          const words = "the quick brown fox jumps over the lazy dog while".split(" ");
          let n = t;
          const textOf = (k) => Array.from({ length: k }, (_, i) => words[i % words.length]).join(" ");
          while (n > 1 && (await api.setState({ sentence: textOf(n) })).tokens.length > t - 1) n -= 1;
          const write = async () => {
            const s = await api.setState({ token: api.getState().tokens.length - 1, view: "heads" });
            await frame();
            const t0 = performance.now();
            api.writeToken(s.next[0].id);
            while (api.getState().model_run.pending) await frame();
            await frame();
            const r = api.getState().model_run;
            return { T: r.last_T, ms: performance.now() - t0, worker_ms: r.last_ms, where: r.last_where, from: r.incremental_from };
          };
          return { first: await write(), second: await write() };
        }, T);
        append.push({ T, page_full_ms: forward.find((f) => f.T === T + 1)?.ms, worker_bench: worker, worker: inWorker });
      }
      // Typing 30 characters 60 ms apart into the real text box at T ≈ 20: the gaps between frames, and the
      // time from the last key to the frame that shows the new text.
      log(`${key}: typing 30 characters`);
      await page.evaluate(() => window.attentionExplainer.setState({ view: "weights", sentence: "The animal didn't cross the street because it was tired and" }));
      const box = await page.evaluate(() => window.attentionExplainer.itemRect("sentence"));
      await page.mouse.click(box.x + box.w / 2, box.y + box.h / 2);
      await holdKey(page, "End");
      await page.evaluate(() => { window.benchFrames = []; const step = (t) => { window.benchFrames.push(t); if (!window.benchStop) requestAnimationFrame(step); }; window.benchStop = false; requestAnimationFrame(step); });
      // the page's main thread traced meanwhile: its own time (every task it ran) in each frame's 16.7 ms
      await browser.startTracing(page, { categories: ["toplevel", "disabled-by-default-devtools.timeline"] });
      await page.keyboard.type(" so the cat sat on the red mat", { delay: 60 });
      const typing = await page.evaluate(async () => {
        const api = window.attentionExplainer, t0 = performance.now();
        while (api.getState().model_run.pending) await new Promise((res) => requestAnimationFrame(res));
        await new Promise((res) => requestAnimationFrame(res));
        const settle_ms = performance.now() - t0;
        window.benchStop = true;
        const f = window.benchFrames, gaps = f.slice(1).map((t, i) => t - f[i]).sort((a, b) => a - b);
        const at = (q) => gaps[Math.min(gaps.length - 1, Math.floor(q * gaps.length))];
        return { frames: f.length, p50: at(0.5), p90: at(0.9), p99: at(0.99), max: gaps[gaps.length - 1], settle_ms, T: api.getState().tokens.length };
      });
      typing.main_thread = mainThreadTime(JSON.parse(await browser.stopTracing()));
      append.push({ typing });
    }
    // Changes a learner makes that need the model, computed in its worker (the page waits for none): another
    // layer, a head switched off, Compare's second text, rollout to the last layer. Each: setState to its answer
    // on screen; the page's main thread traced meanwhile. Then the page's malloc in use: the weights are not there.
    log(`${key}: changes that need the model`);
    await page.evaluate(() => window.attentionExplainer.setState({ view: "heads", sentence: "The animal didn't cross the street because it was tired" }));
    await browser.startTracing(page, { categories: ["toplevel", "disabled-by-default-devtools.timeline"] });
    const changes = await page.evaluate(async (layers) => {
      const api = window.attentionExplainer, frame = () => new Promise((res) => requestAnimationFrame(res));
      const out = [];
      for (const [label, change] of [["another layer", { layer: layers - 1 }], ["a head switched off", { ablate: [[0, 0]] }],
        ["Compare's second text", { view: "compare", compare_sentence: "The animal didn't cross the street because it was wide" }],
        ["rollout to the last layer", { view: "weights", weights_show: "rollout" }]]) {
        const t0 = performance.now();
        const s = await api.setState(change);
        await frame();
        out.push({ label, ms: performance.now() - t0, where: s.model_run.weights });
      }
      await api.setState({ ablate: [], weights_show: "weights", view: "heads" });
      return out;
    }, load.model.layers);
    const changesMain = mainThreadTime(JSON.parse(await browser.stopTracing()));
    const heapInUse = await page.evaluate(() => window.Module._attn_heap_in_use());
    // The sweeps at T = 16 (GPT-2 small's shape): every head switched off alone (the Heads view), then every
    // head's output patched alone from a twin sentence (Compare), in the model's worker: the time to the
    // last cell, the gaps between frames and the page's main thread meanwhile.
    const sweeps = [];
    if (key.startsWith("gpt2")) {
      const A = "The animal didn't cross the street because it was too tired to walk any further today";
      const B = "The animal didn't cross the street because it was too wide to walk any further today";
      for (const [label, setup, on, read] of [
        ["every head switched off alone (Heads)", { view: "heads", sentence: A, compare_sentence: B }, { heads_sweep: true }, "sweep"],
        ["every head's output patched alone (Compare)", { view: "compare", sentence: A, compare_sentence: B, heads_sweep: false }, { patch_sweep: "heads" }, "patch_sweep"]]) {
        log(`${key}: sweep: ${label}`);
        const T = await page.evaluate(async (s) => (await window.attentionExplainer.setState(s)).tokens.length, setup);
        await page.evaluate(async () => { const api = window.attentionExplainer; while (api.getState().model_run.pending) await new Promise((r) => requestAnimationFrame(r)); });
        await page.evaluate(() => { window.benchFrames = []; const step = (t) => { window.benchFrames.push(t); if (!window.benchStop) requestAnimationFrame(step); }; window.benchStop = false; requestAnimationFrame(step); });
        await browser.startTracing(page, { categories: ["toplevel", "disabled-by-default-devtools.timeline"] });
        const run = await page.evaluate(async ([on, read]) => {
          const api = window.attentionExplainer, t0 = performance.now();
          api.setState(on);
          for (;;) {  // (getState once a second: it is the page's own work too, ~35 ms in the Heads view)
            await new Promise((r) => setTimeout(r, 1000));
            const w = api.getState().view_data[read];
            if (w && w.done === w.total && w.total > 0) {
              window.benchStop = true;
              const f = window.benchFrames, gaps = f.slice(1).map((t, i) => t - f[i]).sort((a, b) => a - b);
              return { ms: performance.now() - t0, cells: w.total, where: w.where, max_gap: gaps[gaps.length - 1], p99_gap: gaps[Math.floor(0.99 * (gaps.length - 1))] };
            }
            if (performance.now() - t0 > 300000) throw new Error("sweep: not done in 300 s");
          }
        }, [on, read]);
        run.main_thread = mainThreadTime(JSON.parse(await browser.stopTracing()));
        sweeps.push({ label, T, ...run });
        await page.evaluate(() => window.attentionExplainer.setState({ heads_sweep: false, patch_sweep: "none" }));
      }
    }
    const heapPeak = await page.evaluate(() => Module.HEAPU8.length);
    return { key, label: MODELS[key].label, model: load.model, weights_file_bytes: weightsBytes, load_ms: load.load_ms,
      after_load_longest_gap_ms: load.after_load_longest_gap_ms,
      file_to_first_frame_ms: load.file_to_first_frame_ms, frame_error: load.frame_error, forward, append, sweeps, page_text: pageText,
      changes, changes_main_thread: changesMain, heap_in_use: heapInUse, heap_at_start: heapAtStart, heap_after_load: load.heap_after_load,
      heap_peak: heapPeak, peak_memory_ratio: heapPeak / weightsBytes, load_memory_ratio: load.heap_after_load / weightsBytes,
      js_heap_after_load: jsAfterLoad, js_heap_end: await jsHeap(page), page_errors: errors };
  } finally {
    await context.close();
    if (!KEEP) fs.rmSync(dir, { recursive: true, force: true });
  }
}

const fmt = (x, digits = 1) => (x === undefined || x === null ? "—" : Number(x).toFixed(digits));
const mib = (b) => `${fmt(b / 1048576, 0)} MiB`;

function table(results) {
  const lines = ["", "Models in the browser (headless Chromium, wasm SIMD, one thread; random weights in the checkpoints' shapes)",
    `goals: file → first frame < ${GOALS.file_to_first_frame_ms} ms (SmolLM2, BERT-base) and forward T = 64 < ${GOALS.forward_T64_ms} ms (SmolLM2), ` +
    `peak wasm memory ≤ ${GOALS.peak_memory_ratio_16bit} × the file (16-bit files, T ≤ 256)`];
  for (const r of results) {
    const rows = [
      [r.label, `${r.model.family}${r.model.causal === false ? " (no causal mask)" : ""}, ${r.model.layers} × ${r.model.heads} heads, d ${r.model.d_model}, ${fmt(r.model.params / 1e6, 1)} M params, file ${mib(r.weights_file_bytes)}`, ""],
      r.frame_error ? ["file → loaded (the heads view's frame FAILED)", `load ${fmt(r.load_ms, 0)} ms`, `frame: ${r.frame_error}`]
        : ["file → first frame of the heads view", `${fmt(r.file_to_first_frame_ms, 0)} ms (load ${fmt(r.load_ms, 0)} ms)`,
          FRAME_GOAL(r.key) ? `goal < ${GOALS.file_to_first_frame_ms} ms: ${r.file_to_first_frame_ms < GOALS.file_to_first_frame_ms ? "met" : "NOT met"}` : ""],
      ["the 4 s after it (the weights moving into the model's worker): longest gap between frames", `${fmt(r.after_load_longest_gap_ms, 0)} ms`, ""],
      ["wasm memory after the load", `${mib(r.heap_after_load)} = ${fmt(r.load_memory_ratio, 2)} × the file`, ""],
      ...r.forward.filter((f) => Ts.includes(f.T)).flatMap((f) => [[`the page's own forward T = ${f.T} (no worker; the LM head at one position)`, `${fmt(f.ms, 0)} ms, ${fmt(f.gflop_per_s, 2)} GFLOP/s (${fmt(f.gflops, 1)} GFLOP)`,
        f.T === 64 && r.key.startsWith("smollm2") ? `goal < ${GOALS.forward_T64_ms} ms: ${f.ms < GOALS.forward_T64_ms ? "met" : "NOT met"}` : ""],
      [`  wasm memory after it`, `${mib(f.heap_after)} = ${fmt(f.heap_ratio, 2)} × the file`,
        r.key.endsWith("bf16") ? `goal ≤ ${GOALS.peak_memory_ratio_16bit}×: ${f.heap_ratio <= GOALS.peak_memory_ratio_16bit ? "met" : "NOT met"}` : "(F32 file: for comparison)"]]),
      ...(r.append || []).filter((a) => a.T).flatMap((a) => [[`append one token at T = ${a.T}: the page's full forward of T + 1`, `${fmt(a.page_full_ms, 1)} ms`, ""],
      [`  the model's worker, its forward alone: all T + 1 rows / the new row (cache of T)`,
        `${fmt(a.worker_bench.full_ms, 1)} / ${fmt(a.worker_bench.append_ms, 1)} ms (from row ${a.worker_bench.recomputed_from}), + ${fmt(a.worker_bench.pack_ms, 1)} ms packing the trace`,
        `goal < ${a.T >= 256 ? 150 : 60} ms: ${a.worker_bench.append_ms + a.worker_bench.pack_ms < (a.T >= 256 ? 150 : 60) ? "met" : "NOT met"}`],
      ...(a.worker ? [[`  writeToken to its frame: in full (the worker's cache cold, T = ${a.worker.first.T})`,
        `${fmt(a.worker.first.ms, 1)} ms (the forward there ${fmt(a.worker.first.worker_ms, 1)} ms, from row ${a.worker.first.from})`, ""],
      [`  writeToken to its frame: incremental (T = ${a.worker.second.T})`,
        `${fmt(a.worker.second.ms, 1)} ms (the forward there ${fmt(a.worker.second.worker_ms, 1)} ms, from row ${a.worker.second.from})`,
        a.T < 128 ? `goal < 60 ms: ${a.worker.second.ms < 60 ? "met" : "NOT met"}` : ""]] : [])]),
      ...(r.append || []).filter((a) => a.typing).map(({ typing: t }) => [`typing 30 characters 60 ms apart (T ≈ ${t.T}): frame gaps`,
        `p50 ${fmt(t.p50, 0)} / p90 ${fmt(t.p90, 0)} / p99 ${fmt(t.p99, 0)} / max ${fmt(t.max, 0)} ms over ${t.frames} frames`,
        `the new text on screen ${fmt(t.settle_ms, 0)} ms after the last key`]),
      ...(r.append || []).filter((a) => a.typing && a.typing.main_thread).map(({ typing: { main_thread: m } }) =>
        ["  the page's main thread meanwhile: its own time per frame (16.7 ms windows; not the compositor's commit)",
          `p50 ${fmt(m.p50_ms, 1)} / p99 ${fmt(m.p99_ms, 1)} ms over ${m.windows} windows, longest task ${fmt(m.longest_task_ms, 0)} ms; ` +
          `${fmt(100 * m.commit_share, 0)}% of the time waiting in the commit (SwiftShader)`,
          `goal p99 < 16 ms: ${m.p99_ms < 16 ? "met" : "NOT met"}`]),
      ...(r.sweeps || []).flatMap((s) => [[`sweep at T = ${s.T}: ${s.label}, ${s.cells} runs (in the ${s.where})`,
        `${fmt(s.ms / 1000, 1)} s; frame gaps p99 ${fmt(s.p99_gap, 0)} / max ${fmt(s.max_gap, 0)} ms`, `goal < 20 s: ${s.ms < 20000 ? "met" : "NOT met"}`],
      ["  the page's main thread meanwhile: its own time per frame (16.7 ms windows)",
        `p50 ${fmt(s.main_thread.p50_ms, 1)} / p99 ${fmt(s.main_thread.p99_ms, 1)} ms, longest task ${fmt(s.main_thread.longest_task_ms, 0)} ms`,
        `goal p99 < 16 ms: ${s.main_thread.p99_ms < 16 ? "met" : "NOT met"}`]]),
      [`the page's own text (T = ${r.page_text.T}) in the heads view, then layer ${Math.floor(r.model.layers / 2)}`,
        `${fmt(r.page_text.text_ms, 0)} ms, then ${fmt(r.page_text.layer_ms, 0)} ms`, ""],
      [`  wasm memory after it (the run's peak)`, `${mib(r.page_text.heap_after)} = ${fmt(r.page_text.heap_ratio, 2)} × the file`,
        r.key.endsWith("bf16") ? `goal ≤ ${GOALS.peak_memory_ratio_16bit}×: ${r.page_text.heap_ratio <= GOALS.peak_memory_ratio_16bit ? "met" : "NOT met"}` : "(F32 file: for comparison)"],
      ...(r.changes || []).map((c) => [`a change that needs the model: ${c.label}`, `${fmt(c.ms, 0)} ms to its frame (the weights in the ${c.where})`, ""]),
      ...(r.changes_main_thread ? [["  the page's main thread meanwhile: its own time per frame (16.7 ms windows)",
        `p50 ${fmt(r.changes_main_thread.p50_ms, 1)} / p99 ${fmt(r.changes_main_thread.p99_ms, 1)} ms, longest task ${fmt(r.changes_main_thread.longest_task_ms, 0)} ms`,
        `goal p99 < 16 ms: ${r.changes_main_thread.p99_ms < 16 ? "met" : "NOT met"}`]] : []),
      ["the page's malloc in use with the weights in the worker", `${mib(r.heap_in_use)} (the weights file: ${mib(r.weights_file_bytes)})`, ""],
      ["JS heap (performance.memory) after load / at the end", `${mib(r.js_heap_after_load)} / ${mib(r.js_heap_end)}`, ""],
    ];
    const w0 = Math.max(...rows.map((x) => x[0].length)), w1 = Math.max(...rows.map((x) => x[1].length));
    lines.push("");
    for (const x of rows) lines.push(`  ${x[0].padEnd(w0)}  ${x[1].padEnd(w1)}  ${x[2]}`);
    if (r.page_errors.length) lines.push(`  page errors (uncaught in the page; a number is a C++ exception's pointer): ${r.page_errors.join(" | ")}`);
  }
  return lines.join("\n");
}

async function main() {
  if (!fs.existsSync(path.join(DIST, "index.html"))) throw new Error(`${DIST}: no site (./build_wasm.sh site)`);
  fs.mkdirSync(MODEL_ROOT, { recursive: true });
  const server = await serveStatic(DIST);
  const browser = await launchBrowser(["--enable-precise-memory-info"]);
  const results = [];
  try {
    for (const key of CHOSEN) {
      try {
        results.push(await benchOne(browser, server.url, key));
      } catch (e) {
        log(`${key} failed: ${e.message}`);
        results.push({ key, label: MODELS[key] ? MODELS[key].label : key, error: String(e.message) });
      }
    }
  } finally {
    await browser.close();
    await server.close();
  }
  const ok = results.filter((r) => !r.error);
  console.log(table(ok));
  for (const r of results.filter((x) => x.error)) console.log(`  ${r.label}: FAILED (${r.error})`);
  let all = {};
  if (fs.existsSync(OUT)) { try { all = JSON.parse(fs.readFileSync(OUT, "utf8")); } catch (e) { all = {}; } }
  all.models = { goals: GOALS, results };
  fs.mkdirSync(path.dirname(OUT), { recursive: true });
  fs.writeFileSync(OUT, JSON.stringify(all, null, 2));
  log(`wrote ${OUT}`);
}

main().catch((e) => { console.error(`[model bench] ${e.message}`); process.exit(1); });
