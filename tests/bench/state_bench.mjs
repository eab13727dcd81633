// What the JS API costs while a slider drags in an embedded view: each step is one frame of a drag
// of the temperature slider as an embedding page sees it (setState, then getState: what onChange
// gets every frame), then the frame drawn. Prints a table of median / p90 ms per view. Not a test.
// usage: node tests/bench/state_bench.mjs [--dist DIR] [--steps N]
import path from "node:path";
import { fileURLToPath } from "node:url";
import { serveStatic, launchBrowser } from "../e2e/harness.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const option = (name, fallback) => { const i = process.argv.indexOf(name); return i > 0 ? process.argv[i + 1] : fallback; };
const DIST = path.resolve(ROOT, option("--dist", "dist"));
const STEPS = Number(option("--steps", 120));

const server = await serveStatic(DIST);
const browser = await launchBrowser();
const rows = [];
try {
  for (const view of ["weights", "build", "cost"]) {
    const context = await browser.newContext({ viewport: { width: 800, height: 600 } });
    const page = await context.newPage();
    await page.goto(server.url + `index.html?embed=1&view=${view}`);
    await page.evaluate(() => window.attentionExplainer.ready.then(() => true));
    // The Cost view times the kernel over T when it opens (a few ms a frame): measure after it.
    if (view === "cost")
      await page.waitForFunction(() => window.attentionExplainer.getState().view_data.done, null, { timeout: 300000, polling: 1000 });
    const samples = await page.evaluate((steps) => {
      const api = window.attentionExplainer;
      Module.pauseMainLoop();  // frames drawn here, one per step, as the browser would during a drag
      const out = { set: [], get: [], frame: [] };
      for (let i = 0; i < steps; i++) {
        const t0 = performance.now();
        api.setState({ temperature: 0.5 + (i % 40) * 0.05 });
        const t1 = performance.now();
        api.getState();
        const t2 = performance.now();
        Module._attn_run_frame();
        const t3 = performance.now();
        out.set.push(t1 - t0), out.get.push(t2 - t1), out.frame.push(t3 - t2);
      }
      Module.resumeMainLoop();
      return out;
    }, STEPS);
    const stat = (list) => {
      const s = [...list].sort((a, b) => a - b);
      return [s[Math.floor(s.length / 2)], s[Math.floor(s.length * 0.9)]];
    };
    rows.push({ view, set: stat(samples.set), get: stat(samples.get), frame: stat(samples.frame),
      total: stat(samples.set.map((v, i) => v + samples.get[i] + samples.frame[i])) });
    await context.close();
  }
} finally {
  await browser.close();
  await server.close();
}
const f = ([median, p90]) => `${median.toFixed(2)} / ${p90.toFixed(2)}`;
console.log(`Dragging the temperature slider in an embedded view (${STEPS} steps, ${path.relative(ROOT, DIST) || DIST}), ms median / p90:`);
console.log("| view | setState | getState | frame | one step in all |");
console.log("|---|---:|---:|---:|---:|");
for (const r of rows) console.log(`| ${r.view} | ${f(r.set)} | ${f(r.get)} | ${f(r.frame)} | ${f(r.total)} |`);
