// End-to-end: what the Heads and Cost views teach of a model family, with small random models loaded
// in the page: Gemma 3 (5 local layers of window 4 : 1 global, q/k norm, RoPE, one K/V head) and
// Llama (8 query heads on 2 K/V heads). Each new picture is drawn (its rect on the canvas, inside the
// screen), its numbers are readable in getState() and in the screen-reader mirror, on a desktop and a
// 390×844 phone (no sideways scroll), in the light theme and in presentation mode.
// Not the numbers' unit tests (tests/unit/test_family_views.cpp) and not the loader's (models.test.mjs).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { serveStatic, launchBrowser, openExplainer, frames, screenshot } from "./harness.mjs";
import { makeFamilyModel } from "../models/fixtures.mjs";

const WINDOW = 4;
let server, browser, gemma, llama, gemma2;
const folderFiles = (dir, name) =>
  fs.readdirSync(dir).map((f) => ({ name: `${name}/${f}`, b64: fs.readFileSync(path.join(dir, f)).toString("base64") }));

before(async () => {
  gemma = folderFiles(makeFamilyModel({ family: "gemma3_text", layers: 6, heads: 4, kv_heads: 1, head_dim: 8, d_model: 32,
    window: WINDOW, sliding_pattern: 6, tokenizer: "llama2", seed: 3 }), "tiny-gemma3");
  llama = folderFiles(makeFamilyModel({ family: "llama", layers: 2, heads: 8, kv_heads: 2, head_dim: 4, d_model: 32, tokenizer: "llama2", seed: 4 }),
    "tiny-llama");
  gemma2 = folderFiles(makeFamilyModel({ family: "gemma2", layers: 2, heads: 2, kv_heads: 1, head_dim: 8, d_model: 32,
    window: WINDOW, attn_softcap: 5, query_pre_attn_scalar: 10, tokenizer: "llama2", seed: 6 }), "tiny-gemma2");
  [server, browser] = await Promise.all([serveStatic(), launchBrowser()]);
});
after(async () => {
  await browser?.close();
  await server?.close();
});

async function load(page, files) {
  const info = await page.evaluate((list) => window.attentionExplainer.loadModel({
    files: list.map(({ name, b64 }) => ({ name, data: Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)) })) }), files);
  await page.evaluate((name) => window.attentionExplainer.setState({ model: name, view: "heads", layer: 0, head: 1,
    sentence: "The animal didn't cross the street because it was too tired" }), info.name);
  await frames(page, 4);
  return info;
}
const state = (page) => page.evaluate(() => window.attentionExplainer.getState());
const rect = (page, name) => page.evaluate((n) => window.attentionExplainer.itemRect(n), name);
// The mirror is rebuilt 150 ms after a change.
async function mirror(page) {
  await page.waitForTimeout(400);
  return page.evaluate(() => document.getElementById("view-numbers").textContent);
}
function onScreen(r, width, what) {
  assert.ok(r && r.w > 0 && r.h > 0, `${what} is drawn`);
  assert.ok(r.x >= -0.5 && r.x + r.w <= width + 0.5, `${what} spans ${r.x.toFixed(1)}..${(r.x + r.w).toFixed(1)} of ${width}`);
}
async function scrollTo(page, name) {
  // the view scrolls: bring a picture into view by its rect (a wheel over the view)
  for (let i = 0; i < 40; i++) {
    const r = await rect(page, name), vh = page.viewportSize().height;
    if (r && r.y >= 0 && r.y + Math.min(r.h, vh * 0.5) <= vh) return r;
    await page.mouse.move(page.viewportSize().width * 0.7, vh * 0.6);
    await page.mouse.wheel(0, r && r.y < 0 ? -300 : 300);
    await frames(page, 3);
  }
  return rect(page, name);
}

test("Gemma 3: the layer strip, the window's band, RoPE by distance, q/k norm, the K/V cache", async () => {
  const t0 = Date.now();
  const { page, context, errors } = await openExplainer(browser, server.url + "?view=heads");
  await load(page, gemma);
  let s = await state(page);
  const f = s.view_data.family;
  const T = s.tokens.length;
  assert.ok(T > WINDOW, `the text (${T} tokens) is longer than the window`);
  assert.deepEqual(f.layer_kinds.map((l) => l.kind), ["local", "local", "local", "local", "local", "global"]);
  assert.equal(f.window, WINDOW);
  assert.equal(f.groups.text, "All 4 heads share one K/V head.");
  assert.equal(f.positions.kind, "rope");
  assert.equal(f.positions.by_distance.length, T);
  // the curve at the pair's real distance is the score the head used (no cap in Gemma 3)
  const p = f.positions;
  assert.ok(Math.abs(p.by_distance[p.distance] - s.scores[p.query_token][p.key_token]) < 1e-4,
    `${p.by_distance[p.distance]} vs the head's score ${s.scores[p.query_token][p.key_token]}`);
  assert.ok(f.qk_norm && f.qk_norm.head_dim === 8, "q/k norm shown");
  for (const name of ["heads:layer:0", "heads:layer:5", "heads:groups"]) onScreen(await rect(page, name), 1280, name);
  for (const name of ["heads:distance_plot", "heads:window_band", "heads:qk_norm"]) onScreen(await scrollTo(page, name), 1280, name);
  await screenshot(page, "family-gemma3-heads-desktop");
  const text = await mirror(page);
  for (const words of ["sees the last 4 tokens", "Score by distance", "Q/K norm", "global, sees the whole text"])
    assert.ok(text.includes(words), `the mirror says "${words}"`);

  // a real click on the global layer in the strip chooses it: no window any more
  await page.evaluate(() => window.attentionExplainer.setState({ view: "heads" }));
  const global = await scrollTo(page, "heads:layer:5");
  await page.mouse.click(global.x + global.w / 2, global.y + global.h / 2);
  await frames(page, 3);
  s = await state(page);
  assert.equal(s.layer, 5);
  assert.equal(s.view_data.family.window, 0);

  // Cost: the cache counted by hand: 2 × 1 K/V head × 8 numbers per token and layer, five layers
  // holding the last 4 tokens, one holding all T; 4 bytes a number (F32).
  await page.evaluate(() => window.attentionExplainer.setState({ view: "cost" }));
  await frames(page, 3);
  s = await state(page);
  const kv = s.view_data.kv_cache;
  assert.equal(kv.per_token_layer, 16);
  assert.deepEqual(kv.tokens_held, [4, 4, 4, 4, 4, T]);
  assert.equal(kv.bytes, 16 * (5 * 4 + T) * 4);
  assert.equal(kv.bytes_unshared, 64 * (5 * 4 + T) * 4);
  assert.equal(kv.bytes_no_window, 16 * 6 * T * 4);
  onScreen(await rect(page, "cost:kv_cache"), 1280, "the K/V cache lines");
  await screenshot(page, "family-gemma3-cost-desktop");
  assert.ok((await mirror(page)).includes(`kv cache, bytes: ${kv.bytes}`), "the mirror has the cache's bytes");

  // light theme and presentation mode: the same pictures, still inside the screen
  await page.evaluate(() => window.attentionExplainer.setState({ view: "heads", layer: 0, theme: "light", present: true }));
  await frames(page, 4);
  for (const name of ["heads:distance_plot", "heads:window_band"]) onScreen(await scrollTo(page, name), 1280, `${name} (light, presenting)`);
  await screenshot(page, "family-gemma3-heads-light-present");
  assert.deepEqual(errors, []);
  await context.close();
  console.log(`gemma 3 desktop: ${Date.now() - t0} ms`);
});

test("Llama: heads grouped by their K/V head, the cache it saves; GPT-2 wording nowhere", async () => {
  const { page, context, errors } = await openExplainer(browser, server.url + "?view=heads");
  await load(page, llama);
  let s = await state(page);
  const f = s.view_data.family;
  assert.equal(f.groups.text, "Heads 1–4 share K/V head 1, heads 5–8 share K/V head 2.");
  assert.equal(f.groups.kv_head_of_chosen, 0);
  assert.equal(f.window, 0);
  assert.equal(f.softcap, undefined);
  assert.equal(f.qk_norm, undefined);
  onScreen(await rect(page, "heads:groups"), 1280, "the groups line");
  await assert.rejects(rect(page, "heads:layer:0"), /no control named heads:layer:0/, "no layer strip without windows");
  await screenshot(page, "family-llama-heads-desktop");
  assert.ok((await mirror(page)).includes("Heads 1–4 share K/V head 1"), "the mirror says which heads share");
  await page.evaluate(() => window.attentionExplainer.setState({ view: "cost" }));
  await frames(page, 3);
  s = await state(page);
  const T = s.tokens.length, kv = s.view_data.kv_cache;
  assert.equal(kv.per_token_layer, 2 * 2 * 4);
  assert.equal(kv.per_token_layer_unshared, 2 * 8 * 4);
  assert.equal(kv.bytes, 16 * T * 2 * 4);
  assert.equal(kv.bytes_unshared, 4 * kv.bytes);
  assert.deepEqual(errors, []);
  await context.close();
});

test("Gemma 2: Steps and Flow write the scores as the model computes them (its own factor, the cap, the window)", async () => {
  const { page, context, errors } = await openExplainer(browser, server.url + "?view=steps");
  await load(page, gemma2);
  const set = (p) => page.evaluate((q) => window.attentionExplainer.setState(q), p);
  // the sliding layer: Gemma 2 alternates local and global
  let local = -1;
  for (const layer of [0, 1]) if ((await set({ view: "steps", step: 6, layer, token: 8 })).view_data.window === WINDOW) local = layer;
  assert.ok(local >= 0, "one of the two layers slides");
  let s = await set({ step: 1, layer: local, head: 0, token: 8 });
  const d = s.view_data;
  assert.equal(d.formula, "score_j = 5·tanh(q·k_j × 0.3162 / 5)", "query_pre_attn_scalar 10: 10^-½, then the cap");
  assert.ok(Math.abs(d.score_factor - 10 ** -0.5) < 1e-6);
  assert.equal(d.softcap, 5);
  d.raw_scores.forEach((raw, j) => {
    assert.ok(Math.abs(d.scaled_scores[j] - raw * d.score_factor) < 1e-4, `key ${j}: scaled`);
    assert.ok(Math.abs(d.scores[j] - 5 * Math.tanh(raw * d.score_factor / 5)) < 1e-4, `key ${j}: the score is the capped one`);
  });
  s = await set({ step: 4 });
  assert.equal(s.view_data.formula, "A = softmax(5·tanh(Q·Kᵀ × 0.3162 / 5))      output = A·V");
  // the mask step names the window: query 9 sees keys 6 to 9 in a window of 4
  s = await set({ step: 6 });
  assert.match(s.view_data.formula, new RegExp(`j ≤ i − ${WINDOW} \\(this layer's window\\)`));
  assert.match(s.view_data.seen, /window of 4 tokens lets it look at keys 6 to 9 only; the 5 before them and the \d+ after it are hidden/);
  const hidden = s.view_data.masked_keys;
  assert.deepEqual(hidden.filter((k) => k < 8), [0, 1, 2, 3, 4]);
  assert.equal(hidden.length, s.tokens.length - 4);
  // the global layer: only the causal mask
  s = await set({ layer: 1 - local });
  assert.match(s.view_data.seen, /may look at keys 1 to 9; the \d+ after it/);
  // Flow's scores box, and what its hint says of the cap
  s = await set({ view: "flow", layer: local });
  const box = s.view_data.scales.find((b) => b.box === "scores");
  assert.equal(box.formula, "5·tanh(Q·Kᵀ × 0.3162 / 5), masked");
  await frames(page, 3);
  // the next-token strip's tokens ask for the fallback fonts too (this seed's strip shows a Cyrillic token)
  const strip = (await state(page));
  assert.ok(strip.next.some((n) => /[\u0400-\u04FF]/.test(n.token)), JSON.stringify(strip.next.map((n) => n.token)));
  for (let i = 0; i < 20 && !(await state(page)).fonts.loaded.length; i++) await frames(page, 5);
  assert.ok((await state(page)).fonts.loaded.length > 0, "a fallback font for the strip's Cyrillic token");
  await screenshot(page, "family-gemma2-flow");
  await set({ view: "steps", step: 1 });
  await frames(page, 3);
  await screenshot(page, "family-gemma2-steps-scores");
  assert.ok((await mirror(page)).includes("5·tanh(q·k_j × 0.3162 / 5)"), "the mirror has the formula");
  assert.deepEqual(errors, []);
  await context.close();
});

test("phone 390×844: the new pictures re-flow to the width (no sideways scroll)", async () => {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 3, isMobile: true, hasTouch: true });
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(server.url + "?view=heads");
  await page.evaluate(() => window.attentionExplainer.ready.then(() => true));
  await load(page, gemma);
  for (const [view, theme, pictures] of [["heads", "dark", ["heads:distance_plot", "heads:window_band", "heads:qk_norm"]],
    ["heads", "light", ["heads:layer:5"]], ["cost", "dark", ["cost:kv_cache"]]]) {
    await page.evaluate(([v, th]) => window.attentionExplainer.setState({ view: v, theme: th }), [view, theme]);
    await frames(page, 4);
    const content = await rect(page, "view:content");
    assert.ok(content.x + content.w <= 390.5, `${view}: the view scrolls sideways to ${(content.x + content.w).toFixed(1)} px`);
    for (const name of pictures) {
      const r = await rect(page, name);
      onScreen(r, 390, `phone ${name}`);
    }
    await page.screenshot({ path: path.join(path.dirname(new URL(import.meta.url).pathname), "out", `family-phone-${view}-${theme}.png`), scale: "css" });
  }
  assert.deepEqual(errors, []);
  await context.close();
});
