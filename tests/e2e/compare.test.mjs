// The compare view (?view=compare) in headless Chromium: two sentences (the lesson's tired / wide
// twins by default) or two query tokens, each row and the difference read back through
// getState().view_data, a real click on the mode switch, and a screenshot of each.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { serveStatic, launchBrowser, openExplainer, frames, screenshot, clickRect } from "./harness.mjs";

let server, browser;
before(async () => { server = await serveStatic(); browser = await launchBrowser(); });
after(async () => { await browser?.close(); await server?.close(); });

const close = (a, b, tol = 1e-6) => Math.abs(a - b) <= tol;

test("compare: the tired / wide twins with the hand-made model honestly show no flip", async () => {
  const { page, context, errors } = await openExplainer(browser, server.url + "?view=compare");
  await frames(page, 4);
  const s = await page.evaluate(() => window.attentionExplainer.getState());
  const c = s.view_data;
  assert.equal(c.mode, "sentences");
  assert.match(c.a.sentence, /it was tired$/);
  assert.match(c.b.sentence, /it was wide$/);
  assert.equal(c.a.query_text, "it");
  assert.equal(c.b.query_text, "it");
  // A is the main state's row; "it" reads "animal" in both: no flip, every difference 0
  c.a.weights.forEach((w, j) => assert.ok(close(w, s.weights[s.token][j]), `a[${j}]`));
  assert.equal(c.a.best_text, "animal");
  assert.equal(c.b.best_text, "animal");
  assert.equal(c.top_moved, false);
  assert.equal(c.difference.length, 10);
  assert.ok(c.difference.every((d) => close(d, 0)), JSON.stringify(c.difference));
  assert.equal(c.difference_keys[9], "tired/wide");
  assert.match(c.verdict, /The top weight stays on the same word/);
  assert.doesNotMatch(c.verdict, /referent|flip/);
  // B's row is what the same model gives for sentence B on its own
  const alone = await page.evaluate(() => window.attentionExplainer.setState({ view: "weights",
    sentence: "The animal didn't cross the street because it was wide" }));
  c.b.weights.forEach((w, j) => assert.ok(close(w, alone.weights[alone.token][j]), `b[${j}]`));
  await page.evaluate(() => window.attentionExplainer.setState({ view: "compare",
    sentence: "The animal didn't cross the street because it was tired" }));
  await frames(page, 3);
  await screenshot(page, "view-compare-twins");

  // A sentence whose "it" reads another word: B differs, and the largest change is named.
  const other = await page.evaluate(() => window.attentionExplainer.setState({
    compare_sentence: "The street was empty because it was wide" }).view_data);
  assert.equal(other.b.sentence, "The street was empty because it was wide");
  assert.equal(other.b.query_text, "it");
  assert.equal(other.b.best_text, "street", "no creature there: the pronoun's second wish, a thing");
  assert.equal(other.top_moved, true);
  assert.match(other.verdict, /moves from .animal. to .street./);
  assert.match(other.verdict, /not what the model concludes/);
  assert.ok(other.difference.some((d) => d === null), "different lengths: nothing to subtract past B's end");
  await page.evaluate(() => window.attentionExplainer.setState({ compare_sentence: "   " })).then(
    () => assert.fail("a blank second sentence is refused"), (e) => assert.match(e.message, /compare_sentence/));
  assert.deepEqual(errors, []);
  await context.close();
});

test("compare: two query tokens of one sentence, chosen with a real click; URL parameters", async () => {
  const { page, context, errors } = await openExplainer(browser,
    server.url + "?view=compare&compare_token=tired");
  await frames(page, 4);
  const box = await page.evaluate(() => window.attentionExplainer.itemRect("compare:tokens"));
  await clickRect(page, box, { atX: box.h / 2 });
  await frames(page, 3);
  const s = await page.evaluate(() => window.attentionExplainer.getState());
  const c = s.view_data;
  assert.equal(c.mode, "tokens");
  assert.equal(c.a.query_text, "it");
  assert.equal(c.b.query_text, "tired");
  // both rows are rows of the one weight matrix, and the difference is theirs, key by key
  c.b.weights.forEach((w, j) => assert.ok(close(w, s.weights[c.b.query][j]), `b[${j}]`));
  c.difference.forEach((d, j) => assert.ok(close(d, c.b.weights[j] - c.a.weights[j], 1e-6), `diff[${j}]`));
  assert.equal(c.a.best_text, "animal");
  assert.ok(c.largest_change !== null);
  await screenshot(page, "view-compare-tokens");
  // the permalink keeps the compare inputs
  const link = await page.evaluate(() => window.attentionExplainer.permalink());
  assert.match(link, /compare_tokens=1/);
  assert.match(link, /compare_token=9/);
  assert.deepEqual(errors, []);
  await context.close();
});

test("compare at 800×600 draws without console errors", async () => {
  const { page, context, errors } = await openExplainer(browser, server.url + "?view=compare", { width: 800, height: 600 });
  await frames(page, 4);
  await screenshot(page, "small-compare");
  assert.deepEqual(errors, []);
  await context.close();
});

test("tabs in teaching order; developer internals only behind Advanced; inactive controls say why", async () => {
  const { page, context, errors } = await openExplainer(browser, server.url + "?view=derive");
  await frames(page, 4);
  const order = ["library", "steps", "flow", "weights", "derive", "mistakes", "break", "cost", "build", "practice",
    "heads", "compare"];
  const xs = await page.evaluate((names) => names.map((n) => window.attentionExplainer.itemRect("tab:" + n).x), order);
  xs.slice(1).forEach((x, i) => assert.ok(x > xs[i], `tab ${order[i + 1]} after ${order[i]}`));
  // off by default: no backend picker; a real click on Advanced shows it
  const backendRect = () => page.evaluate(() => { try { return window.attentionExplainer.itemRect("backend"); } catch (e) { return null; } });
  assert.equal(await backendRect(), null);
  await clickRect(page, await page.evaluate(() => window.attentionExplainer.itemRect("advanced")), { atX: 10 });
  await frames(page, 3);
  assert.equal((await page.evaluate(() => window.attentionExplainer.getState())).advanced, true);
  assert.ok(await backendRect(), "the backend picker is shown");
  await screenshot(page, "view-derive-advanced");
  assert.deepEqual(errors, []);
  await context.close();
});
