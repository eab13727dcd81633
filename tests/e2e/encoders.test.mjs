// End-to-end: BERT-style encoders (bert, roberta, distilbert) in the page, against PyTorch
// (tests/models/torch_encoder_reference.py, float64) on random models of odd shapes
// (tests/models/make_encoder_model.py): loaded from files (attentionExplainer.loadModel) and through a
// local stand-in for the Hugging Face hub (?hub=) under the README's names, google-bert/bert-base-uncased
// with vocab.txt + tokenizer_config.json and no tokenizer.json (the page falls back to vocab.txt) and
// FacebookAI/roberta-base with tokenizer.json. For each: modelTrace's attention of every layer and head
// and its masked-word probabilities within 1e-4, on the token ids Hugging Face's tokenizers library
// (@anush008/tokenizers) and the CLI find. The page's state over an encoder: getState().masked as
// modelTrace's, no `next`, the strip's prompt without a mask, the causal switch's text, the Heads view's
// summaries by the rule (next_token and looks_ahead included), Compare's bank pair by a real click,
// intervene() (log p against PyTorch's hooks, attribution null). Bad input: one line each, the model
// before stays. Screenshots into /tmp/shots/ (ENCODER_SHOTS changes it), not the repository.
// Quick by default (bert and roberta); ATTN_FULL=1 adds distilbert, roberta from files, every text.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { serveStatic, serveHub, launchBrowser, openExplainer, frames, shown, clickRect, distinctColours } from "./harness.mjs";
import { ROOT, makeEncoderModel, torchEncoderReference, variant, readSafetensors, writeSafetensors } from "../models/fixtures.mjs";

const FULL = process.env.ATTN_FULL === "1";
const SHOTS = process.env.ENCODER_SHOTS || "/tmp/shots";
const CLI = process.env.ATTN_CLI || path.join(ROOT, "build/native/attention_cli");
const { Tokenizer } = createRequire(import.meta.url)(path.join(ROOT, "node_modules/@anush008/tokenizers"));

const MASK = { bert: "[MASK]", distilbert: "[MASK]", roberta: "<mask>" };
const TEXTS = (family) => [
  `When the teacher gave the student the ${MASK[family]}, she smiled.${MASK[family]} It's 3.14 ≠ π — café 🙂!`,
  `The animal didn't cross the ${MASK[family]} because it was tired`,
  "I sat on the bank of the river",
];
// The Heads view's patterns (src/core/head_summary.cpp's names): an encoder's may say next_token, looks_ahead.
const PATTERNS = ["previous_token", "next_token", "first_token", "itself", "one_token", "looks_ahead", "spread_out", "mixed", "too_few"];

// Odd shapes: head widths 12, 13, 6; `hub`: the repository name the stand-in serves it under, `hubOnly`:
// no load from files; `hubVocabTxt`: the hub's copy has vocab.txt + tokenizer_config.json instead.
const CASES = [
  { label: "bert F32, WordPiece tokenizer.json", repo: "google-bert/bert-base-uncased", hubVocabTxt: true,
    options: { family: "bert", dtype: "F32", layers: 2, heads: 3, d_model: 36, d_ff: 52, tokenizer: "wordpiece", prefix: true, seed: 21 } },
  { label: "roberta BF16, byte-level BPE with <mask>", repo: "FacebookAI/roberta-base", hubOnly: !FULL,
    options: { family: "roberta", dtype: "BF16", layers: 3, heads: 2, d_model: 26, d_ff: 40, eps: 1e-5, type_vocab: 1, decoder_bias: true, seed: 22 } },
  { label: "distilbert F16, WordPiece (BertProcessing)", full: true,
    options: { family: "distilbert", dtype: "F16", layers: 2, heads: 5, d_model: 30, d_ff: 44, prefix: true, sinusoidal: true,
      tokenizer: "wordpiece", processing: "bert", seed: 23 } },
];
const active = CASES.filter((c) => FULL || !c.full);

let server, browser, hub;
const folders = {};  // label -> folder (files), repo -> folder (hub)
const made = [];

/** The hub's BERT repository: the folder with vocab.txt + tokenizer_config.json instead of tokenizer.json,
 *  as make_encoder_model.py --vocab-txt writes them (the tokenizer.json kept aside for the library). */
function withVocabTxt(dir) {
  return variant(dir, (d) => {
    const tok = JSON.parse(fs.readFileSync(path.join(d, "tokenizer.json"), "utf8"));
    const byId = Object.entries(tok.model.vocab).sort((a, b) => a[1] - b[1]);
    assert.ok(byId.every(([, id], i) => id === i), "the vocabulary's ids are 0 … V − 1");
    fs.writeFileSync(path.join(d, "vocab.txt"), byId.map(([t]) => t + "\n").join(""));
    fs.writeFileSync(path.join(d, "tokenizer_config.json"), JSON.stringify({ do_lower_case: true, tokenizer_class: "BertTokenizer" }));
    fs.renameSync(path.join(d, "tokenizer.json"), path.join(d, "tokenizer.json.reference"));
  });
}

/** The folder with the masked-LM head's decoder written out (the tied copy) and its bias left out. */
function decoderWithoutBias(dir) {
  return variant(dir, (d) => {
    const file = path.join(d, "model.safetensors");
    const { header, data } = readSafetensors(file);
    const word = Object.keys(header).find((n) => n.endsWith("embeddings.word_embeddings.weight"));
    const kept = Object.entries(header).filter(([n]) => n !== "__metadata__" && n !== "cls.predictions.bias")
      .sort((a, b) => a[1].data_offsets[0] - b[1].data_offsets[0]);
    kept.push(["cls.predictions.decoder.weight", header[word]]);
    const out = {}, parts = [];
    let offset = 0;
    for (const [name, entry] of kept) {
      const bytes = data.subarray(entry.data_offsets[0], entry.data_offsets[1]);
      out[name] = { ...entry, data_offsets: [offset, offset + bytes.length] };
      parts.push(bytes);
      offset += bytes.length;
    }
    assert.ok(header["cls.predictions.bias"], "the good file has the head's bias");
    writeSafetensors(file, out, Buffer.concat(parts));
  });
}

before(async () => {
  for (const c of active) {
    folders[c.label] = makeEncoderModel(c.options);
    made.push(folders[c.label]);
    if (!c.repo) continue;
    folders[c.repo] = c.hubVocabTxt ? withVocabTxt(folders[c.label]) : folders[c.label];
    made.push(folders[c.repo]);
  }
  fs.mkdirSync(SHOTS, { recursive: true });
  [server, browser, hub] = await Promise.all([serveStatic(), launchBrowser(), serveHub(folders)]);
});
after(async () => {
  await browser?.close();
  await server?.close();
  await hub?.close();
  for (const dir of new Set(made)) fs.rmSync(dir, { recursive: true, force: true });
});

const tokenizers = new Map();
/** Hugging Face's ids (a vocab.txt folder: its tokenizer.json kept aside as tokenizer.json.reference). */
async function libraryIds(dir, text) {
  const reference = path.join(dir, "tokenizer.json.reference");
  if (!tokenizers.has(dir)) tokenizers.set(dir, Tokenizer.fromFile(fs.existsSync(reference) ? reference : path.join(dir, "tokenizer.json")));
  return [...(await tokenizers.get(dir).encode(text, null, { addSpecialTokens: true })).getIds()];
}
/** The CLI's ids for the text (`model --dir --text`); null when the CLI is not built. */
function cliIds(dir, text) {
  if (!fs.existsSync(CLI)) return null;
  const r = spawnSync(CLI, ["model", "--dir", dir, "--text", text, "--top", "1"], { encoding: "utf8", maxBuffer: 1 << 30, timeout: 60000 });
  assert.equal(r.status, 0, `the CLI on ${dir}: ${r.stderr}`);
  return JSON.parse(r.stdout).token_ids;
}
function maskIdOf(dir, family) {
  const reference = path.join(dir, "tokenizer.json.reference");
  const tok = JSON.parse(fs.readFileSync(fs.existsSync(reference) ? reference : path.join(dir, "tokenizer.json"), "utf8"));
  return tok.added_tokens.find((t) => t.content === MASK[family]).id;
}

// Chromium logs every HTTP error status as a console error: the hub's 404 for tokenizer.json is asked for.
const pageErrors = (errors) => errors.filter((e) => !/the server responded with a status of 404/.test(e));
const state = (page) => page.evaluate(() => window.attentionExplainer.getState());
const trace = (page, text, top = 5) => page.evaluate(([t, k]) => window.attentionExplainer.modelTrace({ text: t, top: k }), [text, top]);
const message = (e) => String(e.message || e).split("\n")[0].replace(/^page\.evaluate: (Error: )?/, "");

/** The folder's files handed to loadModel as {name: "NAME/file", data} (as a chooser hands them over). */
function loadFromFiles(page, dir, name, files = fs.readdirSync(dir).filter((f) => !f.endsWith(".reference"))) {
  return page.evaluate(async ({ base, dir, name, files }) => {
    const list = await Promise.all(files.map(async (f) => ({ name: `${name}/${f}`,
      data: new Uint8Array(await (await fetch(`${base}/raw/${dir}/${f}`)).arrayBuffer()) })));
    return window.attentionExplainer.loadModel({ files: list });
  }, { base: hub.base, dir, name, files });
}
/** The page opened at ?hub=REPO: the offer's Load button (as families.test.mjs), the model current. */
async function loadFromHub(repo) {
  const opened = await openExplainer(browser, `${server.url}?hub=${repo}&hub_base=${encodeURIComponent(hub.base)}`);
  await opened.page.waitForFunction(() => window.attentionExplainer.getState().loading.offered_bytes > 0);
  await opened.page.evaluate((r) => window.Module.requestHubModel(r, "main", ""), repo);
  await opened.page.waitForFunction((r) => window.attentionExplainer.getState().model === r || window.attentionExplainer.getState().loading.error,
    repo, { timeout: 60000 });
  const s = await state(opened.page);
  assert.equal(s.loading.error, "", `${repo}: the hub's load`);
  assert.equal(s.model, repo);
  return { ...opened, info: s.model_info };
}

/** Our trace against PyTorch's run on the same ids: every weight within 1e-4, one masked entry per mask
 *  token, the likeliest word the same, each listed word's p within 1e-4 relative. */
function compareWithTorch(ours, ref, request, maskId, label) {
  assert.equal(ours.model.causal, false, `${label}: model.causal false`);
  assert.equal(ours.next, undefined, `${label}: an encoder gives masked, not next`);
  let attention = 0, probability = 0;
  assert.equal(ours.attention.length, ref.attention.length, `${label}: layers`);
  ours.attention.forEach((layer, l) => {
    assert.equal(layer.length, ref.attention[l].length, `${label}: layer ${l}: heads`);
    layer.forEach((head, h) => head.forEach((row, i) => row.forEach((w, j) => {
      attention = Math.max(attention, Math.abs(w - ref.attention[l][h][i][j]));
    })));
  });
  // an encoder reads both ways: some weight right of the diagonal (a causal model would have none)
  assert.ok(ours.attention[0][0].some((row, i) => row.some((w, j) => j > i && w > 1e-3)), `${label}: later keys are read`);
  const positions = request.ids.map((id, t) => (id === maskId ? t : -1)).filter((t) => t >= 0);
  assert.ok(ref.masked_lm, `${label}: the reference sees the masked-LM head`);
  assert.deepEqual(ours.masked.map((m) => m.position), positions, `${label}: one entry per mask token`);
  for (const m of ours.masked) {
    const t = m.position;
    assert.equal(m.top[0].id, ref.next[t][0].id, `${label}: position ${t}: the likeliest word`);
    assert.ok(Math.abs(m.top[0].p - ref.next[t][0].p) <= 1e-4 * ref.next[t][0].p + 1e-7, `${label}: position ${t}: top p ${m.top[0].p} vs ${ref.next[t][0].p}`);
    for (const o of m.top) {
      assert.equal(typeof o.token, "string", `${label}: the word's text`);
      const p = ref.probs_at[t][request.probs_at.indexOf(o.id)];
      probability = Math.max(probability, Math.abs(o.p - p) / p);
    }
  }
  assert.ok(attention <= 1e-4, `${label}: attention within 1e-4 of PyTorch (worst ${attention})`);
  assert.ok(probability <= 1e-4, `${label}: masked-word probabilities within 1e-4 relative (worst ${probability})`);
  return { attention, probability };
}

/** The page's traces of the texts (+ an intervene), checked against the library's and the CLI's ids, then
 *  against PyTorch in one run of the reference. */
async function checkTraces(page, c, dir, how) {
  const family = c.options.family, maskId = maskIdOf(dir, family);
  const texts = FULL ? TEXTS(family) : TEXTS(family).slice(0, 1);  // the first has two masks, the last none
  const runs = [];
  for (const text of texts) {
    const ours = await trace(page, text);
    const ids = await libraryIds(dir, text);
    assert.deepEqual(ours.token_ids, ids, `${c.label} (${how}): the page's ids are Hugging Face's`);
    const fromCli = cliIds(dir, text);
    if (fromCli) assert.deepEqual(ours.token_ids, fromCli, `${c.label} (${how}): the page's ids are the CLI's`);
    runs.push({ ours, request: { ids, top: 5, probs_at: [...new Set(ours.masked.flatMap((m) => m.top.map((o) => o.id)))] } });
  }
  // intervene: head 1 of layer 0 switched off; log p at the first mask before and after, as PyTorch's hooks
  const text = texts[0];
  const edit = await page.evaluate((t) => window.attentionExplainer.intervene({ text: t, ablate: [[0, 1]] }), text);
  assert.equal(edit.attribution, null, "no attribution on an encoder");
  assert.match(edit.attribution_note, /post-norm/, "attribution_note says why");
  assert.equal(edit.at, runs[0].ours.masked[0].position, "measured at the first mask");
  assert.ok(Number.isFinite(edit.log_prob) && Number.isFinite(edit.intervened.log_prob), "log p before and after are numbers");
  const refs = torchEncoderReference(dir, [...runs.map((r) => r.request),
    { ids: runs[0].request.ids, probs_at: [edit.target.id] }, { ids: runs[0].request.ids, probs_at: [edit.target.id], ablate: "0.1" }]);
  const worst = { attention: 0, probability: 0, logp: 0 };
  runs.forEach(({ ours, request }, i) => {
    const w = compareWithTorch(ours, refs[i], request, maskId, `${c.label} (${how})`);
    worst.attention = Math.max(worst.attention, w.attention);
    worst.probability = Math.max(worst.probability, w.probability);
  });
  const [before, afterAblation] = refs.slice(runs.length);
  worst.logp = Math.max(Math.abs(edit.log_prob - Math.log(before.probs_at[edit.at][0])),
    Math.abs(edit.intervened.log_prob - Math.log(afterAblation.probs_at[edit.at][0])));
  assert.ok(worst.logp <= 1e-4, `${c.label} (${how}): log p before/after the ablation within 1e-4 of PyTorch (worst ${worst.logp})`);
  assert.ok(Math.abs(edit.intervened.log_prob - edit.log_prob) > 1e-6, "switching the head off changes log p");
  console.log(`# ${c.label} (${how}): ${texts.length} text(s), T ${runs.map((r) => r.request.ids.length).join("/")}: ` +
    `attention ${worst.attention.toExponential(1)}, p ${worst.probability.toExponential(1)}, log p (ablate 0.1) ${worst.logp.toExponential(1)}`);
  return worst;
}

test("encoders: the page's attention and masked words match PyTorch (files, ?hub= with vocab.txt and tokenizer.json)", async () => {
  const started = Date.now();
  for (const c of active) {
    const hows = [...(c.hubOnly ? [] : ["files"]), ...(c.repo ? ["?hub="] : [])];
    for (const how of hows) {
      const dir = how === "files" ? folders[c.label] : folders[c.repo];
      let opened, info;
      if (how === "files") {
        opened = await openExplainer(browser, server.url);
        info = await loadFromFiles(opened.page, dir, c.options.family + "-test");
      } else {
        const n = hub.requests.length;
        opened = await loadFromHub(c.repo);
        info = opened.info;
        const asked = hub.requests.slice(n).filter((r) => r.method === "GET").map((r) => `${r.file} ${r.status}`);
        if (c.hubVocabTxt) {
          assert.ok(asked.includes("tokenizer.json 404") && asked.includes("vocab.txt 200") && asked.includes("tokenizer_config.json 200"),
            `no tokenizer.json: vocab.txt and tokenizer_config.json are read (${asked.join(", ")})`);
        } else assert.ok(asked.includes("tokenizer.json 200") && !asked.some((a) => a.startsWith("vocab.txt")), asked.join(", "));
      }
      assert.equal(info.family, c.options.family, `${c.label}: family`);
      assert.equal(info.dtype, c.options.dtype, `${c.label}: the weights kept as the file stores them`);
      assert.equal(info.causal, false, `${c.label}: model_info.causal`);
      await checkTraces(opened.page, c, dir, how);
      assert.deepEqual(pageErrors(opened.errors), [], `${c.label} (${how}): no page errors`);
      await opened.context.close();
    }
  }
  console.log(`# encoders against PyTorch: ${((Date.now() - started) / 1000).toFixed(1)} s`);
});

// The Heads view's rule (src/core/head_summary.cpp) for a matrix with no causal mask: every row has a choice.
function summarize(w) {
  const T = w.length;
  if (T < 2) return "too_few";
  let previous = 0, first = 0, self = 0, next = 0, ahead = 0, spread = 0, previousRows = 0, nextRows = 0;
  const keySum = new Array(T).fill(0);
  for (let i = 0; i < T; i++) {
    let h = 0;
    for (let j = 0; j < T; j++) { if (w[i][j] > 0) h -= w[i][j] * Math.log(w[i][j]); keySum[j] += Math.max(0, w[i][j]); }
    spread += h / Math.log(T);
    if (i >= 1) first += w[i][0];
    if (i >= 2) { previous += w[i][i - 1]; previousRows++; }
    self += w[i][i];
    if (i + 1 < T) { next += w[i][i + 1]; nextRows++; for (let j = i + 1; j < T; j++) ahead += Math.max(0, w[i][j]); }
  }
  let topShare = 0, topKey = -1;
  for (let j = 1; j < T; j++) if (keySum[j] / T > topShare) { topShare = keySum[j] / T; topKey = j; }
  previous = previousRows ? previous / previousRows : 0; next = nextRows ? next / nextRows : 0;
  first /= T - 1; self /= T; ahead /= T; spread /= T;
  if (T < 4) return "too_few";
  if (previousRows >= 4 && previous >= 0.5) return "previous_token";
  if (nextRows >= 4 && next >= 0.5) return "next_token";
  if (first >= 0.5) return "first_token";
  if (self >= 0.5) return "itself";
  if (topKey >= 0 && topShare >= 0.5) return "one_token";
  if (ahead >= 0.5) return "looks_ahead";
  return spread >= 0.85 ? "spread_out" : "mixed";
}

test("encoders: the page's state (masked, the strip's prompt, the causal switch, Heads, Compare's bank pair), bad input, screenshots", async () => {
  const c = CASES[0], dir = folders[c.label];
  // (headless Chromium's system scheme is light: the dark theme asked for, the light one below)
  const { page, context, errors } = await openExplainer(browser, `${server.url}?theme=dark`);
  const info = await loadFromFiles(page, dir, "bert-test");
  const name = info.name;
  const set = (partial) => page.evaluate((p) => window.attentionExplainer.setState(p), partial);

  // A [MASK] typed: getState().masked is modelTrace's at that position, `next` is empty.
  const sentence = "The animal didn't cross the [MASK] because it was tired";
  await set({ model: name, sentence, view: "weights" });
  let s = await state(page);
  assert.equal(s.theme, "dark");
  const full = await trace(page, sentence);
  assert.equal(s.masked.length, 1, "one mask asked");
  const want = full.masked.find((m) => m.position === s.masked[0].position);
  assert.ok(want, `getState's position ${s.masked[0].position} is one of modelTrace's masks`);
  assert.equal(s.tokens[s.masked[0].position], "[MASK]");
  assert.deepEqual(s.masked[0].top.map((o) => o.id), want.top.map((o) => o.id), "the same words");
  s.masked[0].top.forEach((o, k) => assert.ok(Math.abs(o.p - want.top[k].p) <= 1e-6, `p of ${o.token}: ${o.p} vs ${want.top[k].p}`));
  assert.deepEqual(s.next, [], "an encoder: no next tokens");
  assert.match(s.view_data.next_strip.title, /\[MASK\]/);
  // the causal switch says it is off and why
  assert.match(s.view_data.controls.causal, /^Always off/);
  assert.match(s.view_data.controls.causal, /encoder/);
  // no mask typed: nothing predicted, the strip says how to ask
  await set({ sentence: "I sat on the bank of the river" });
  s = await state(page);
  assert.deepEqual(s.masked, []);
  assert.deepEqual(s.next, []);
  assert.match(s.view_data.next_strip.prompt, /Type \[MASK\] in place of a word/);

  // The Heads view: every summary by the rule, with no causal mask; a head whose links are cut to the
  // next key alone says next_token, one cut to the later keys says looks_ahead.
  await set({ view: "heads", sentence: "I sat on the [MASK] of the river" });
  s = await state(page);
  assert.equal(s.view_data.attribution, null, "the Heads view asks no attribution of an encoder");
  assert.match(s.view_data.attribution_note, /post-norm/, "and says why");
  const heads = await trace(page, s.sentence, 1);
  const T = heads.token_ids.length;
  s.view_data.summaries.forEach((layer, l) => layer.forEach((got, h) => {
    assert.ok(PATTERNS.includes(got.pattern), `pattern ${got.pattern}`);
    assert.equal(got.pattern, summarize(heads.attention[l][h]), `L${l} H${h}: the rule on the model's attention`);
  }));
  const cut = [];
  for (let i = 0; i < T; i++) for (let j = 0; j < T; j++) {
    if (i + 1 < T && j !== i + 1) cut.push({ layer: 0, head: 0, query: i, key: j });  // head 0: only the next key
    if (i + 1 < T && j <= i) cut.push({ layer: 0, head: 1, query: i, key: j });  // head 1: only later keys
  }
  await set({ cut });
  s = await state(page);
  assert.equal(s.view_data.summaries[0][0].pattern, "next_token", JSON.stringify(s.view_data.summaries[0][0]));
  assert.equal(s.view_data.summaries[0][1].pattern, "looks_ahead", JSON.stringify(s.view_data.summaries[0][1]));
  assert.match(s.view_data.summaries[0][0].label + " " + s.view_data.summaries[0][1].label, /next|ahead|later/i);
  await set({ cut: [] });

  // Compare: the bank pair's button, clicked as a hand does; "bank" is the query.
  // (sentences of different lengths: twins of as many tokens are the next test's)
  await set({ view: "compare", sentence: "The cat sat", compare_sentence: "The dog ran home" });
  await frames(page, 4);
  await clickRect(page, await shown(page, "compare:bank"));
  s = await state(page);
  assert.equal(s.sentence, "I sat on the bank of the river");
  assert.equal(s.compare_sentence, "I put my money in the bank");
  assert.equal(s.tokens[s.token], "bank", `the query: ${s.token_text}`);
  await page.mouse.move(640, 4);  // off the button: no tooltip in the picture
  await frames(page, 4);
  await page.screenshot({ path: path.join(SHOTS, "encoder-compare-bank-1280x800.png") });

  // Screenshots over the bert model: Weights (light theme), Heads.
  await set({ view: "weights", sentence: "I sat on the [MASK] of the river", token: 5 });
  const shots = [];
  const snap = async (p, file) => {
    await p.mouse.move(p.viewportSize().width / 2, 4);
    await frames(p, 6);
    const png = await p.screenshot({ path: path.join(SHOTS, file) });
    const { colours } = await distinctColours(p, png);
    assert.ok(colours > 20, `${file}: drawn (${colours} colours)`);
    shots.push(path.join(SHOTS, file));
  };
  await set({ view: "heads" });
  await snap(page, "encoder-heads-1280x800.png");
  shots.push(path.join(SHOTS, "encoder-compare-bank-1280x800.png"));
  const light = await openExplainer(browser, `${server.url}?theme=light`);
  const lightName = (await loadFromFiles(light.page, dir, "bert-test")).name;
  await light.page.evaluate((n) => window.attentionExplainer.setState({ model: n, view: "weights", sentence: "I sat on the [MASK] of the river", token: 5 }), lightName);
  assert.equal((await state(light.page)).theme, "light");
  await snap(light.page, "encoder-weights-light-1280x800.png");
  await light.context.close();
  for (const [query, file, key] of [["?present=1&theme=dark", "encoder-weights-phone-present-390x844.png", "present"],
    ["?theme=light", "encoder-weights-phone-light-390x844.png", "theme"]]) {
    const phone = await openExplainer(browser, server.url + query, { width: 390, height: 844 });
    const phoneName = (await loadFromFiles(phone.page, dir, "bert-test")).name;
    await phone.page.evaluate((n) => window.attentionExplainer.setState({ model: n, view: "weights", sentence: "I sat on the [MASK] of the river", token: 5 }), phoneName);
    assert.equal((await state(phone.page))[key], key === "present" ? true : "light");
    await snap(phone.page, file);
    assert.deepEqual(pageErrors(phone.errors), []);
    await phone.context.close();
  }
  console.log(`# screenshots: ${shots.join(" ")}`);

  // Bad input, one line each; the model before stays and still works.
  await set({ view: "weights", sentence: "I sat on the [MASK] of the river" });
  const bad = [];
  // [MASK] typed for a tokenizer without a mask token: no predictions, the prompt says so, nothing throws
  bad.push(variant(dir, (d) => {
    const file = path.join(d, "tokenizer.json");
    const tok = JSON.parse(fs.readFileSync(file, "utf8"));
    tok.added_tokens = tok.added_tokens.filter((t) => t.content !== "[MASK]");
    tok.model.vocab["[NOT_A_MASK]"] = tok.model.vocab["[MASK]"];  // the ids stay 0 … V − 1
    delete tok.model.vocab["[MASK]"];
    fs.writeFileSync(file, JSON.stringify(tok));
  }));
  const noMask = (await loadFromFiles(page, bad[0], "bert-no-mask")).name;
  await set({ model: noMask, sentence: "the [MASK] sat on the mat" });
  s = await state(page);
  assert.equal(s.model, noMask);
  assert.deepEqual(s.masked, [], "no mask token: no predictions");
  assert.match(s.view_data.next_strip.prompt, /no mask token/, s.view_data.next_strip.prompt);
  const refusedTrace = await page.evaluate(() => Promise.resolve().then(() => window.attentionExplainer.modelTrace({ text: "the [MASK] sat", top: 3 }))
    .then(() => "traced", (e) => e.message));
  assert.match(refusedTrace, /mask token/, "modelTrace refuses a [MASK] it cannot fill");
  assert.equal(refusedTrace.split("\n").length, 1, refusedTrace);
  console.log(`# [MASK] without a mask token: the strip says "${s.view_data.next_strip.prompt}"; modelTrace: ${refusedTrace}`);
  await set({ model: name, sentence: "I sat on the [MASK] of the river" });
  // a type-vocabulary of 0; a decoder without the head's bias
  bad.push(variant(dir, (d) => {
    const file = path.join(d, "config.json");
    fs.writeFileSync(file, JSON.stringify({ ...JSON.parse(fs.readFileSync(file, "utf8")), type_vocab_size: 0 }));
  }));
  bad.push(decoderWithoutBias(dir));
  for (const [d, pattern, label] of [[bad[1], /^config\.json: .*type_vocab_size/, "type_vocab_size 0"],
    [bad[2], /^model\.safetensors: .*cls\.predictions\.bias/, "cls.predictions.decoder without the bias"]]) {
    const got = await loadFromFiles(page, d, "bert-bad").then(() => "loaded", message);
    assert.match(got, pattern, label);
    assert.equal(got.split("\n").length, 1, `${label}: one line`);
    s = await state(page);
    assert.equal(s.model, name, `${label}: the model before stays`);
    assert.equal(s.loading.error, got, `${label}: the loader shows it`);
    console.log(`# ${label}: ${got}`);
  }
  s = await set({ view: "heads", sentence: "The animal didn't cross the [MASK] because it was tired" });
  assert.equal((await state(page)).masked.length, 1, "the model before still fills its mask");
  const again = await trace(page, "The animal didn't cross the [MASK] because it was tired");
  assert.deepEqual(again.masked, full.masked, "and traces as before");
  for (const d of bad) fs.rmSync(d, { recursive: true, force: true });
  assert.deepEqual(pageErrors(errors), []);
  await context.close();
});

test("encoders: Compare's twins (as many tokens) over an encoder: the view opens, no question asked of the heads' shares", async () => {
  const { page, context, errors } = await openExplainer(browser, server.url);
  const name = (await loadFromFiles(page, folders[CASES[0].label], "bert-test")).name;
  const pairs = [["The animal didn't cross the street because it was tired", "The animal didn't cross the street because it was wide"],
    ["I sat on the [MASK] of the river", "I put my money in the [MASK]."]];
  for (const [sentence, compare_sentence] of pairs) {
    const got = await page.evaluate((p) => Promise.resolve().then(() => window.attentionExplainer.setState(p)).then((s) => s.view, (e) => e.message),
      { model: name, view: "compare", sentence, compare_sentence });
    assert.equal(got, "compare", `setState({view: "compare"}) on "${sentence}" / "${compare_sentence}" (as many tokens)`);
    const s = await state(page);
    assert.equal(s.view_data.ask ?? null, null, "no direct shares asked of an encoder");
    await frames(page, 3);
  }
  assert.deepEqual(pageErrors(errors), []);
  await context.close();
});
