// Robustness in the browser: a table of bad inputs through every door (setState, compute, URL),
// missing browser features (no WASM SIMD, no WebGL2), and a long soak with memory figures.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { serveStatic, launchBrowser, openExplainer, frames, screenshot, clickRect, holdKey } from "./harness.mjs";

let server, browser;
before(async () => { server = await serveStatic(); browser = await launchBrowser(); });
after(async () => { await browser?.close(); await server?.close(); });

const long = "word ".repeat(20000);
// [name, partial state, key the error must name]
const BAD_STATE = [
  ["empty sentence", { sentence: "" }, "sentence"],
  ["whitespace-only sentence", { sentence: " \t\n  " }, "sentence"],
  ["100 000 characters", { sentence: long }, "sentence"],
  ["200 tokens", { sentence: "a ".repeat(200) }, "sentence"],
  ["NaN in a derive cell", { derive_q: [[NaN, 0], [0, 1], [1, 1]] }, "derive_q"],
  ["Infinity in a derive cell", { derive_v: [[1, 2], [3, 4], [5, Infinity]] }, "derive_v"],
  ["1e308 in a derive cell", { derive_k: [[1e308, 0], [0, 1], [1, 1]] }, "derive_k"],
  ["ragged derive matrix", { derive_q: [[1, 0], [0], [1, 1]] }, "derive_q"],
  ["huge d for break", { break_d: 1e9 }, "break_d"],
  ["huge T for break", { break_T: 100000 }, "break_T"],
  ["temperature NaN", { temperature: NaN }, "temperature"],
  ["temperature 1e308", { temperature: 1e308 }, "temperature"],
  ["token out of range", { token: 99 }, "token"],
  ["unknown mistake", { mistake: "all" }, "mistake"],
];
// Odd but valid text: accepted, weights finite and rows summing to 1.
const ODD_TEXT = [
  ["emoji and combining marks", "The 🐱 café naïve e\u0301 saw it 👩‍🔬"],
  ["right-to-left text", "הכלב ראה את it כי הוא היה עייף"],
  ["mixed punctuation", "Wait... it -- (the animal) -- was tired?!"],
];

test("bad inputs through setState: a clear error naming the key, the last good state kept", async () => {
  const { page, context, errors } = await openExplainer(browser, server.url);
  const good = await page.evaluate(() => window.attentionExplainer.getState());
  for (const [name, partial, key] of BAD_STATE) {
    const message = await page.evaluate((p) => {
      // NaN and Infinity do not survive JSON: send them the way a page would, as numbers.
      try { window.attentionExplainer.setState(p); return "accepted"; } catch (e) { return e.message; }
    }, partial);
    assert.ok(message.startsWith(key + ":"), `${name}: ${message}`);
    const now = await page.evaluate(() => window.attentionExplainer.getState());
    assert.equal(now.sentence, good.sentence, name);
    assert.deepEqual(now.weights, good.weights, name);
  }
  for (const [name, sentence] of ODD_TEXT) {
    const s = await page.evaluate((text) => window.attentionExplainer.setState({ sentence: text }), sentence);
    assert.equal(s.sentence, sentence, name);
    for (const row of s.weights) {
      assert.ok(row.every(Number.isFinite), name);
      assert.ok(Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 1e-5, name);
    }
  }
  await frames(page, 3);
  assert.deepEqual(errors, []);
  await context.close();
});

test("bad inputs through compute: errors, never a crash; huge sizes refused", async () => {
  const { page, context, errors } = await openExplainer(browser, server.url);
  const cases = [
    ["not JSON", "{"],
    ["NaN literal", "{\"Q\":[[NaN]],\"K\":[[1]],\"V\":[[1]]}"],
    ["huge T", JSON.stringify({ Q: Array.from({ length: 5000 }, () => [1]), K: [[1]], V: [[1]] })],
    ["huge d", JSON.stringify({ Q: [Array(2000).fill(1)], K: [Array(2000).fill(1)], V: [[1]] })],
    ["1e308", JSON.stringify({ Q: [[1e308]], K: [[1]], V: [[1]] })],
    ["deep nesting", "[".repeat(100000) + "]".repeat(100000)],
    ["string", "\"hello\""],
  ];
  for (const [name, text] of cases) {
    const message = await page.evaluate((t) => {
      try { window.attentionExplainer.compute(t); return "accepted"; } catch (e) { return e.message; }
    }, text);
    assert.notEqual(message, "accepted", name);
    assert.ok(message.length > 5 && message.length < 300, `${name}: ${message}`);
  }
  const ok = await page.evaluate(() => window.attentionExplainer.compute({ Q: [[1]], K: [[1]], V: [[2]] }));
  assert.equal(ok.output[0][0], 2);
  assert.deepEqual(errors, []);
  await context.close();
});

test("a sentence typed into the box that is invalid shows a message and keeps the views", async () => {
  const { page, context } = await openExplainer(browser, server.url);
  const box = await page.evaluate(() => window.attentionExplainer.itemRect("sentence"));
  await clickRect(page, box, { atX: 10 });
  await holdKey(page, "Control+A");
  await holdKey(page, "Backspace");
  await frames(page, 2);
  const s = await page.evaluate(() => window.attentionExplainer.getState());
  assert.equal(s.sentence, "The animal didn't cross the street because it was tired", "last good sentence kept");
  assert.match(s.error, /empty/);
  await screenshot(page, "robust-empty-sentence");
  await page.keyboard.type("The dog saw it");
  await frames(page, 4);
  const t = await page.evaluate(() => window.attentionExplainer.getState());
  assert.equal(t.sentence, "The dog saw it");
  assert.equal(t.error, "");
  await context.close();
});

test("without WASM SIMD the baseline build is loaded and computes the same numbers", async () => {
  const context = await browser.newContext();
  await context.addInitScript(() => {
    const validate = WebAssembly.validate;
    WebAssembly.validate = (bytes) => (bytes.length < 64 ? false : validate(bytes));  // the SIMD probe fails
  });
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(server.url);
  await page.evaluate(() => window.attentionExplainer.ready.then(() => true));
  assert.equal(await page.evaluate(() => window.attentionExplainer.build), "baseline");
  const r = await page.evaluate(() => window.attentionExplainer.compute(
    { Q: [[1, 0], [0, 1], [1, 1]], K: [[1, 0], [0, 1], [1, 1]], V: [[1, 2], [3, 4], [5, 6]], backend: "simd" }));
  assert.ok(Math.abs(r.output[1][0] - 3.407) < 2e-3, `output ${r.output[1][0]}`);
  assert.deepEqual(errors, []);
  await context.close();
});

test("without WebGL2 the page says so in words instead of a blank canvas", async () => {
  const context = await browser.newContext();
  await context.addInitScript(() => {
    const getContext = HTMLCanvasElement.prototype.getContext;
    HTMLCanvasElement.prototype.getContext = function (kind, ...rest) {
      return kind === "webgl2" ? null : getContext.call(this, kind, ...rest);
    };
  });
  const page = await context.newPage();
  await page.goto(server.url);
  await page.waitForSelector("#status.error");
  assert.match(await page.textContent("#status-text"), /WebGL2/);
  const rejected = await page.evaluate(() => window.attentionExplainer.ready.then(() => "resolved", (e) => e.message));
  assert.match(rejected, /WebGL2/);
  await screenshot(page, "robust-no-webgl2");
  await context.close();
});

test("a site missing its font file says so instead of hanging", async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.route("**/ui_font.ttf", (route) => route.fulfill({ status: 404, body: "not found" }));
  await page.goto(server.url);
  await page.waitForSelector("#status.error");
  assert.match(await page.textContent("#status-text"), /ui_font\.ttf.*404/);
  const rejected = await page.evaluate(() => window.attentionExplainer.ready.then(() => "resolved", (e) => e.message));
  assert.match(rejected, /ui_font/);
  await context.close();
});

test("soak: 10 000 frames with inputs changing every frame, no memory growth, no console error", async () => {
  // A small canvas and frames drawn on demand (Module._attn_run_frame) rather than waiting for the
  // display: the same frame code, ten thousand times, in minutes instead of a quarter of an hour.
  const { page, context, errors } = await openExplainer(browser, server.url, { width: 320, height: 240 });
  const figures = await page.evaluate(async () => {
    const api = window.attentionExplainer;
    const memory = () => window.Module.HEAP8.buffer.byteLength;
    const inUse = () => window.Module._attn_heap_in_use();  // malloc's bytes in use: a leak shows here first
    const sentences = ["The animal didn't cross the street because it was tired", "The dog saw it",
      "A cat sat on the mat because it was warm and it was happy"];
    // every view (Cost with a whole matrix of T = 256, recomputed whenever the mask flips)
    const views = api.inputs.find((f) => f.name === "view").choices;
    api.setState({ cost_T: 256 });
    const cycle = 50 * views.length;  // frames until every view has been shown once
    const total = 10000;
    let afterWarmup = 0;
    const cycleStarts = [];  // heap in use at the start of each later cycle: the same view, the same inputs
    for (let i = 0; i < total; i++) {
      api.setState({ sentence: sentences[i % 3], token: i % 4, causal: i % 2 === 0, temperature: 0.5 + (i % 7) / 4,
        view: views[Math.floor(i / 50) % views.length] });
      window.Module._attn_run_frame();
      if (i % 500 === 0) await new Promise((r) => setTimeout(r, 0));  // let the page breathe
      if (i === cycle) afterWarmup = memory();
      if (i >= cycle && i % (3 * cycle) === 0) cycleStarts.push(inUse());  // 3 cycles: the same sentence too
    }
    return { start: afterWarmup, end: memory(), frames: total, views, cycleStarts };
  });
  console.log(`soak: ${figures.frames} frames over ${figures.views.join(", ")}; wasm memory after warm-up ` +
    `${figures.start} bytes, at the end ${figures.end} bytes; heap in use at the same point of each cycle: ${figures.cycleStarts.join(", ")}`);
  assert.ok(figures.views.includes("cost"));
  assert.equal(figures.end, figures.start, "wasm memory did not grow after warm-up");
  assert.ok(figures.cycleStarts.length >= 4);
  const spread = Math.max(...figures.cycleStarts) - Math.min(...figures.cycleStarts);
  assert.ok(spread < 64 * 1024, `heap in use at the same point of each cycle varies by ${spread} bytes (a leak?)`);
  assert.deepEqual(errors, []);
  await context.close();
});
