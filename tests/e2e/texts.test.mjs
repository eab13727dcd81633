// The sentences on screen follow from the numbers they describe, for the hand-made model, the
// trained model (built in) and a GPT-2 model (random weights, tests/models/make_model.py): each
// text is read from getState().view_data and checked against the numbers beside it. The handout's
// mask and layer lines are checked in handout.test.mjs, the head-summary rule in heads.test.mjs.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";
import { serveStatic, launchBrowser, openExplainer, frames, clickRect, shown } from "./harness.mjs";

const run = promisify(execFile);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const TRAINED = "trained (built in)";
const TIRED = "the animal didn ' t cross the street because it was tired . it refers to the";
const WIDE = "the animal didn ' t cross the street because it was wide . it refers to the";

let server, browser, work, files;
before(async () => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), "texts-e2e-"));
  const folder = path.join(work, "texts-gpt2");
  await run("/usr/bin/python3", [path.join(ROOT, "tests/models/make_model.py"), "--out", folder, "--layers", "2",
    "--heads", "2", "--embd", "32", "--dtype", "F32", "--tokenizer", "vocab-merges", "--seed", "5"]);
  files = fs.readdirSync(folder).map((f) => ({ name: `texts-gpt2/${f}`, b64: fs.readFileSync(path.join(folder, f)).toString("base64") }));
  [server, browser] = await Promise.all([serveStatic(), launchBrowser()]);
});
after(async () => {
  await browser?.close();
  await server?.close();
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

const set = (page, partial) => page.evaluate((p) => window.attentionExplainer.setState(p), partial);

async function loadGpt2(page) {
  return page.evaluate((list) => window.attentionExplainer.loadModel({
    files: list.map(({ name, b64 }) => ({ name, data: Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)) })) }), files);
}

// "'animal' (43%)" → [["animal", 0.43], ...] from a Library summary's named books
const namedShares = (text) => [...text.matchAll(/'([^']*)' \((\d+)%\)/g)].map((m) => [m[1], Number(m[2]) / 100]);

test("texts: Compare says where the top weight moves, never a referent; in a first layer only onto or off the changed word", async () => {
  const { page, context, errors } = await openExplainer(browser, server.url + "?view=compare");
  // The hand-made model: the twins read the same; no claim about referents.
  let c = (await set(page, {})).view_data;
  assert.equal(c.top_moved, false);
  assert.doesNotMatch(c.verdict, /referent|flip/i);
  assert.match(c.verdict, /pronoun query/, "the query is 'it': its pronoun query is named");
  c = (await set(page, { token: 1 })).view_data;  // "animal": no pronoun
  assert.doesNotMatch(c.verdict, /pronoun/, `a noun's verdict: ${c.verdict}`);

  // The trained model, one layer: the twins with the suffix, the query the last "the".
  let s = await set(page, { model: TRAINED, sentence: TIRED, compare_sentence: WIDE });
  s = await set(page, { token: s.tokens.length - 1 });
  for (const head of [0, 1]) {
    c = (await set(page, { head })).view_data;
    assert.equal(c.a.query, c.b.query, "the same place in both sentences, the last 'the'");
    assert.doesNotMatch(c.verdict, /referent|flip/i);
    assert.match(c.verdict, /not what the model concludes/);
    if (c.top_moved) {
      assert.ok([c.a.best_text, c.b.best_text].some((t) => t === "tired" || t === "wide"),
        `layer 1 head ${head}: a move is onto or off the adjective (${c.a.best_text} → ${c.b.best_text})`);
      assert.match(c.verdict, /first layer/);
    }
    // the ratio of two shared words' weights is the same in both sentences (what the sentence claims)
    const animal = c.a.keys.indexOf("animal"), street = c.a.keys.indexOf("street");
    assert.ok(animal >= 0 && street > animal, JSON.stringify(c.a.keys));
    const ratio = (side) => side.weights[animal] / side.weights[street];
    assert.ok(Math.abs(ratio(c.a) / ratio(c.b) - 1) < 1e-4, `head ${head}: ${ratio(c.a)} vs ${ratio(c.b)}`);
  }
  // The strip: the trained model learned to predict here, and nowhere else.
  assert.match(s.view_data.next_strip.trained_here, /one place/);
  const early = (await set(page, { token: 3 })).view_data;
  assert.match(early.next_strip.trained_here, /never trained/);
  assert.match(early.next_strip.title, /^Next token after .*by the whole model$/);
  assert.deepEqual(errors, []);
  await context.close();
});

test("texts: the model description, the switches and the strip say what each model computes", async () => {
  const { page, context, errors } = await openExplainer(browser, server.url + "?view=weights");
  // Hand-made: every adjective asks the same question, so "wide" weighs the animal above the street.
  let s = await set(page, { sentence: "The animal didn't cross the street because it was wide" });
  const wide = s.tokens.indexOf("wide");
  assert.ok(s.weights[wide][s.kv_tokens.indexOf("animal")] > s.weights[wide][s.kv_tokens.indexOf("street")]);
  assert.match(s.view_data.controls.scale, /√d = 2\.00/);
  assert.equal(s.d, 4);
  assert.equal(s.view_data.next_strip, undefined, "the hand-made model predicts nothing");
  // Positions: with no positions and no mask, a shuffled text gives each token the same output.
  const why = (await set(page, { view: "heads" })).view_data.family.positions.why;
  assert.match(why, /bag of words/);
  const a = await set(page, { view: "weights", causal: false, sentence: "the animal was tired" });
  const b = await set(page, { sentence: "tired was the animal" });
  for (const word of ["animal", "tired", "was"])
    assert.deepEqual(b.output[b.tokens.indexOf(word)], a.output[a.tokens.indexOf(word)], word);
  // Steps' first formula, with and without biases
  assert.equal((await set(page, { view: "steps", step: 0 })).view_data.formula, "q = x·W_Q      k = x·W_K      v = x·W_V");

  // GPT-2 (d_head 16): the switch names the model's own scale and what it does not change.
  const info = await loadGpt2(page);
  s = await set(page, { model: info.name, view: "steps", step: 0, sentence: "The cat sat on the mat because it was tired" });
  assert.equal(s.view_data.formula, "q = x·W_Q + b_Q      k = x·W_K + b_K      v = x·W_V + b_V");
  assert.match(s.view_data.controls.scale, /no longer divided by 4\.00/);
  assert.match(s.view_data.controls.scale, /Heads grid.*next-token strip keep the model's own run/);
  assert.match(s.view_data.controls.scale, /Train view/);
  assert.match(s.view_data.controls.causal, /Always on/);
  assert.match(s.view_data.controls.temperature, /Only this head/);
  assert.doesNotMatch(s.view_data.next_strip.title, /would write/);
  assert.equal(s.view_data.next_strip.trained_here, "");
  // Off, the chosen head's scores are √16 = 4 times the model's own; the strip does not move.
  const before = s;
  s = await set(page, { scale: false });
  assert.ok(Math.abs(s.score_factor / before.score_factor - 4) < 1e-5, `${s.score_factor} vs ${before.score_factor}`);
  assert.deepEqual(s.next.map((n) => n.id), before.next.map((n) => n.id));
  s.next.forEach((n, k) => assert.ok(Math.abs(n.p - before.next[k].p) < 1e-7, "the next-token strip keeps the model's run"));
  // Around the head: the stream leaving layer 1 is the stream entering layer 2; the chosen head's share is named.
  s = await set(page, { scale: true, view: "flow", layer: 0, head: 1, token: 4 });
  const around = s.view_data.around;
  assert.equal(around.head_parts.length, 2);
  assert.equal(around.shares_add_up, true, "GPT-2 adds the attention's output as it is");
  assert.match(around.text, new RegExp(`^At “.*”, head 2's part .* brings ${Math.round(around.head_shares[1] * 100)}% of it`));
  const second = (await set(page, { layer: 1 })).view_data.around;
  assert.ok(Math.abs(second.stream_in - around.stream_out) < 1e-4 * around.stream_out, `${second.stream_in} vs ${around.stream_out}`);
  s = await set(page, { layer: 0, head: 0 });
  const boxes = Object.fromEntries(s.view_data.scales.map((b) => [b.box, b.formula]));
  assert.equal(boxes.Q, "X·W_Q + b_Q");
  assert.equal(boxes.V, "X·W_V + b_V");
  assert.equal(boxes.scores, "Q·Kᵀ / √d, masked", "GPT-2 divides by √d_head and caps nothing");
  // With a model, Flow's check asks which head adds most around the head; the right choice is the bars' largest.
  const check = s.view_data.check, shares = s.view_data.around.head_shares;
  assert.match(check.prompt, /^At '.*', which head of layer 1 brings the largest share of what the attention adds/);
  const best = shares.indexOf(Math.max(...shares));
  assert.deepEqual(check.choices, ["head 1", "head 2"]);
  await frames(page, 3);
  await clickRect(page, await shown(page, `quiz:choice:${best}`));
  const marked = (await set(page, {})).view_data.check;
  assert.equal(marked.correct, true, `the bars' largest share, head ${best + 1}, is marked right`);
  assert.match(marked.why, new RegExp(`head ${best + 1} ${Math.round(shares[best] * 100)}%`));
  assert.deepEqual(errors, []);
  await context.close();
});

test("texts: the tour's stops open the model their prompt is about; the trained model's stop asks around a head", async () => {
  const { page, context, errors } = await openExplainer(browser, server.url + "?tour=1");
  const last = await page.evaluate(() => window.attentionExplainer.inputs.find((f) => f.name === "tour_step").max);
  const models = [];
  for (let n = 0; n <= last; n++) {
    await set(page, { tour_step: n });
    // a stop on the trained model fetches it (the page does not hold it before): it becomes current on arrival
    await frames(page, 2);
    await page.waitForFunction(() => !window.attentionExplainer.getState().loading.active);
    const s = await set(page, {});
    models.push(s.model);
    if (s.model === TRAINED && s.view === "flow") {
      assert.ok(s.view_data.around, "the stop shows the part around the head");
      assert.match(s.view_data.check.prompt, /which head of layer 1/);
    } else if (s.model === TRAINED) {
      assert.equal(s.view, "heads", "the other trained stop asks the model by switching a head off");
      const button = await page.evaluate(() => window.attentionExplainer.itemRect("heads:ablate"));
      assert.ok(button.w > 0, "its button is on screen");
    }
  }
  assert.equal(models.filter((m) => m === TRAINED).length, 2, JSON.stringify(models));
  assert.ok(models.every((m) => m === TRAINED || m === "handmade"));
  // On from the trained stops: the hand-made model again, whose prompts are about 'it'
  const at = models.lastIndexOf(TRAINED);
  assert.equal((await set(page, { tour_step: at + 1 })).model, "handmade");
  assert.deepEqual(errors, []);
  await context.close();
});

test("texts: Build's check, the Library's 'most', the Heads labels follow the numbers", async () => {
  const { page, context, errors } = await openExplainer(browser, server.url + "?view=build");
  let b = (await set(page, {})).view_data;
  assert.match(b.torch, /the hand-set projections \(not trained\)/);
  assert.equal(b.builtin_check, b.torch.includes("scaled_dot_product_attention("));
  const info = await loadGpt2(page);
  b = (await set(page, { model: info.name, sentence: "The cat sat on the mat because it was tired" })).view_data;
  assert.doesNotMatch(b.torch, /hand-set/);
  for (const temperature of [1, 0.5]) {
    b = (await set(page, { temperature })).view_data;
    const checks = b.torch.includes("scaled_dot_product_attention(");
    assert.equal(b.builtin_check, checks, `temperature ${temperature}`);
    assert.equal(checks, temperature === 1);
  }
  b = (await set(page, { view: "build" })).view_data;
  assert.match(b.torch_hint, /no check against PyTorch's built-in attention/);
  b = (await set(page, { temperature: 1 })).view_data;
  assert.match(b.torch_hint, /Then it checks itself against PyTorch's built-in attention/);

  // The Library: "most of the weight" only where the named books hold at least half; the value-weighted share.
  for (const [model, token] of [["handmade", 7], [info.name, 7], [info.name, 2]]) {
    const s = await set(page, { model, view: "library", temperature: 1, token });
    const d = s.view_data, text = d.summary;
    const named = namedShares(text);
    if (/^Most of the weight/.test(text)) assert.ok(named.reduce((a, [, p]) => a + p, 0) >= 0.48, text);
    const adds = d.read.map((w, j) => w * d.value_lengths[j]);
    const total = adds.reduce((a, x) => a + x, 0);
    const largest = adds.indexOf(Math.max(...adds));
    if (/^No book stands out/.test(text)) continue;  // an even row: nothing is named
    const m = text.match(/'([^']*)' gives (\d+)% of the total/);
    assert.ok(m, text);
    assert.equal(m[1], s.kv_tokens[largest]);
    assert.ok(Math.abs(Number(m[2]) / 100 - adds[largest] / total) <= 0.006, `${m[2]}% vs ${adds[largest] / total}`);
  }

  // Heads: a short text is too short to call; "mostly" never under half the weight.
  let h = (await set(page, { model: info.name, view: "heads", sentence: "The cat sat", token: 0 })).view_data;
  assert.ok(h.summaries.flat().every((x) => x.pattern === "too_few" && x.label === "too few tokens to call"), JSON.stringify(h.summaries));
  h = (await set(page, { sentence: "The cat sat on the mat because it was tired and the dog was not" })).view_data;
  for (const x of h.summaries.flat()) {
    assert.ok(x.rows >= 4);
    if (x.label.startsWith("mostly")) assert.ok(x.top_key_share >= 0.5, x.label);
    assert.equal(x.sink, x.pattern === "first_token" && x.first_value_ratio < 0.5);
    if (x.sink) assert.match(x.reading, /attention sink/);
  }
  assert.deepEqual(errors, []);
  await context.close();
});
