// End-to-end: the train view in headless Chromium. The default recipe trained in the page reaches
// the native CLI's numbers for the same seed, and so does the √d experiment's scaled arm; "Use this
// model" makes every view show it; Download's
// zip holds a folder that the CLI and the page open with the same predictions; bad recipes are
// refused with the setting named. Not the trainer's unit tests (tests/unit/test_train*.cpp).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";
import { serveStatic, launchBrowser, openExplainer, frames, screenshot, shown } from "./harness.mjs";

const run = promisify(execFile);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const CLI = path.join(ROOT, "build/native/attention_cli");
const fflate = createRequire(import.meta.url)(path.join(ROOT, "node_modules/fflate"));
const SEED = 1, STEPS = 1500;  // the default recipe: 1 layer, 2 heads, d_model 32, lr 3e-3
// Over 1 500 AdamW steps the page's wasm kernels and the native ones round differently (another
// summation order in the SIMD products), so the losses agree to rounding, not to the last bit.
const LOSS_TOLERANCE = 2e-3;
const PROBE = "the animal didn ' t cross the street because it was tired . it refers to the";

let server, browser, work, cli;

async function cliJson(args) {
  const { stdout } = await run(CLI, args, { maxBuffer: 64 << 20 });
  return JSON.parse(stdout);
}

// Polls getState().train until `done(train)`; resolves the last train state.
async function waitTrain(page, done, timeoutMs = 240000) {
  const start = Date.now();
  for (;;) {
    const train = await page.evaluate(() => window.attentionExplainer.getState().train);
    if (done(train)) return train;
    if (Date.now() - start > timeoutMs) throw new Error(`train view: gave up after ${timeoutMs} ms at ${JSON.stringify({ steps: train.steps_done, running: train.running })}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

before(async () => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), "attn-train-"));
  cli = await cliJson(["train", "--seed", String(SEED), "--steps", String(STEPS), "--out", path.join(work, "cli")]);
  server = await serveStatic();
  browser = await launchBrowser();
});

after(async () => {
  if (browser) await browser.close();
  if (server) await server.close();
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

test("the default recipe trained in the page reaches the native CLI's accuracy and loss (same seed)", async () => {
  const { page, context, errors } = await openExplainer(browser, server.url + "?view=train");
  try {
    assert.equal((await page.evaluate(() => window.attentionExplainer.getState())).view, "train");
    await waitTrain(page, (t) => t.worker === "ready", 20000);  // the Web Worker, asked for when the view shows
    const t0 = Date.now();
    // Start for real: the button on the canvas.
    const start = await page.evaluate(() => window.attentionExplainer.itemRect("train:start"));
    await page.mouse.click(start.x + start.w / 2, start.y + start.h / 2);
    const mid = await waitTrain(page, (t) => t.steps_done >= 150);
    assert.ok(mid.running, "training runs after Start");
    assert.equal(mid.worker, "ready");
    assert.ok(mid.in_worker, "the run trains in the page's Web Worker");
    await screenshot(page, "train-mid-1280x800");
    const end = await waitTrain(page, (t) => !t.running && t.steps_done === STEPS);
    const seconds = (Date.now() - t0) / 1000;
    await frames(page, 3);
    await screenshot(page, "train-end-1280x800");
    console.log(`train view: ${STEPS} steps in ${seconds.toFixed(1)} s in headless Chromium (CLI natively: ${cli.seconds.toFixed(1)} s); ` +
      `held-out accuracy page ${end.accuracy} vs CLI ${cli.heldout_accuracy}; final loss page ${end.loss} vs CLI ${cli.final_loss}`);
    assert.equal(end.accuracy_step, STEPS);
    assert.ok(end.accuracy >= 0.95, `held-out accuracy ${end.accuracy} < 95%`);
    assert.ok(Math.abs(end.accuracy - cli.heldout_accuracy) <= 1 / 760 + 1e-12,
      `page ${end.accuracy} vs CLI ${cli.heldout_accuracy}: more than one held-out sentence apart`);
    assert.ok(Math.abs(end.loss - cli.final_loss) <= LOSS_TOLERANCE, `final loss page ${end.loss} vs CLI ${cli.final_loss}`);
    const curves = await page.evaluate(() => window.attentionExplainer.trainCurves());
    assert.equal(curves.run.loss.length, STEPS);
    assert.equal(curves.run.accuracy_steps[0], 0);
    assert.ok(curves.run.loss[0] > 2 * curves.run.loss[STEPS - 1], "the loss falls");
    // The probe's guess: "it was tired" → the animal, most likely by far.
    assert.equal(end.probe.words.join(" "), PROBE);
    assert.equal(end.probe.top[0].word, "animal");
    assert.ok(end.probe.p_creature > 0.9, `p(animal) = ${end.probe.p_creature}`);
    assert.equal(end.probe.attention.length, 1, "one layer");
    assert.equal(end.probe.attention[0].length, 2, "of two heads");
    // Asked, not only looked at: the probe and its twin ("wide", whose referent is the street), each head's
    // share of logit(street) − logit(animal) and each head switched off; in the screen-reader mirror too.
    const ask = end.probe.ask;
    assert.ok(ask, "the model is asked about the probe and its twin");
    assert.deepEqual([ask.adjective, ask.twin_adjective, ask.twin_answer], ["tired", "wide", "street"]);
    assert.deepEqual(ask.answers, ["animal", "street"], "the trained model answers both twins right");
    assert.ok(ask.difference[0] < 0 && ask.difference[1] > 0, `logit(street) − logit(animal): ${ask.difference}`);
    assert.equal(ask.heads.length, 1);
    ask.heads[0].forEach((h, i) => assert.ok(Math.abs(h.ratio[0] - h.ratio[1]) <= 1e-4 * h.ratio[0], `L1 H${i + 1}: one ratio in both sentences (${h.ratio})`));
    assert.match(ask.lines.join("\n"), /L1 H2: weight on "animal" ÷ weight on "street": with "tired" \d+\.\d\d, with "wide" \d+\.\d\d\. Adds: .* Switched off: "tired" (still answers|answers) "/);
    await page.waitForFunction(() => /Ask the model, not its weights/.test(document.getElementById("view-numbers").textContent), null, { timeout: 5000 });
    const askRect = await shown(page, "train:ask");
    assert.ok(askRect.h > 0, "the asks are drawn");
    await screenshot(page, "train-ask-1280x800");

    // The phone's portrait: the same view, laid out for 390 px.
    await page.setViewportSize({ width: 390, height: 844 });
    await frames(page, 5);
    await screenshot(page, "train-end-390x844");
    await shown(page, "train:ask");
    await screenshot(page, "train-ask-390x844");

    // "Use this model": every view shows the trained model; Weights shows its attention.
    const used = await page.evaluate(() => window.attentionExplainer.train("use"));
    assert.equal(used.used_model, `trained (seed ${SEED})`);
    const weights = await page.evaluate(() => window.attentionExplainer.setState({ view: "weights" }));
    assert.equal(weights.model, `trained (seed ${SEED})`);
    assert.deepEqual([weights.model_info.layers, weights.model_info.heads, weights.model_info.d_model], [1, 2, 32]);
    assert.equal(weights.tokens.join(" "), PROBE);
    assert.equal(weights.next[0].token, "animal");
    assert.ok(Math.abs(weights.next[0].p - end.probe.p_creature) < 1e-4, `Weights' next ${weights.next[0].p} vs the probe ${end.probe.p_creature}`);
    // The same switches through the loaded model's intervene(): the Train view's answers with each head off.
    for (const [h, head] of ask.heads[0].entries()) {
      const off = await page.evaluate(([text, h]) => window.attentionExplainer.intervene({ text, ablate: [[0, h]], top: 1 }), [PROBE, h]);
      assert.equal(off.intervened.next[off.intervened.next.length - 1][0].token, head.answer_off[0], `L1 H${h + 1} off`);
    }
    await page.setViewportSize({ width: 1280, height: 800 });
    await frames(page, 3);
    await screenshot(page, "train-used-weights-1280x800");
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
  }
});

test("the √d experiment in the page: with the division 90% at the CLI's step, without it not; both loss curves drawn", async () => {
  // The CLI's arms for the same seed, to the step the scaled arm needs (and the unscaled one's there).
  const cliRun = await cliJson(["train", "--experiment", "scale", "--steps", "150", "--seed", String(SEED)]);
  const [cliScaled, cliRaw] = cliRun.arms;
  assert.equal(cliScaled.reached_90_at, 150, "natively, seed 1 reaches 90% at step 150");
  assert.equal(cliRaw.reached_90_at, null);
  const { page, context, errors } = await openExplainer(browser, server.url + "?view=train");
  try {
    await waitTrain(page, (t) => t.worker === "ready", 20000);
    const button = await page.evaluate(() => window.attentionExplainer.itemRect("train:experiment"));
    await page.mouse.click(button.x + button.w / 2, button.y + button.h / 2);
    const t0 = Date.now();
    const mid = await waitTrain(page, (t) => t.experiment.scaled.reached_at !== null && t.experiment.unscaled.steps_done >= 150, 480000);
    console.log(`√d experiment in the page: the scaled arm at 90% at step ${mid.experiment.scaled.reached_at} ` +
      `(CLI ${cliScaled.reached_90_at}) after ${((Date.now() - t0) / 1000).toFixed(0)} s; unscaled ${mid.experiment.unscaled.accuracy} at step ${mid.experiment.unscaled.steps_done}`);
    assert.ok(mid.experiment.running, "the unscaled arm goes on to its 300 steps");
    assert.ok(mid.experiment.in_worker, "both arms train in the page's Web Worker");
    assert.equal(mid.experiment.scaled.reached_at, cliScaled.reached_90_at);
    assert.equal(mid.experiment.scaled.steps_done, 150, "the scaled arm stops once it is there");
    assert.equal(mid.experiment.unscaled.reached_at, null);
    const curves = await page.evaluate(() => window.attentionExplainer.trainCurves());
    assert.equal(curves.scaled.loss.length, 150);
    assert.ok(curves.unscaled.loss.length >= 150);
    const mean = (v) => v.reduce((a, b) => a + b, 0) / v.length;
    const lastScaled = mean(curves.scaled.loss.slice(125, 150)), lastRaw = mean(curves.unscaled.loss.slice(125, 150));
    assert.ok(lastScaled < 0.5 * lastRaw, `steps 125-150: loss ${lastScaled} with the division, ${lastRaw} without`);
    // the scaled arm's checks, every 25 steps on each held-out triple once, as the CLI's
    assert.deepEqual(curves.scaled.accuracy_steps, [0, 25, 50, 75, 100, 125, 150]);
    const result = await page.evaluate(() => window.attentionExplainer.itemRect("train:experiment_result"));
    assert.ok(result && result.w > 0, "the result lines are drawn");
    await screenshot(page, "train-experiment-1280x800");
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
  }
});

test("where the Web Worker cannot start, the run trains in the page's own slices: the same numbers", async () => {
  const { page, context, errors } = await openExplainer(browser, server.url + "?view=train", {
    route: ["**/train_worker.js", (r) => r.fulfill({ status: 404, body: "gone" })],
  });
  try {
    await waitTrain(page, (t) => t.worker.startsWith("failed"), 20000);
    await page.evaluate((steps) => window.attentionExplainer.setState({ train: { steps } }), 300);
    await page.evaluate(() => window.attentionExplainer.train("start"));
    const end = await waitTrain(page, (t) => !t.running && t.steps_done === 300);
    assert.equal(end.in_worker, false);
    // the same run in the worker (another page), to the same step
    const other = await openExplainer(browser, server.url + "?view=train");
    try {
      await waitTrain(other.page, (t) => t.worker === "ready", 20000);
      await other.page.evaluate(() => window.attentionExplainer.setState({ train: { steps: 300 } }));
      await other.page.evaluate(() => window.attentionExplainer.train("start"));
      const there = await waitTrain(other.page, (t) => !t.running && t.steps_done === 300);
      assert.equal(there.in_worker, true);
      const [a, b] = await Promise.all([page, other.page].map((p) => p.evaluate(() => window.attentionExplainer.trainCurves().run)));
      assert.deepEqual(a.loss, b.loss, "every step's loss, bit for bit");
      assert.deepEqual(a.accuracy, b.accuracy);
      assert.equal(end.probe.p_creature, there.probe.p_creature);
    } finally {
      await other.context.close();
    }
    assert.deepEqual(errors.filter((e) => !/train worker|train_worker/.test(e)), []);
  } finally {
    await context.close();
  }
});

test("Download gives one zip whose folder the CLI and the page open with the same predictions", async () => {
  const { page, context, errors } = await openExplainer(browser, server.url + "?view=train");
  try {
    await page.evaluate(() => window.attentionExplainer.setState({ train: { steps: 100, seed: 4 } }));
    await page.evaluate(() => window.attentionExplainer.train("start"));
    const end = await waitTrain(page, (t) => !t.running && t.steps_done === 100);
    await frames(page, 2);
    // The button for real: a browser download of one zip (fflate fetched on this click).
    const button = await page.evaluate(() => window.attentionExplainer.itemRect("train:download"));
    const [download] = await Promise.all([page.waitForEvent("download"),
      page.mouse.click(button.x + button.w / 2, button.y + button.h / 2)]);
    const zipPath = path.join(work, "download.zip");
    await download.saveAs(zipPath);
    assert.match(download.suggestedFilename(), /^trained-seed4-step100\.zip$/);
    const entries = fflate.unzipSync(new Uint8Array(fs.readFileSync(zipPath)));
    const names = Object.keys(entries).sort();
    assert.deepEqual(names, ["trained-seed4-step100/config.json", "trained-seed4-step100/model.safetensors",
      "trained-seed4-step100/tokenizer.json"]);
    const dir = path.join(work, "downloaded");
    fs.mkdirSync(dir, { recursive: true });
    for (const name of names) fs.writeFileSync(path.join(dir, path.basename(name)), entries[name]);
    // The CLI opens it: the same next-word probabilities at the predicting position as the probe.
    const trace = await cliJson(["model", "--dir", dir, "--text", PROBE, "--top", "5"]);
    const last = trace.next[trace.next.length - 1];
    assert.deepEqual(last.map((n) => n.token), end.probe.top.map((g) => g.word));
    last.forEach((n, i) => assert.ok(Math.abs(n.p - end.probe.top[i].p) < 1e-4, `${n.token}: CLI ${n.p} vs page ${end.probe.top[i].p}`));
    // The page opens it too, through loadModel({files}).
    const files = names.map((name) => ({ name, data: Array.from(entries[name]) }));
    const info = await page.evaluate(async (list) => {
      const api = window.attentionExplainer;
      const model = await api.loadModel({ files: list.map((f) => ({ name: f.name, data: new Uint8Array(f.data) })) });
      const s = await api.setState({ model: model.name, sentence: "the animal didn't cross the street because it was tired . it refers to the" });
      return { model, next: (await api.setState({ token: s.tokens.length - 1 })).next };
    }, files);
    assert.equal(info.model.name, "trained-seed4-step100");
    assert.deepEqual([info.model.layers, info.model.heads, info.model.d_model], [1, 2, 32]);
    info.next.forEach((n, i) => {
      assert.equal(n.token, last[i].token);
      assert.ok(Math.abs(n.p - last[i].p) < 1e-4, `${n.token}: page loadModel ${n.p} vs CLI ${last[i].p}`);
    });
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
  }
});

test("bad recipes are refused with the setting named, in red in the view and by train('start')", async () => {
  const { page, context, errors } = await openExplainer(browser, server.url + "?view=train");
  try {
    const cases = [[{ heads: 0 }, /^heads: /], [{ heads: 2, d_model: 33 }, /^d_model: 33 is not divisible by the 2 heads/],
      [{ d_model: 32, lr: 0 }, /^lr: /], [{ lr: -1 }, /^lr: /], [{ lr: 0.003, layers: 0 }, /^layers: /]];
    for (const [form, message] of cases) {
      const state = await page.evaluate((f) => window.attentionExplainer.setState({ train: f }), form);
      assert.match(state.train.form_error, message);
      const refused = await page.evaluate(() => {
        try { window.attentionExplainer.train("start"); return null; } catch (e) { return e.message; }
      });
      assert.match(refused, message);
      assert.equal((await page.evaluate(() => window.attentionExplainer.getState().train)).running, false);
    }
    await frames(page, 3);
    const box = await page.evaluate(() => window.attentionExplainer.itemRect("train:form_error"));
    assert.ok(box.w > 0, "the message is drawn in the view");
    await screenshot(page, "train-bad-recipe-1280x800");
    // A wrong type is refused by setState itself, naming the key.
    const typeError = await page.evaluate(() => {
      try { window.attentionExplainer.setState({ train: { heads: "two" } }); return null; } catch (e) { return e.message; }
    });
    assert.equal(typeError, "train.heads: must be a whole number");
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
  }
});
