// The train view's benchmark: in headless Chromium at 1280×800, the per-frame main-thread CPU time
// while the default recipe trains (against the same view idle), the frame interval, the training
// slice per frame, steps per second and the wall time to 600 steps; then the same while the √d
// experiment runs. Prints a table (stdout), adds "train" to results.json. Not a test: slow numbers
// never fail it. usage: node tests/bench/train_bench.mjs [--dist DIR] [--out FILE] [--quick]
import fs from "node:fs";
import path from "node:path";
import { serveStatic, launchBrowser } from "../e2e/harness.mjs";
import { QUICK, DIST, OUT } from "./options.mjs";

const STEPS = QUICK ? 200 : 600;
const EXPERIMENT_SECONDS = QUICK ? 5 : 15;
const log = (...a) => console.error("[train bench]", ...a);

// Per-frame main-thread CPU time: every requestAnimationFrame callback timed (the app's frame is
// one), summed per frame timestamp.
function instrumentFrames() {
  const raf = window.requestAnimationFrame.bind(window);
  window.__frames = [];
  window.requestAnimationFrame = (cb) => raf((ts) => {
    const t0 = performance.now();
    try { cb(ts); } finally { window.__frames.push([ts, performance.now() - t0]); }
  });
}

async function measure(page) {
  return page.evaluate(async ({ steps, experimentSeconds }) => {
    const api = window.attentionExplainer;
    const nextFrame = () => new Promise((r) => requestAnimationFrame(() => r()));
    const sorted = (v) => [...v].sort((a, b) => a - b);
    const stats = (v) => {
      const s = sorted(v);
      const at = (p) => (s.length ? s[Math.min(s.length - 1, Math.floor(p * s.length))] : null);
      return { n: s.length, median: at(0.5), p90: at(0.9), p99: at(0.99), max: s.length ? s[s.length - 1] : null };
    };
    const frames = () => {
      const byTs = new Map();
      for (const [ts, ms] of window.__frames) byTs.set(ts, (byTs.get(ts) || 0) + ms);
      window.__frames = [];
      const ts = [...byTs.keys()].sort((a, b) => a - b);
      return { cpu: [...byTs.values()], interval: ts.slice(1).map((t, i) => t - ts[i]) };
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
        if (done(t)) return { t, slices, seconds: (performance.now() - t0) / 1000, ...frames() };
      }
    }
    api.setState({ view: "train", train: { steps } });
    for (let i = 0; i < 10; ++i) await nextFrame();
    frames();
    for (let i = 0; i < 120; ++i) await nextFrame();
    const idle = frames();
    api.train("start");
    const run = await sample((t) => !t.running);
    const curves = api.trainCurves();
    api.train("experiment");
    const until = performance.now() + experimentSeconds * 1000;
    const exp = await sample((t) => !t.experiment.running || performance.now() > until);
    return {
      steps: run.t.steps_done, seconds: run.seconds, steps_per_second: run.t.steps_done / run.seconds,
      accuracy: run.t.accuracy, final_loss: curves.run.loss[curves.run.loss.length - 1], step_ms: run.t.step_ms,
      idle_cpu: stats(idle.cpu), idle_interval: stats(idle.interval),
      training_cpu: stats(run.cpu), training_interval: stats(run.interval), training_slice: stats(run.slices),
      experiment: { seconds: exp.seconds, steps: [exp.t.experiment.scaled.steps_done, exp.t.experiment.unscaled.steps_done],
        cpu: stats(exp.cpu), interval: stats(exp.interval), slice: stats(exp.slices) },
    };
  }, { steps: STEPS, experimentSeconds: EXPERIMENT_SECONDS });
}

const fmt = (v) => (v === null || v === undefined ? "—" : v >= 100 ? v.toFixed(0) : v.toFixed(1));
const row = (label, s) => `  ${label.padEnd(34)} ${fmt(s.median).padStart(6)} ${fmt(s.p90).padStart(6)} ${fmt(s.p99).padStart(6)} ${fmt(s.max).padStart(6)}   (${s.n} frames)`;

const server = await serveStatic(DIST);
const browser = await launchBrowser();
let result;
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  await page.addInitScript(instrumentFrames);
  await page.goto(server.url + "?view=train");
  await page.evaluate(() => window.attentionExplainer.ready.then(() => true));
  log(`training ${STEPS} steps of the default recipe in the page, then ${EXPERIMENT_SECONDS} s of the √d experiment`);
  result = await measure(page);
  await context.close();
} finally {
  await browser.close();
  await server.close();
}

const lines = [
  `Train view, headless Chromium 1280×800 (SwiftShader WebGL2), default recipe, ${result.steps} steps:`,
  `  ${result.seconds.toFixed(1)} s wall, ${result.steps_per_second.toFixed(1)} steps/s, one step ${fmt(result.step_ms)} ms, ` +
    `held-out accuracy ${(100 * result.accuracy).toFixed(1)}%, final loss ${result.final_loss.toFixed(5)}`,
  `  per frame (ms)                       median    p90    p99    max`,
  row("main-thread CPU, view idle", result.idle_cpu),
  row("main-thread CPU, while training", result.training_cpu),
  row("  of which the training slice", result.training_slice),
  row("frame interval, idle", result.idle_interval),
  row("frame interval, while training", result.training_interval),
  row("main-thread CPU, √d experiment", result.experiment.cpu),
  row("  of which the training slice", result.experiment.slice),
  `  √d experiment: ${result.experiment.steps.join(" and ")} steps (÷√d, none) in ${result.experiment.seconds.toFixed(1)} s`,
];
console.log(lines.join("\n"));
let all = {};
try { all = JSON.parse(fs.readFileSync(OUT, "utf8")); } catch (e) { /* a fresh file */ }
all.train = result;
fs.mkdirSync(path.dirname(OUT), { recursive: true });
fs.writeFileSync(OUT, JSON.stringify(all, null, 2) + "\n");
