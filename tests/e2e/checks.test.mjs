// Checked answers, driven for real: predictions typed into Derive's hidden grids and a view's check
// question clicked and typed, each mark read back from getState().view_data; the progress kept in
// the browser across a reload and Reset; and the progress message an embedding course page receives.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { serveStatic, launchBrowser, openExplainer, frames, clickRect, holdKey, screenshot, shown } from "./harness.mjs";

let server, other, browser, otherDir, session;
before(async () => {
  server = await serveStatic();
  otherDir = fs.mkdtempSync(path.join(os.tmpdir(), "attn-checks-host-"));
  other = await serveStatic(otherDir);  // the course page: another origin
  browser = await launchBrowser();
  session = await openExplainer(browser, server.url + "?view=derive", { width: 1280, height: 1000 });
});
after(async () => { await session?.context.close(); await browser?.close(); await server?.close(); await other?.close(); });

const viewData = (page) => page.evaluate(() => window.attentionExplainer.getState().view_data);

/** Clicks a field of the canvas, types `text` with the keyboard and presses Enter. */
async function typeInto(page, name, text) {
  await clickRect(page, await shown(page, name));
  await page.keyboard.type(text, { delay: 20 });
  await frames(page, 2);
  await holdKey(page, "Enter");
  await frames(page, 3);
}

/** Opens `view` through the app and waits until its controls are drawn. */
async function openView(page, view) {
  await page.evaluate((v) => window.attentionExplainer.setState({ view: v }), view);
  await frames(page, 4);
}

test("Derive: a right and a wrong prediction typed into the weights grid are marked at once", async () => {
  const { page, errors } = session;
  await page.evaluate(() => window.attentionExplainer.setState({ derive_revealed: 0 }));
  await frames(page, 4);
  const before = await viewData(page);
  const weights = before.weights;  // the lesson's numbers: row 1 is e^[0.707, 0, 0.707] / 5.06 = [0.40, 0.20, 0.40]
  assert.ok(Math.abs(weights[0][0] - 0.4011) < 1e-3, `the lesson's first weight: ${weights[0][0]}`);
  const right = weights[0][0].toFixed(2), wrong = (weights[0][1] + 0.2).toFixed(2);
  await typeInto(page, "derive:cell:4:0:0", right);
  await typeInto(page, "derive:cell:4:0:1", wrong);
  const after = await viewData(page);
  const stage = after.predictions.find((s) => s.stage === "weights");
  assert.deepEqual(stage.cells[0][0], { typed: right, right: true });
  assert.deepEqual(stage.cells[0][1], { typed: wrong, right: false });
  assert.equal(stage.answered, 2);
  assert.equal(stage.right, 1);
  assert.equal(stage.total, 9);
  // "Show answer" under a stage reveals the stages up to it
  await clickRect(page, await shown(page, "derive:show:1"));
  assert.equal((await viewData(page)).revealed, 2);
  await page.evaluate(() => window.attentionExplainer.setState({ derive_revealed: 0 }));
  await frames(page, 3);
  await screenshot(page, "checks-derive-1280");
  assert.deepEqual(errors, []);
});

test("a view's check question: a wrong and a right choice clicked, a wrong and a right number typed", async () => {
  const { page, errors } = session;
  await openView(page, "weights");
  const asked = (await viewData(page)).check;
  assert.equal(asked.kind, "choice");
  assert.match(asked.prompt, /'it'/);
  assert.equal(asked.answered, false);
  const state = await page.evaluate(() => window.attentionExplainer.getState());
  const best = state.weights[state.token].map((w, j) => [w, j]).sort((a, b) => b[0] - a[0])[0][1];
  const rightIndex = asked.choices.indexOf(state.kv_tokens[best]);
  assert.ok(rightIndex >= 0, `the most-weighted word ${state.kv_tokens[best]} is among ${asked.choices}`);
  const wrongIndex = asked.choices.findIndex((c, i) => i !== rightIndex);
  await clickRect(page, await shown(page, `quiz:choice:${wrongIndex}`));
  let check = (await viewData(page)).check;
  assert.equal(check.answered, true);
  assert.equal(check.correct, false);
  assert.equal(check.passed, false);
  assert.match(check.why, /weights/);
  await clickRect(page, await shown(page, `quiz:choice:${rightIndex}`));
  check = (await viewData(page)).check;
  assert.equal(check.correct, true);
  assert.equal(check.passed, true);
  assert.equal(check.answer, state.kv_tokens[best]);
  await screenshot(page, "checks-weights-1280");
  // 'The' spreads its weight evenly over the ten words of the lesson's sentence: a tie, and any
  // tied word is right.
  await page.evaluate(() => window.attentionExplainer.setState({ token: 0 }));
  await frames(page, 3);
  const tied = (await viewData(page)).check;
  assert.equal(tied.answered, false, "a new question for the new query");
  await clickRect(page, await shown(page, "quiz:choice:3"));
  check = (await viewData(page)).check;
  assert.equal(check.correct, true, `${check.answer} ties for the most`);
  assert.match(check.why, /10 words tie for the most/);
  await page.evaluate(() => window.attentionExplainer.setState({ token: 7 }));

  await openView(page, "cost");
  const cost = (await viewData(page)).check;
  assert.equal(cost.kind, "number");
  const T = (await page.evaluate(() => window.attentionExplainer.getState())).cost_T;
  await typeInto(page, "quiz:field", String(T * 2));
  check = (await viewData(page)).check;
  assert.equal(check.correct, false);
  assert.equal(check.answer, String(T * 2));
  await typeInto(page, "quiz:field", String(T * T));  // the click selects what was typed: it is replaced
  check = (await viewData(page)).check;
  assert.equal(check.answer, String(T * T));
  assert.equal(check.correct, true);
  await screenshot(page, "checks-cost-1280");
  assert.deepEqual(errors, []);
});

test("progress survives a reload and Reset, and unlocks the matching Prove-it tick", async () => {
  const { page, errors } = session;
  await page.evaluate(() => window.attentionExplainer.setState({ causal: true }));
  await clickRect(page, await shown(page, "reset"));
  const reset = await page.evaluate(() => window.attentionExplainer.getState());
  assert.equal(reset.causal, false, "Reset restores the lesson's inputs");
  assert.equal(reset.checks.cost.passed, true, "and keeps the answers");
  await page.reload();
  await page.evaluate(() => window.attentionExplainer.ready.then(() => true));
  const reloaded = await page.evaluate(() => window.attentionExplainer.getState());
  assert.equal(reloaded.checks.cost.right, true);
  assert.equal(reloaded.checks.weights.passed, true);
  assert.equal(reloaded.checks["derive.weights.0.0"].answer, "0.40");
  await openView(page, "derive");
  const stage = (await viewData(page)).predictions.find((s) => s.stage === "weights");
  assert.equal(stage.right, 1, "the typed cells came back from the browser's storage");
  const stored = await page.evaluate(() => JSON.parse(localStorage.getItem("attention-explainer:checklist")));
  assert.equal(stored.version, 2);
  assert.equal(stored.checks.cost.answer, reloaded.checks.cost.answer);
  // Practice: the T² line unlocks with the cost check, the RNN line stays self-checked, the mask
  // line waits for the Mistakes check.
  await openView(page, "practice");
  const list = (await viewData(page)).checklist;
  assert.equal(list[2].check, "cost");
  assert.equal(list[2].unlocked, true);
  assert.equal(list[4].self_checked, true);
  assert.equal(list[7].unlocked, false);
  await clickRect(page, await shown(page, "check:7"));
  assert.equal((await viewData(page)).checklist[7].checked, false, "a locked line cannot be ticked");
  await clickRect(page, await shown(page, "check:2"));
  assert.equal((await viewData(page)).checklist[2].checked, true);
  assert.deepEqual(errors, []);
});

test("corrupt stored answers are set aside with a warning; the ticks still load", async () => {
  const { page, context } = await openExplainer(browser, server.url, { waitReady: false });
  const warnings = [];
  page.on("console", (m) => { if (m.type() === "warning") warnings.push(m.text()); });
  await page.evaluate(() => localStorage.setItem("attention-explainer:checklist",
    JSON.stringify({ version: 2, checklist: 5, checks: { nope: { answer: "1" } } })));
  await page.reload();
  await page.evaluate(() => window.attentionExplainer.ready.then(() => true));
  const state = await page.evaluate(() => window.attentionExplainer.getState());
  assert.equal(state.checklist, 5);
  assert.deepEqual(state.checks, {});
  assert.ok(warnings.some((w) => /checks\.nope/.test(w)), warnings.join("\n"));
  await context.close();
});

test("an embedding course page receives attention-explainer:progress with the marks", async () => {
  fs.writeFileSync(path.join(otherDir, "course.html"), `<!doctype html><link rel="icon" href="data:,"><body>
    <div id="demo" data-attention-explainer data-view="weights" data-height="700" style="width: 1000px"></div>
    <script src="${server.url}embed.js"></script>
    <script>
      window.progress = []; window.raw = [];
      addEventListener("message", (e) => { if (e.data && e.data.type === "attention-explainer:progress") raw.push(e.data); });
      document.getElementById("demo").attentionExplainer.onProgress((p) => progress.push(p));
    </script></body>`);
  const { page, context, errors } = await openExplainer(browser, other.url + "course.html", { width: 1100, height: 800, waitReady: false });
  const handle = await page.waitForSelector("#demo iframe");
  const frame = await handle.contentFrame();
  await frame.waitForFunction(() => window.attentionExplainer && window.attentionExplainer.ready);
  await frame.evaluate(() => window.attentionExplainer.ready.then(() => true));
  await page.evaluate(() => document.getElementById("demo").attentionExplainer.ready.then(() => true));
  await frames(frame, 4);
  const box = await handle.boundingBox();
  const asked = await frame.evaluate(() => window.attentionExplainer.getState().view_data.check);
  const state = await frame.evaluate(() => window.attentionExplainer.getState());
  const best = state.weights[state.token].map((w, j) => [w, j]).sort((a, b) => b[0] - a[0])[0][1];
  const rightIndex = asked.choices.indexOf(state.kv_tokens[best]);
  const wrongIndex = rightIndex === 0 ? 1 : 0;
  for (const index of [wrongIndex, rightIndex]) {
    let r;
    for (let tries = 0; tries < 12; tries++) {  // the wheel over the frame scrolls its view
      r = await frame.evaluate((n) => window.attentionExplainer.itemRect(n), `quiz:choice:${index}`);
      if (r.y >= 0 && r.y + r.h <= box.height - 10) break;
      await page.mouse.move(box.x + box.width * 0.6, box.y + box.height / 2);
      await page.mouse.wheel(0, 300);
      await frames(frame, 4);
    }
    await clickRect(page, { x: box.x + r.x, y: box.y + r.y, w: r.w, h: r.h });
    await frames(frame, 3);
  }
  await page.waitForFunction(() => window.progress.length >= 2);
  const got = await page.evaluate(() => ({ progress: window.progress, raw: window.raw }));
  assert.deepEqual(got.raw.map(({ type, exercise, correct, total }) => ({ type, exercise, correct, total })), [
    { type: "attention-explainer:progress", exercise: "weights", correct: 0, total: 1 },
    { type: "attention-explainer:progress", exercise: "weights", correct: 1, total: 1 },
  ]);
  assert.equal(got.progress[1].passed, true);
  assert.equal(got.progress[1].exercise, "weights");
  assert.deepEqual(errors, []);
  await context.close();
});

test("phone 390×844: a tap on a Derive cell lends it the hidden input; the typed prediction is marked", async () => {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
  await page.goto(server.url + "?view=derive&derive_revealed=0");
  await page.evaluate(() => window.attentionExplainer.ready.then(() => true));
  await frames(page, 4);
  const cell = await shown(page, "derive:cell:0:0:0");  // query 1 · key 1 = 1×1 + 0×0 = 1
  await page.touchscreen.tap(cell.x + cell.w / 2, cell.y + cell.h / 2);
  await frames(page, 3);
  assert.equal(await page.evaluate(() => document.activeElement && document.activeElement.id), "text-proxy",
    "the hidden input has the focus (a phone opens its keyboard)");
  await page.keyboard.insertText("1");
  await frames(page, 4);
  await page.keyboard.press("Enter");
  await frames(page, 4);
  const scores = (await viewData(page)).predictions.find((s) => s.stage === "scores");
  assert.deepEqual(scores.cells[0][0], { typed: "1", right: true });
  await screenshot(page, "checks-derive-390");
  assert.deepEqual(errors, []);
  await context.close();
});
