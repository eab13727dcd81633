// The benchmark driver: ONE headless Chromium run times our backends (through
// attentionExplainer.bench) beside onnxruntime-web and tfjs-backend-wasm (bench.html), measures the
// app (frame CPU time at T = 64 in every view, navigation -> first frame, dist/ size), merges the
// native results (attn_bench, numpy) that run.sh wrote, prints the table and writes JSON.
// usage: node tests/bench/bench.mjs [--dist DIR] [--native FILE] [--numpy FILE] [--out FILE] [--quick]
// Not a test: it never fails on a slow number; it fails only when something could not be measured.
import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import os from "node:os";
import { serveStatic, launchBrowser } from "../e2e/harness.mjs";
import { explicitAttention, attentionOp } from "./onnx_models.mjs";
import { benchMatmuls, matmulTables } from "./matmul_bench.mjs";
import { HERE, ROOT, option, QUICK, DIST, OUT } from "./options.mjs";

const NATIVE = option("--native", path.join(HERE, "out/native.jsonl"));
const NUMPY = option("--numpy", path.join(HERE, "out/numpy.jsonl"));
const NATIVE_MATMUL = option("--native-matmul", path.join(HERE, "out/native_matmul.jsonl"));
const NUMPY_MATMUL = option("--numpy-matmul", path.join(HERE, "out/numpy_matmul.jsonl"));
const NODE_MATMUL = option("--node-matmul", path.join(HERE, "out/node_matmul.jsonl"));

const Ts = QUICK ? [64, 1024] : [64, 256, 1024, 2048];
const Ds = QUICK ? [64] : [64, 512];
const GFLOP = (T, d) => (4 * T * T * d) / 1e9;
// The scalar reference is O(T²d) in doubles with no SIMD: past this much work a call takes seconds.
const SCALAR_MAX_GFLOP = 0.3;
const log = (...a) => console.error("[bench]", ...a);

function readJsonLines(file) {
  if (!file || !fs.existsSync(file)) return [];
  return fs.readFileSync(file, "utf8").split("\n").filter((l) => l.trim().startsWith("{")).map((l) => JSON.parse(l));
}

function distSize(dir) {
  const files = [];
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else files.push({ file: path.relative(dir, p), bytes: fs.statSync(p).size,
        gzip: zlib.gzipSync(fs.readFileSync(p), { level: 9 }).length });
    }
  };
  walk(dir);
  const sum = (list, key) => list.reduce((a, f) => a + f[key], 0);
  // a browser loads one of the two wasm builds (simd/ or baseline/), not both
  const simdOnly = files.filter((f) => !f.file.startsWith("baseline" + path.sep));
  return { files, bytes: sum(files, "bytes"), gzip: sum(files, "gzip"), simd_browser_gzip: sum(simdOnly, "gzip") };
}

// Wraps requestAnimationFrame (per-frame CPU time of the main thread) and records when
// attentionExplainer.ready resolves (ms since navigation start).
function instrumentPage() {
  const raf = window.requestAnimationFrame.bind(window);
  window.__frames = [];
  window.requestAnimationFrame = (cb) => raf((ts) => {
    const t0 = performance.now();
    try { cb(ts); } finally { window.__frames.push([ts, performance.now() - t0]); }
  });
  let api;
  Object.defineProperty(window, "attentionExplainer", {
    configurable: true,
    get: () => api,
    set: (value) => {
      api = value;
      if (value && value.ready) value.ready.then(() => { window.__readyAt = performance.now(); }, () => {});
    },
  });
}

async function firstFrameTimes(browser, url, runs) {
  const times = [];
  for (let i = 0; i < runs; ++i) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await page.addInitScript(instrumentPage);
    await page.goto(url);
    await page.waitForFunction(() => window.__readyAt !== undefined, null, { timeout: 60000 });
    times.push(await page.evaluate(() => window.__readyAt));
    await context.close();
  }
  return times;
}

// A phone as the issue measures it: 390 × 844 CSS px, 3 device pixels each, touch.
const PHONE = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 3, isMobile: true, hasTouch: true };

// Per-frame main-thread CPU time (sum of the rAF callbacks of a frame) at T = 64, in every view:
// idle frames, and frames that follow a setState change (temperature: a recompute and redraw).
// `device`: the browser context's options (a desktop window, or a phone: PHONE below).
async function frameTimes(browser, url, frames, device = { viewport: { width: 1280, height: 800 } }) {
  const context = await browser.newContext(device);
  const page = await context.newPage();
  await page.addInitScript(instrumentPage);
  await page.goto(url);
  await page.waitForFunction(() => window.__readyAt !== undefined, null, { timeout: 60000 });
  const result = await page.evaluate(async (n) => {
    const api = window.attentionExplainer;
    const nextFrame = () => new Promise((r) => requestAnimationFrame(() => r()));
    const words = ["the", "animal", "did", "not", "cross", "street", "because", "it", "was", "tired", "a", "tree",
      "under", "slept", "river", "bank", "money", "road", "quick", "brown"];
    let tokens = 0, sentence = "";
    for (let count = 64; count > 8 && tokens !== 64; --count) {  // 64 tokens, whatever the tokenizer adds
      sentence = Array.from({ length: count }, (_, i) => words[i % words.length]).join(" ");
      const state = api.setState({ sentence });
      tokens = (state.tokens || []).length;
      if (tokens <= 64) break;
    }
    const views = ["flow", "weights", "library", "steps", "derive", "break", "mistakes", "build", "cost", "practice"];
    const median = (v) => { const s = [...v].sort((a, b) => a - b); return s.length ? s[s.length >> 1] : null; };
    const pct = (v, p) => { const s = [...v].sort((a, b) => a - b); return s.length ? s[Math.min(s.length - 1, Math.floor(p * s.length))] : null; };
    const perFrame = () => {
      const byTs = new Map();
      for (const [ts, ms] of window.__frames) byTs.set(ts, (byTs.get(ts) || 0) + ms);
      window.__frames = [];
      return [...byTs.values()];
    };
    const out = { tokens, views: {} };
    for (const view of views) {
      try { api.setState({ view }); } catch (e) { out.views[view] = { error: String(e.message || e) }; continue; }
      for (let i = 0; i < 10; ++i) await nextFrame();
      // The cost view times the kernel itself at first (a few ms per frame, on purpose): wait for it.
      for (let i = 0; view === "cost" && i < 600 && !api.getState().view_data.done; ++i) await nextFrame();
      perFrame();
      for (let i = 0; i < n; ++i) await nextFrame();
      const idle = perFrame();
      const setMs = [];
      for (let i = 0; i < n; ++i) {
        const t0 = performance.now();
        api.setState({ temperature: 0.5 + (i % 10) * 0.1 });
        setMs.push(performance.now() - t0);
        await nextFrame();
      }
      const changed = perFrame();
      out.views[view] = { idle_frame_ms: median(idle), idle_frame_p90_ms: pct(idle, 0.9),
        changed_frame_ms: median(changed), changed_frame_p90_ms: pct(changed, 0.9), set_state_ms: median(setMs) };
    }
    api.setState({ temperature: 1 });
    return out;
  }, frames);
  await context.close();
  return result;
}

function fmt(ms) {
  if (ms === undefined || ms === null) return "-";
  return ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms >= 1 ? ms.toFixed(2) : ms.toFixed(3);
}

function printTables(results) {
  const lines = [];
  const pad = (s, n) => String(s).padStart(n);
  lines.push("Browser (headless Chromium, 1 thread): median ms per call; xORT = ORT ms / ms (higher is faster)");
  const cols = ["T", "d", "causal", "scalar", "eigen", "simd", "webgl", "ORT", "ORT form", "tfjs", "simd GF/s",
    "scalar xORT", "eigen xORT", "simd xORT", "webgl xORT", "tfjs xORT", "simd vs best peer"];
  const w = [5, 4, 6, 8, 8, 8, 8, 8, 9, 8, 9, 11, 10, 9, 10, 9, 17];
  lines.push(cols.map((c, i) => pad(c, w[i])).join(" "));
  for (const r of results.browser) {
    const ms = (n) => r.impls[n] && r.impls[n].ms;
    const ort = r.ort_ms, best = r.best_peer_ms;
    const x = (n) => (ms(n) && ort ? (ort / ms(n)).toFixed(2) : "-");
    lines.push([r.T, r.d, r.causal ? "yes" : "no", fmt(ms("scalar")), fmt(ms("eigen")), fmt(ms("simd")), fmt(ms("webgl")),
      fmt(ort), r.ort_form || "-", fmt(ms("tfjs")), ms("simd") ? (GFLOP(r.T, r.d) / (ms("simd") / 1e3)).toFixed(1) : "-",
      x("scalar"), x("eigen"), x("simd"), x("webgl"), x("tfjs"),
      ms("simd") && best ? (best / ms("simd")).toFixed(2) + "x" : "-"].map((c, i) => pad(c, w[i])).join(" "));
  }
  lines.push("");
  lines.push("Browser: GFLOP/s (4*T*T*d per call, the same count for causal: skipping the masked half counts as speed)");
  const gcols = ["T", "d", "causal", "scalar", "eigen", "simd", "webgl", "ORT", "tfjs"];
  const gw = [5, 4, 6, 8, 8, 8, 8, 8, 8];
  lines.push(gcols.map((c, i) => pad(c, gw[i])).join(" "));
  for (const r of results.browser) {
    const gf = (ms) => (ms ? (GFLOP(r.T, r.d) / (ms / 1e3)).toFixed(1) : "-");
    const ms = (n) => r.impls[n] && r.impls[n].ms;
    lines.push([r.T, r.d, r.causal ? "yes" : "no", gf(ms("scalar")), gf(ms("eigen")), gf(ms("simd")), gf(ms("webgl")),
      gf(r.ort_ms), gf(ms("tfjs"))].map((c, i) => pad(c, gw[i])).join(" "));
  }
  if (results.native.length) {
    lines.push("");
    const blas = results.numpy.length ? results.numpy[0].flavour : "not run";
    lines.push(`Native (1 thread): median ms per call (wall; CPU time in brackets); numpy = ${blas}`);
    const nc = ["T", "d", "causal", "simd", "eigen", "scalar", "numpy", "simd GF/s", "simd/numpy"];
    const nw = [5, 4, 6, 17, 17, 17, 17, 9, 10];
    lines.push(nc.map((c, i) => pad(c, nw[i])).join(" "));
    for (const row of results.native_table) {
      const cell = (e) => (e ? `${fmt(e.ms)} [${fmt(e.cpu_ms)}]` : "-");
      lines.push([row.T, row.d, row.causal ? "yes" : "no", cell(row.simd), cell(row.eigen), cell(row.scalar), cell(row.numpy),
        row.simd ? (GFLOP(row.T, row.d) / (row.simd.ms / 1e3)).toFixed(1) : "-",
        row.simd && row.numpy ? (row.simd.ms / row.numpy.ms).toFixed(2) + ` [${(row.simd.cpu_ms / row.numpy.cpu_ms).toFixed(2)}]` : "-",
      ].map((c, i) => pad(c, nw[i])).join(" "));
    }
  }
  if (results.matmul) {
    lines.push("");
    lines.push(matmulTables(results.matmul.browser, results.matmul.native, results.matmul.numpy, results.matmul.node));
  }
  lines.push("");
  lines.push("Goals at T = 1024, d = 64:");
  for (const g of results.goals) lines.push(`  ${g.met ? "MET    " : "NOT MET"} ${g.text}`);
  if (results.app) {
    lines.push("");
    const a = results.app;
    lines.push(`App: dist/ ${(a.dist.bytes / 1024).toFixed(0)} KiB, ${(a.dist.gzip / 1024).toFixed(0)} KiB gzip ` +
      `(without baseline/, what a SIMD browser can load: ${(a.dist.simd_browser_gzip / 1024).toFixed(0)} KiB gzip); ` +
      `navigation -> first frame: median ${fmt(a.first_frame_ms.median)} ms (runs: ${a.first_frame_ms.runs.map(fmt).join(", ")})`);
    for (const [frames, where] of [[a.frames, "1280 × 800"], [a.phone_frames, "a phone, 390 × 844 CSS px at DPR 3 (touch)"]]) {
      if (!frames) continue;
      lines.push(`Per-frame main-thread CPU time in ${where}, T = ${frames.tokens} tokens (median / p90 ms; setState = recompute + state JSON):`);
      for (const [view, v] of Object.entries(frames.views))
        lines.push(v.error ? `  ${view.padEnd(9)} error: ${v.error}` :
          `  ${view.padEnd(9)} idle ${fmt(v.idle_frame_ms)} / ${fmt(v.idle_frame_p90_ms)}   after a change ` +
          `${fmt(v.changed_frame_ms)} / ${fmt(v.changed_frame_p90_ms)}   setState ${fmt(v.set_state_ms)}`);
    }
  }
  if (results.notes.length) {
    lines.push("");
    for (const n of results.notes) lines.push("note: " + n);
  }
  return lines.join("\n");
}

async function main() {
  const t0 = Date.now();
  if (!fs.existsSync(path.join(DIST, "index.html"))) throw new Error(`no site in ${DIST}: run ./build_wasm.sh site`);
  const load = os.loadavg();
  const results = { date: new Date().toISOString(), machine: { cpus: os.cpus().length, model: os.cpus()[0].model,
    loadavg_start: load }, browser: [], native: readJsonLines(NATIVE), numpy: readJsonLines(NUMPY), notes: [] };
  const server = await serveStatic(ROOT);
  const browser = await launchBrowser();
  try {
    results.machine.chromium = browser.version();
    const context = await browser.newContext({ viewport: { width: 1000, height: 700 } });
    const page = await context.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
    await page.goto(`${server.url}tests/bench/bench.html`);
    const appUrl = `${server.url}${path.relative(ROOT, DIST).split(path.sep).join("/")}/index.html`;
    results.setup = await page.evaluate((cfg) => window.benchSetup(cfg), { appUrl });
    log("setup", JSON.stringify(results.setup));
    if (results.setup.webgl === "absent")
      results.notes.push(`no "webgl" backend in this build (${results.setup.webgl_reason || "compute refused it"}): not timed`);
    if (results.setup.webgl === "compute")
      results.notes.push('"webgl" timed through attentionExplainer.compute (JSON in and out included), T <= 256 only');
    results.notes.push(`scalar skipped where 4*T*T*d > ${SCALAR_MAX_GFLOP} GFLOP (seconds per call)`);
    for (const T of Ts)
      for (const d of Ds)
        for (const causal of [false, true]) {
          const backends = ["simd", "eigen"];
          if (GFLOP(T, d) <= SCALAR_MAX_GFLOP) backends.push("scalar");
          const onnx = { explicit: Buffer.from(explicitAttention(T, d, causal)).toString("base64"),
            attention: Buffer.from(attentionOp(T, d, causal)).toString("base64") };
          const big = GFLOP(T, d) > 1;
          const r = await page.evaluate((cfg) => window.benchShape(cfg), { T, d, causal, backends, onnx, withWebgl: true,
            minRounds: big ? 3 : 5, maxRounds: QUICK ? 5 : 15, budgetMs: big ? 4000 : 3000 });
          const ortForms = Object.entries(r.impls).filter(([n]) => n.startsWith("ort-"));
          ortForms.sort((a, b) => a[1].ms - b[1].ms);
          if (ortForms.length) { r.ort_ms = ortForms[0][1].ms; r.ort_form = ortForms[0][0].slice(4); }
          for (const v of Object.values(r.impls)) v.gflops = GFLOP(T, d) / (v.ms / 1e3);
          for (const [name, message] of Object.entries(r.errors))
            results.notes.push(`T=${T} d=${d} causal=${causal}: ${name} failed (${message.trim().slice(-120)})`);
          const peers = [r.ort_ms, r.impls.tfjs && r.impls.tfjs.ms].filter((x) => x);
          r.best_peer_ms = peers.length ? Math.min(...peers) : null;
          results.browser.push(r);
          const brief = Object.entries(r.impls).map(([n, v]) => `${n} ${fmt(v.ms)}`).join(", ");
          log(`T=${T} d=${d} causal=${causal}: ${brief}${Object.keys(r.errors).length ? " errors: " + JSON.stringify(r.errors) : ""}`);
        }
    log("matmul: GPT-2 small's shapes, ours beside onnxruntime-web");
    results.matmul = { browser: await benchMatmuls(page, { serverUrl: server.url, quick: QUICK, log }),
      native: readJsonLines(NATIVE_MATMUL), numpy: readJsonLines(NUMPY_MATMUL), node: readJsonLines(NODE_MATMUL) };
    await context.close();
    if (errors.length) results.notes.push("bench page errors: " + errors.slice(0, 5).join(" | "));
    log("app: first frame and frame times");
    const appUrlPlain = appUrl;
    const runs = await firstFrameTimes(browser, appUrlPlain, QUICK ? 2 : 3);
    const sorted = [...runs].sort((a, b) => a - b);
    results.app = { dist: distSize(DIST), first_frame_ms: { median: sorted[sorted.length >> 1], runs } };
    results.app.frames = await frameTimes(browser, appUrlPlain, QUICK ? 10 : 30);
    log("app: frame times on a phone (390 × 844, DPR 3)");
    results.app.phone_frames = await frameTimes(browser, appUrlPlain, QUICK ? 10 : 30, PHONE);
  } finally {
    await browser.close();
    await server.close();
  }
  // native table: our kernel (attn_bench) beside numpy, by shape
  const key = (e) => `${e.T}/${e.d}/${e.causal}`;
  const table = new Map();
  for (const e of results.native) {
    if (!table.has(key(e))) table.set(key(e), { T: e.T, d: e.d, causal: e.causal });
    table.get(key(e))[e.backend] = e;
  }
  for (const e of results.numpy) {
    if (!table.has(key(e))) table.set(key(e), { T: e.T, d: e.d, causal: e.causal });
    table.get(key(e)).numpy = e;
  }
  results.native_table = [...table.values()];
  // the goals: browser simd vs the faster peer (1.2x plain, 2x causal); native simd within 2x of NumPy
  results.goals = [];
  for (const causal of [false, true]) {
    const r = results.browser.find((x) => x.T === 1024 && x.d === 64 && x.causal === causal);
    const need = causal ? 2 : 1.2;
    if (r && r.impls.simd && r.best_peer_ms) {
      const x = r.best_peer_ms / r.impls.simd.ms;
      results.goals.push({ met: x >= need, text: `browser${causal ? ", causal" : ""}: simd ${fmt(r.impls.simd.ms)} ms, ` +
        `faster peer ${fmt(r.best_peer_ms)} ms: ${x.toFixed(2)}x (goal >= ${need}x)` });
    }
  }
  const n = results.native_table.find((x) => x.T === 1024 && x.d === 64 && !x.causal);
  if (n && n.simd && n.numpy) {
    const x = n.simd.ms / n.numpy.ms;
    results.goals.push({ met: x <= 2, text: `native: simd (${n.simd.flavour}) ${fmt(n.simd.ms)} ms, NumPy ${fmt(n.numpy.ms)} ms: ` +
      `${x.toFixed(2)}x NumPy's time (goal <= 2x)` });
  }
  if (results.matmul) {  // issue 12: our matmul at least as fast as ORT's on GPT-2's shapes
    const timed = results.matmul.browser.filter((r) => r.impls.simd && r.ort_ms);
    const slower = timed.filter((r) => r.impls.simd.ms > r.ort_ms);
    results.goals.push({ met: timed.length > 0 && slower.length === 0, text: `browser matmul (GPT-2 small's shapes): simd ` +
      `at least as fast as ORT's best form on ${timed.length - slower.length} of ${timed.length}` +
      (slower.length ? ` (slower: ${slower.map((r) => `${r.name} T=${r.M}`).join(", ")})` : "") });
    const byKey = new Map();
    for (const e of results.matmul.node) {
      if (!byKey.has(`${e.name}/${e.M}`)) byKey.set(`${e.name}/${e.M}`, {});
      byKey.get(`${e.name}/${e.M}`)[e.backend] = { ...e };
    }
    const rows = [...byKey.entries()].filter(([, r]) => r.simd && (r["ort-gemm-const"] || r["ort-gemm"]));
    const behind = rows.filter(([, r]) => r.simd.cpu_ms > Math.min(...[r["ort-gemm-const"], r["ort-gemm"]].filter((x) => x).map((x) => x.cpu_ms)));
    if (rows.length)
      results.goals.push({ met: behind.length === 0, text: `wasm matmul under node (CPU time): simd faster than ORT's ` +
        `faster form on ${rows.length - behind.length} of ${rows.length}` + (behind.length ? ` (not: ${behind.map(([k]) => k.replace("/", " T=")).join(", ")})` : "") });
  }
  results.machine.loadavg_end = os.loadavg();
  results.notes.push(`load average (1 min) at start ${load[0].toFixed(1)}, at end ${results.machine.loadavg_end[0].toFixed(1)} ` +
    `on ${results.machine.cpus} CPUs: timings are medians of interleaved rounds, still noisy under load`);
  results.seconds = (Date.now() - t0) / 1000;
  const text = printTables(results);
  console.log(text);
  results.table = text;
  fs.mkdirSync(path.dirname(OUT), { recursive: true });
  fs.writeFileSync(OUT, JSON.stringify(results, null, 1));
  log(`wrote ${path.relative(ROOT, OUT)} (${results.seconds.toFixed(0)} s)`);
}

main().catch((e) => { console.error(e); process.exit(1); });
