// End-to-end, for learners who do not use a mouse or a screen: the open view's numbers as real HTML
// (read back cell by cell, as a screen reader's table commands would), the page checked with
// axe-core, and a walkthrough driven by the keyboard alone (no mouse event at all), in Chromium.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { serveStatic, launchBrowser, openExplainer, frames, holdKey, screenshot, appViews, focusRect, walkTo } from "./harness.mjs";

const AXE = createRequire(import.meta.url).resolve("axe-core/axe.min.js");

let server, browser;
before(async () => { server = await serveStatic(); browser = await launchBrowser(); });
after(async () => { await browser?.close(); await server?.close(); });

// The hidden structure follows a change once it rests (150 ms): wait until `check` holds in the page.
const settle = (page, check, arg) => page.waitForFunction(check, arg, { timeout: 10000, polling: 50 });

// The weight table as a screen reader walks it: caption, column headers, then per row its header and cells.
const readTable = (page) => page.evaluate(() => {
  const table = document.querySelector("#view-numbers table");
  if (!table) return null;
  return {
    caption: table.caption.textContent,
    columns: [...table.tHead.rows[0].querySelectorAll("th[scope=col]")].map((th) => th.textContent),
    rows: [...table.tBodies[0].rows].map((tr) => ({
      header: tr.querySelector("th[scope=row]").textContent,
      cells: [...tr.querySelectorAll("td")].map((td) => td.textContent),
    })),
  };
});

test("the weight matrix is a real table with token headers, and follows every change", async () => {
  const { page, context, errors } = await openExplainer(browser, server.url + "?view=weights");
  await settle(page, () => document.querySelector("#view-numbers table"));
  const s = await page.evaluate(() => window.attentionExplainer.getState());
  let table = await readTable(page);
  assert.match(table.caption, /one row per query token, one column per key token/);
  assert.deepEqual(table.columns, s.kv_tokens);
  assert.deepEqual(table.rows.map((r) => r.header), s.tokens);
  table.rows.forEach((r, i) => assert.deepEqual(r.cells, s.weights[i].map((w) => w.toFixed(2))));
  // cell by cell: the row of "it", the column of "animal" — the lesson's 0.65
  const it = table.rows.find((r) => r.header === "it"), animal = table.columns.indexOf("animal");
  assert.equal(it.cells[animal], "0.65");
  // what the accessibility tree exposes (visually hidden is not hidden from assistive technology)
  const aria = await page.locator("#view-numbers").ariaSnapshot();
  assert.match(aria, /table/);
  assert.match(aria, /columnheader "animal"/);
  assert.match(aria, /rowheader "it"/);
  // a change: the causal mask hides the future, and the table says so
  await page.evaluate(() => window.attentionExplainer.setState({ causal: true }));
  await settle(page, () => document.querySelector("#view-numbers tbody td")?.textContent !== "0.10");
  table = await readTable(page);
  assert.equal(table.rows[0].cells[0], "1.00", "the first token sees only itself");
  assert.equal(table.rows[0].cells[1], "masked");
  assert.match(table.caption, /causal mask/);
  // it is visually hidden: 1 x 1 pixel, clipped
  const size = await page.evaluate(() => { const r = document.getElementById("view-numbers").getBoundingClientRect(); return [r.width, r.height]; });
  assert.deepEqual(size, [1, 1]);
  assert.deepEqual(errors, []);
  await context.close();
});

test("the library shelf is a list, the steps' formula comes with its numbers, the heads view lists where the token looks", async () => {
  const { page, context, errors } = await openExplainer(browser, server.url + "?view=library");
  await settle(page, () => document.querySelector("#view-numbers ol"));
  const s = await page.evaluate(() => window.attentionExplainer.getState());
  const books = await page.$$eval("#view-numbers ol li", (items) => items.map((li) => li.textContent));
  assert.equal(books.length, s.kv_tokens.length);
  assert.equal(books[s.view_data.best], "animal: 65% read (the best match)");
  assert.match(await page.textContent("#view-numbers"), /The reader is "it"/);

  await page.evaluate(() => window.attentionExplainer.setState({ view: "steps", step: 0 }));
  await settle(page, () => /Formula/.test(document.getElementById("view-numbers").textContent));
  let text = await page.textContent("#view-numbers");
  assert.match(text, /Step 1 of 7/);
  assert.match(text, /Formula: q = x·W_Q/);
  assert.match(text, /q = \[3\.00, 1\.00, 0\.00, 0\.00\]/, "the query of 'it'");
  await page.evaluate(() => window.attentionExplainer.setState({ token: "animal" }));
  await settle(page, () => document.querySelector("#view-numbers ul")?.getAttribute("aria-label") === 'The numbers of "animal"');
  text = await page.textContent("#view-numbers");
  assert.doesNotMatch(text, /q = \[3\.00, 1\.00, 0\.00, 0\.00\]/, "animal's query is not it's");
  // the heads view: where the token looks in the chosen head, likeliest first
  await page.evaluate(() => window.attentionExplainer.setState({ view: "heads", token: "it" }));
  await settle(page, () => document.querySelector("#view-numbers ol li"));
  const looks = await page.$$eval("#view-numbers ol li", (items) => items.map((li) => li.textContent));
  assert.equal(looks[0], "animal: 0.65");
  assert.deepEqual(errors, []);
  await context.close();
});

test("axe-core finds no violation on the page, in every view", async () => {
  const { page, context, errors } = await openExplainer(browser, server.url);
  await page.addScriptTag({ path: AXE });
  for (const view of await appViews(page)) {
    await page.evaluate((v) => window.attentionExplainer.setState({ view: v }), view);
    await settle(page, (v) => document.querySelector("#view-numbers h2")?.textContent.toLowerCase().startsWith(v), view);
    const violations = await page.evaluate(async () => (await window.axe.run(document)).violations
      .map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`));
    assert.deepEqual(violations, [], `${view}: ${violations.join("; ")}`);
  }
  assert.deepEqual(errors, []);
  await context.close();
});

test("keyboard only: every view reached, the token changed, a mistake switched on", async () => {
  const { page, context, errors } = await openExplainer(browser, server.url);
  const state = () => page.evaluate(() => window.attentionExplainer.getState());
  await page.keyboard.press("Tab");
  assert.equal(await page.evaluate(() => document.activeElement.id), "canvas", "Tab reaches the canvas first");
  await holdKey(page, "ArrowDown");  // wakes the keyboard cursor
  assert.ok(await focusRect(page), "an arrow shows the keyboard cursor");
  let presses = 0;
  for (const view of [...(await appViews(page)).filter((v) => v !== "flow"), "flow"]) {
    presses += await walkTo(page, `tab:${view}`);
    console.log(`keyboard: tab:${view} after ${presses} presses`);
    await holdKey(page, "Space");
    assert.equal((await state()).view, view, `Space on the ${view} tab opens it`);
  }
  // the token: ] and [ step through the sentence
  const before = (await state()).token;
  await holdKey(page, "BracketRight");
  assert.equal((await state()).token, before + 1);
  await holdKey(page, "BracketLeft");
  await holdKey(page, "BracketLeft");
  assert.equal((await state()).token, before - 1);
  // a mistake: open the Mistakes tab, walk to a switch, press it
  presses += await walkTo(page, "tab:mistakes");
  await holdKey(page, "Space");
  await frames(page, 3);
  presses += await walkTo(page, "mistake:softmax_wrong_axis");
  await holdKey(page, "Space");
  const s = await state();
  assert.equal(s.view, "mistakes");
  assert.equal(s.mistake, "softmax_wrong_axis");
  await screenshot(page, "a11y-keyboard-mistake");
  console.log(`keyboard walkthrough: ${presses} key presses (arrows, and Space into the view body) to reach 11 views and a mistake switch`);
  assert.deepEqual(errors, []);
  await context.close();
});
