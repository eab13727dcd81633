// The phone benchmark: the app on a 390×844 phone at devicePixelRatio 3 (Playwright's mobile
// emulation: 1170×2532 device pixels drawn each frame), each view's frame time (median / p90 of
// attn_run_frame: building the UI and issuing its WebGL2 draws on the main thread), the frame
// interval with the app's loop running (what the screen gets: the drawing itself happens in
// Chromium's GPU process, SwiftShader in headless Chromium), and the wasm heap after it (malloc's bytes in use, and the size of wasm memory). Prints a table
// (stdout), adds "phone" to results.json. Not a test: slow numbers never fail it.
// usage: node tests/bench/phone_bench.mjs [--dist DIR] [--out FILE] [--quick]
import fs from "node:fs";
import path from "node:path";
import { serveStatic, launchBrowser, appViews } from "../e2e/harness.mjs";
import { QUICK, DIST, OUT } from "./options.mjs";

const FRAMES = QUICK ? 20 : 60;
const PHONE = { width: 390, height: 844, dpr: 3 };
const log = (...a) => console.error("[phone bench]", ...a);

const server = await serveStatic(DIST);
const browser = await launchBrowser();
const rows = [];
try {
  const context = await browser.newContext({ viewport: { width: PHONE.width, height: PHONE.height },
    deviceScaleFactor: PHONE.dpr, isMobile: true, hasTouch: true });
  const page = await context.newPage();
  await page.goto(server.url);
  await page.evaluate(() => window.attentionExplainer.ready.then(() => true));
  for (const view of await appViews(page)) {
    await page.evaluate((v) => window.attentionExplainer.setState({ view: v }), view);
    // The Cost view times the kernel over T while it is open (a few ms a frame): measure after it.
    if (view === "cost")
      await page.waitForFunction(() => window.attentionExplainer.getState().view_data.done, null, { timeout: 300000, polling: 1000 });
    const sample = await page.evaluate(async (frames) => {
      await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));  // the view laid out once
      Module.pauseMainLoop();  // frames drawn here, one after another, each timed on its own
      const ms = [];
      for (let i = 0; i < frames; i++) {
        const t0 = performance.now();
        Module._attn_run_frame();
        ms.push(performance.now() - t0);
      }
      Module.resumeMainLoop();
      const stamps = [];
      await new Promise((resolve) => {
        const tick = (ts) => (stamps.push(ts), stamps.length > frames ? resolve() : requestAnimationFrame(tick));
        requestAnimationFrame(tick);
      });
      const intervals = stamps.slice(1).map((t, i) => t - stamps[i]);
      const stats = (v) => (v.sort((a, b) => a - b), [v[Math.floor(v.length / 2)], v[Math.floor(v.length * 0.9)]]);
      const [median, p90] = stats(ms), [interval_median, interval_p90] = stats(intervals);
      return { median, p90, interval_median, interval_p90, heap_in_use: Module._attn_heap_in_use(), memory: Module.HEAPU8.length };
    }, FRAMES);
    log(`${view}: ${sample.median.toFixed(1)} ms`);
    rows.push({ view, ...sample });
  }
  await context.close();
} finally {
  await browser.close();
  await server.close();
}

const mib = (bytes) => (bytes / 1048576).toFixed(1);
console.log(`Phone ${PHONE.width}×${PHONE.height}, DPR ${PHONE.dpr} (headless Chromium, SwiftShader WebGL2), ` +
  `one frame of each view (${FRAMES} frames), and the wasm heap after it:`);
console.log("| view | frame CPU median / p90 (ms) | frame interval median / p90 (ms) | heap in use (MiB) | wasm memory (MiB) |");
console.log("|---|---:|---:|---:|---:|");
const pair = (a, b) => `${a.toFixed(1)} / ${b.toFixed(1)}`;
for (const r of rows)
  console.log(`| ${r.view} | ${pair(r.median, r.p90)} | ${pair(r.interval_median, r.interval_p90)} | ${mib(r.heap_in_use)} | ${mib(r.memory)} |`);
let all = {};
try { all = JSON.parse(fs.readFileSync(OUT, "utf8")); } catch (e) { /* a fresh file */ }
all.phone = { viewport: PHONE, frames: FRAMES, views: rows };
fs.mkdirSync(path.dirname(OUT), { recursive: true });
fs.writeFileSync(OUT, JSON.stringify(all, null, 2) + "\n");
