// End-to-end: loading GPT-2 models in the page (the other families: tests/e2e/families.test.mjs). A local server stands in for the Hugging Face
// hub; model folders come from tests/models/make_model.py, the reference from torch_reference.py.
// Not the loader's unit tests (tests/unit): here the bytes travel the browser's real paths.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";
import { serveStatic, serveHub, launchBrowser, openExplainer, frames, screenshot, distinctColours } from "./harness.mjs";

const run = promisify(execFile);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const PYTHON = "/usr/bin/python3";
const encoder = createRequire(import.meta.url)(path.join(ROOT, "node_modules/gpt-3-encoder"));
const TEXT = "The animal didn't cross the street because it was tired, 42 times!";
const TOLERANCE = 1e-4;

// Small random configs (layers 1–3, heads 1–4, n_embd 8–96), every dtype, with and without the
// "transformer." prefix, both tokenizer layouts; all with GPT-2's real 50 257-token vocabulary.
const CONFIGS = {
  "test/tiny-f32": ["--layers", "1", "--heads", "1", "--embd", "8", "--dtype", "F32", "--tokenizer", "vocab-merges", "--seed", "1"],
  "test/mid-f16": ["--layers", "2", "--heads", "4", "--embd", "32", "--dtype", "F16", "--prefix", "--tokenizer", "json", "--seed", "2"],
  "test/wide-bf16": ["--layers", "3", "--heads", "2", "--embd", "96", "--dtype", "BF16", "--prefix", "--lm-head", "--buffers",
    "--tokenizer", "vocab-merges", "--seed", "3"],
  "test/three-f32": ["--layers", "3", "--heads", "3", "--embd", "24", "--dtype", "F32", "--tokenizer", "json", "--seed", "4"],
};
// For the memory test: its floats (~52 MB) do not fit in a page held to 64 MB of wasm memory.
// Held as F16 (the file's own format): 50 257 × 768 × 2 bytes, past the 64 MB the memory test allows.
const LARGE = { repo: "test/large-f16", args: ["--layers", "1", "--heads", "2", "--embd", "768", "--dtype", "F16", "--seed", "5"] };
const SLOW = "test/slow";  // the same files as tiny-f32, served slowly (progress bar, cancel)

let server, browser, hub, work;
const folders = {};

before(async () => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), "models-e2e-"));
  await Promise.all([...Object.entries(CONFIGS), [LARGE.repo, LARGE.args]].map(async ([repo, args]) => {
    folders[repo] = path.join(work, repo.replace("/", "_"));
    await run(PYTHON, [path.join(ROOT, "tests/models/make_model.py"), "--out", folders[repo], ...args]);
  }));
  folders[SLOW] = folders["test/tiny-f32"];
  [server, browser, hub] = await Promise.all([serveStatic(), launchBrowser(), serveHub(folders, { slow: SLOW })]);
});
after(async () => {
  await browser?.close();
  await server?.close();
  await hub?.close();
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

async function reference(folder, ids, top) {
  const { stdout } = await run(PYTHON, [path.join(ROOT, "tests/models/torch_reference.py"), "--dir", folder,
    "--ids", ids.join(","), "--top", String(top)], { maxBuffer: 64 << 20 });
  return JSON.parse(stdout);
}

// Every layer, head, query and key, and the top next tokens, against PyTorch.
function assertMatches(trace, ref, label) {
  let worst = 0;
  assert.equal(trace.attention.length, ref.attention.length, `${label}: layers`);
  trace.attention.forEach((layer, l) => {
    assert.equal(layer.length, ref.attention[l].length, `${label}: heads of layer ${l}`);
    layer.forEach((head, h) => head.forEach((row, i) => row.forEach((w, j) => {
      if (j > i) assert.equal(w, 0, `${label}: causal entry [${l}][${h}][${i}][${j}]`);
      worst = Math.max(worst, Math.abs(w - ref.attention[l][h][i][j]));
    })));
  });
  assert.ok(worst < TOLERANCE, `${label}: attention differs from PyTorch by ${worst}`);
  trace.next.forEach((options, t) => options.forEach((o, k) => {
    const r = ref.next[t][k];
    assert.ok(Math.abs(o.p - r.p) < TOLERANCE, `${label}: next[${t}][${k}] p ${o.p} vs ${r.p}`);
    if (Math.abs(o.p - r.p) > 1e-6 || o.id === r.id) assert.equal(o.id, r.id, `${label}: next[${t}][${k}] id`);
  }));
  return worst;
}

// Chromium reports every HTTP error status as a console error: the 404s the loader expects (a
// repository without tokenizer.json, one that is not there) are not the page's errors.
const pageErrors = (errors) => errors.filter((e) => !/the server responded with a status of 404/.test(e));

async function expectWorking(page, label) {
  const s = await page.evaluate(() => window.attentionExplainer.setState({ view: "weights" }));
  assert.equal(s.view, "weights", `${label}: a view switch after the failure`);
  await page.evaluate(() => window.attentionExplainer.setState({ view: "flow" }));
  await frames(page, 2);
}

test("loadModel({hub, base}) then modelTrace matches PyTorch for every config", async () => {
  const { page, context, errors } = await openExplainer(browser, server.url);
  for (const [repo, args] of Object.entries(CONFIGS)) {
    const info = await page.evaluate(({ repo, base }) => window.attentionExplainer.loadModel({ hub: repo, base }), { repo, base: hub.base });
    const value = (flag) => Number(args[args.indexOf(flag) + 1]);
    assert.deepEqual([info.name, info.family, info.layers, info.heads, info.d_model, info.vocab_size],
      [repo, "gpt2", value("--layers"), value("--heads"), value("--embd"), 50257]);
    const trace = await page.evaluate((text) => window.attentionExplainer.modelTrace({ text, top: 5 }), TEXT);
    assert.deepEqual(trace.token_ids, encoder.encode(TEXT), `${repo}: tokens as gpt-3-encoder makes them`);
    const worst = assertMatches(trace, await reference(folders[repo], trace.token_ids, 5), repo);
    const s = await page.evaluate(() => window.attentionExplainer.getState());
    assert.equal(s.model, repo);
    assert.equal(s.layer, 0);
    assert.equal(s.head, 0);
    assert.equal(s.loading.active, false);
    console.log(`# ${repo}: ${trace.token_ids.length} tokens, worst attention difference ${worst.toExponential(2)}`);
  }
  // config.json, then whether it is sharded (a 404: one file), the weights' size, tokenizer.json
  // and on a 404 vocab.json + merges.txt, then the weights
  const tiny = hub.requests.filter((r) => r.url.startsWith("/test/tiny-f32/")).map((r) => `${r.method} ${r.url.split("/").pop()}`);
  assert.deepEqual(tiny, ["GET config.json", "GET model.safetensors.index.json", "HEAD model.safetensors", "GET tokenizer.json",
    "GET vocab.json", "GET merges.txt", "GET model.safetensors"]);
  const s = await page.evaluate(() => window.attentionExplainer.getState());
  // in loading order; the built-in trained model is offered, not loaded (tests/e2e/trained_model.test.mjs)
  assert.deepEqual(s.models.map((m) => m.name), Object.keys(CONFIGS));
  assert.deepEqual(s.loading.on_request, ["trained (built in)"]);
  assert.deepEqual(pageErrors(errors), []);
  await context.close();
});

test("loadModel({files}) with File objects (a folder's paths) and with {name, data}", async () => {
  const { page, context, errors } = await openExplainer(browser, server.url);
  // Real File objects through the app's own hidden chooser, as "Choose files…" gives them.
  const folder = folders["test/mid-f16"];
  await page.setInputFiles("#model-files", fs.readdirSync(folder).map((f) => path.join(folder, f)));
  await page.waitForFunction(() => window.attentionExplainer.getState().model !== "handmade", null, { timeout: 20000 });
  let s = await page.evaluate(() => window.attentionExplainer.getState());
  assert.equal(s.model_info.layers, 2);
  assert.equal(s.model_info.heads, 4);
  let trace = await page.evaluate((text) => window.attentionExplainer.modelTrace({ text, top: 3 }), TEXT);
  assertMatches(trace, await reference(folder, trace.token_ids, 3), "files: mid-f16");

  // {name: "folder/file", data: Uint8Array}: the model is named after the folder.
  const wide = folders["test/wide-bf16"];
  const files = fs.readdirSync(wide).map((f) => ({ name: `wide-bf16/${f}`, b64: fs.readFileSync(path.join(wide, f)).toString("base64") }));
  const info = await page.evaluate((list) => window.attentionExplainer.loadModel({
    files: list.map(({ name, b64 }) => ({ name, data: Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)) })) }), files);
  assert.equal(info.name, "wide-bf16");
  assert.equal(info.layers, 3);
  trace = await page.evaluate((text) => window.attentionExplainer.modelTrace({ text, top: 3 }), TEXT);
  assertMatches(trace, await reference(wide, trace.token_ids, 3), "files: wide-bf16");
  s = await page.evaluate(() => window.attentionExplainer.setState({ layer: 2, head: 1, view: "heads" }));
  assert.deepEqual([s.model, s.layer, s.head], ["wide-bf16", 2, 1]);
  assert.ok(s.next.length > 0 && s.next.length <= 5, "next tokens at the selected position");
  await frames(page, 3);
  const shot = await screenshot(page, "models-heads-view");
  assert.ok((await distinctColours(page, shot.png)).colours > 20, "the heads view draws something");
  assert.deepEqual(pageErrors(errors), []);
  await context.close();
});

test("the download shows its progress; cancelling keeps the current model", async () => {
  const { page, context, errors } = await openExplainer(browser, server.url);
  await page.evaluate(() => { window.progressSeen = []; });
  const loading = page.evaluate(({ repo, base }) => window.attentionExplainer.loadModel({ hub: repo, base,
    onProgress: (p) => window.progressSeen.push(p) }).then((m) => m.name), { repo: SLOW, base: hub.base });
  await page.waitForFunction(() => { const l = window.attentionExplainer.getState().loading; return l.percent > 30; });
  const mid = await page.evaluate(() => window.attentionExplainer.getState().loading);
  assert.equal(mid.active, true);
  assert.equal(mid.bytes_total, fs.statSync(path.join(folders[SLOW], "model.safetensors")).size);
  assert.ok(mid.bytes_done > 0 && mid.bytes_done < mid.bytes_total, `bytes ${mid.bytes_done} of ${mid.bytes_total}`);
  assert.match(mid.label, /test\/slow · model\.safetensors/);
  await frames(page, 3);
  await screenshot(page, "models-progress");  // look at it: the picker's progress bar
  assert.equal(await loading, SLOW);
  const seen = await page.evaluate(() => window.progressSeen);
  assert.ok(seen.length >= 3, `${seen.length} progress reports`);
  assert.equal(seen[seen.length - 1].percent, 100);
  for (let i = 1; i < seen.length; i++) assert.ok(seen[i].loaded >= seen[i - 1].loaded);

  // Another download cancelled half way: its Promise rejects, test/slow stays the model.
  const cancelled = page.evaluate(({ base }) => window.attentionExplainer.loadModel({ hub: "test/slow", revision: "other", base })
    .then(() => "loaded", (e) => `${e.name}: ${e.message}`), { base: hub.base });
  await page.waitForFunction(() => window.attentionExplainer.getState().loading.percent > 20);
  assert.equal(await page.evaluate(() => window.attentionExplainer.cancelModelLoad()), true);
  assert.match(await cancelled, /^AbortError: loading test\/slow was cancelled/);
  const s = await page.evaluate(() => window.attentionExplainer.getState());
  assert.equal(s.model, SLOW);
  assert.equal(s.loading.active, false);
  assert.equal(s.loading.error, "");
  await expectWorking(page, "after cancel");
  assert.deepEqual(pageErrors(errors), []);
  await context.close();
});

test("bad files are refused by name and the page keeps working", async () => {
  const { page, context, errors } = await openExplainer(browser, server.url);
  const tiny = folders["test/tiny-f32"];
  const read = (f) => fs.readFileSync(path.join(tiny, f));
  const good = { "config.json": read("config.json"), "vocab.json": read("vocab.json"), "merges.txt": read("merges.txt"),
    "model.safetensors": read("model.safetensors") };
  const config = JSON.parse(good["config.json"]);
  const merges = good["merges.txt"].toString().split("\n");
  merges[5] = "just-one-token-here";
  const cases = [
    ["truncated safetensors", { "model.safetensors": good["model.safetensors"].subarray(0, good["model.safetensors"].length - 100) },
      /model\.safetensors/],
    ["wrong shape", { "config.json": Buffer.from(JSON.stringify({ ...config, n_embd: 16 })) }, /model\.safetensors/],
    ["model_type falcon", { "config.json": Buffer.from(JSON.stringify({ ...config, model_type: "falcon" })) }, /config\.json.*falcon/],
    ["malformed merges line", { "merges.txt": Buffer.from(merges.join("\n")) }, /merges\.txt/],
    ["no weights", { "model.safetensors": null }, /model\.safetensors: missing/],
  ];
  // a good model first: it must stay the current one after every failure
  await page.evaluate(({ base }) => window.attentionExplainer.loadModel({ hub: "test/tiny-f32", base }), { base: hub.base });
  for (const [label, change, pattern] of cases) {
    const files = Object.entries({ ...good, ...change }).filter(([, b]) => b).map(([name, b]) => ({ name, b64: b.toString("base64") }));
    const message = await page.evaluate((list) => window.attentionExplainer.loadModel({ name: "bad",
      files: list.map(({ name, b64 }) => ({ name, data: Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)) })) })
      .then(() => "loaded", (e) => e.message), files);
    assert.match(message, pattern, `${label}: ${message}`);
    assert.ok(!message.includes("\n"), `${label}: one line`);
    const s = await page.evaluate(() => window.attentionExplainer.getState());
    assert.equal(s.model, "test/tiny-f32", `${label}: the previous model stays`);
    assert.equal(s.loading.error, message, `${label}: the app shows the same reason`);
    assert.ok(!s.models.some((m) => m.name === "bad"), `${label}: nothing half-loaded registered`);
    await expectWorking(page, label);
    console.log(`# ${label}: ${message}`);
  }
  // a repository that is not there, a bad id
  const missing = await page.evaluate(({ base }) => window.attentionExplainer.loadModel({ hub: "test/none", base })
    .then(() => "loaded", (e) => e.message), { base: hub.base });
  assert.match(missing, /^config\.json: HTTP 404/);
  const badId = await page.evaluate(() => window.attentionExplainer.loadModel({ hub: "../etc" }).then(() => "loaded", (e) => e.message));
  assert.match(badId, /^hub: /);
  await expectWorking(page, "after a missing repository");
  assert.deepEqual(pageErrors(errors), []);
  await context.close();
});

test("?hub= offers the repository with its size; model, layer and head follow the permalink", async () => {
  const url = `${server.url}?hub=test/three-f32&hub_base=${encodeURIComponent(hub.base)}&model=test/three-f32&layer=2&head=1`;
  const earlier = hub.requests.length;
  const { page, context, errors } = await openExplainer(browser, url);
  await page.waitForFunction(() => window.attentionExplainer.getState().loading.offered_bytes > 0);
  let s = await page.evaluate(() => window.attentionExplainer.getState());
  assert.equal(s.loading.offered_hub, "test/three-f32");
  assert.equal(s.loading.offered_bytes, fs.statSync(path.join(folders["test/three-f32"], "model.safetensors")).size);
  assert.equal(s.model, "handmade", "nothing is downloaded before the click");
  // before the click: only the weights' size was asked for (HEAD), nothing downloaded
  const asked = hub.requests.slice(earlier).filter((r) => r.url.startsWith("/test/three-f32/"));
  assert.deepEqual(asked.map((r) => `${r.method} ${r.url.split("/").pop()}`), ["HEAD model.safetensors"]);
  await frames(page, 3);
  await screenshot(page, "models-hub-offer");
  // The picker's click goes through Module.requestHubModel (what the app's button calls).
  await page.evaluate(() => window.Module.requestHubModel("test/three-f32", "main"));
  await page.waitForFunction(() => window.attentionExplainer.getState().model === "test/three-f32", null, { timeout: 20000 });
  s = await page.evaluate(() => window.attentionExplainer.getState());
  assert.deepEqual([s.layer, s.head], [2, 1], "the URL's layer and head once the model is there");
  assert.equal(s.loading.offered_hub, "");
  await page.waitForFunction(() => /[?&]model=test%2Fthree-f32/.test(location.search));
  const link = new URL(await page.evaluate(() => window.attentionExplainer.permalink()));
  assert.equal(link.searchParams.get("hub"), "test/three-f32");
  assert.equal(link.searchParams.get("hub_base"), hub.base);
  assert.equal(link.searchParams.get("layer"), "2");
  assert.equal(link.searchParams.get("head"), "1");
  assert.deepEqual(pageErrors(errors), []);
  await context.close();

  // a model that is not loaded and not offered: a warning, the hand-made model stays
  const other = await openExplainer(browser, `${server.url}?model=nobody/nothing&layer=3`);
  s = await other.page.evaluate(() => window.attentionExplainer.getState());
  assert.equal(s.model, "handmade");
  assert.equal(s.layer, 0);
  assert.deepEqual(other.errors, []);
  await other.context.close();
});

test("where the browser refuses the memory a model needs, the page says so and keeps working", async () => {
  // V8 held to 1024 wasm pages (64 MB): what a phone's browser may do at a few hundred MB.
  const small = await launchBrowser(["--js-flags=--wasm-max-mem-pages=1024"]);
  try {
    const { page, context, errors } = await openExplainer(small, server.url);
    const message = await page.evaluate(({ repo, base }) => window.attentionExplainer.loadModel({ hub: repo, base })
      .then(() => "loaded", (e) => e.message), { repo: LARGE.repo, base: hub.base });
    assert.match(message, /^model\.safetensors: .*needs (about )?\d+ MB.*the browser refused to give the page that much memory/);
    const s = await page.evaluate(() => window.attentionExplainer.getState());
    assert.equal(s.model, "handmade");
    assert.equal(s.loading.error, message);
    await expectWorking(page, "after running out of memory");
    assert.deepEqual(pageErrors(errors), []);
    await context.close();
  } finally {
    await small.close();
  }
});
