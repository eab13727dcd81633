// End-to-end: the heads view with a GPT-2 model loaded in the page (a random model folder from
// tests/models/make_model.py): the thumbnails' places, a real click choosing a head, the summaries
// against the rule recomputed here from modelTrace's attention, and every view drawn with the model.
// Not the loader's tests (models.test.mjs) and not the summary rule's unit tests (test_head_summary).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";
import { serveStatic, launchBrowser, openExplainer, frames, screenshot, distinctColours, clickRect, appViews } from "./harness.mjs";

const run = promisify(execFile);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const LAYERS = 3, HEADS = 4;
const PATTERNS = ["previous_token", "first_token", "itself", "one_token", "spread_out", "mixed", "too_few"];

let server, browser, work, files;
before(async () => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), "heads-e2e-"));
  const folder = path.join(work, "heads-test");
  await run("/usr/bin/python3", [path.join(ROOT, "tests/models/make_model.py"), "--out", folder, "--layers", String(LAYERS),
    "--heads", String(HEADS), "--embd", "32", "--dtype", "F32", "--tokenizer", "vocab-merges", "--seed", "11"]);
  files = fs.readdirSync(folder).map((f) => ({ name: `heads-test/${f}`, b64: fs.readFileSync(path.join(folder, f)).toString("base64") }));
  [server, browser] = await Promise.all([serveStatic(), launchBrowser()]);
});
after(async () => {
  await browser?.close();
  await server?.close();
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

async function openWithModel(size = {}) {
  const opened = await openExplainer(browser, server.url + "?view=heads", size);
  const info = await opened.page.evaluate((list) => window.attentionExplainer.loadModel({
    files: list.map(({ name, b64 }) => ({ name, data: Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)) })) }), files);
  assert.equal(info.layers, LAYERS);
  await opened.page.evaluate((name) => window.attentionExplainer.setState({ model: name, view: "heads" }), info.name);
  await frames(opened.page, 4);
  return { ...opened, info };
}

// The rule of src/core/head_summary.h, for a causal (T, T) weight matrix: means over rows 1 … T−1
// ("previous" over rows 2 …: row 1's previous key is the first key).
function summarize(w) {
  const T = w.length;
  let previous = 0, first = 0, self = 0, spread = 0;
  for (let i = 1; i < T; i++) {
    if (i >= 2) previous += w[i][i - 1];
    first += w[i][0];
    self += w[i][i];
    let h = 0;
    for (let j = 0; j <= i; j++) if (w[i][j] > 0) h -= w[i][j] * Math.log(w[i][j]);
    spread += h / Math.log(i + 1);
  }
  const n = T - 1;
  return { previous: n > 1 ? previous / (n - 1) : 0, first: first / n, self: self / n, spread: spread / n, rows: n };
}

test("heads view: thumbnails in a layers × heads grid, a real click chooses a head, summaries by the rule", async () => {
  const { page, context, errors } = await openWithModel();
  let s = await page.evaluate(() => window.attentionExplainer.getState());
  const d = s.view_data;
  assert.equal(d.layers, LAYERS);
  assert.equal(d.heads, HEADS);
  assert.deepEqual(d.chosen, { layer: 0, head: 0 });

  // Every thumbnail is on the canvas, right of the controls column, in rows of layers and columns of heads.
  const controls = await page.evaluate(() => window.attentionExplainer.itemRect("model"));
  const rects = await page.evaluate(([L, H]) => {
    const out = [];
    for (let l = 0; l < L; l++) for (let h = 0; h < H; h++) out.push(window.attentionExplainer.itemRect(`heads:thumb:${l}:${h}`));
    return out;
  }, [LAYERS, HEADS]);
  const viewport = page.viewportSize();
  rects.forEach((r, k) => {
    assert.ok(r && r.w > 8 && r.h > 8, `thumbnail ${k} has a size`);
    assert.ok(r.x > controls.x + controls.w && r.x + r.w <= viewport.width && r.y + r.h <= viewport.height, `thumbnail ${k} inside the view`);
  });
  for (let l = 0; l < LAYERS; l++)
    for (let h = 1; h < HEADS; h++) assert.ok(rects[l * HEADS + h].x >= rects[l * HEADS + h - 1].x + rects[l * HEADS + h - 1].w, "heads left to right");
  for (let l = 1; l < LAYERS; l++) assert.ok(rects[l * HEADS].y >= rects[(l - 1) * HEADS].y + rects[(l - 1) * HEADS].h, "layers top to bottom");

  // A real click on layer 3, head 2 chooses it for every view.
  await clickRect(page, rects[2 * HEADS + 1]);
  s = await page.evaluate(() => window.attentionExplainer.getState());
  assert.deepEqual([s.layer, s.head], [2, 1]);
  assert.deepEqual(s.view_data.chosen, { layer: 2, head: 1 });
  const trace = await page.evaluate((text) => window.attentionExplainer.modelTrace({ text, top: 1 }), s.sentence);
  // The weights every view shows are that head's (the model's own numbers, before any switch).
  s.weights.forEach((row, i) => row.forEach((w, j) => assert.ok(Math.abs(w - trace.attention[2][1][i][j]) < 1e-5, `weights[${i}][${j}]`)));

  // Each summary's numbers follow the rule, recomputed from the model's attention.
  for (let l = 0; l < LAYERS; l++)
    for (let h = 0; h < HEADS; h++) {
      const got = s.view_data.summaries[l][h], want = summarize(trace.attention[l][h]);
      assert.ok(PATTERNS.includes(got.pattern), `pattern ${got.pattern}`);
      for (const key of ["previous", "first", "self", "spread", "rows"])
        assert.ok(Math.abs(got[key] - want[key]) < 1e-4, `L${l} H${h} ${key}: ${got[key]} vs ${want[key]}`);
      // at least 4 rows (4 past row 1 for "previous"), a single key's share over at least half the rows
      const named = want.rows < 4 ? "too_few" : want.rows - 1 >= 4 && got.previous >= 0.5 ? "previous_token"
        : got.first >= 0.5 ? "first_token" : got.self >= 0.5 ? "itself"
        : got.top_key >= 0 && got.top_key_share >= 0.5 ? "one_token" : got.spread >= 0.85 ? "spread_out" : "mixed";
      assert.equal(got.pattern, named, `L${l} H${h}: the first pattern over its threshold`);
      if (got.top_key >= 0) {  // its share is the mean over the rows that see it, at least half of them
        const seeing = want.rows - got.top_key + 1;
        assert.ok(seeing >= Math.max(4, Math.ceil(want.rows / 2)), `L${l} H${h}: key ${got.top_key} seen by ${seeing} rows`);
        let sum = 0;
        for (let i = got.top_key; i < trace.attention[l][h].length; i++) sum += trace.attention[l][h][i][got.top_key];
        assert.ok(Math.abs(got.top_key_share - sum / seeing) < 1e-4, `L${l} H${h} top_key_share`);
      }
      // "mostly ·X" only for a share of at least half; a sink only for a first-token head
      if (got.label.startsWith("mostly")) assert.ok(got.top_key_share >= 0.5, got.label);
      if (got.sink) assert.equal(got.pattern, "first_token");
      assert.equal(got.sink, got.pattern === "first_token" && got.first_value_ratio < 0.5);
    }

  // The next-token strip, the layer and head pickers and the inactive causal switch are on screen.
  for (const name of ["next", "layer", "head", "causal", "cross"]) {
    const r = await page.evaluate((n) => window.attentionExplainer.itemRect(n), name);
    assert.ok(r && r.w > 0 && r.h > 0, `${name} drawn`);
  }
  assert.equal(s.view_data.next.length, 5);
  assert.ok(Math.abs(s.view_data.next[0].p - s.next[0].p) < 1e-6, "the strip shows getState().next");
  await screenshot(page, "heads-model");

  // The Build view's program for this head (X with a column of ones, the head's W_Q, W_K, W_V with
  // their biases as a last row) prints the weights every view shows.
  const build = await page.evaluate(async () => (await window.attentionExplainer.setState({ view: "build" })).view_data);
  assert.equal(build.from_qkv, false);
  const program = path.join(work, "head.py");
  fs.writeFileSync(program, build.numpy);
  const { stdout } = await run("/usr/bin/python3", [program]);
  const lines = stdout.trim().split("\n");
  const printed = lines.slice(1, lines.indexOf("output")).map((l) => l.split(" ").map(Number));
  assert.equal(printed.length, s.weights.length);
  printed.forEach((row, i) => row.forEach((w, j) => assert.ok(Math.abs(w - s.weights[i][j]) < 1e-4, `program weights[${i}][${j}] ${w} vs ${s.weights[i][j]}`)));
  assert.deepEqual(errors, []);
  await context.close();
});

test("compare with a GPT-2 model: sentence B goes through the same model, layer and head", async () => {
  const { page, context, errors } = await openWithModel();
  await page.evaluate(() => window.attentionExplainer.setState({ layer: 2, head: 1 }));
  const c = await page.evaluate(async () => (await window.attentionExplainer.setState({ view: "compare",
    compare_sentence: "The cat sat on the mat because it was tired" })).view_data);
  assert.equal(c.mode, "sentences");
  assert.equal(c.model, "heads-test");
  const alone = await page.evaluate(() => window.attentionExplainer.setState({ view: "weights",
    sentence: "The cat sat on the mat because it was tired" }));
  assert.equal(c.b.keys.length, alone.tokens.length);
  c.b.weights.forEach((w, j) => assert.ok(w === null ? j > c.b.query : Math.abs(w - alone.weights[c.b.query][j]) < 1e-6,
    `b[${j}] ${w} vs ${alone.weights[c.b.query][j]}`));
  assert.deepEqual(errors, []);
  await context.close();
});

test("heads view with the hand-made model: its one layer and one head", async () => {
  const { page, context, errors } = await openExplainer(browser, server.url + "?view=heads");
  await frames(page, 4);
  const s = await page.evaluate(() => window.attentionExplainer.getState());
  assert.equal(s.view_data.layers, 1);
  assert.equal(s.view_data.heads, 1);
  assert.equal(s.view_data.model, "handmade");
  const thumb = await page.evaluate(() => window.attentionExplainer.itemRect("heads:thumb:0:0"));
  assert.ok(thumb && thumb.w > 20, "one thumbnail");
  // "it" in the lesson's sentence reads "animal" most: the top weight listed beside the lines.
  assert.equal(s.view_data.top_weights[0].token, "animal");
  assert.ok(Math.abs(s.view_data.top_weights[0].weight - s.weights[s.token][s.view_data.top_weights[0].key]) < 1e-6);
  await screenshot(page, "heads-handmade");
  assert.deepEqual(errors, []);
  await context.close();
});

for (const [width, height] of [[1280, 800], [800, 600]]) {
  test(`every view with a GPT-2 model at ${width}×${height} draws without console errors`, async () => {
    const { page, context, errors } = await openWithModel({ width, height });
    await page.evaluate(() => window.attentionExplainer.setState({ layer: 1, head: 2 }));
    for (const view of await appViews(page)) {
      const s = await page.evaluate((v) => window.attentionExplainer.setState({ view: v }), view);
      assert.equal(s.view, view);
      await frames(page, 4);
      const { png } = await screenshot(page, `model-${view}-${width}x${height}`);
      const { colours } = await distinctColours(page, png);
      assert.ok(colours > 30, `${view}: screenshot has ${colours} colours`);
    }
    assert.deepEqual(errors, []);
    await context.close();
  });
}
