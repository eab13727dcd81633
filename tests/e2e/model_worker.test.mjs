// End-to-end: the loaded model's forward in its Web Worker (web/model_worker.js). Typing computes there,
// incrementally (the first changed token on), while the views show the last complete text marked
// "updating…"; the next-token strip writes with the model; modelTrace is a Promise computed there. And the
// failure cases, each with the last good result kept and the page working: the model unloaded or replaced
// while the worker computes or while its weights move in (in pieces), a text past n_positions, the worker crashing, its script answering 404.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";
import { serveStatic, launchBrowser, openExplainer, frames, clickRect, holdKey, screenshot } from "./harness.mjs";

const run = promisify(execFile);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const NAME = "worker-gpt2";
const START = "The animal didn't cross the street because it";

let server, browser, work, files;
before(async () => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), "model-worker-e2e-"));
  const folder = path.join(work, NAME);
  // 24 positions: a text past them is refused (the learned position table ends there)
  await run("/usr/bin/python3", [path.join(ROOT, "tests/models/make_model.py"), "--out", folder, "--layers", "2",
    "--heads", "2", "--embd", "32", "--positions", "24", "--dtype", "F32", "--tokenizer", "vocab-merges", "--seed", "7"]);
  files = fs.readdirSync(folder).map((f) => ({ name: `${NAME}/${f}`, b64: fs.readFileSync(path.join(folder, f)).toString("base64") }));
  [server, browser] = await Promise.all([serveStatic(), launchBrowser()]);
});
after(async () => {
  await browser?.close();
  await server?.close();
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

const get = (page) => page.evaluate(() => window.attentionExplainer.getState());
const set = (page, partial) => page.evaluate((p) => window.attentionExplainer.setState(p), partial);
const load = (page) => page.evaluate((list) => window.attentionExplainer.loadModel({
  files: list.map(({ name, b64 }) => ({ name, data: Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)) })) }), files);
const settled = (page) => page.waitForFunction(() => !window.attentionExplainer.getState().model_run.pending, null, { timeout: 20000 });

async function loadInWorker(page) {
  await load(page);
  await page.waitForFunction(() => window.attentionExplainer.getState().model_run.where === "worker", null, { timeout: 20000 });
  return set(page, { sentence: START, view: "weights" });
}

// Compares getState's chosen-head weights with modelTrace's (computed in the worker in full).
async function assertSameAsTrace(page, label) {
  const s = await get(page);
  const trace = await page.evaluate((text) => window.attentionExplainer.modelTrace({ text, top: 3 }), s.sentence);
  assert.deepEqual(trace.tokens.length, s.tokens.length, `${label}: tokens`);
  const want = trace.attention[s.layer][s.head];
  let worst = 0;
  s.weights.forEach((row, i) => row.forEach((w, j) => { worst = Math.max(worst, Math.abs(w - want[i][j])); }));
  assert.ok(worst < 1e-5, `${label}: the page's weights and modelTrace's differ by ${worst}`);
  return s;
}

test("typing computes in the worker from the first changed token; the views wait marked updating…; the strip writes", async () => {
  const { page, context, errors } = await openExplainer(browser, server.url);
  let s = await loadInWorker(page);
  const before = s.tokens.length;
  // a key typed into the real text box: the worker computes, the frame does not wait
  const box = await page.evaluate(() => window.attentionExplainer.itemRect("sentence"));
  await clickRect(page, box);
  await holdKey(page, "End");
  await page.keyboard.type(" w", { delay: 60 });  // the worker's first text: computed in full (its cache was empty)
  await settled(page);
  await page.keyboard.type("as", { delay: 60 });  // then from the first changed token on
  await settled(page);
  s = await get(page);
  assert.equal(s.sentence, START + " was");
  assert.equal(s.model_run.last_where, "worker");
  assert.ok(s.model_run.incremental_from > 0 && s.model_run.incremental_from < s.tokens.length,
    `recomputed from ${s.model_run.incremental_from} of ${s.tokens.length}`);
  assert.equal(s.tokens.length, before + 1);
  await assertSameAsTrace(page, "typed");

  // writeToken: pending at once (the answer comes in a later task), the last complete text still shown
  const at = await page.evaluate(async () => {
    const api = window.attentionExplainer;
    const last = api.getState().tokens.length - 1;
    await api.setState({ token: last });
    const id = api.getState().next[0].id;
    const text = api.writeToken(id);
    const s = api.getState();
    return { text, pending: s.model_run.pending, shown: s.sentence, strip: s.view_data.next_strip.title };
  });
  assert.equal(at.pending, true);
  assert.equal(at.shown, START + " was", "the last complete text stays on screen");
  assert.match(at.strip, /updating…/);
  await settled(page);
  s = await get(page);
  assert.equal(s.sentence, at.text);
  assert.equal(s.token, s.tokens.length - 1, "the new last token is selected");
  // one new row per layer, computed from the start of the kernel's block of rows that holds it
  assert.ok(s.model_run.incremental_from > 0 && s.tokens.length - 1 - s.model_run.incremental_from < 8,
    `recomputed from ${s.model_run.incremental_from} of ${s.tokens.length}`);
  await assertSameAsTrace(page, "written");

  // a click in the strip writes too; the text box and the permalink follow
  await frames(page, 3);
  const rect = await page.evaluate(() => window.attentionExplainer.itemRect("next:0"));
  const token = s.next[0];
  await clickRect(page, rect);
  await settled(page);
  s = await get(page);
  assert.ok(s.sentence.startsWith(at.text) && s.sentence.length > at.text.length, s.sentence);
  await page.waitForFunction((text) => new URLSearchParams(location.search).get("sentence") === text, s.sentence);
  await frames(page, 3);
  await screenshot(page, "model-worker-written");
  console.log(`# wrote "${token.token}": "${s.sentence}", last ${s.model_run.last_ms.toFixed(2)} ms in the ${s.model_run.last_where}, ` +
    `rows ${s.model_run.incremental_from}…${s.model_run.last_T - 1}`);

  // an older answer for text changed since is dropped: two writes in one task, only the last one shown
  const two = await page.evaluate(() => {
    const api = window.attentionExplainer;
    api.writeToken(api.getState().next[0].id);
    return api.writeToken(api.getState().next[1].id);
  });
  await settled(page);
  s = await get(page);
  assert.equal(s.sentence, two, "the newer text's answer, never the older one's after it");
  assert.equal(s.model_run.error, "");
  assert.deepEqual(errors, []);
  await context.close();
});

test("the model unloaded or replaced while the worker computes: the answer is dropped, the page works", async () => {
  const { page, context, errors } = await openExplainer(browser, server.url);
  await loadInWorker(page);
  const s = await page.evaluate((name) => {
    const api = window.attentionExplainer;
    api.setState({ token: api.getState().tokens.length - 1 });
    api.writeToken(api.getState().next[0].id);
    api.unloadModel(name);
    return api.getState();
  }, NAME);
  assert.equal(s.model, "handmade");
  assert.equal(s.model_run.pending, false);
  await frames(page, 10);
  let after = await get(page);
  assert.equal(after.model, "handmade", "the dropped answer did not switch back");
  assert.equal((await set(page, { view: "heads" })).view, "heads");
  // replaced: the same name loaded again while a text is computed
  await loadInWorker(page);
  const replaced = await page.evaluate(async (list) => {
    const api = window.attentionExplainer;
    api.setState({ token: api.getState().tokens.length - 1 });
    const written = api.writeToken(api.getState().next[0].id);
    await api.loadModel({ files: list.map(({ name, b64 }) => ({ name, data: Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)) })) });
    return written;
  }, files);
  await settled(page);
  after = await get(page);
  assert.equal(after.model, NAME);
  assert.ok(after.sentence === START || after.sentence === replaced, after.sentence);
  await assertSameAsTrace(page, "after the replacement");
  assert.deepEqual(errors, []);
  await context.close();
});

test("the weights move in as many small pieces (64 KB): the worker's numbers are the page's; replaced mid-way, the page works", async () => {
  const { page, context, errors } = await openExplainer(browser, server.url);
  await page.evaluate(() => window.attentionExplainer.setModelPieceBytesForTest(65536));
  const inUse = (p) => p.evaluate(() => window.Module._attn_heap_in_use());  // the page's malloc bytes in use
  const weightBytes = Buffer.from(files.find((f) => f.name.endsWith("model.safetensors")).b64, "base64").length;
  const emptyPage = await inUse(page);
  // the model's ~6.5 MB in ~100 pieces, tensors split across them: any byte misplaced changes the numbers
  await loadInWorker(page);
  await settled(page);
  await assertSameAsTrace(page, "after ~100 pieces");
  // loaded again (its pieces begin at once) and unloaded in the same turn: the rest are not sent
  const mid = await page.evaluate(async ({ list, name }) => {
    const api = window.attentionExplainer;
    await api.loadModel({ files: list.map(({ name, b64 }) => ({ name, data: Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)) })) });
    api.unloadModel(name);
    return api.getState().model;
  }, { list: files, name: NAME });
  assert.equal(mid, "handmade");
  await frames(page, 10);
  assert.equal((await set(page, { view: "heads" })).view, "heads");
  await loadInWorker(page);
  await settled(page);
  await assertSameAsTrace(page, "loaded again after a send stopped half-way");
  // a token written: computed in the worker (once its pieces are in), against a page with no worker (its own weights)
  await page.evaluate(async () => { const api = window.attentionExplainer; await api.setState({ token: api.getState().tokens.length - 1 }); api.writeToken(api.getState().next[0].id); });
  await settled(page);
  const inWorker = await get(page);
  assert.equal(inWorker.model_run.last_where, "worker");
  assert.equal(inWorker.model_run.weights, "worker", "the page's copy of the weights is gone");
  const kept = (await inUse(page)) - emptyPage;
  const other = await openExplainer(browser, server.url, { route: ["**/model_worker.js", (r) => r.fulfill({ status: 404, body: "gone" })] });
  const emptyOther = await inUse(other.page);
  await load(other.page);
  await set(other.page, { sentence: inWorker.sentence, token: inWorker.token, view: "weights" });
  await settled(other.page);
  const inPage = await get(other.page);
  assert.equal(inPage.model_run.where, "page");
  assert.equal(inPage.model_run.weights, "page");
  assert.equal(inPage.sentence, inWorker.sentence);
  let worst = 0;
  inPage.weights.forEach((row, i) => row.forEach((w, j) => { worst = Math.max(worst, Math.abs(w - inWorker.weights[i][j])); }));
  assert.ok(worst < 1e-5, `the worker's weights (its model from ~100 pieces) and the page's differ by ${worst}`);
  assert.deepEqual(inPage.next.map((n) => n.id), inWorker.next.map((n) => n.id), "the next tokens");
  // memory: the two pages hold the same tokenizer, text and views; the one without a worker holds the weights too
  const keptWithout = (await inUse(other.page)) - emptyOther;
  console.log(`# the page's heap in use beyond an empty page: ${(kept / 1048576).toFixed(2)} MiB with the worker, ` +
    `${(keptWithout / 1048576).toFixed(2)} MiB without (the weights file: ${(weightBytes / 1048576).toFixed(2)} MiB)`);
  assert.ok(keptWithout - kept > 0.9 * weightBytes,
    `with its worker the page keeps ${kept} bytes, without ${keptWithout}: the difference is not the ${weightBytes}-byte weights`);
  await other.context.close();
  assert.deepEqual(errors, []);
  await context.close();
});

test("a text past n_positions is refused with its message; the last good text stays", async () => {
  const { page, context, errors } = await openExplainer(browser, server.url);
  await loadInWorker(page);
  const box = await page.evaluate(() => window.attentionExplainer.itemRect("sentence"));
  await clickRect(page, box);
  await holdKey(page, "End");
  await page.keyboard.type(" and then the dog ran far away from the house again because it was so very tired of all the noise");
  await frames(page, 5);
  const s = await get(page);
  // the views keep the last complete text (at most 24 tokens), the refusal is shown, nothing waits
  assert.ok(s.sentence.startsWith(START) && s.tokens.length <= 24, `${s.tokens.length} tokens: ${s.sentence}`);
  assert.match(s.error, /reads at most 24/);
  assert.equal(s.model_run.pending, false, "refused at once, never posted");
  assert.equal((await set(page, { view: "flow" })).view, "flow");
  assert.deepEqual(errors, []);
  await context.close();
});

test("the worker crashing: its weights go with it; the last answer stays, a change that needs them says so, the page works on", async () => {
  const { page, context, errors } = await openExplainer(browser, server.url);
  await loadInWorker(page);
  await page.waitForFunction(() => window.attentionExplainer.getState().model_run.weights === "worker", null, { timeout: 20000 });
  const before = await get(page);
  await page.evaluate(() => window.attentionExplainer.stopModelWorkerForTest());
  await page.waitForFunction(() => window.attentionExplainer.getState().model_run.where === "page", null, { timeout: 20000 });
  let s = await get(page);
  assert.match(s.model_run.error, /worker stopped/);
  assert.equal(s.sentence, before.sentence, "the last answer stays");
  assert.deepEqual(s.weights, before.weights);
  // a change that needs the model: refused with the reason; typing likewise; the views keep the last answer
  const message = await page.evaluate(() => { try { window.attentionExplainer.setState({ layer: 1 }); return "no error"; } catch (e) { return e.message; } });
  assert.match(message, /weights were in its worker, which stopped: load worker-gpt2 again to go on/);
  const box = await page.evaluate(() => window.attentionExplainer.itemRect("sentence"));
  await clickRect(page, box);
  await holdKey(page, "End");
  await page.keyboard.type(" w");
  await frames(page, 3);
  s = await get(page);
  assert.equal(s.sentence, before.sentence);
  assert.match(s.error, /load worker-gpt2 again/);
  await frames(page, 2);
  await screenshot(page, "model-worker-crashed");
  // the page works on: other views; the model loaded again computes in the page, the same numbers as the worker's
  assert.equal((await set(page, { view: "steps" })).view, "steps");
  await load(page);
  await set(page, { sentence: before.sentence, token: before.token, view: "weights" });
  await settled(page);
  s = await get(page);
  assert.equal(s.model_run.weights, "page");
  let worst = 0;
  s.weights.forEach((row, i) => row.forEach((w, j) => { worst = Math.max(worst, Math.abs(w - before.weights[i][j])); }));
  assert.ok(worst < 1e-5, `the page's numbers and the worker's differ by ${worst}`);
  assert.deepEqual(errors.filter((e) => !/asked to stop/.test(e)), []);
  await context.close();
});

test("the worker's script answering 404: the forward runs in the page a layer between frames, which says so", async () => {
  const { page, context, errors } = await openExplainer(browser, server.url, {
    route: ["**/model_worker.js", (r) => r.fulfill({ status: 404, body: "gone" })],
  });
  await load(page);
  await page.waitForFunction(() => window.attentionExplainer.getState().model_run.note !== "", null, { timeout: 20000 });
  let s = await set(page, { sentence: START });
  assert.equal(s.model_run.where, "page");
  assert.match(s.model_run.note, /worker stopped/);
  await page.evaluate(async () => { const api = window.attentionExplainer; await api.setState({ token: api.getState().tokens.length - 1 });
    api.writeToken(api.getState().next[0].id); });
  await settled(page);  // a layer between frames
  s = await get(page);
  assert.equal(s.model_run.last_where, "page");
  assert.equal(s.model_run.incremental_from, 0, "the page's wasm computes in full (the incremental forward is the worker's)");
  await assertSameAsTrace(page, "404");
  assert.deepEqual(errors.filter((e) => !/404|model_worker/.test(e)), []);
  await context.close();
});

test("the Cost view's K/V cache: what a new token computes and the last update's time; light theme, phone layout", async () => {
  for (const [label, options, query] of [["desktop-dark", {}, "?view=cost"], ["phone-light", { width: 390, height: 844, dpr: 2 }, "?view=cost&theme=light"]]) {
    const { page, context, errors } = await openExplainer(browser, server.url + query, options);
    await load(page);
    await page.waitForFunction(() => window.attentionExplainer.getState().model_run.where === "worker", null, { timeout: 20000 });
    await page.evaluate(async (start) => { const api = window.attentionExplainer; await api.setState({ sentence: start, view: "cost" });
      await api.setState({ token: api.getState().tokens.length - 1 }); api.writeToken(api.getState().next[0].id); }, START);
    await settled(page);  // the worker's first text: every row (its cache was empty); the next one: its new row
    await page.evaluate(() => { const api = window.attentionExplainer; api.writeToken(api.getState().next[0].id); });
    await settled(page);
    const s = await get(page);
    const kv = s.view_data.kv_cache;
    assert.equal(kv.available, true);
    assert.equal(kv.per_token_layer, 2 * kv.kv_heads * kv.head_dim);
    assert.match(kv.new_token.text, /one query per head against the \d+ keys held/);
    assert.equal(kv.new_token.score_macs_per_layer, kv.heads * s.tokens.length * kv.head_dim);
    assert.match(kv.measured, /Measured: the last change \(T = \d+\) computed rows \d+ to \d+ again: [\d.]+ ms in the model's worker/);
    await frames(page, 4);
    const rect = await page.evaluate(() => window.attentionExplainer.itemRect("cost:kv_update"));
    assert.ok(rect && rect.h > 0, "the update's lines are drawn");
    await screenshot(page, `model-worker-cost-${label}`);
    assert.deepEqual(errors, []);
    await context.close();
  }
});
