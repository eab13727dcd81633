// The train view's benchmark: in headless Chromium (SwiftShader WebGL2) at 1280×800 and at a phone's
// 390×844 with devicePixelRatio 3, the per-frame main-thread CPU time while the default recipe
// trains 1 500 steps (in the page's Web Worker: the slices' columns are then ~0) (against the same view idle), the frame interval, the training slice per frame,
// the training slices between frames, steps per second, the wall time to 1 500 steps and the
// accuracy reached; then the same while the √d experiment runs (d_head 256: a step in pieces over
// several frames), with a screenshot of the view mid-experiment (tests/bench/out/train-*.png).
// Prints a table (stdout), adds "train" to results.json. Not a test: slow numbers never fail it.
// usage: node tests/bench/train_bench.mjs [--dist DIR] [--out FILE] [--quick]
import fs from "node:fs";
import path from "node:path";
import { serveStatic, launchBrowser } from "../e2e/harness.mjs";
import { QUICK, DIST, OUT, HERE } from "./options.mjs";

const STEPS = QUICK ? 200 : 1500;
const EXPERIMENT_SECONDS = QUICK ? 5 : 20;
const VIEWPORTS = [
  { name: "desktop", label: "1280×800", viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 },
  { name: "phone", label: "390×844 DPR 3", viewport: { width: 390, height: 844 }, deviceScaleFactor: 3, isMobile: true, hasTouch: true },
];
const log = (...a) => console.error("[train bench]", ...a);

// Per-frame main-thread CPU time: every requestAnimationFrame callback timed (the app's frame is
// one), summed per frame timestamp; and every training task between frames.
function instrumentFrames() {
  const raf = window.requestAnimationFrame.bind(window);
  window.__frames = [];
  window.__idle = [];
  window.requestAnimationFrame = (cb) => raf((ts) => {
    const t0 = performance.now();
    try { cb(ts); } finally { window.__frames.push([ts, performance.now() - t0]); }
  });
  // the page's training tasks between frames (a MessageChannel's messages): each one timed
  const NativeChannel = window.MessageChannel;
  const onmessage = Object.getOwnPropertyDescriptor(MessagePort.prototype, "onmessage");
  window.MessageChannel = class extends NativeChannel {
    constructor() {
      super();
      const port = this.port1;
      Object.defineProperty(port, "onmessage", {
        get: () => onmessage.get.call(port),
        set: (fn) => onmessage.set.call(port, (event) => {
          const t0 = performance.now();
          try { fn(event); } finally { window.__idle.push(performance.now() - t0); }
        }),
      });
    }
  };
}

async function measure(page, shot) {
  const run = (phase, args) => page.evaluate(async ({ phase, steps, experimentSeconds }) => {
    const api = window.attentionExplainer;
    const nextFrame = () => new Promise((r) => requestAnimationFrame(() => r()));
    const frames = () => {
      const byTs = new Map();
      for (const [ts, ms] of window.__frames) byTs.set(ts, (byTs.get(ts) || 0) + ms);
      const idle = window.__idle;
      window.__frames = [], window.__idle = [];
      const ts = [...byTs.keys()].sort((a, b) => a - b);
      return { cpu: [...byTs.values()], interval: ts.slice(1).map((t, i) => t - ts[i]), idle };
    };
    // Samples the app's own numbers once per frame until done().
    async function sample(done) {
      const slices = [];
      frames();
      const t0 = performance.now();
      for (;;) {
        await nextFrame();
        const t = api.getState().train;
        if (t.running || t.experiment.running) slices.push(t.slice_ms);
        if (done(t)) return { t, slice: slices, seconds: (performance.now() - t0) / 1000, ...frames() };
      }
    }
    if (phase === "recipe") {
      api.setState({ view: "train", train: { steps } });
      for (let i = 0; i < 10; ++i) await nextFrame();
      while (api.getState().train.worker === "loading") await nextFrame();  // the Web Worker, when the page has one
      frames();
      for (let i = 0; i < 120; ++i) await nextFrame();
      const idle = frames();
      api.train("start");
      const r = await sample((t) => !t.running);
      const curves = api.trainCurves();
      return { steps: r.t.steps_done, seconds: r.seconds, steps_per_second: r.t.steps_done / r.seconds, accuracy: r.t.accuracy,
        final_loss: curves.run.loss[curves.run.loss.length - 1], step_ms: r.t.step_ms, in_worker: r.t.in_worker,
        idle_cpu: idle.cpu, idle_interval: idle.interval, cpu: r.cpu, interval: r.interval, slice: r.slice, idle_slices: r.idle };
    }
    // the √d experiment, for `experimentSeconds` (half now, half after the screenshot)
    if (phase === "experiment-start") api.train("experiment");
    const until = performance.now() + experimentSeconds * 1000 / 2;
    const r = await sample((t) => !t.experiment.running || performance.now() > until);
    const e = r.t.experiment;
    return { seconds: r.seconds, steps: [e.scaled.steps_done, e.unscaled.steps_done],
      cpu: r.cpu, interval: r.interval, slice: r.slice, idle_slices: r.idle, running: e.running };
  }, { phase, steps: STEPS, experimentSeconds: EXPERIMENT_SECONDS, ...args });
  const stats = (v) => {
    const s = [...v].sort((a, b) => a - b);
    const at = (p) => (s.length ? s[Math.min(s.length - 1, Math.floor(p * s.length))] : null);
    return { n: s.length, median: at(0.5), p90: at(0.9), p99: at(0.99), max: s.length ? s[s.length - 1] : null };
  };
  const summary = (r) => {
    for (const k of ["idle_cpu", "idle_interval", "cpu", "interval", "slice", "idle_slices"]) if (r[k]) r[k] = stats(r[k]);
    return r;
  };
  const recipe = summary(await run("recipe"));
  const first = await run("experiment-start");
  await page.screenshot({ path: shot });
  const second = await run("experiment-more");
  const experiment = { seconds: first.seconds + second.seconds, steps: second.steps, finished: !second.running };
  for (const k of ["cpu", "interval", "slice", "idle_slices"]) experiment[k] = [...first[k], ...second[k]];
  return { recipe, experiment: summary(experiment) };
}

const fmt = (v) => (v === null || v === undefined ? "—" : v >= 100 ? v.toFixed(0) : v.toFixed(1));
const row = (label, s) => `  ${label.padEnd(36)} ${fmt(s.median).padStart(6)} ${fmt(s.p90).padStart(6)} ${fmt(s.p99).padStart(6)} ${fmt(s.max).padStart(6)}   (${s.n})`;

const server = await serveStatic(DIST);
const browser = await launchBrowser();
const results = {};
try {
  for (const vp of VIEWPORTS) {
    const { name, label, ...options } = vp;
    const context = await browser.newContext(options);
    const page = await context.newPage();
    await page.addInitScript(instrumentFrames);
    await page.goto(server.url + "?view=train");
    await page.evaluate(() => window.attentionExplainer.ready.then(() => true));
    log(`${label}: ${STEPS} steps of the default recipe, then ${EXPERIMENT_SECONDS} s of the √d experiment`);
    const shot = path.join(HERE, "out", `train-experiment-${name}.png`);
    fs.mkdirSync(path.dirname(shot), { recursive: true });
    results[name] = { label, ...(await measure(page, shot)), screenshot: path.relative(path.join(HERE, "../.."), shot) };
    await context.close();
  }
} finally {
  await browser.close();
  await server.close();
}

const lines = [];
for (const { label, recipe: r, experiment: e } of Object.values(results)) {
  lines.push(
    `Train view, headless Chromium ${label} (SwiftShader WebGL2):`,
    `  default recipe (${r.in_worker ? "in the Web Worker" : "in the page's slices"}): ${r.steps} steps in ${r.seconds.toFixed(1)} s, ${r.steps_per_second.toFixed(1)} steps/s, one step ${fmt(r.step_ms)} ms, ` +
      `held-out accuracy ${(100 * r.accuracy).toFixed(1)}%, final loss ${r.final_loss}`,
    `  per frame (ms)                         median    p90    p99    max   (frames)`,
    row("main-thread CPU, view idle", r.idle_cpu),
    row("main-thread CPU, while training", r.cpu),
    row("  of which the training slice", r.slice),
    row("training tasks between frames", r.idle_slices),
    row("frame interval, idle", r.idle_interval),
    row("frame interval, while training", r.interval),
    row("main-thread CPU, √d experiment", e.cpu),
    row("  of which the training slice", e.slice),
    row("  tasks between frames, √d exp.", e.idle_slices),
    row("frame interval, √d experiment", e.interval),
    `  √d experiment: ${e.steps.join(" and ")} steps (÷√d, none) in ${e.seconds.toFixed(1)} s`,
  );
}
console.log(lines.join("\n"));
let all = {};
try { all = JSON.parse(fs.readFileSync(OUT, "utf8")); } catch (e) { /* a fresh file */ }
all.train = results;
fs.mkdirSync(path.dirname(OUT), { recursive: true });
fs.writeFileSync(OUT, JSON.stringify(all, null, 2) + "\n");
