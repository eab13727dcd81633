// End-to-end: the explainer page in headless Chromium. Loads with no console error, the lesson's
// "it" → "animal", compute() against the core's known numbers, real mouse clicks, DPR 1 and 2.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { serveStatic, launchBrowser, openExplainer, frames, screenshot, distinctColours, clickRect } from "./harness.mjs";

let server, browser;
before(async () => { server = await serveStatic(); browser = await launchBrowser(); });
after(async () => { await browser?.close(); await server?.close(); });

test("page loads with no console error; 'it' attends most to 'animal'", async () => {
  const { page, context, errors } = await openExplainer(browser, server.url);
  const s = await page.evaluate(() => window.attentionExplainer.getState());
  assert.equal(s.sentence, "The animal didn't cross the street because it was tired");
  assert.equal(s.token_text, "it");
  const row = s.weights[s.token];
  const best = row.indexOf(Math.max(...row));
  assert.equal(s.tokens[best], "animal");
  assert.ok(row[best] > 0.5, `weight on animal ${row[best]}`);
  for (const r of s.weights) assert.ok(Math.abs(r.reduce((a, b) => a + b, 0) - 1) < 1e-5);
  assert.equal(s.view, "flow");
  await frames(page);
  assert.deepEqual(errors, []);
  await context.close();
});

test("compute() gives the lesson's Derive numbers and the CLI's error messages", async () => {
  const { page, context } = await openExplainer(browser, server.url);
  const r = await page.evaluate(() => window.attentionExplainer.compute(
    { Q: [[1, 0], [0, 1], [1, 1]], K: [[1, 0], [0, 1], [1, 1]], V: [[1, 2], [3, 4], [5, 6]] }));
  const expectW = [[0.40, 0.20, 0.40], [0.20, 0.40, 0.40], [0.25, 0.25, 0.50]];
  const expectO = [[3.0, 4.0], [3.41, 4.41], [3.51, 4.51]];
  r.weights.forEach((row, i) => row.forEach((w, j) => assert.ok(Math.abs(w - expectW[i][j]) < 0.006, `w${i}${j}=${w}`)));
  r.output.forEach((row, i) => row.forEach((o, j) => assert.ok(Math.abs(o - expectO[i][j]) < 0.006, `o${i}${j}=${o}`)));
  for (const backend of ["scalar", "eigen", "simd"]) {
    const c = await page.evaluate((b) => window.attentionExplainer.compute(
      { Q: [[1, 0], [0, 1]], K: [[1, 0], [0, 1]], V: [[1], [2]], causal: true, backend: b }), backend);
    assert.equal(c.scores[0][1], null);
    assert.equal(c.weights[0][1], 0);
    assert.equal(c.backend, backend);
  }
  const message = await page.evaluate(() => {
    try { window.attentionExplainer.compute({ Q: [[1, 2], [3]], K: [[1, 2]], V: [[1]] }); return "no error"; }
    catch (e) { return e.message; }
  });
  assert.match(message, /ragged/);
  await context.close();
});

test("setState changes inputs and views; invalid values throw naming the key", async () => {
  const { page, context, errors } = await openExplainer(browser, server.url);
  const s = await page.evaluate(() => window.attentionExplainer.setState({ view: "weights", causal: true }));
  assert.equal(s.view, "weights");
  assert.equal(s.causal, true);
  for (let i = 0; i < s.weights.length; i++)
    for (let j = i + 1; j < s.weights.length; j++) assert.equal(s.weights[i][j], 0);
  for (const [partial, key] of [[{ temperature: -1 }, "temperature"], [{ view: "nope" }, "view"],
    [{ sentence: "" }, "sentence"], [{ token: "zebra" }, "token"], [{ causal: "yes" }, "causal"], [{ colour: 1 }, "colour"]]) {
    const message = await page.evaluate((p) => {
      try { window.attentionExplainer.setState(p); return "no error"; } catch (e) { return e.message; }
    }, partial);
    assert.ok(message.startsWith(key + ":"), `${JSON.stringify(partial)} -> ${message}`);
  }
  const after = await page.evaluate(() => window.attentionExplainer.getState());
  assert.equal(after.sentence, s.sentence, "a refused change keeps the last good state");
  assert.deepEqual(errors, []);
  await context.close();
});

test("?view= and other URL parameters open that state; bad ones only warn", async () => {
  const { page, context, errors } = await openExplainer(browser,
    server.url + "?view=library&causal=1&token=animal&temperature=abc&bogus=1");
  const s = await page.evaluate(() => window.attentionExplainer.getState());
  assert.equal(s.view, "library");
  assert.equal(s.causal, true);
  assert.equal(s.token_text, "animal");
  assert.equal(s.temperature, 1);
  assert.deepEqual(errors, []);
  await context.close();
});

test("a real mouse click on the causal checkbox changes the weights", async () => {
  const { page, context } = await openExplainer(browser, server.url);
  const before = await page.evaluate(() => window.attentionExplainer.getState());
  assert.equal(before.causal, false);
  assert.ok(before.weights[0][1] > 0);
  // The checkbox is in the controls column; find its label's position from the app itself.
  const box = await page.evaluate(() => window.attentionExplainer.itemRect("causal"));
  assert.ok(box, "the app reports where the causal checkbox is");
  await clickRect(page, box, { atX: box.h / 2 });
  const after = await page.evaluate(() => window.attentionExplainer.getState());
  assert.equal(after.causal, true);
  assert.equal(after.weights[0][1], 0);
  await context.close();
});

for (const dpr of [1, 2]) {
  test(`screenshot at devicePixelRatio ${dpr} is not blank and sharp; the canvas follows a resize`, async () => {
    const { page, context, errors } = await openExplainer(browser, server.url, { dpr });
    await frames(page, 5);
    const backing = await page.evaluate(() => [document.getElementById("canvas").width, document.getElementById("canvas").height]);
    assert.deepEqual(backing, [1280 * dpr, 800 * dpr], "backing store = CSS size × DPR");
    // the page resized (a window, or an iframe a course page resizes): the canvas follows
    await page.setViewportSize({ width: 900, height: 640 });
    await page.waitForFunction((expected) => {
      const c = document.getElementById("canvas");
      return c.width === expected[0] && c.height === expected[1];
    }, [900 * dpr, 640 * dpr], { timeout: 10000 });
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.waitForFunction((expected) => document.getElementById("canvas").width === expected, 1280 * dpr,
      { timeout: 10000 });
    await frames(page, 3);
    const { png } = await screenshot(page, `explainer-dpr${dpr}`);
    const { colours, width } = await distinctColours(page, png);
    assert.equal(width, 1280 * dpr);
    assert.ok(colours > 50, `screenshot has only ${colours} colours`);
    assert.deepEqual(errors, []);
    await context.close();
  });
}
