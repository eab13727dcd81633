// End-to-end: models of every Llama-style family loaded by the page, from files and from a hub, one
// file or sharded, and what the page computes against PyTorch (tests/models/torch_family_reference.py,
// float64): every layer and head's attention and the next-token probabilities within 1e-4. A local
// server stands in for the Hugging Face hub under the README's repository names (the models are
// small random ones in each family's real layout, tests/models/make_family_model.py), with a gated
// repository (401 without the token), one too large for the page, one of an unknown family and
// broken shards. Also: kept downloads (Cache Storage) across a reload, Remove, Unload, and the
// access token never leaving memory. Quick by default; ATTN_FULL=1 adds the larger cases.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { serveStatic, serveHub, launchBrowser, openExplainer, frames, screenshot } from "./harness.mjs";
import { ROOT, makeFamilyModel, torchFamilyReference } from "../models/fixtures.mjs";

const FULL = process.env.ATTN_FULL === "1";
const { Tokenizer } = createRequire(import.meta.url)(path.join(ROOT, "node_modules/@anush008/tokenizers"));
const TEXTS = ["The animal didn't cross the street because it was tired",
  "When the teacher gave the student the book, she smiled. It's 2026: 3.14 ≠ π — naïve café 🙂!"];
const TOKEN = "hf_standInToken0123456789abcdefgh";  // what the stand-in's gated repositories accept
const INDEX = "model.safetensors.index.json";

// [repo, how it reaches the page, make_family_model options]; `full`: only with ATTN_FULL=1.
const CASES = [
  { repo: "TinyLlama/TinyLlama-1.1B-Chat-v1.0", how: "files", options: { family: "llama", dtype: "F32", layers: 2, heads: 4, kv_heads: 1,
    head_dim: 12, d_model: 16, d_ff: 40, rope: "llama3", rope_factor: 8, untied: true, tokenizer: "llama2" } },
  { repo: "Qwen/Qwen3-0.6B", how: "?hub=", options: { family: "qwen3", dtype: "BF16", layers: 2, heads: 4, kv_heads: 2, head_dim: 16,
    d_model: 32, d_ff: 48, window: 4, max_window_layers: 0, rope: "yarn", rope_form: "new", shards: 2, seed: 9 } },
  { repo: "mistralai/Mistral-7B-v0.1-small", how: "files", options: { family: "mistral", dtype: "F16", layers: 3, heads: 3, kv_heads: 1,
    d_model: 24, d_ff: 40, window: 3, shards: 2, tokenizer: "llama2", seed: 4 } },
  { repo: "google/gemma-3-270m", how: "hub+token", full: true, options: { family: "gemma3", dtype: "F16", layers: 6, heads: 2, kv_heads: 2,
    d_model: 16, d_ff: 24, window: 2, rope: "linear", rope_factor: 4, untied: true, shards: 3, seed: 20 } },
  { repo: "Qwen/Qwen2.5-0.5B", how: "files", full: true, options: { family: "qwen2", dtype: "F32", layers: 2, heads: 4, kv_heads: 2,
    d_model: 32, d_ff: 48, window: 5, max_window_layers: 1, tied: true, rope: "yarn", seed: 6 } },
  { repo: "HuggingFaceTB/SmolLM2-135M", how: "?hub=", full: true, options: { family: "llama", dtype: "BF16", layers: 3, heads: 2, kv_heads: 2,
    d_model: 24, d_ff: 48, rope: "yarn", rope_form: "new", tied: true, tokenizer: "llama3", seed: 1 } },
];
// For the hub's behaviours: a gated Llama (2 shards), a public one, broken copies of it.
const GATED = "meta-llama/Llama-3.2-1B", PUBLIC = "test/llama-public", FALCON = "test/falcon";
const NO_SHARD = "test/missing-shard", HUGE = "mistralai/Mistral-7B-v0.1", HUGE_ONE = "google/gemma-2-2b";
const gated = new Set([GATED, "google/gemma-3-270m"]);
// Sizes the stand-in claims on HEAD (no such bytes exist): Mistral 7B's two shards and a single 10 GB file.
const CLAIMED = { [HUGE]: { "model-00001-of-00002.safetensors": 9942981696, "model-00002-of-00002.safetensors": 4540516344 },
  [HUGE_ONE]: { "model.safetensors": 10457367552 } };

let server, browser, hub;
const folders = {};

before(async () => {
  for (const c of CASES) if (FULL || !c.full) folders[c.repo] = makeFamilyModel(c.options);
  const small = { family: "llama", layers: 2, heads: 4, kv_heads: 2, d_model: 16, d_ff: 24, tokenizer: "llama2", shards: 2 };
  folders[GATED] = makeFamilyModel({ ...small, dtype: "BF16", seed: 30 });
  folders[PUBLIC] = makeFamilyModel({ ...small, dtype: "F16", seed: 31 });
  folders[HUGE] = folders[PUBLIC];  // config, index and tokenizer only are ever asked for
  folders[HUGE_ONE] = makeFamilyModel({ ...small, shards: 1, seed: 34 });
  folders[FALCON] = makeFamilyModel({ ...small, seed: 32 });
  const config = path.join(folders[FALCON], "config.json");
  fs.writeFileSync(config, JSON.stringify({ ...JSON.parse(fs.readFileSync(config, "utf8")), model_type: "falcon" }));
  folders[NO_SHARD] = makeFamilyModel({ ...small, seed: 33 });
  fs.rmSync(path.join(folders[NO_SHARD], "model-00002-of-00002.safetensors"));
  [server, browser, hub] = await Promise.all([serveStatic(), launchBrowser(), serveHub(folders, { gated, token: TOKEN, claimed: CLAIMED })]);
});
after(async () => {
  await browser?.close();
  await server?.close();
  await hub?.close();
  for (const dir of new Set(Object.values(folders))) fs.rmSync(dir, { recursive: true, force: true });
});

const tokenizers = new Map();
async function libraryIds(dir, text) {
  if (!tokenizers.has(dir)) tokenizers.set(dir, Tokenizer.fromFile(path.join(dir, "tokenizer.json")));
  return [...(await tokenizers.get(dir).encode(text, null, { addSpecialTokens: true })).getIds()];
}

/** The page's trace against PyTorch's on the same ids: the model block, every weight (masked ones
 *  exactly 0), and each listed next token's probability (1e-4 relative, as the CLI's test). */
function compareWithTorch(ours, dir, ids, label) {
  assert.deepEqual(ours.token_ids, ids, `${label}: the page's tokenizer finds Hugging Face's ids`);
  const wanted = [...new Set(ours.next.flat().map((n) => n.id))];
  const ref = torchFamilyReference(dir, ids, { top: ours.next[0].length, probsAt: wanted });
  for (const key of ["family", "layers", "heads", "kv_heads", "d_model", "d_head", "vocab_size", "positions", "causal", "windows", "params"])
    assert.deepEqual(ours.model[key], ref.model[key], `${label}: model.${key}`);
  let attention = 0, probability = 0;
  assert.equal(ours.attention.length, ref.attention.length, `${label}: layers`);
  ours.attention.forEach((layer, l) => {
    assert.equal(layer.length, ref.attention[l].length, `${label}: layer ${l}: heads`);
    const W = ref.model.windows[l];
    layer.forEach((head, h) => head.forEach((row, i) => row.forEach((w, j) => {
      if (j > i || (W !== null && i - j >= W)) assert.equal(w, 0, `${label}: layer ${l} head ${h}: (${i}, ${j}) is masked`);
      attention = Math.max(attention, Math.abs(w - ref.attention[l][h][i][j]));
    })));
  });
  ours.next.forEach((options, t) => {
    assert.ok(Math.abs(options[0].p - ref.next[t][0].p) <= 1e-4 * ref.next[t][0].p + 1e-7, `${label}: position ${t}: top p`);
    for (const n of options) probability = Math.max(probability, Math.abs(n.p - ref.probs_at[t][wanted.indexOf(n.id)]) / ref.probs_at[t][wanted.indexOf(n.id)]);
  });
  assert.ok(attention <= 1e-4, `${label}: attention within 1e-4 of PyTorch (worst ${attention})`);
  assert.ok(probability <= 1e-4, `${label}: next-token probabilities within 1e-4 relative (worst ${probability})`);
  return { attention, probability };
}

// Chromium logs every HTTP error status as a console error; the ones the tests ask for are not the page's.
const pageErrors = (errors) => errors.filter((e) => !/the server responded with a status of (401|403|404)/.test(e));
const explainer = (page, fn, arg) => page.evaluate(fn, arg);
const failure = (page, options) => page.evaluate((o) => window.attentionExplainer.loadModel(o).then(() => "loaded", (e) => e.message), options);

// The folder's files as {name: "repo-name/file", data}, fetched by the page from the stand-in (as
// a chooser would hand them over, without a round trip through base64).
function loadFromFiles(page, repo, files = fs.readdirSync(folders[repo])) {
  return page.evaluate(async ({ base, dir, name, files }) => {
    const list = await Promise.all(files.map(async (f) => ({ name: `${name}/${f}`,
      data: new Uint8Array(await (await fetch(`${base}/raw/${dir}/${f}`)).arrayBuffer()) })));
    return window.attentionExplainer.loadModel({ files: list });
  }, { base: hub.base, dir: folders[repo], name: repo.split("/")[1], files });
}

test("every family: the page's attention and next tokens match PyTorch (files, ?hub=, a gated hub)", async () => {
  const started = Date.now();
  for (const c of CASES) {
    if (c.full && !FULL) continue;
    const url = c.how === "?hub=" ? `${server.url}?hub=${c.repo}&hub_base=${encodeURIComponent(hub.base)}` : server.url;
    const { page, context, errors } = await openExplainer(browser, url);
    const t0 = Date.now();
    let info;
    if (c.how === "files") {
      info = await loadFromFiles(page, c.repo);
    } else if (c.how === "?hub=") {
      // the offer says the size of every weights file together before anything downloads
      await page.waitForFunction(() => window.attentionExplainer.getState().loading.offered_bytes > 0);
      const weights = fs.readdirSync(folders[c.repo]).filter((f) => f.endsWith(".safetensors"));
      const bytes = weights.reduce((n, f) => n + fs.statSync(path.join(folders[c.repo], f)).size, 0);
      assert.equal(await explainer(page, () => window.attentionExplainer.getState().loading.offered_bytes), bytes, `${c.repo}: offered size`);
      await page.evaluate((repo) => window.Module.requestHubModel(repo, "main", ""), c.repo);  // the offer's Load button
      await page.waitForFunction((repo) => window.attentionExplainer.getState().model === repo, c.repo, { timeout: 60000 });
      info = await explainer(page, () => window.attentionExplainer.getState().model_info);
    } else {
      info = await page.evaluate(({ repo, base, token }) => window.attentionExplainer.loadModel({ hub: repo, base, token }),
        { repo: c.repo, base: hub.base, token: TOKEN });
    }
    const loadMs = Date.now() - t0;
    const family = c.options.family;
    assert.equal(info.family, family, `${c.repo}: family`);
    assert.equal(info.dtype, c.options.dtype, `${c.repo}: the weights kept as the files store them`);
    for (const text of TEXTS) {
      const trace = await page.evaluate((t) => window.attentionExplainer.modelTrace({ text: t, top: 5 }), text);
      const worst = compareWithTorch(trace, folders[c.repo], await libraryIds(folders[c.repo], text), c.repo);
      console.log(`# ${c.repo} (${family} ${c.options.dtype}, ${c.how}): T ${trace.token_ids.length}, attention ` +
        `${worst.attention.toExponential(1)}, p ${worst.probability.toExponential(1)}; loaded in ${loadMs} ms`);
    }
    assert.deepEqual(pageErrors(errors), [], c.repo);
    await context.close();
  }
  console.log(`# families: ${((Date.now() - started) / 1000).toFixed(1)} s`);
});

test("the hub: a gated repository and its token, sizes before the weights, refusals in one line", async () => {
  const { page, context, errors } = await openExplainer(browser, server.url);
  const consoleLines = [];
  page.on("console", (m) => consoleLines.push(m.text()));
  const load = (o) => failure(page, { base: hub.base, ...o });
  const state = () => explainer(page, () => window.attentionExplainer.getState());
  // (a request with the token is preceded by the browser's CORS preflight: not a download)
  const since = (n, repo) => hub.requests.slice(n).filter((r) => r.repo === repo && r.method !== "OPTIONS").map((r) => `${r.method} ${r.file}`);
  // A good model first: it stays the current one through every refusal below.
  assert.equal(await load({ hub: PUBLIC }), "loaded");
  let current = PUBLIC;
  async function refused(o, pattern, label) {
    const n = hub.requests.length;
    const message = await load(o);
    assert.match(message, pattern, label);
    assert.equal(message.split("\n").length, 1, `${label}: one line`);
    const s = await state();
    assert.equal(s.model, current, `${label}: the previous model stays`);
    assert.equal(s.loading.error, message, `${label}: the loader shows it`);
    assert.equal((await explainer(page, () => window.attentionExplainer.setState({ view: "heads" }))).view, "heads", `${label}: still working`);
    console.log(`# ${label}: ${message}`);
    return since(n, o.hub);
  }
  // gated: 401 without a token, the token field named and local files offered instead
  let asked = await refused({ hub: GATED }, /^meta-llama\/Llama-3\.2-1B: a gated repository \(HTTP 401 for config\.json\).*token field.*Choose files/, "gated, no token");
  assert.deepEqual(asked, ["GET config.json"]);
  await frames(page, 3);
  await screenshot(page, "families-gated");  // look at it: the refusal in the warning colour
  asked = await refused({ hub: GATED, token: "not a token!" }, /^token: not an access token/, "a malformed token");
  assert.deepEqual(asked, [], "a malformed token is refused before any request");
  asked = await refused({ hub: GATED, token: "hf_wrongToken0123456789" }, /refused the access token \(HTTP 403 for config\.json\)/, "a wrong token");
  assert.equal(await load({ hub: GATED, token: TOKEN }), "loaded");
  current = GATED;
  let s = await state();
  assert.equal(s.model, GATED);
  assert.equal(s.model_info.dtype, "BF16");
  const toGated = hub.requests.filter((r) => r.repo === GATED && r.auth === `Bearer ${TOKEN}`).map((r) => `${r.method} ${r.file}`);
  // (the shards in the order the index first names them)
  const byKind = toGated.map((a) => a.replace(/model-0000\d-of-00002/, "SHARD"));
  assert.deepEqual(byKind, ["GET config.json", `GET ${INDEX}`, "HEAD SHARD.safetensors", "HEAD SHARD.safetensors",
    "GET tokenizer.json", "GET SHARD.safetensors", "GET SHARD.safetensors"], "index, sizes, tokenizer, then shards");
  assert.ok(!hub.requests.some((r) => r.auth && r.auth !== `Bearer ${TOKEN}` && r.auth !== "Bearer hf_wrongToken0123456789"));
  // too large: refused with its size before any weights (or the tokenizer) are fetched
  asked = await refused({ hub: HUGE }, /^mistralai\/Mistral-7B-v0\.1: its weights are 14\.48 GB in 2 files; .*at most 4 GB/, "Mistral 7B");
  assert.deepEqual(asked.sort(), ["GET config.json", `GET ${INDEX}`, "HEAD model-00001-of-00002.safetensors", "HEAD model-00002-of-00002.safetensors"]);
  asked = await refused({ hub: HUGE_ONE }, /^google\/gemma-2-2b: its weights are 10\.46 GB; /, "one 10 GB file");
  assert.ok(!asked.some((a) => /^GET model.*\.safetensors$/.test(a)), "no weights fetched");
  // an unknown family: after config.json alone
  asked = await refused({ hub: FALCON }, /^config\.json: .*falcon/, "model_type falcon");
  assert.deepEqual(asked, ["GET config.json"]);
  // a shard the hub does not have: before any weight byte
  asked = await refused({ hub: NO_SHARD }, /^model-00002-of-00002\.safetensors: HTTP 404/, "a missing shard");
  assert.ok(!asked.some((a) => a.startsWith("GET model-")), "no shard fetched");
  await refused({ hub: "test/none" }, /^config\.json: HTTP 404/, "no such repository");
  // files: a missing shard, a shard the index does not name
  const pub = fs.readdirSync(folders[PUBLIC]);
  for (const [files, pattern, label] of [
    [pub.filter((f) => f !== "model-00001-of-00002.safetensors"), /^model-00001-of-00002\.safetensors: missing from the chosen files/, "files: a missing shard"],
    [[...pub, "model-00001-of-00002.safetensors".replace("00001", "00003")], /^model-00003-of-00002\.safetensors: is not one of the shards/, "files: a stray shard"]]) {
    if (label.includes("stray")) fs.copyFileSync(path.join(folders[PUBLIC], "model-00001-of-00002.safetensors"), path.join(folders[PUBLIC], "model-00003-of-00002.safetensors"));
    const message = await loadFromFiles(page, PUBLIC, files).then(() => "loaded", (e) => e.message.split("\n")[0].replace(/^page\.evaluate: Error: /, ""));
    fs.rmSync(path.join(folders[PUBLIC], "model-00003-of-00002.safetensors"), { force: true });
    assert.match(message, pattern, label);
    s = await state();
    assert.equal(s.model, GATED, `${label}: the previous model stays`);
    assert.equal(s.loading.error, message);
    console.log(`# ${label}: ${message}`);
  }

  // The token is nowhere but in the page's memory: not in the state, the address, links, storage, the console.
  await page.evaluate(() => { window.copied = []; window.Module.copyText = (t) => window.copied.push(t); window.Module.copyPermalink(); });
  await page.waitForTimeout(300);  // the address bar follows the state 200 ms later
  const seen = await page.evaluate(async () => {
    const cache = [];
    for (const name of await caches.keys()) {
      const store = await caches.open(name);
      for (const request of await store.keys()) {
        const response = await store.match(request);
        cache.push(name, request.url, JSON.stringify([...request.headers]), JSON.stringify([...response.headers]));
        if (request.url.endsWith(".json")) cache.push(await response.text());
      }
    }
    const local = Object.keys(localStorage).map((k) => k + "=" + localStorage.getItem(k));
    const session = Object.keys(sessionStorage).map((k) => k + "=" + sessionStorage.getItem(k));
    const databases = indexedDB.databases ? (await indexedDB.databases()).map((d) => d.name) : [];
    return { state: JSON.stringify(window.attentionExplainer.getState()), href: location.href, copied: window.copied.join(" "),
      permalink: window.attentionExplainer.permalink(), cache: cache.join("\n"), local: local.join("\n"), session: session.join("\n"),
      databases: databases.join(" "), cookie: document.cookie };
  });
  assert.ok(seen.copied.includes("model=meta-llama%2FLlama-3.2-1B"), "Copy link copied the link");
  assert.ok(seen.cache.includes(GATED), "the gated model's files are kept");
  for (const [where, text] of Object.entries(seen)) assert.ok(!text.includes(TOKEN) && !text.includes("0123456789abcdefgh"), `the token is not in ${where}`);
  assert.ok(!consoleLines.some((l) => l.includes(TOKEN)), "the token is in no console line");
  // a hub_base that came with a link never gets the token (the learner typed it into the field)
  const n = hub.requests.length;
  const link = await openExplainer(browser, `${server.url}?hub=${GATED}&hub_base=${encodeURIComponent(hub.base)}`);
  await link.page.evaluate(({ token }) => window.Module.requestHubModel("meta-llama/Llama-3.2-1B", "main", token), { token: TOKEN });
  await link.page.waitForFunction(() => window.attentionExplainer.getState().loading.error !== "");
  assert.match(await explainer(link.page, () => window.attentionExplainer.getState().loading.error), /sent to huggingface\.co only, not to 127\.0\.0\.1/);
  assert.ok(hub.requests.slice(n).every((r) => r.auth === null), "no Authorization to a link's hub");
  await link.context.close();
  assert.deepEqual(pageErrors(errors), []);
  await context.close();
});

test("kept downloads: a reload loads without the hub; Remove empties the storage; Unload frees the model", async () => {
  const { page, context, errors } = await openExplainer(browser, server.url);
  const repo = PUBLIC;
  const bytes = fs.readdirSync(folders[repo]).filter((f) => f.endsWith(".safetensors")).reduce((n, f) => n + fs.statSync(path.join(folders[repo], f)).size, 0);
  await page.evaluate(() => { window.progressSeen = []; });
  await page.evaluate(({ repo, base }) => window.attentionExplainer.loadModel({ hub: repo, base, onProgress: (p) => window.progressSeen.push(p) }), { repo, base: hub.base });
  const progress = await explainer(page, () => window.progressSeen);
  assert.deepEqual([...new Set(progress.map((p) => p.file))].sort(), ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"]);
  assert.ok(progress.every((p) => p.total === bytes), "the total of both shards from the start");
  assert.equal(progress[progress.length - 1].loaded, bytes);
  assert.equal(progress[progress.length - 1].fileLoaded, progress[progress.length - 1].fileTotal);
  let kept = await explainer(page, () => window.attentionExplainer.keptModels());
  assert.deepEqual(kept.map((k) => [k.repo, k.revision, k.bytes]), [[repo, "main", bytes]]);
  // a reload: listed in the picker, and loading it asks the hub for nothing
  await page.reload();
  await page.evaluate(() => window.attentionExplainer.ready.then(() => true));
  await page.waitForFunction(() => window.attentionExplainer.getState().loading.kept.length === 1, null, { timeout: 10000 })
    .catch(async (e) => { throw new Error(`${e.message}; kept: ${JSON.stringify(await explainer(page, () => window.attentionExplainer.keptModels()))}`); });
  assert.deepEqual((await explainer(page, () => window.attentionExplainer.getState().loading.kept)), [{ repo, revision: "main", bytes }]);
  await frames(page, 3);
  await page.evaluate(() => window.attentionExplainer.setState({}));
  const n = hub.requests.length;
  await page.evaluate(() => window.Module.requestHubModel("test/llama-public", "main", ""));  // the kept list's Load
  await page.waitForFunction((r) => window.attentionExplainer.getState().model === r, repo, { timeout: 10000 })
    .catch(async (e) => { throw new Error(`${e.message}; loading: ${JSON.stringify(await explainer(page, () => window.attentionExplainer.getState().loading))}`); });
  assert.deepEqual(hub.requests.slice(n), [], "nothing asked of the hub");
  const trace = await page.evaluate((t) => window.attentionExplainer.modelTrace({ text: t, top: 3 }), TEXTS[0]);
  compareWithTorch(trace, folders[repo], await libraryIds(folders[repo], TEXTS[0]), "kept copy");
  await screenshot(page, "families-kept");  // look at it: the kept list and the loaded list
  // Unload: gone from the list, the hand-made model is current, its trace refused
  let s = await explainer(page, (r) => window.attentionExplainer.unloadModel(r), repo);
  assert.equal(s.model, "handmade");
  assert.ok(!s.models.some((m) => m.name === repo));
  assert.match(await page.evaluate(async () => { try { await window.attentionExplainer.modelTrace({ text: "a" }); return "traced"; } catch (e) { return e.message; } }), /load a model first/);
  assert.equal((await explainer(page, () => window.attentionExplainer.setState({ view: "weights" }))).view, "weights");
  // Remove: the files leave the storage
  await page.evaluate(() => window.Module.forgetKeptModel("test/llama-public", "main"));
  await page.waitForFunction(() => window.attentionExplainer.getState().loading.kept.length === 0);
  kept = await page.evaluate(async () => (await (await caches.open("attention-explainer-models")).keys()).map((r) => r.url));
  assert.deepEqual(kept, []);
  assert.deepEqual(pageErrors(errors), []);
  await context.close();
});
