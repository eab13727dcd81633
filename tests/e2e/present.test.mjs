// Presentation mode (?present=1) and explanations reachable by a click, in headless Chromium: no
// controls column, larger type, an explanation on screen without hovering; a real click on a weight
// cell pins its explanation, a click elsewhere unpins it; the menu leaves presentation mode; a phone.
// Screenshots: tests/e2e/out/present-*.png.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { serveStatic, launchBrowser, frames, screenshot, clickRect } from "./harness.mjs";

let server, browser;
before(async () => { server = await serveStatic(); browser = await launchBrowser(); });
after(async () => { await browser?.close(); await server?.close(); });

const state = (page) => page.evaluate(() => window.attentionExplainer.getState());
// A control's rect in CSS px, or null when the app has never drawn it (or it is empty this frame).
const rect = (page, name) => page.evaluate((n) => {
  try {
    const r = window.attentionExplainer.itemRect(n);
    return r.w > 0 && r.h > 0 ? r : null;
  } catch { return null; }
}, name);
const set = async (page, partial) => { await page.evaluate((p) => window.attentionExplainer.setState(p), partial); await frames(page, 4); };

async function open(url, options = {}) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, ...options });
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
  await page.goto(server.url + url);
  await page.evaluate(() => window.attentionExplainer.ready.then(() => true));
  await frames(page, 6);
  return { context, page, errors };
}

test("presentation mode: no controls, large type, explanations on screen without hovering", async () => {
  const { context, page, errors } = await open("?present=1&view=weights");
  let s = await state(page);
  assert.equal(s.present, true);
  // the controls column and the tabs were never drawn; the one small menu is
  for (const name of ["sentence", "causal", "scale", "reset", "advanced", "tab:weights", "views", "more"])
    assert.equal(await rect(page, name), null, `${name} is not on screen in presentation mode`);
  const menu = await rect(page, "present:menu");
  assert.ok(menu && menu.w < 80, "a small menu button");
  // the selected token's strongest cell is explained in the column, the mouse never having moved
  const column = await rect(page, "explanations");
  assert.ok(column && column.x > 1280 * 0.55, "the explanations column is on the right");
  const explained = s.view_data.explanation;
  assert.ok(explained, "view_data.explanation");
  assert.match(explained.text, /'it' \(row 8, query\) looking at 'animal' \(column 2, key\)/);
  assert.match(explained.text, /q·k = /, "the arithmetic, not just a title");
  assert.equal(explained.pinned, false);
  await screenshot(page, "present-weights-1280");

  // larger type: the same button presented and not (kPresentScale 1.6 on a desktop)
  await set(page, { view: "steps" });
  const presented = await rect(page, "step:next");
  // a control's explanation ("d: ...") is listed in the column in presentation mode
  await set(page, { view: "break" });
  assert.ok((await state(page)).view_data.explanation.items.some((t) => t.startsWith("d: the length")));
  await screenshot(page, "present-break-1280");
  await set(page, { view: "steps", present: false });
  const plain = await rect(page, "step:next");
  const ratio = presented.h / plain.h;
  assert.ok(ratio > 1.45 && ratio < 1.75, `the Next button is ${ratio.toFixed(2)}× taller in presentation mode`);
  assert.ok(await rect(page, "reset"), "the controls are back");
  // and back on: the menu's "Leave presentation mode", clicked for real
  await set(page, { present: true, view: "library" });
  assert.match((await state(page)).view_data.explanation.text, /Book .*key token/, "the best book, explained");
  await screenshot(page, "present-library-1280");
  await page.setViewportSize({ width: 1920, height: 1080 });
  await set(page, { view: "weights" });
  await screenshot(page, "present-weights-1920");
  await set(page, { view: "flow" });
  await screenshot(page, "present-flow-1920");
  await clickRect(page, await rect(page, "present:menu"));
  await clickRect(page, await rect(page, "present:leave"));
  assert.equal((await state(page)).present, false);
  assert.deepEqual(errors, []);
  await context.close();
});

test("a click on a weight cell pins its explanation; a click elsewhere unpins it", async () => {
  const { context, page, errors } = await open("?view=weights");
  const matrix = await rect(page, "weights:matrix");
  assert.ok(matrix);
  assert.equal((await state(page)).view_data?.explanation, undefined, "nothing pinned at first");
  // the bottom-right cell: "tired" looking at "tired" (row 10, column 10); a click also selects its row
  const s0 = await state(page);
  const T = s0.tokens.length;
  const cellSize = 8;  // well inside the last cell, whatever its size
  await clickRect(page, { x: matrix.x + matrix.w - cellSize - 2, y: matrix.y + matrix.h - cellSize - 2, w: 4, h: 4 });
  await page.mouse.move(5, 795);  // away: no hover anywhere near
  await frames(page, 4);
  let s = await state(page);
  assert.equal(s.token, T - 1, "the click selected the row");
  assert.equal(s.view_data.explanation.pinned, true);
  assert.match(s.view_data.explanation.text, new RegExp(`\\(row ${T}, query\\) looking at .* \\(column ${T}, key\\)`));
  const box = await rect(page, "explanation:pinned");
  assert.ok(box, "the pinned box is on screen without hovering");
  const shot = await screenshot(page, "present-pinned-cell");
  assert.ok(shot.png.length > 0);
  // a click on plain text elsewhere (the title line) unpins it
  await clickRect(page, { x: 20, y: 4, w: 4, h: 4 });
  s = await state(page);
  assert.equal(s.view_data?.explanation, undefined, "unpinned");
  assert.equal(await rect(page, "explanation:pinned"), null);
  // the "(?)" after the causal switch toggles its explanation (the switch's own click toggles the mask)
  const causal = await rect(page, "causal");
  const marker = { x: causal.x + causal.w + 6, y: causal.y, w: 24, h: causal.h };
  await clickRect(page, marker);
  await page.mouse.move(5, 795);
  await frames(page, 3);
  s = await state(page);
  assert.match(s.view_data.explanation.text, /only at itself and earlier tokens/);
  assert.equal(s.causal, false, "the marker is not the switch");
  await clickRect(page, marker);
  assert.equal((await state(page)).view_data?.explanation, undefined, "a second click closes it");
  assert.deepEqual(errors, []);
  await context.close();
});

test("presentation mode on a phone: no controls, the explanations under the view", async () => {
  const { context, page, errors } = await open("?present=1&view=weights",
    { viewport: { width: 390, height: 844 }, deviceScaleFactor: 3, isMobile: true, hasTouch: true });
  for (const name of ["sentence", "more", "views"]) assert.equal(await rect(page, name), null, `${name} absent`);
  const column = await rect(page, "explanations");
  assert.ok(column && column.y > 844 * 0.5 && column.w > 300, "the column is under the view");
  const content = await rect(page, "view:content");
  assert.ok(content.x + content.w <= 390 + 1, `the view fits the phone's width (${content.x + content.w})`);
  assert.match((await state(page)).view_data.explanation.text, /looking at/);
  await screenshot(page, "present-phone-weights");
  // a tap pins another cell's explanation (a finger has no hover); a short sentence keeps the whole
  // matrix above the column
  await set(page, { sentence: "The cat sat" });
  const matrix = await rect(page, "weights:matrix");
  await page.touchscreen.tap(matrix.x + matrix.w - 6, matrix.y + matrix.h - 6);
  await frames(page, 6);
  const s = await state(page);
  assert.equal(s.view_data.explanation.pinned, true);
  assert.match(s.view_data.explanation.text, new RegExp(`\\(row ${s.tokens.length}, query\\)`));
  await screenshot(page, "present-phone-pinned");
  assert.deepEqual(errors, []);
  await context.close();
});
