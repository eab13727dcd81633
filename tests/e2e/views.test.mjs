// Every view of the lesson, opened through its URL parameter in headless Chromium: the numbers it
// shows (getState().view_data) checked against hand-worked values, and a screenshot of each.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { serveStatic, launchBrowser, openExplainer, frames, screenshot, distinctColours, clickRect } from "./harness.mjs";

let server, browser;
before(async () => { server = await serveStatic(); browser = await launchBrowser(); });
after(async () => { await browser?.close(); await server?.close(); });

const close = (a, b, tol = 0.006) => Math.abs(a - b) <= tol;
const matrixClose = (m, expected, tol) =>
  expected.every((row, i) => row.every((v, j) => close(m[i][j], v, tol)));

async function openView(query, name, size = {}) {
  const opened = await openExplainer(browser, server.url + "?" + query, size);
  await frames(opened.page, 6);
  const state = await opened.page.evaluate(() => window.attentionExplainer.getState());
  const { png } = await screenshot(opened.page, name);
  const { colours } = await distinctColours(opened.page, png);
  assert.ok(colours > 30, `${name}: screenshot has ${colours} colours`);
  return { ...opened, state };
}

test("derive: the lesson's numbers at every stage; predict-then-reveal", async () => {
  const { page, context, state, errors } = await openView("view=derive", "view-derive");
  const d = state.view_data;
  assert.equal(state.view, "derive");
  assert.ok(matrixClose(d.raw_scores, [[1, 0, 1], [0, 1, 1], [1, 1, 2]], 1e-6));
  assert.ok(matrixClose(d.scaled_scores, [[0.707, 0, 0.707], [0, 0.707, 0.707], [0.707, 0.707, 1.414]], 0.001));
  assert.ok(close(d.exps[0][0], 2.03, 0.005) && close(d.exps[2][2], 4.11, 0.005));
  assert.ok(close(d.row_sums[0], 5.06, 0.005) && close(d.row_sums[2], 8.17, 0.005));
  assert.ok(matrixClose(d.weights, [[0.40, 0.20, 0.40], [0.20, 0.40, 0.40], [0.25, 0.25, 0.50]], 0.005));
  assert.ok(matrixClose(d.output, [[3.0, 4.0], [3.41, 4.41], [3.51, 4.51]], 0.005));
  // The printed weights of token 2 (0.20, 0.40, 0.40) times V give 3.40, the output 3.41: the view
  // says the outputs use the unrounded weights.
  const gap = d.rounding_gaps.find((g) => g.token === 1 && g.column === 0);
  assert.ok(gap && close(gap.by_hand, 3.40, 1e-6) && close(gap.output, 3.407, 0.001), JSON.stringify(d.rounding_gaps));
  // Hide everything, then reveal one stage with a real click on "Reveal next".
  await page.evaluate(() => window.attentionExplainer.setState({ derive_revealed: 0 }));
  await frames(page, 3);
  const reveal = await page.evaluate(() => window.attentionExplainer.itemRect("derive:reveal_next"));
  await clickRect(page, reveal);
  assert.equal((await page.evaluate(() => window.attentionExplainer.getState())).derive_revealed, 1);
  await screenshot(page, "view-derive-hidden");
  // Edited matrices recompute everything.
  const edited = await page.evaluate(() => window.attentionExplainer.setState(
    { derive_q: [[2, 0], [0, 2], [1, 1]], derive_revealed: 6 }).view_data);
  assert.ok(close(edited.raw_scores[0][0], 2, 1e-6));
  assert.deepEqual(errors, []);
  await context.close();
});

test("break: at d = 512, T = 64 the lesson's regime, side by side", async () => {
  const { context, state, errors } = await openView("view=break", "view-break");
  const b = state.view_data;
  assert.equal(b.d, 512);
  assert.equal(b.T, 64);
  assert.equal(b.scaled.frac_one_hot, 0);
  assert.ok(close(b.scaled.mean_entropy, 3.7, 0.15), `scaled entropy ${b.scaled.mean_entropy}`);
  assert.ok(b.unscaled.frac_one_hot > 0.5);
  assert.ok(b.unscaled.mean_entropy < 0.5);
  assert.ok(b.scaled.median_row_grad >= 10 * b.unscaled.median_row_grad);
  assert.ok(close(b.unscaled.score_std, Math.sqrt(512), 3));
  // Two ratios, said apart: at each side's softmax input (~244x, seed 0) and at the raw q·k, where
  // the scaled side is also divided by √512 (~11x); the headline is the range over seeds 0-7.
  assert.ok(close(b.gradient_ratio, 243.6, 2), `ratio ${b.gradient_ratio}`);
  assert.ok(close(b.gradient_ratio_raw, b.gradient_ratio / Math.sqrt(512), 1e-3), `raw ratio ${b.gradient_ratio_raw}`);
  assert.equal(b.seed_range.seeds, 8);
  assert.ok(close(b.seed_range.min, 20.68, 0.2) && close(b.seed_range.max, 243.6, 2), JSON.stringify(b.seed_range));
  assert.ok(b.seed_range.min <= b.seed_range.median && b.seed_range.median <= b.seed_range.max);
  // the caveat: the total gradient into q is larger without ÷√d
  assert.ok(b.unscaled.q_grad_norm > 5 * b.scaled.q_grad_norm);
  const total = (h) => h.reduce((a, c) => a + c, 0);
  assert.equal(total(b.histogram_scaled), 64);
  assert.equal(total(b.histogram_unscaled), 64);
  assert.deepEqual(errors, []);
  await context.close();
});

test("mistakes: each switch shows its symptom", async () => {
  const { page, context, errors } = await openView("view=mistakes&causal=1", "view-mistakes");
  const symptoms = async (mistake) => (await page.evaluate((m) =>
    window.attentionExplainer.setState({ mistake: m }).view_data, mistake));
  const none = await symptoms("none");
  assert.ok(none.symptoms.max_row_sum_error < 1e-5);
  assert.equal(none.symptoms.future_weight, 0);
  const axis = await symptoms("softmax_wrong_axis");
  assert.ok(axis.symptoms.max_col_sum_error < 1e-5 && axis.symptoms.max_row_sum_error > 0.1, "columns sum to 1, rows do not");
  const after = await symptoms("mask_after_softmax");
  assert.ok(after.symptoms.max_row_sum_error > 0.1, "rows no longer sum to 1");
  // renormalised, the leaked rows are the correct ones: the leak is real only without it
  assert.ok(after.renormalised_error < 1e-6, `renormalised differs by ${after.renormalised_error}`);
  const zero = await symptoms("mask_with_zero");
  assert.ok(zero.symptoms.future_weight > 0.01, "future tokens leak");
  await frames(page, 3);
  await screenshot(page, "view-mistakes-mask-with-zero");
  const swap = await symptoms("swap_keys_values");
  assert.equal(swap.mistake, "swap_keys_values");
  assert.deepEqual(errors, []);
  await context.close();
});

test("flow: the strongest keys, and a tie reported as a tie", async () => {
  const { page, context, state, errors } = await openView("view=flow", "view-flow");
  assert.equal(state.view_data.tied, 1);
  assert.equal(state.view_data.strongest[0].token, "animal");
  // "The" has an empty query: all 10 keys score 0 and tie at 0.1; none of them is "the" best.
  const the = await page.evaluate(() => window.attentionExplainer.setState({ token: 0 }).view_data);
  assert.equal(the.tied, 10);
  assert.equal(the.strongest.length, 10);
  assert.ok(the.strongest.every((k) => close(k.weight, 0.1, 1e-6)));
  assert.deepEqual(errors, []);
  await context.close();
});

test("the hand-made toy says where it fails: the wide twin, several creatures", async () => {
  const { page, context, errors } = await openView("view=weights&sentence=" +
    encodeURIComponent("The animal didn't cross the street because it was wide") + "&token=it", "view-weights-wide-twin");
  const wide = (await page.evaluate(() => window.attentionExplainer.getState())).view_data;
  assert.deepEqual(wide.model_notes.map((n) => n.id), ["wide_twin"]);
  assert.match(wide.model_notes[0].text, /'wide'.*'street'.*'animal'.*"trained \(built in\)"/s);
  // the same note in every view that shows the model's attention, none in Derive (its own numbers)
  for (const view of ["flow", "library", "steps", "mistakes"]) {
    const d = await page.evaluate((v) => window.attentionExplainer.setState({ view: v }).view_data, view);
    assert.deepEqual(d.model_notes.map((n) => n.id), ["wide_twin"], view);
  }
  const derive = await page.evaluate(() => window.attentionExplainer.setState({ view: "derive" }).view_data);
  assert.equal(derive.model_notes, undefined);
  // Two creatures and no positions: "it" splits its weight evenly, and the view says why.
  const two = await page.evaluate(() => window.attentionExplainer.setState({ view: "flow",
    sentence: "The teacher gave the student a book because it was new", token: "it" }).view_data);
  assert.deepEqual(two.model_notes.map((n) => n.id), ["no_positions"]);
  assert.equal(two.tied, 2, "a tie between teacher and student, reported as a tie");
  assert.deepEqual(errors, []);
  await context.close();
});

test("steps: Next and Back walk the seven steps with the current numbers", async () => {
  const { page, context, state, errors } = await openView("view=steps", "view-steps-1");
  assert.equal(state.step, 0);
  const next = await page.evaluate(() => window.attentionExplainer.itemRect("step:next"));
  for (let k = 1; k <= 6; k++) {
    await clickRect(page, next);
    const s = await page.evaluate(() => window.attentionExplainer.getState());
    assert.equal(s.step, k);
    assert.equal(s.view_data.step, k);
    await screenshot(page, `view-steps-${k + 1}`);
  }
  const third = await page.evaluate(() => window.attentionExplainer.setState({ step: 2 }).view_data);
  const weights = third.weights;
  assert.ok(Array.isArray(weights) && close(weights.reduce((a, b) => a + b, 0), 1, 1e-4), "step 3 shows a row summing to 1");
  assert.deepEqual(errors, []);
  await context.close();
});

test("build: NumPy and PyTorch code for the current state; backends agree", async () => {
  const { context, state, errors } = await openView("view=build&causal=1", "view-build");
  const b = state.view_data;
  assert.match(b.numpy, /import numpy/);
  assert.match(b.torch, /import torch/);
  assert.match(b.numpy, /inf/, "the causal mask is in the code");
  assert.ok(b.agreement.length >= 2);
  for (const row of b.agreement) if (row.available) assert.ok(row.relative <= row.tolerance, `${row.backend}: ${row.relative}`);
  assert.ok(b.agreement.some((r) => r.backend === "simd" && r.relative <= 1e-5));
  assert.deepEqual(errors, []);
  await context.close();
});

test("cost: measured time and memory grow like T²", async () => {
  const { page, context, errors } = await openView("view=cost", "view-cost-start");
  await page.waitForFunction(() => window.attentionExplainer.getState().view_data.done, null, { timeout: 240000 });
  const c = (await page.evaluate(() => window.attentionExplainer.getState())).view_data;
  const points = c.points;
  assert.ok(points.length >= 6);
  const byT = Object.fromEntries(points.map((p) => [p.T, p]));
  assert.ok(byT[2048].ms > byT[256].ms * 8, `time grows superlinearly: ${byT[256].ms} → ${byT[2048].ms} ms`);
  // Memory measured, not the view's formula: the heap in use (malloc's count) while the view holds
  // its whole T × T weight matrix, at T = 1024 and at T = 2048.
  const heapWith = async (T) => {
    await page.evaluate((t) => window.attentionExplainer.setState({ cost_T: t }), T);
    await frames(page, 3);
    assert.equal((await page.evaluate(() => window.attentionExplainer.getState())).view_data.matrix.T, T);
    return page.evaluate(() => window.Module._attn_heap_in_use());
  };
  const at1024 = await heapWith(1024), at2048 = await heapWith(2048);
  const matrixBytes = 4 * (2048 * 2048 - 1024 * 1024);  // the floats the larger matrix adds
  console.log(`cost view: heap in use ${at1024} bytes at T = 1024, ${at2048} at T = 2048 (+${at2048 - at1024}; ` +
    `the weights alone +${matrixBytes})`);
  assert.ok(at2048 - at1024 >= 0.95 * matrixBytes && at2048 - at1024 <= 1.5 * matrixBytes,
    `memory grows like T²: +${at2048 - at1024} bytes for +${matrixBytes} bytes of weights`);
  await frames(page, 3);
  await screenshot(page, "view-cost");
  assert.deepEqual(errors, []);
  await context.close();
});

test("practice: four exercises with live answers, a checklist kept across visits, four references", async () => {
  const { page, context, state, errors } = await openView("view=practice", "view-practice");
  const p = state.view_data;
  assert.equal(p.exercises.length, 4);
  assert.deepEqual(p.exercises.map((e) => e.name), ["Explain", "Derive", "Build", "Break"]);
  assert.equal(p.references.length, 4);
  assert.ok(p.checklist.length >= 6);
  // Line 5 (attention against an RNN) has no check in the app: the learner ticks it on their word.
  assert.equal(p.checklist[4].self_checked, true);
  await page.mouse.move(900, 400);
  await page.mouse.wheel(0, 400);  // the checklist is at the bottom of the view
  await frames(page, 4);
  const box = await page.evaluate(() => window.attentionExplainer.itemRect("check:4"));
  assert.ok(box.y > 0 && box.y + box.h < 800, `check:4 on screen: ${JSON.stringify(box)}`);
  await clickRect(page, box, { atX: box.h / 2 });
  assert.equal((await page.evaluate(() => window.attentionExplainer.getState())).checklist & 16, 16);
  // A new visit (same browser profile) restores the ticks from localStorage.
  const again = await context.newPage();
  await again.goto(server.url + "?view=practice");
  await again.evaluate(() => window.attentionExplainer.ready.then(() => true));
  assert.equal((await again.evaluate(() => window.attentionExplainer.getState())).checklist & 16, 16);
  assert.deepEqual(errors, []);
  await context.close();
});

test("library: the real-library switch reads only the best match", async () => {
  const { page, context, state, errors } = await openView("view=library", "view-library");
  const attention = state.view_data;
  assert.equal(attention.best_title, "animal");
  assert.equal(attention.mode, "attention");
  // "street" is read ~9% but hands on a thin value (0.4 against animal's 1): keys are not values.
  assert.equal(attention.thin_book.title, "street");
  assert.ok(close(attention.thin_book.read, 0.088, 0.002), JSON.stringify(attention.thin_book));
  assert.ok(close(attention.thin_book.value_length, 0.4, 1e-6) && close(attention.thin_book.best_value_length, 1, 1e-6));
  assert.equal(attention.model_notes, undefined, "the lesson's sentence needs no toy-model note");
  const best = await page.evaluate(() => window.attentionExplainer.setState({ library_best_only: true }).view_data);
  assert.equal(best.mode, "best_only");
  assert.equal(best.read.filter((r) => r === 1).length, 1);
  assert.deepEqual(best.library_take_home, [1, 0, 0, 0]);
  await frames(page, 3);
  await screenshot(page, "view-library-best-only");
  assert.deepEqual(errors, []);
  await context.close();
});

// A control only that view draws (item rects are published when drawn): the right view is on screen.
const OWN_CONTROL = { flow: "flow:X", weights: "weights:matrix", heads: "heads:summary", steps: "step:next", derive: "derive:reveal_next", break: "break:d",
  mistakes: "mistake:forget_scale", build: "build:copy", cost: "cost:measure_again", practice: "check:0",
  compare: "compare:sentences", train: "train:lr" };
for (const view of ["library", ...Object.keys(OWN_CONTROL)]) {
  test(`${view} at 800×600 draws the view's own controls, without console errors`, async () => {
    const { page, context, state, errors } = await openView(`view=${view}`, `small-${view}`, { width: 800, height: 600 });
    assert.equal(state.view, view);
    const drawn = await page.evaluate((names) => Object.fromEntries(names.map((n) => {
      try { return [n, window.attentionExplainer.itemRect(n)]; } catch (e) { return [n, null]; }
    })), Object.values(OWN_CONTROL));
    for (const [other, name] of Object.entries(OWN_CONTROL)) {
      if (other !== view) { assert.equal(drawn[name], null, `${name} of the ${other} view is not drawn`); continue; }
      const r = drawn[name];
      assert.ok(r && r.w > 0 && r.h > 0 && r.x >= 0 && r.x + r.w <= 800, `${name} drawn inside the width: ${JSON.stringify(r)}`);
    }
    if (view === "library") assert.equal(state.view_data.best_title, "animal");
    assert.deepEqual(errors, []);
    await context.close();
  });
}
