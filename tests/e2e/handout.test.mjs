// The printable handout (web/handout.html): opened from the app with a state that is not the
// default, its weight table and its steps carry the app's own numbers; it prints (a print
// stylesheet, page breaks); and it also makes itself from a bare permalink (a reload, a shared link).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { serveStatic, launchBrowser, openExplainer, frames, OUT } from "./harness.mjs";

let server, browser;
before(async () => { server = await serveStatic(); browser = await launchBrowser(); });
after(async () => { await browser?.close(); await server?.close(); });

const SENTENCE = "the cat sat because it was tired";

/** The handout's weight table as {columns, rows: [{label, cells}]}, and its steps' tables by step and field. */
function readHandout(page) {
  return page.evaluate(() => {
    const table = document.getElementById("weights-table");
    const columns = [...table.querySelectorAll("thead th")].slice(1).map((th) => th.textContent);
    const rows = [...table.querySelectorAll("tbody tr")].map((tr) => ({
      label: tr.querySelector("th").textContent, query: tr.classList.contains("query"),
      cells: [...tr.querySelectorAll("td")].map((td) => ({ text: td.textContent, masked: td.classList.contains("masked") })),
    }));
    const steps = {};
    for (const tr of document.querySelectorAll("table[data-step] tr[data-field]")) {
      const step = tr.closest("table").dataset.step;
      (steps[step] ||= {})[tr.dataset.field] = [...tr.querySelectorAll("td")].map((td) => td.textContent);
    }
    const facts = Object.fromEntries([...document.querySelectorAll("dl.facts dt")].map((dt) => [dt.textContent, dt.nextElementSibling.textContent]));
    return { columns, rows, steps, facts, stepCount: document.querySelectorAll("div.step").length,
      exercises: document.querySelectorAll("#exercises ol.exercises > li").length,
      answers: [...document.querySelectorAll("#answers p.answer")].map((p) => p.textContent) };
  });
}
/** "−1.23" / "−∞" as written by the handout, as a number (null for −∞). */
const parse = (text) => (text === "−∞" ? null : Number(text.replace("−", "-")));

/** Every number of the handout against the app's getState() and the Steps view's view_data. */
function checkAgainstApp(handout, app, stepsData) {
  assert.deepEqual(handout.columns, app.kv_tokens, "the columns are the key tokens");
  assert.deepEqual(handout.rows.map((r) => r.label), app.tokens, "the rows are the query tokens");
  assert.deepEqual(handout.rows.map((r) => r.query), app.tokens.map((_, i) => i === app.token), "the query row is marked");
  let masked = 0;
  app.weights.forEach((row, i) => row.forEach((w, j) => {
    const cell = handout.rows[i].cells[j];
    if (app.scores[i][j] === null) { masked++; assert.equal(cell.masked, true, `cell ${i},${j} is marked masked`); }
    else assert.equal(cell.text, w.toFixed(2), `weight ${app.tokens[i]} → ${app.kv_tokens[j]}`);
  }));
  assert.equal(handout.stepCount, 7);
  for (const [step, data] of stepsData.entries())
    for (const field of ["raw_scores", "scores", "exps", "weights", "weights_scaled", "weights_unscaled", "q", "output"]) {
      if (!Array.isArray(data[field])) continue;
      const shown = handout.steps[step][field].map(parse);
      assert.equal(shown.length, data[field].length, `step ${step + 1} ${field}: length`);
      data[field].forEach((v, k) => {
        if (v === null) assert.equal(shown[k], null, `step ${step + 1} ${field}[${k}] is −∞`);
        else assert.ok(Math.abs(shown[k] - v) <= 0.005 + 0.01 * Math.abs(v), `step ${step + 1} ${field}[${k}]: ${shown[k]} vs ${v}`);
      });
    }
  return masked;
}

/** Each step's view_data, read by opening the Steps view at that step (and back to `view`). */
async function stepsViewData(page, view) {
  return page.evaluate(async (back) => {
    const app = window.attentionExplainer, out = [];
    for (let step = 0; step < 7; step++) out.push((await app.setState({ view: "steps", step })).view_data);
    await app.setState({ view: back });
    return out;
  }, view);
}

test("handout: opened from the app's button, it shows the app's weights and steps, and prints", async () => {
  const { page, context, errors } = await openExplainer(browser, server.url + "index.html?view=practice");
  await page.evaluate((sentence) => window.attentionExplainer.setState({ sentence, causal: true, token: 2 }), SENTENCE);
  await frames(page, 4);
  const app = await page.evaluate(() => window.attentionExplainer.getState());
  assert.equal(app.token_text, "sat");
  const stepsData = await stepsViewData(page, "practice");
  await frames(page, 4);
  // The button in the Practice view, clicked for real.
  const rect = await page.evaluate(() => window.attentionExplainer.itemRect("handout"));
  const [handoutPage] = await Promise.all([
    context.waitForEvent("page"),
    page.mouse.click(rect.x + rect.w / 2, rect.y + rect.h / 2),
  ]);
  handoutPage.on("pageerror", (e) => errors.push(String(e)));
  await handoutPage.waitForFunction(() => window.attentionHandout);
  await handoutPage.evaluate(() => window.attentionHandout.done.then(() => true));
  const url = new URL(handoutPage.url());
  assert.match(url.pathname, /handout\.html$/);
  assert.equal(url.searchParams.get("sentence"), SENTENCE);
  assert.equal(url.searchParams.get("causal"), "1");
  const handout = await readHandout(handoutPage);
  const masked = checkAgainstApp(handout, app, stepsData);
  assert.equal(masked, (app.tokens.length * (app.tokens.length - 1)) / 2, "causal: the upper triangle is masked");
  assert.match(handout.facts["Causal mask"], /^applied/);
  assert.equal(handout.facts["Layer, head"], "layer 1 of 1, head 1 of 1");
  const practice = await page.evaluate(async () => (await window.attentionExplainer.setState({ view: "practice" })).view_data);
  assert.equal(handout.exercises, practice.exercises.length);
  assert.deepEqual(handout.answers, practice.exercises.map((e) => e.answer));
  // Text, not pixels: the sentence can be found in the page.
  assert.ok((await handoutPage.textContent("#sentence")).includes(SENTENCE));

  // The print stylesheet: the toolbar goes, each section after the first starts a new page.
  fs.mkdirSync(OUT, { recursive: true });
  await handoutPage.setViewportSize({ width: 1000, height: 1400 });
  await handoutPage.screenshot({ path: path.join(OUT, "handout-screen.png"), fullPage: true });
  const screen = await handoutPage.evaluate(() => ({
    toolbar: getComputedStyle(document.querySelector(".toolbar")).display,
    breakBefore: getComputedStyle(document.getElementById("weights")).breakBefore,
  }));
  assert.notEqual(screen.toolbar, "none");
  await handoutPage.emulateMedia({ media: "print" });
  const print = await handoutPage.evaluate(() => ({
    toolbar: getComputedStyle(document.querySelector(".toolbar")).display,
    breaks: ["weights", "steps", "exercises", "answers"].map((id) => getComputedStyle(document.getElementById(id)).breakBefore),
    background: getComputedStyle(document.body).backgroundColor,
  }));
  assert.equal(print.toolbar, "none");
  assert.deepEqual(print.breaks, ["page", "page", "page", "page"]);
  assert.equal(print.background, "rgb(255, 255, 255)");
  await handoutPage.screenshot({ path: path.join(OUT, "handout-print.png"), fullPage: true });
  const pdf = await handoutPage.pdf({ format: "A4" });
  assert.ok(pdf.length > 10000, "a PDF of several pages");
  assert.deepEqual(errors, []);
  await context.close();
});

test("handout: from a bare permalink (no app tab) it makes itself with the explainer in a hidden frame", async () => {
  const search = "?token=6&sentence=" + encodeURIComponent(SENTENCE) + "&scale=0";
  const { page, context, errors } = await openExplainer(browser, server.url + "index.html" + search);
  const app = await page.evaluate(() => window.attentionExplainer.getState());
  assert.equal(app.token_text, "tired");
  assert.equal(app.scale, false);
  const stepsData = await stepsViewData(page, app.view);
  const { page: handoutPage, errors: handoutErrors } = await openExplainer(browser, server.url + "handout.html" + search, { waitReady: false });
  await handoutPage.evaluate(() => window.attentionHandout.done.then(() => true));
  const bare = await readHandout(handoutPage);
  const masked = checkAgainstApp(bare, app, stepsData);
  assert.equal(masked, 0, "no mask: no cell is marked");
  assert.match(bare.facts["Causal mask"], /^not applied/);
  assert.equal(await handoutPage.$("iframe"), null, "the hidden explainer is gone once its numbers are read");
  assert.deepEqual([...errors, ...handoutErrors], []);
  await context.close();
  await handoutPage.context().close();
});

test("handout: a decoder's mask is printed as applied whatever the switch says; layers and heads counted from 1", async () => {
  // The trained model (built in) always masks: the state's causal switch is off, its scores are not.
  const { page, context, errors } = await openExplainer(browser, server.url + "index.html");
  const app = await page.evaluate(() => window.attentionExplainer.setState({ model: "trained (built in)", causal: false,
    layer: 0, head: 1, sentence: "the dog didn ' t cross the road because it was wide ." }));
  const search = new URL(await page.evaluate(() => window.attentionExplainer.permalink())).search;
  assert.equal(app.model, "trained (built in)");
  assert.equal(app.causal, false, "the switch's setting, which the model does not follow");
  const stepsData = await stepsViewData(page, app.view);
  const { page: handoutPage, errors: handoutErrors } = await openExplainer(browser, server.url + "handout.html" + search, { waitReady: false });
  await handoutPage.evaluate(() => window.attentionHandout.done.then(() => true));
  const handout = await readHandout(handoutPage);
  const masked = checkAgainstApp(handout, app, stepsData);
  assert.equal(masked, (app.tokens.length * (app.tokens.length - 1)) / 2, "the model masks: the upper triangle");
  assert.match(handout.facts["Causal mask"], /^applied/);
  assert.equal(handout.facts["Layer, head"], "layer 1 of 1, head 2 of 2");
  assert.deepEqual([...errors, ...handoutErrors], []);
  await context.close();
});
