// The design in headless Chromium: the sentence's word chips (a real click and the keyboard make a
// word the query), the query/key/value hues the same in Flow and Steps and different per theme, each
// Flow box with its own scale, and the Steps' formula box light in the light theme. Colours are read
// from screenshots (WebGL canvases cannot be read back). Screenshots: tests/e2e/out/design-*.png.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { serveStatic, launchBrowser, openExplainer, frames, screenshot, clickRect, holdKey, walkTo } from "./harness.mjs";

let server, browser;
before(async () => { server = await serveStatic(); browser = await launchBrowser(); });
after(async () => { await browser?.close(); await server?.close(); });

const rect = (page, name) => page.evaluate((n) => window.attentionExplainer.itemRect(n), name);
const state = (page) => page.evaluate(() => window.attentionExplainer.getState());
// Waits until the named items keep their place for three frames in a row (a layout can take a few
// frames to settle after a change: the view's scroll bars follow the content of the frame before).
async function settle(page, names) {
  let last = "", same = 0;
  for (let i = 0; i < 60 && same < 3; i++) {
    await frames(page, 1);
    const now = JSON.stringify(await Promise.all(names.map((n) => rect(page, n))));
    same = now === last ? same + 1 : 0;
    last = now;
  }
}

// The theme hues as the palette (src/state/palette.cpp) writes them.
const HUES = {
  dark: { query: [0xf0, 0x8c, 0xc8], key: [0x4f, 0xd1, 0xb5], value: [0xe3, 0xb0, 0x4b] },
  light: { query: [0xa3, 0x20, 0x6c], key: [0x0b, 0x6b, 0x5a], value: [0x86, 0x54, 0x00] },
};

// The pixels of a screenshot in a CSS-pixel rect, decoded by the browser: [[r, g, b], ...].
async function pixels(page, png, r) {
  return page.evaluate(async ([b64, r]) => {
    const bitmap = await createImageBitmap(await (await fetch(`data:image/png;base64,${b64}`)).blob());
    const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
    const ctx = canvas.getContext("2d");
    ctx.drawImage(bitmap, 0, 0);
    const x = Math.max(0, Math.floor(r.x)), y = Math.max(0, Math.floor(r.y));
    const w = Math.max(1, Math.ceil(r.w)), h = Math.max(1, Math.ceil(r.h));
    const d = ctx.getImageData(x, y, w, h).data;
    const out = [];
    for (let i = 0; i < d.length; i += 4) out.push([d[i], d[i + 1], d[i + 2]]);
    return out;
  }, [png.toString("base64"), r]);
}
const distance = (a, b) => Math.max(...a.map((v, i) => Math.abs(v - b[i])));
const nearest = (list, colour) => Math.min(...list.map((p) => distance(p, colour)));
const luminance = ([r, g, b]) => (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

test("word chips: one per token, wrapped inside the sidebar; a real click makes that word the query", async () => {
  const { page, context, errors } = await openExplainer(browser, server.url + "?view=flow");
  await frames(page, 3);
  const s = await state(page);
  const sentence = await rect(page, "sentence");
  const chips = [];
  for (let i = 0; i < s.tokens.length; ++i) chips.push(await rect(page, `chip:${i}`));
  // every chip inside the sentence box's column (wrapping, never past the edge), in reading order
  for (const [i, c] of chips.entries()) {
    assert.ok(c.x >= sentence.x - 1 && c.x + c.w <= sentence.x + sentence.w + 1, `chip ${i} inside the column`);
    if (i > 0) assert.ok(c.y > chips[i - 1].y || c.x > chips[i - 1].x, `chip ${i} after chip ${i - 1}`);
  }
  assert.ok(new Set(chips.map((c) => c.y)).size > 1, "the ten words wrap onto more than one line");
  const animal = s.tokens.indexOf("animal");
  assert.notEqual(s.token, animal);
  await clickRect(page, chips[animal]);
  assert.equal((await state(page)).token, animal, "a click on the chip 'animal' makes it the query");
  const street = s.tokens.indexOf("street");
  await clickRect(page, chips[street]);
  assert.equal((await state(page)).token, street);
  // the current query's chip is filled with the query hue
  const { png } = await screenshot(page, "design-chips");
  const on = await pixels(page, png, chips[street]), off = await pixels(page, png, chips[animal]);
  const q = HUES.dark.query;
  const tint = (list) => median(list.map((p) => distance(p, q)));
  assert.ok(tint(on) < tint(off) - 20, `the current chip is tinted with the query hue (${tint(on)} vs ${tint(off)})`);
  assert.deepEqual(errors, []);
  await context.close();
});

test("word chips: the keyboard reaches a chip and Space picks that word", async () => {
  const { page, context, errors } = await openExplainer(browser, server.url + "?view=flow");
  await page.keyboard.press("Tab");
  await holdKey(page, "ArrowDown");  // wakes the keyboard cursor
  const s = await state(page);
  const animal = s.tokens.indexOf("animal");
  await walkTo(page, `chip:${animal}`);
  await holdKey(page, "Space");
  assert.equal((await state(page)).token, animal);
  assert.deepEqual(errors, []);
  await context.close();
});

test("query, key and value: one hue each, the same in Flow and Steps, its theme's; each Flow box has its scale", async () => {
  const { page, context, errors } = await openExplainer(browser, server.url + "?view=flow");
  for (const theme of ["dark", "light"]) {
    for (const view of ["flow", "steps"]) {
      await page.evaluate(([v, t]) => window.attentionExplainer.setState({ view: v, theme: t, step: 0 }), [view, theme]);
      await settle(page, [`${view}:Q`, `${view}:K`, `${view}:V`]);
      const { png } = await screenshot(page, `design-${view}-${theme}`);
      for (const [part, name] of [["query", "Q"], ["key", "K"], ["value", "V"]]) {
        const r = await rect(page, `${view}:${name}`);
        const other = theme === "dark" ? HUES.light[part] : HUES.dark[part];
        // the box's border: its top edge, a few pixels thick
        const edge = await pixels(page, png, { x: r.x + 2, y: r.y - 1, w: r.w - 4, h: 4 });
        // most of the edge's length is drawn in this theme's hue (anti-aliased blends aside)
        const own = edge.filter((p) => distance(p, HUES[theme][part]) <= 12).length;
        const others = edge.filter((p) => distance(p, other) <= 12).length;
        assert.ok(own >= (r.w - 4) * 0.8, `${view} ${name} border in the ${theme} ${part} hue (${own} pixels)`);
        assert.ok(others < own / 4, `${view} ${name}: not the other theme's hue (${others} pixels)`);
      }
    }
  }
  // Flow: every box says its own range (the view data carries what each scale bar shows)
  await page.evaluate(() => window.attentionExplainer.setState({ view: "flow", theme: "dark" }));
  const flow = (await state(page)).view_data;
  const boxes = Object.fromEntries(flow.scales.map((b) => [b.box, b]));
  for (const name of ["X", "Q", "K", "V", "scores", "weights", "output"]) assert.ok(boxes[name], `${name} has a scale`);
  assert.deepEqual([boxes.weights.low, boxes.weights.high], [0, 1]);
  assert.equal(boxes.Q.low, -boxes.Q.high);
  assert.ok(boxes.Q.high > 0 && boxes.scores.high > 0);
  assert.deepEqual(errors, []);
  await context.close();
});

test("light theme: the Steps' formula box and diagram are light, the dark theme's dark", async () => {
  const { page, context, errors } = await openExplainer(browser, server.url + "?view=steps");
  for (const [theme, light] of [["light", true], ["dark", false]]) {
    await page.evaluate((t) => window.attentionExplainer.setState({ theme: t, step: 0 }), theme);
    await frames(page, 4);
    const { png } = await screenshot(page, `design-steps-box-${theme}`);
    for (const name of ["steps:formula", "steps:Q"]) {
      const r = await rect(page, name);
      const inner = await pixels(page, png, { x: r.x + 3, y: r.y + 3, w: 4, h: 4 });  // the fill, left of the text
      const lum = median(inner.map(luminance));
      assert.ok(light ? lum > 0.75 : lum < 0.25, `${name} fill luminance ${lum.toFixed(2)} in the ${theme} theme`);
    }
  }
  assert.deepEqual(errors, []);
  await context.close();
});
