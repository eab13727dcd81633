import fs from "node:fs";
import path from "node:path";
import { serveStatic, launchBrowser, openExplainer } from "../e2e/harness.mjs";
const dir = "/tmp/attn-bench-models/gpt2-f32";
const server = await serveStatic("/tmp/distprof"); const browser = await launchBrowser();
const { page, context } = await openExplainer(browser, server.url);
await page.setInputFiles("#model-files", fs.readdirSync(dir).filter((f) => f !== "bench-args.json").map((f) => path.join(dir, f)));
await page.waitForFunction(() => window.attentionExplainer.getState().model_run.where === "worker" && window.attentionExplainer.getState().model !== "handmade", null, { timeout: 60000 });
const A = "The animal didn't cross the street because it was too tired to walk any further today";
await page.evaluate((a) => window.attentionExplainer.setState({ view: "heads", sentence: a }), A);
await page.waitForFunction(() => !window.attentionExplainer.getState().model_run.pending);
const cdp = await context.newCDPSession(page);
await cdp.send("Profiler.enable");
await cdp.send("Profiler.setSamplingInterval", { interval: 200 });
await cdp.send("Profiler.start");
await page.evaluate(() => window.attentionExplainer.setState({ heads_sweep: true }));
await page.waitForFunction(() => { const w = window.attentionExplainer.getState().view_data.sweep; return w && w.done === w.total; }, null, { timeout: 120000, polling: 500 });
const { profile } = await cdp.send("Profiler.stop");
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map(); for (const n of profile.nodes) for (const c of n.children || []) parent.set(c, n.id);
const dt = profile.timeDeltas; const incl = new Map();
profile.samples.forEach((id, i) => {
  const seen = new Set(); let cur = id;
  while (cur !== undefined) { const n = byId.get(cur); const name = n.callFrame.functionName || "(anon)"; if (!seen.has(name)) { seen.add(name); incl.set(name, (incl.get(name) || 0) + (dt[i] || 0)); } cur = parent.get(cur); }
});
for (const [name, us] of [...incl].sort((a, b) => b[1] - a[1]).slice(0, 45)) console.log((us / 1000).toFixed(1).padStart(8), name.slice(0, 120));
await browser.close(); await server.close();
