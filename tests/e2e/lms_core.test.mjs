// web/lms_core.js under node (no browser): the score by hand, suspend data within SCORM 1.2's 4 096
// characters with every answer given, its round trip and its damaged forms, the time formats.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
require("../../web/lms_core.js");
const L = globalThis.AttentionLms;

const progress = (rightViews, deriveRight, deriveAnswered = 45) => {
  const p = { derive: { correct: deriveRight, answered: deriveAnswered, total: 45 } };
  L.VIEW_CHECKS.forEach((v, i) => { p[v] = { correct: i < rightViews ? 1 : 0, answered: 1, total: 1 }; });
  return p;
};

test("the score: each view one item, Derive one item by its cells out of 45", () => {
  // 3 views right + 9 of 45 cells = 3.2 items of 10
  assert.deepEqual(L.score(progress(3, 9)), { raw: 32, min: 0, max: 100, scaled: 0.32, points: 3 * 45 + 9, maxPoints: 450, items: 10, answered: 10, complete: true });
  // Derive with 44 cells typed is not answered yet
  assert.equal(L.score(progress(9, 44, 44)).complete, false);
  // only weights and Derive count: weights right, Derive 45/45 -> everything
  assert.deepEqual(L.score(progress(2, 45), ["weights", "derive"]).raw, 100);
  assert.equal(L.score(progress(0, 0), ["flow", "nonsense"]).items, 1);
});

test("suspend data: every answer with long questions fits 4 096 characters; the marks survive", () => {
  const checks = {};
  for (const v of L.VIEW_CHECKS) checks[v] = { answer: "a".repeat(40), question: "q".repeat(600), right: true, passed: true };
  for (const [stage, rows, cols] of [["scores", 3, 3], ["scaled", 3, 3], ["exp", 3, 3], ["sums", 3, 1], ["weights", 3, 3], ["output", 3, 2]])
    for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) checks[`derive.${stage}.${r}.${c}`] = { answer: "-12.3456", question: "", right: r === c, passed: false };
  const place = { view: "derive", sentence: "s".repeat(400), model: "handmade", token: 3 };
  const text = L.encodeSuspend({ place, ticks: 77, checks }, 4096);
  assert.ok(text.length <= 4096, `${text.length} characters`);
  const back = L.decodeSuspend(text);
  assert.equal(back.problem, null);
  assert.equal(back.ticks, 77);
  assert.equal(Object.keys(back.checks).length, 54);
  assert.equal(back.checks["derive.exp.1.1"].right, true);
  assert.equal(back.checks["derive.exp.1.2"].right, false);
  assert.equal(back.checks.cost.passed, true);
  assert.equal(back.checks.cost.question, "", "the questions went first");
  // 2004's 64 000 keep the questions
  assert.equal(L.decodeSuspend(L.encodeSuspend({ place, ticks: 77, checks }, 64000)).checks.cost.question, "q".repeat(600));
});

test("damaged suspend data: cut short, newer, garbage, the page's older JSON", () => {
  const text = L.encodeSuspend({ place: { view: "cost" }, ticks: 1, checks: { weights: { answer: "it", question: "", right: true, passed: true },
    cost: { answer: "64", question: "", right: true, passed: true } } });
  const cut = L.decodeSuspend(text.slice(0, -5));
  assert.equal(cut.problem, "cut");
  assert.deepEqual(Object.keys(cut.checks), ["weights"]);
  assert.equal(L.decodeSuspend('["AE",2]\n').problem, "newer");
  assert.equal(L.decodeSuspend("hello").problem, "unreadable");
  assert.equal(L.decodeSuspend('["AE",').problem, "cut");
  assert.equal(L.decodeSuspend("").problem, "empty");
  const old = L.decodeSuspend(JSON.stringify({ version: 2, checklist: 4, checks: { cost: { answer: "64", question: "", right: true, passed: true } } }));
  assert.equal(old.ok, true);
  assert.equal(old.checks.cost.answer, "64");
});

test("time formats and identifiers", () => {
  assert.equal(L.timespan12(3723450), "0001:02:03.45");
  assert.equal(L.isoDuration(3723450), "PT1H2M3.45S");
  assert.equal(L.isoDuration(0), "PT0S");
  assert.equal(L.choiceId("didn't cross"), "didn%27t%20cross");
  assert.deepEqual(L.interaction({ id: "derive.sums.0.0", answer: "0,5" }, null).response, "0.5");
  assert.equal(L.interaction({ id: "cost", answer: "lots" }, { kind: "number", prompt: "How many?" }).type, "fill-in");
});
