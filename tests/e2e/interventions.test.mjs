// End-to-end: attentionExplainer.intervene in headless Chromium against PyTorch forward hooks
// (tests/models/torch_interventions.py) on a random GPT-2 model loaded through the page's own file
// chooser: ablation, cut links, patching, attribution, value-weighted attention and rollout within
// 1e-4; bad requests throw an Error naming the key and the page keeps working.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { serveStatic, launchBrowser, openExplainer, frames } from "./harness.mjs";
import { makeModel, torchInterventions } from "../models/fixtures.mjs";

const TIRED = "The animal didn't cross the street because it was tired";
const WIDE = "The animal didn't cross the street because it was wide";
let server, browser;
before(async () => { server = await serveStatic(); browser = await launchBrowser(); });
after(async () => { await browser?.close(); await server?.close(); });

function worst(a, b) {
  if (Array.isArray(a)) return a.reduce((m, x, i) => Math.max(m, worst(x, b[i])), 0);
  return Math.abs(a - b);
}

test("intervene matches PyTorch hooks in the page, and refuses bad requests by name", async () => {
  const folder = makeModel({ layers: 3, heads: 4, embd: 36, dtype: "F16", seed: 21 });
  const { page, context, errors } = await openExplainer(browser, server.url);
  await page.setInputFiles("#model-files", fs.readdirSync(folder).map((f) => path.join(folder, f)));
  await page.waitForFunction(() => window.attentionExplainer.getState().model !== "handmade", null, { timeout: 30000 });
  const request = { text: TIRED, ablate: [[2, 3], [0, 1]], ablate_kind: "mean", cut: [{ layer: 1, head: "all", query: 8, key: 1 }],
    target: " street", against: "Ġanimal" };
  const got = await page.evaluate((r) => window.attentionExplainer.intervene(r), request);
  const ref = torchInterventions({ dir: folder, ids: got.token_ids, at: got.at, target: got.target.id, against: got.against.id,
    ablate: request.ablate, ablate_kind: "mean", cuts: request.cut });
  const diffs = {
    log_prob: worst(got.intervened.log_prob, ref.intervened_log_prob),
    attention: worst(got.intervened.attention, ref.attention),
    attribution: Math.max(...["logit", "offset", "embeddings", "heads", "biases", "mlps"].map((k) => worst(got.attribution[k], ref.attribution[k]))),
    value_weighted: worst(got.value_weighted, ref.value_weighted),
    rollout: worst(got.rollout, ref.rollout),
  };
  for (const [what, d] of Object.entries(diffs)) assert.ok(d <= 1e-4, `${what}: within 1e-4 of PyTorch (worst ${d})`);
  assert.ok(Math.abs(got.attribution.sum - got.attribution.logit) <= 1e-4 * Math.max(1, Math.abs(got.attribution.logit)));
  const patched = await page.evaluate((r) => window.attentionExplainer.intervene(r),
    { text: WIDE, patch: { from: TIRED, heads: [[1, 2]], resid: [[2, 5]] }, target: 11 });
  const source = await page.evaluate((text) => window.attentionExplainer.modelTrace({ text, top: 1 }), TIRED);
  const pref = torchInterventions({ dir: folder, ids: patched.token_ids, source_ids: source.token_ids, at: patched.at, target: 11,
    patch_heads: [[1, 2]], patch_resid: [[2, 5]] });
  diffs.patched = worst(patched.patch.patched_log_prob, pref.intervened_log_prob);
  diffs.source = worst(patched.patch.source_log_prob, pref.source_log_prob);
  assert.ok(diffs.patched <= 1e-4 && diffs.source <= 1e-4, JSON.stringify(diffs));
  console.log(`# largest differences from PyTorch: ${JSON.stringify(Object.fromEntries(Object.entries(diffs).map(([k, v]) => [k, v.toExponential(1)])))}`);
  for (const [bad, words] of [
    [{ text: TIRED, ablate: [[0, 9]] }, "head 9 is outside the layer"],
    [{ text: TIRED, cut: [{ layer: 0, head: 0, query: 0, key: 0 }] }, "leaves query 0 no key"],
    [{ text: TIRED, patch: { from: "The animal", heads: [[0, 0]] } }, "the same number of tokens"],
    [{ text: TIRED, target: "not one token at all" }, "is not one token"],
    [{ text: TIRED, ablate_kind: "half" }, "ablate_kind"],
    [{ text: TIRED, frobnicate: 1 }, "unknown key \"frobnicate\""],
  ]) {
    const message = await page.evaluate((r) => { try { window.attentionExplainer.intervene(r); return "no error"; } catch (e) { return e.message; } }, bad);
    assert.ok(message.includes(words), `${JSON.stringify(bad)}: '${message}' names '${words}'`);
  }
  const s = await page.evaluate(() => window.attentionExplainer.setState({ view: "heads" }));
  assert.equal(s.view, "heads");
  await frames(page, 2);
  assert.deepEqual(errors.filter((e) => !/favicon/.test(e)), []);
  await context.close();
});
