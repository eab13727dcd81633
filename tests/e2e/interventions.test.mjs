// End-to-end: attentionExplainer.intervene in headless Chromium against PyTorch forward hooks
// (tests/models/torch_interventions.py) on a random GPT-2 model loaded through the page's own file
// chooser: ablation, cut links, patching, attribution, value-weighted attention and rollout within
// 1e-4; bad requests throw an Error naming the key and the page keeps working.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { serveStatic, launchBrowser, openExplainer, frames, shown, screenshot, distinctColours } from "./harness.mjs";
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
    const message = await page.evaluate(async (r) => { try { await window.attentionExplainer.intervene(r); return "no error"; } catch (e) { return e.message; } }, bad);
    assert.ok(message.includes(words), `${JSON.stringify(bad)}: '${message}' names '${words}'`);
  }
  const s = await page.evaluate(() => window.attentionExplainer.setState({ view: "heads" }));
  assert.equal(s.view, "heads");
  await frames(page, 2);
  assert.deepEqual(errors.filter((e) => !/favicon/.test(e)), []);
  await context.close();
});

test("Compare asks the trained model: its answers, each head's direct share and each head switched off, as intervene() gives them", async () => {
  const A = "the animal didn ' t cross the street because it was tired . it refers to the";
  const B = "the animal didn ' t cross the street because it was wide . it refers to the";
  const { page, context, errors } = await openExplainer(browser, server.url);
  const s = await page.evaluate(([a, b]) => window.attentionExplainer.setState(
    { model: "trained (built in)", view: "compare", sentence: a, compare_sentence: b, token: 16 }), [A, B]);
  const ask = s.view_data.ask;
  assert.ok(ask && ask.ablated, "asked, with every head switched off (2 heads: 4 layer runs)");
  const run = (r) => page.evaluate((q) => window.attentionExplainer.intervene(q), r);
  const [ra, rb] = [await run({ text: A, target: ask.target, against: ask.against, top: 1 }),
    await run({ text: B, target: ask.target, against: ask.against, top: 1 })];
  assert.equal(ask.answer_a, ra.next[16][0].id);
  assert.equal(ask.answer_b, rb.next[16][0].id);
  assert.notEqual(ask.answer_a, ask.answer_b, "the twins' answers differ: the logit difference of the two is measured");
  assert.ok(Math.abs(ask.difference_a - ra.attribution.logit) < 1e-4 && Math.abs(ask.difference_b - rb.attribution.logit) < 1e-4);
  let rest_a = ask.difference_a, rest_b = ask.difference_b;
  for (const [h, head] of ask.heads.entries()) {
    assert.ok(Math.abs(head.share_a - ra.attribution.heads[0][h]) < 1e-4, `head ${h} share in A`);
    assert.ok(Math.abs(head.share_b - rb.attribution.heads[0][h]) < 1e-4, `head ${h} share in B`);
    rest_a -= head.share_a, rest_b -= head.share_b;
    for (const [text, answer, own, delta] of [[A, head.answer_a, ask.answer_a, head.delta_a], [B, head.answer_b, ask.answer_b, head.delta_b]]) {
      const off = await run({ text, ablate: [[0, h]], target: own, top: 1 });
      assert.equal(answer, off.intervened.next[16][0].id, `head ${h} off: the answer`);
      assert.ok(Math.abs(delta - off.intervened.delta_log_prob) < 1e-4, `head ${h} off: Δ log p ${delta} vs ${off.intervened.delta_log_prob}`);
    }
  }
  assert.ok(Math.abs(rest_a - ask.rest_a) < 1e-4 && Math.abs(rest_b - ask.rest_b) < 1e-4, "the parts add up to the measured difference");
  // The words on screen say what was measured, and the first layer's limit (the ratio of two weights)
  assert.match(ask.text, /likeliest next token is '[^']+' in A .* and '[^']+' in B/);
  assert.match(ask.text, /L1 H1: direct share [-+]\d+\.\d\d in A, [-+]\d+\.\d\d in B\. Switched off: A answers/);
  assert.match(ask.text, /no head of L1 can change which one it prefers/);
  assert.doesNotMatch(s.view_data.verdict + ask.text, /the referent|the model's answer is the/i);
  await frames(page, 2);
  assert.deepEqual(errors.filter((e) => !/favicon/.test(e)), []);
  await context.close();
});

test("Heads view: the sweep switches every head off in the model's worker, as intervene({sweep}) computes it; Cancel stops, Continue goes on there", async () => {
  const folder = makeModel({ layers: 3, heads: 4, embd: 36, dtype: "F32", seed: 22 });
  const { page, context, errors } = await openExplainer(browser, server.url);
  await page.setInputFiles("#model-files", fs.readdirSync(folder).map((f) => path.join(folder, f)));
  await page.waitForFunction(() => window.attentionExplainer.getState().model !== "handmade", null, { timeout: 30000 });
  let s = await page.evaluate((text) => window.attentionExplainer.setState({ view: "heads", sentence: text, token: 6 }), TIRED);
  assert.equal(s.view_data.sweep, null, "no sweep before it is asked for");
  // Started and stopped at once: the cells done stay, the rest are null; on again, it continues.
  s = await page.evaluate(() => { const api = window.attentionExplainer; api.setState({ heads_sweep: true }); return api.setState({ heads_sweep: false }); });
  await frames(page, 3);
  s = await page.evaluate(() => window.attentionExplainer.getState());
  assert.equal(s.view_data.sweep.running, false);
  assert.equal(s.view_data.sweep.done, 0, "stopped before its first frame: nothing ran");
  await page.evaluate(() => window.attentionExplainer.setState({ heads_sweep: true }));
  await page.waitForFunction(() => window.attentionExplainer.getState().view_data.sweep.done > 0);
  await page.evaluate(() => window.attentionExplainer.setState({ heads_sweep: false }));
  const part = (await page.evaluate(() => window.attentionExplainer.getState())).view_data.sweep;
  assert.ok(part.done >= 1 && part.done <= part.total, JSON.stringify(part));
  assert.equal(part.values.flat().filter((v) => v !== null).length, part.done);
  await page.evaluate(() => window.attentionExplainer.setState({ heads_sweep: true }));
  await page.waitForFunction(() => { const w = window.attentionExplainer.getState().view_data.sweep; return w.done === w.total; }, null, { timeout: 60000 });
  s = await page.evaluate(() => window.attentionExplainer.getState());
  const sweep = s.view_data.sweep;
  assert.equal(sweep.total, 12);
  assert.equal(sweep.where, "worker", "swept in the model's worker");
  assert.equal(sweep.target, s.next[0].id, "the likeliest next token after the selected one");
  const ref = await page.evaluate(([text, target]) => window.attentionExplainer.intervene({ text, at: 6, target, sweep: "heads" }), [TIRED, sweep.target]);
  // The whole sweep through the one-shot path: the same numbers (one sweep resumed over frames, bit for bit natively)
  assert.ok(worst(sweep.values, ref.sweep.values) < 1e-5, `sweep: ${JSON.stringify(sweep.values)} vs ${JSON.stringify(ref.sweep.values)}`);
  assert.ok(Math.abs(sweep.baseline - ref.sweep.baseline) < 1e-5);
  assert.match(sweep.text, /^12 of 12 heads switched off, each alone\. .* The largest change: L\d H\d off, [-+]\d+\.\d\d\./);
  // subscribers heard of the last cells: the screen-reader mirror says what the map shows
  await page.waitForFunction(() => document.getElementById("view-numbers").textContent.includes("Each head switched off: 12 of 12"));
  // Another position starts it again
  s = await page.evaluate(() => window.attentionExplainer.setState({ token: 3 }));
  assert.equal(s.view_data.sweep.done, 0);
  assert.equal(s.view_data.sweep.position, 3);
  await page.evaluate(() => window.attentionExplainer.setState({ heads_sweep: false }));
  await frames(page, 2);
  assert.deepEqual(errors.filter((e) => !/favicon/.test(e)), []);
  await context.close();
});

test("the interventions as inputs: setState's numbers are intervene()'s, they round-trip through getState and a permalink, bad entries are refused by name", async () => {
  const folder = makeModel({ layers: 3, heads: 4, embd: 36, dtype: "F32", seed: 23 });
  const { page, context, errors } = await openExplainer(browser, server.url);
  await page.setInputFiles("#model-files", fs.readdirSync(folder).map((f) => path.join(folder, f)));
  await page.waitForFunction(() => window.attentionExplainer.getState().model !== "handmade", null, { timeout: 30000 });
  const api = (fn, arg) => page.evaluate(fn, arg);
  const edits = { ablate: [[2, 3], [0, 1]], ablate_kind: "mean", cut: [{ layer: 1, head: "all", query: 8, key: 1 }] };
  let s = await api((e) => window.attentionExplainer.setState({ view: "heads", sentence: e.text, token: 8, ...e.edits }), { text: TIRED, edits });
  assert.deepEqual([s.ablate, s.ablate_kind, s.cut, s.patch], [edits.ablate, "mean", edits.cut, null], "getState gives them back");
  const shown = s.intervention;
  assert.equal(shown.active, true);
  assert.equal(shown.at, 8);
  const ref = await api((r) => window.attentionExplainer.intervene(r), { text: TIRED, at: 8, target: shown.target.id, ...edits });
  assert.ok(Math.abs(shown.base_log_prob - ref.log_prob) < 1e-5 && Math.abs(shown.log_prob - ref.intervened.log_prob) < 1e-5,
    `page ${shown.base_log_prob} → ${shown.log_prob}, intervene ${ref.log_prob} → ${ref.intervened.log_prob}`);
  assert.equal(shown.target.id, ref.next[8][0].id, "the target: the unchanged run's likeliest next token");
  assert.equal(s.next[0].id, ref.intervened.next[8][0].id, "the strip shows the changed run");
  // what each head adds to the answer, in the Heads view: the changed run's direct logit attribution
  const a = s.view_data.attribution;
  assert.equal(a.target.id, shown.target.id);
  for (const k of ["logit", "offset", "embeddings", "heads", "biases", "mlps"]) assert.ok(worst(a[k], ref.attribution[k]) < 1e-4, k);
  assert.ok(Math.abs(a.sum - a.logit) < 1e-4 * Math.max(1, Math.abs(a.logit)), "the parts add up to the logit");
  assert.match(a.text, /^Each square: what one head writes straight into the logit of .* in all -?\d+\.\d\d, the logit itself/);
  assert.ok(Math.abs(s.next[0].p - ref.intervened.next[8][0].p) < 1e-5);
  // the shown head's weights are the changed run's (layer 1: every head cut from key 1 at query 8)
  s = await api(() => window.attentionExplainer.setState({ view: "weights", layer: 1, head: 2 }));
  assert.equal(s.weights[8][1], 0);
  assert.equal(s.scores[8][1], null, "a cut key's score is −∞, as a masked one");
  assert.ok(Math.abs(s.weights[8].reduce((a, b) => a + b, 0) - 1) < 1e-6);
  for (const [h, row] of ref.intervened.attention[1].entries()) assert.equal(row[8][1], 0, `intervene: head ${h} cut too`);
  assert.ok(worst(s.weights, ref.intervened.attention[1][2]) < 1e-5);
  // the readings beside the weights: value-weighted and rollout, of the changed run, as intervene gives them
  s = await api(() => window.attentionExplainer.setState({ weights_show: "value_weighted" }));
  assert.equal(s.view_data.reading.kind, "value_weighted");
  assert.ok(worst(s.view_data.reading.values, ref.value_weighted[1][2]) < 1e-5);
  assert.ok(worst(s.view_data.reading.value_norms, ref.value_norms[1][2]) < 1e-5);
  assert.match(s.view_data.reading.text, /^Value-weighted \(Kobayashi et al\., 2020\).* Here (both agree|they disagree)/);
  assert.match(s.view_data.check.prompt, /^Which word does '·it' take the most from, weight × the length of what the word sends\?/);
  s = await api(() => window.attentionExplainer.setState({ weights_show: "rollout" }));
  assert.ok(worst(s.view_data.reading.values, ref.rollout[1]) < 1e-5);
  await page.waitForFunction(() => document.getElementById("view-numbers").textContent.includes("Rollout: the share of each key token"));
  s = await api(() => window.attentionExplainer.setState({ weights_show: "weights" }));
  assert.equal(s.view_data.reading, null);
  assert.match(s.view_data.interventions.entries.join(" | "), /L3 H4 switched off .* \| L1 H2 switched off .* \| '·it' cannot see '·animal' in every head of L2/);
  assert.match(s.view_data.interventions.effect, /before your changes, .* with them \(log p -?\d+\.\d\d → -?\d+\.\d\d, a change of/);
  // a patch from the twin sentence: the share it restores, as intervene computes it
  s = await api((w) => window.attentionExplainer.setState({ ablate: [], cut: [], patch: { from: w, heads: [[1, 2]] } }), WIDE);
  const pref = await api((r) => window.attentionExplainer.intervene(r), { text: TIRED, at: 8, target: s.intervention.target.id, patch: { from: WIDE, heads: [[1, 2]] } });
  assert.ok(Math.abs(s.intervention.log_prob - pref.patch.patched_log_prob) < 1e-5);
  assert.ok(Math.abs(s.intervention.patch.source_log_prob - pref.patch.source_log_prob) < 1e-5);
  assert.ok(pref.patch.restored === null ? s.intervention.patch.restored === null : Math.abs(s.intervention.patch.restored - pref.patch.restored) < 1e-4);
  // Refused with one line naming the input; nothing changes
  const before = JSON.stringify((({ ablate, cut, patch }) => ({ ablate, cut, patch }))(await api(() => window.attentionExplainer.getState())));
  for (const [bad, words] of [
    [{ ablate: [[0, 9]] }, "ablate"], [{ ablate: [[0]] }, "ablate"], [{ ablate_kind: "half" }, "ablate_kind"],
    [{ cut: [{ layer: 0, head: 0, query: 2, key: 5 }] }, "cut"], [{ cut: [{ layer: 0, head: 0, query: 0, key: 0 }] }, "cut"],
    [{ cut: [{ layer: 0, query: 2, key: 1 }] }, "cut"], [{ patch: { from: "The animal", heads: [[0, 0]] } }, "as many tokens"],
    [{ patch: { from: WIDE } }, "patch"],
  ]) {
    const message = await api((b) => { try { window.attentionExplainer.setState(b); return "no error"; } catch (e) { return e.message; } }, bad);
    assert.ok(message.includes(words) && !message.includes("\n"), `${JSON.stringify(bad)}: '${message}' names '${words}'`);
  }
  const after = await api(() => window.attentionExplainer.getState());
  assert.equal(JSON.stringify({ ablate: after.ablate, cut: after.cut, patch: after.patch }), before);
  // A shorter text drops what it no longer fits, with a note; the page says so.
  s = await api(() => window.attentionExplainer.setState({ patch: null, ablate: [[1, 1]], cut: [{ layer: 0, head: 1, query: 9, key: 3 }] }));
  s = await api(() => window.attentionExplainer.setState({ sentence: "The animal was tired" }));
  assert.deepEqual([s.ablate, s.cut], [[[1, 1]], []]);
  assert.match(s.intervention.note, /^Dropped, as the new model or text no longer fits it: cut 0\.1:9-3/);
  await page.waitForFunction(() => document.getElementById("view-numbers").textContent.includes("Your changes inside the model"));
  await frames(page, 2);
  assert.deepEqual(errors.filter((e) => !/favicon/.test(e)), []);
  await context.close();
});

test("a permalink carries the interventions: the trained model opens with the same head switched off and the same patch", async () => {
  const A = "the animal didn ' t cross the street because it was tired . it refers to the";
  const B = "the animal didn ' t cross the street because it was wide . it refers to the";
  const { page, context, errors } = await openExplainer(browser, server.url);
  const s = await page.evaluate(([a, b]) => window.attentionExplainer.setState({ model: "trained (built in)", view: "heads",
    sentence: a, token: 16, ablate: [[0, 1]], patch: { from: b, heads: [[0, 0]] } }), [A, B]);
  const link = await page.evaluate(() => window.attentionExplainer.permalink());
  assert.match(link, /ablate=%5B%5B0%2C1%5D%5D/);
  assert.match(link, /patch=%7B/);
  // ready: once the link's model has arrived and every parameter of the link applied (the address bar,
  // rewritten by the model's arrival in between, does not lose them)
  const other = await openExplainer(browser, link);
  const t = await other.page.evaluate(() => window.attentionExplainer.getState());
  assert.deepEqual([t.model, t.ablate, t.patch, t.token], [s.model, s.ablate, s.patch, 16]);
  assert.equal(t.intervention.log_prob, s.intervention.log_prob, "the same numbers, exactly");
  assert.equal(t.intervention.patch.restored, s.intervention.patch.restored);
  // the Heads view marks the switched-off head and offers it back; the controls list the changes
  await shown(other.page, "heads:ablate");
  const png = await screenshot(other.page, "interventions-heads");
  assert.ok((await distinctColours(other.page, png.png)).colours > 20);
  for (const p of [page, other.page]) await frames(p, 2);
  assert.deepEqual([...errors, ...other.errors].filter((e) => !/favicon/.test(e)), []);
  await other.context.close();
  await context.close();
});

test("Compare's patching sweeps in the model's worker: every head, then every layer and position, copied from B alone, as intervene({patch, sweep}) computes them", async () => {
  const folder = makeModel({ layers: 3, heads: 4, embd: 36, dtype: "F32", seed: 24 });
  const { page, context, errors } = await openExplainer(browser, server.url);
  await page.setInputFiles("#model-files", fs.readdirSync(folder).map((f) => path.join(folder, f)));
  await page.waitForFunction(() => window.attentionExplainer.getState().model !== "handmade", null, { timeout: 30000 });
  let s = await page.evaluate(([a, b]) => window.attentionExplainer.setState({ view: "compare", sentence: a, compare_sentence: b, token: 10 }), [TIRED, WIDE]);
  assert.equal(s.view_data.patch_sweep, null, "none before it is asked for");
  for (const [over, kind, total] of [["heads", "patch_heads", 12], ["positions", "patch_positions", 33]]) {
    await page.evaluate((o) => window.attentionExplainer.setState({ patch_sweep: o }), over);
    await page.waitForFunction(() => { const w = window.attentionExplainer.getState().view_data.patch_sweep; return w && w.done === w.total; }, null, { timeout: 60000 });
    s = await page.evaluate(() => window.attentionExplainer.getState());
    const sweep = s.view_data.patch_sweep;
    assert.deepEqual([sweep.over, sweep.total, sweep.position, sweep.where], [over, total, 10, "worker"]);
    const ref = await page.evaluate(([a, b, target, o]) => window.attentionExplainer.intervene({ text: a, at: 10, target, patch: { from: b }, sweep: o }),
      [TIRED, WIDE, sweep.target, over]);
    assert.equal(ref.sweep.kind, kind);
    assert.ok(Math.abs(sweep.baseline - ref.sweep.baseline) < 1e-5 && Math.abs(sweep.source - ref.sweep.source) < 1e-5);
    const diff = sweep.values.flat().reduce((m, v, i) => Math.max(m, v === null ? (ref.sweep.values.flat()[i] === null ? 0 : Infinity) : Math.abs(v - ref.sweep.values.flat()[i])), 0);
    assert.ok(diff < 1e-4, `${over}: ${diff}`);
    assert.match(sweep.text, new RegExp(`^${total} of ${total} .* copied from B into A, each alone\\. log p of .* in A and .* in B\\.`));
  }
  // stopped, it keeps its cells; another sentence B starts it again
  s = await page.evaluate(() => window.attentionExplainer.setState({ patch_sweep: "none" }));
  assert.equal(s.view_data.patch_sweep.done, 33);
  s = await page.evaluate(() => window.attentionExplainer.setState({ compare_sentence: "The animal didn't cross the street because it was old" }));
  assert.equal(s.view_data.patch_sweep, null);
  await frames(page, 2);
  assert.deepEqual(errors.filter((e) => !/favicon/.test(e)), []);
  await context.close();
});
