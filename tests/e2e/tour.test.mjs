// The guided tour (?tour=1) in headless Chromium: its first stop, Next and Back clicked for real,
// resumed from the browser's storage on a new visit, and Finish / End tour leaving it.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { serveStatic, launchBrowser, frames, screenshot, clickRect } from "./harness.mjs";

let server, browser;
before(async () => { server = await serveStatic(); browser = await launchBrowser(); });
after(async () => { await browser?.close(); await server?.close(); });

test("tour: ordered stops with a prompt each, Back/Next, resumable", async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const errors = [];
  const open = async (query) => {
    const page = await context.newPage();
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.goto(server.url + query);
    await page.evaluate(() => window.attentionExplainer.ready.then(() => true));
    await frames(page, 4);
    return page;
  };
  const state = (page) => page.evaluate(() => window.attentionExplainer.getState());
  const click = async (page, name) => {
    await clickRect(page, await page.evaluate((n) => window.attentionExplainer.itemRect(n), name));
    await frames(page, 3);
  };

  const page = await open("?tour=1");
  let s = await state(page);
  assert.equal(s.tour_step, 0);
  assert.equal(s.view, "library", "the tour starts with the library picture");
  await screenshot(page, "tour-1");
  await click(page, "tour:next");
  s = await state(page);
  assert.deepEqual([s.tour_step, s.view], [1, "steps"]);
  await click(page, "tour:next");
  await click(page, "tour:back");
  s = await state(page);
  assert.deepEqual([s.tour_step, s.view], [1, "steps"]);

  // a new visit resumes at the stop the learner left
  const again = await open("?tour=1");
  s = await state(again);
  assert.deepEqual([s.tour_step, s.view], [1, "steps"]);
  // without ?tour=1 the page opens as usual
  const plain = await open("");
  assert.equal((await state(plain)).tour_step, -1);

  // the last stop's Next is Finish: the tour ends and the next ?tour=1 starts afresh
  const last = (await again.evaluate(() => window.attentionExplainer.inputs.find((f) => f.name === "tour_step").max));
  await again.evaluate((n) => window.attentionExplainer.setState({ tour_step: n }), last);
  await frames(again, 3);
  assert.equal((await state(again)).view, "practice");
  await click(again, "tour:next");
  assert.equal((await state(again)).tour_step, -1);
  const fresh = await open("?tour=1");
  assert.equal((await state(fresh)).tour_step, 0);
  assert.deepEqual(errors, []);
  await context.close();
});
