// Phones and tablets: Playwright's mobile emulation (isMobile, hasTouch, DPR 2-3), portrait and
// landscape. Every view re-flows to the screen's width (what cannot, a wide table, scrolls inside a
// box of its own: the view never scrolls sideways) with its main picture on screen, and a finger works: a tap clicks, a drag scrolls, a long press shows the tooltip, and the phone's
// keyboard (the page's hidden input) types into the sentence. Screenshots: tests/e2e/out/phone-*.png.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { serveStatic, launchBrowser, frames, appViews, OUT } from "./harness.mjs";

const DEVICES = [
  { name: "phone-360", width: 360, height: 640, dpr: 3 },
  { name: "phone-390", width: 390, height: 844, dpr: 3 },
  { name: "tablet-820", width: 820, height: 1180, dpr: 2 },
];
const within = (r, width) => r.w > 0 && r.x >= -0.5 && r.x + r.w <= width + 0.5;
const span = (r) => `${r.x.toFixed(1)}..${(r.x + r.w).toFixed(1)}`;

let server, browser;
before(async () => {
  server = await serveStatic();
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await server?.close();
});

async function openPhone({ width, height, dpr }, query = "") {
  const context = await browser.newContext({ viewport: { width, height }, deviceScaleFactor: dpr, isMobile: true, hasTouch: true });
  const page = await context.newPage();
  const errors = [];
  page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(server.url + query);
  await page.evaluate(() => window.attentionExplainer.ready.then(() => true));
  await frames(page, 3);
  return { context, page, errors };
}
// In CSS pixels (a DPR 3 screenshot is nine times the pixels to encode, and shows nothing more).
async function screenshot(page, name) {
  fs.mkdirSync(OUT, { recursive: true });
  await page.screenshot({ path: path.join(OUT, `${name}.png`), scale: "css" });
}
const rect = (page, name) => page.evaluate((n) => window.attentionExplainer.itemRect(n), name);
const state = (page) => page.evaluate(() => window.attentionExplainer.getState());
const center = (r) => [r.x + r.w / 2, r.y + r.h / 2];
// The open view's main picture: the name the table of views gives its rect (src/state/views.h).
const picture = async (page) => (await state(page)).view_data.picture;

// Real touch events through the DevTools protocol (what Playwright's touchscreen.tap sends).
async function touch(page, type, points) {
  const cdp = page.__cdp || (page.__cdp = await page.context().newCDPSession(page));
  await cdp.send("Input.dispatchTouchEvent", { type, touchPoints: points.map(([x, y]) => ({ x, y })) });
}

// Every device upright and on its side (844×390, 640×360; the tablet's 1180×820 has the desktop's
// two columns).
for (const device of DEVICES)
  for (const landscape of [false, true]) {
    const screen = landscape ? { ...device, width: device.height, height: device.width } : device;
    const label = `${device.name}-${landscape ? "landscape" : "portrait"}`;
    test(`${label} (${screen.width}×${screen.height}, DPR ${screen.dpr}): every view fits the width`, async () => {
      const { context, page, errors } = await openPhone(screen);
      const phone = screen.width < 700;
      for (const view of await appViews(page)) {
        await page.evaluate((v) => window.attentionExplainer.setState({ view: v }), view);
        await frames(page, 4);
        await screenshot(page, `phone-${label}-${view}`);
        // view:content is the view's scrolling window as wide as it scrolls: wider than the
        // screen means a sideways scroll of the whole view.
        const content = await rect(page, "view:content");
        const right = content.x + content.w;
        assert.ok(right <= screen.width + 0.5, `${view}: the view scrolls sideways, its content reaches ${right.toFixed(1)} px of ${screen.width}`);
        const name = await picture(page);
        const main = await rect(page, name);
        assert.ok(within(main, screen.width), `${view}: its picture ${name} spans ${span(main)} of ${screen.width}`);
        if (view === "flow")
          for (const box of ["X", "Q", "K", "V", "scores", "weights", "output"]) {
            const r = await rect(page, `flow:${box}`);
            assert.ok(r.x >= 0 && r.x + r.w <= screen.width + 0.5, `flow: box ${box} at ${r.x}..${r.x + r.w} of ${screen.width}`);
          }
        if (view === "weights") {
          const r = await rect(page, "weights:matrix");
          assert.ok(r.x >= 0 && r.x + r.w <= screen.width + 0.5, `weights: matrix at ${r.x}..${r.x + r.w} of ${screen.width}`);
        }
      }
      if (phone && !(screen.height < 420)) {  // a phone upright: controls a finger can hit
        for (const name of ["views", "sentence", "token", "causal", "more"]) {
          const r = await rect(page, name);
          assert.ok(r.h >= 39.5, `${name}: ${r.h.toFixed(1)} CSS px tall`);
          assert.ok(r.x >= 0 && r.x + r.w <= screen.width + 0.5, `${name}: within the width`);
        }
      }
      assert.deepEqual(errors, []);
      await context.close();
    });
  }

test("phone 390×844 turned on its side and back: the layout follows the width each time", async () => {
  const { context, page, errors } = await openPhone(DEVICES[1], "?view=flow");
  for (const [width, height] of [[390, 844], [844, 390], [390, 844]]) {
    await page.setViewportSize({ width, height });
    await frames(page, 6);
    await screenshot(page, `phone-rotated-${width}x${height}`);
    const content = await rect(page, "view:content");
    assert.ok(content.x + content.w <= width + 0.5, `${width}×${height}: the view fits (${span(content)})`);
    // on its side the phone is wide enough for the controls column beside the view: the view then
    // ends at the right edge; upright it is the whole width
    assert.ok(content.x + content.w >= width * 0.9, `${width}×${height}: the view reaches the new width's edge (${span(content)})`);
    for (const box of ["X", "output"]) assert.ok(within(await rect(page, `flow:${box}`), width), `${width}×${height}: flow box ${box} on screen`);
  }
  assert.deepEqual(errors, []);
  await context.close();
});

test("phone 390×844: a tap toggles the causal mask; the view menu opens every view", async () => {
  const { context, page, errors } = await openPhone(DEVICES[1]);
  const before = (await state(page)).causal;
  const causal = await rect(page, "causal");
  await page.touchscreen.tap(...center(causal));
  await frames(page, 4);
  assert.equal((await state(page)).causal, !before, "the first tap toggles it");
  await page.touchscreen.tap(...center(causal));
  await frames(page, 4);
  assert.equal((await state(page)).causal, before, "a second tap toggles it back");

  await page.touchscreen.tap(...center(await rect(page, "views")));
  await frames(page, 4);
  await screenshot(page, "phone-view-menu");
  const item = await rect(page, "tab:practice");
  assert.ok(item.y + item.h <= DEVICES[1].height, "the last view is in the open menu, on screen");
  await page.touchscreen.tap(...center(item));
  await frames(page, 4);
  assert.equal((await state(page)).view, "practice");

  await page.touchscreen.tap(...center(await rect(page, "more")));
  await frames(page, 4);
  await screenshot(page, "phone-more");
  const reset = await rect(page, "reset");
  assert.ok(reset.w > 0 && reset.x + reset.w <= DEVICES[1].width + 0.5, "More shows the whole controls column");
  assert.deepEqual(errors, []);
  await context.close();
});

test("phone 390×844: a drag scrolls the view (and goes on gliding), never the page", async () => {
  const { context, page, errors } = await openPhone(DEVICES[1], "?view=flow");
  const [x] = center(await rect(page, "flow:X"));
  // A flick: the finger travels 160 px up, faster than the frames come, and lifts at once. The view
  // follows it and glides on: it ends up further than the finger went. The moves must reach the page
  // before a held finger counts as a long press (500 ms): on a loaded machine a dispatch can take
  // longer than that, and such an attempt proves nothing, so it is tried again (as is one that did not glide:
  // a machine busy enough to deliver the moves in one frame makes no flick; a broken drag fails all three).
  let moved = 0;
  for (let attempt = 0; attempt < 3; attempt++) {
    await page.evaluate(() => window.attentionExplainer.setState({ view: "flow" }));
    await frames(page, 3);
    const top = (await rect(page, "view:content")).y;
    const started = Date.now();
    await touch(page, "touchStart", [[x, 700]]);
    await touch(page, "touchMove", [[x, 680]]);
    const late = Date.now() - started > 400;
    for (let y = 660; y >= 540; y -= 20) await touch(page, "touchMove", [[x, y]]);
    await touch(page, "touchEnd", []);
    await frames(page, 30);
    moved = top - (await rect(page, "view:content")).y;
    if (!late && moved > 161) break;
    await page.mouse.wheel(0, -5000);  // back to the top for the next attempt
    await frames(page, 4);
  }
  assert.ok(moved > 161, `the content followed the finger's 160 px and glided on after it lifted (${moved.toFixed(0)} px)`);
  assert.equal(await page.evaluate(() => window.scrollY + document.scrollingElement.scrollTop), 0, "the page stays put");
  assert.deepEqual(errors, []);
  await context.close();
});

test("phone 390×844: a long press shows the tooltip that hover shows", async () => {
  const { context, page, errors } = await openPhone(DEVICES[1], "?view=flow");
  const [x, y] = center(await rect(page, "flow:Q"));
  assert.equal((await rect(page, "tooltip")).w, 0, "no tooltip before the finger lands");
  await touch(page, "touchStart", [[x, y]]);
  await page.waitForTimeout(700);
  await frames(page, 3);
  await touch(page, "touchEnd", []);
  await frames(page, 3);
  const tip = await rect(page, "tooltip");
  await screenshot(page, "phone-long-press");
  assert.ok(tip.w > 0 && tip.h > 0, "the tooltip is open after the long press");
  assert.ok(tip.x >= 0 && tip.x + tip.w <= DEVICES[1].width + 0.5, "and on screen");
  assert.equal((await state(page)).token, 7, "a long press is not a click");
  assert.deepEqual(errors, []);
  await context.close();
});

test("phone 390×844: tapping the sentence lends it the keyboard; typing and deleting go into it", async () => {
  const { context, page, errors } = await openPhone(DEVICES[1]);
  const box = await rect(page, "sentence");
  await page.touchscreen.tap(box.x + box.w - 5, box.y + box.h / 2);  // past the text's end: the cursor goes there
  await frames(page, 3);
  assert.equal(await page.evaluate(() => document.activeElement && document.activeElement.id), "text-proxy",
    "the hidden input has the focus (a phone opens its keyboard)");
  const original = (await state(page)).sentence;
  await page.keyboard.insertText(" zebra");  // as an IME or the on-screen keyboard delivers text
  await frames(page, 6);
  assert.equal((await state(page)).sentence, original + " zebra");
  await page.keyboard.press("Backspace");
  await page.keyboard.press("Backspace");
  await frames(page, 8);
  assert.equal((await state(page)).sentence, original + " zeb", "deletions reach the field once each");
  await page.keyboard.press("Enter");
  await frames(page, 4);
  assert.notEqual(await page.evaluate(() => document.activeElement && document.activeElement.id), "text-proxy",
    "Enter ends the edit and the hidden input lets go");
  assert.equal((await state(page)).sentence, original + " zeb");
  assert.deepEqual(errors, []);
  await context.close();
});

test("phone 360×640: every step of Steps and every mistake of Mistakes fits the width", async () => {
  const { context, page, errors } = await openPhone(DEVICES[0]);
  const states = [...Array(7).keys()].map((step) => ({ view: "steps", step }));
  for (const mistake of (await page.evaluate(() => window.attentionExplainer.inputs.find((f) => f.name === "mistake").choices)))
    states.push({ view: "mistakes", mistake, causal: true });
  for (const s of states) {
    await page.evaluate((st) => window.attentionExplainer.setState(st), s);
    await frames(page, 4);
    const content = await rect(page, "view:content");
    assert.ok(content.x + content.w <= DEVICES[0].width + 0.5,
      `${JSON.stringify(s)}: the view scrolls sideways to ${(content.x + content.w).toFixed(1)} px`);
    const main = await rect(page, await picture(page));
    assert.ok(within(main, DEVICES[0].width), `${JSON.stringify(s)}: its picture spans ${span(main)}`);
  }
  assert.deepEqual(errors, []);
  await context.close();
});

test("small embeds (320×240, 480×320): every view's picture is on screen without scrolling, the intro is one line", async () => {
  for (const [width, height] of [[320, 240], [480, 320]]) {
    const { context, page, errors } = await openPhone({ width, height, dpr: 2 }, "?embed=1");
    for (const view of await appViews(page)) {
      await page.evaluate((v) => window.attentionExplainer.setState({ view: v }), view);
      await frames(page, 4);
      await screenshot(page, `phone-embed-${width}x${height}-${view}`);
      const at = `${width}×${height} ${view}`;
      const content = await rect(page, "view:content");
      assert.ok(content.x + content.w <= width + 0.5, `${at}: the view scrolls sideways to ${(content.x + content.w).toFixed(1)} px`);
      // The picture's rect meets the visible canvas (it may go on below the fold, never start there).
      const name = await picture(page);
      const main = await rect(page, name);
      assert.ok(main.w > 0 && main.y < height && main.y + main.h > 0 && main.x < width && main.x + main.w > 0,
        `${at}: its picture ${name} is at y ${main.y.toFixed(1)}..${(main.y + main.h).toFixed(1)}, the canvas ends at ${height}`);
      assert.ok(within(main, width), `${at}: its picture ${name} spans ${span(main)} of ${width}`);
      const more = await rect(page, "intro:more");
      assert.ok(more.w > 0 && more.y < height, `${at}: the intro is one line with a button for the rest`);
    }
    const matrix = await rect(page, "weights:matrix");  // (the last visit of Weights)
    assert.ok(matrix.y + matrix.h <= height + 0.5, `${width}×${height}: the whole weight matrix is on screen`);
    assert.deepEqual(errors, []);
    await context.close();
  }
});
