// Phones and tablets: Playwright's mobile emulation (isMobile, hasTouch, DPR 2-3), portrait and
// landscape. Every view's content fits the screen's width (or scrolls inside its own box), and a
// finger works: a tap clicks, a drag scrolls, a long press shows the tooltip, and the phone's
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
// Views whose content is still wider than the screen: they scroll sideways inside the view's own
// box (its scroll bar is the visible hint), the rest of the screen stays put. On a phone: the
// step buttons and tables of four, the code of build and the table of cost at 360 px; beside the controls
// column (a tablet upright, a phone on its side): the cost view's table.
const SCROLL_SIDEWAYS = { phone: new Set(["steps", "derive", "mistakes", "practice", "build", "cost"]), wide: new Set(["cost"]) };

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

// Real touch events through the DevTools protocol (what Playwright's touchscreen.tap sends).
async function touch(page, type, points) {
  const cdp = page.__cdp || (page.__cdp = await page.context().newCDPSession(page));
  await cdp.send("Input.dispatchTouchEvent", { type, touchPoints: points.map(([x, y]) => ({ x, y })) });
}

// Upright on every device; on its side on the 390 phone (rotation re-lays out the same way on the
// others: the suite's time goes to more devices upright instead).
for (const device of DEVICES)
  for (const landscape of device.name === "phone-390" ? [false, true] : [false]) {
    const screen = landscape ? { ...device, width: device.height, height: device.width } : device;
    const label = `${device.name}-${landscape ? "landscape" : "portrait"}`;
    test(`${label} (${screen.width}×${screen.height}, DPR ${screen.dpr}): every view fits the width`, async () => {
      const { context, page, errors } = await openPhone(screen);
      const phone = screen.width < 700;
      for (const view of await appViews(page)) {
        await page.evaluate((v) => window.attentionExplainer.setState({ view: v }), view);
        await frames(page, 4);
        await screenshot(page, `phone-${label}-${view}`);
        const content = await rect(page, "view:content");
        const right = content.x + content.w;
        if ((phone ? SCROLL_SIDEWAYS.phone : SCROLL_SIDEWAYS.wide).has(view)) {
          assert.ok(content.x >= 0 && content.x < screen.width, `${view}: starts on screen`);
          continue;
        }
        assert.ok(right <= screen.width + 0.5, `${view}: content reaches ${right.toFixed(1)} px of ${screen.width}`);
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
  const top = (await rect(page, "view:content")).y;
  const [x] = center(await rect(page, "flow:X"));
  await touch(page, "touchStart", [[x, 700]]);
  // A flick: the moves come faster than the frames (as a finger's do), so the finger has speed.
  for (let y = 680; y >= 540; y -= 20) await touch(page, "touchMove", [[x, y]]);
  await frames(page, 4);  // a loaded machine may deliver the moves over several frames
  const dragged = (await rect(page, "view:content")).y;  // (the finger is still down: no glide yet)
  assert.ok(top - dragged > 100, `the content moved up with the finger (${(top - dragged).toFixed(0)} px)`);
  await touch(page, "touchEnd", []);
  await frames(page, 20);
  const glided = (await rect(page, "view:content")).y;
  assert.ok(glided < dragged - 1, `it glides on after the finger lifts (${(dragged - glided).toFixed(0)} px more)`);
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

test("small embeds (320×240, 480×320): the weight matrix is on screen without scrolling, the intro is one line", async () => {
  for (const [width, height] of [[320, 240], [480, 320]]) {
    const { context, page, errors } = await openPhone({ width, height, dpr: 2 }, "?embed=1&view=weights");
    await screenshot(page, `phone-embed-${width}x${height}`);
    const matrix = await rect(page, "weights:matrix");
    assert.ok(matrix.y >= 0 && matrix.y + matrix.h <= height + 0.5, `${width}×${height}: matrix rows ${matrix.y}..${matrix.y + matrix.h}`);
    assert.ok(matrix.x >= 0 && matrix.x + matrix.w <= width + 0.5, `${width}×${height}: matrix columns within the width`);
    const more = await rect(page, "intro:more");
    assert.ok(more.w > 0, "the intro offers the rest behind a button");
    assert.deepEqual(errors, []);
    await context.close();
  }
});
