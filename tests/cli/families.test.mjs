// `attention_cli model` on the Llama-style families against PyTorch: random models in each family's
// Hugging Face layout (tests/models/make_family_model.py: llama, mistral, qwen2, qwen3, gemma2,
// gemma3_text and the gemma3 wrapper; F32/F16/BF16; kv_heads 1, head_dim != d_model/heads, windows
// shorter than the text, linear / llama3 / yarn RoPE in both config forms, Gemma 3's local/global
// layers, shards) give every layer and head's attention and the next-token probabilities of
// tests/models/torch_family_reference.py within 1e-4; the token ids are Hugging Face's tokenizers'
// (@anush008/tokenizers, with special tokens: what the model reads), and `--text` must find the same.
// Hostile folders are refused by name (exit 2, one line on stderr naming the file and the fault).
// Quick by default (a few cases); ATTN_FULL=1 runs every case (`./build_wasm.sh test all`, CI, sets it).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { ROOT, makeFamilyModel, torchFamilyReference, badFamilyModels } from "../models/fixtures.mjs";

const CLI = process.env.ATTN_CLI || path.join(ROOT, "build/native/attention_cli");
const FULL = process.env.ATTN_FULL === "1";
const { Tokenizer } = createRequire(import.meta.url)(path.join(ROOT, "node_modules/@anush008/tokenizers"));

function cli(args) {
  const r = spawnSync(CLI, args, { encoding: "utf8", timeout: 120000, maxBuffer: 1 << 30 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const TEXTS = ["The animal didn't cross the street because it was tired",
  "When the teacher gave the student the book, she smiled. It's 2026: 3.14 ≠ π — naïve café 🙂!",
  "def twice(x):\n    return x * 2  # 双倍"];

// Each family in F32, F16 and BF16, with the odd sizes spread over them. d_ff and the seed vary too.
const CASES = [
  ["llama F32: kv_heads 1, head_dim 12 != 16/4, llama3 RoPE, untied", { family: "llama", dtype: "F32", layers: 2, heads: 4, kv_heads: 1, head_dim: 12, d_model: 16, d_ff: 40, rope: "llama3", rope_factor: 8, untied: true, tokenizer: "llama3" }],
  ["llama BF16: yarn in rope_parameters, tied, Llama 2 tokenizer", { family: "llama", dtype: "BF16", layers: 3, heads: 2, kv_heads: 2, d_model: 24, d_ff: 48, rope: "yarn", rope_form: "new", tied: true, tokenizer: "llama2", seed: 1 }],
  ["llama F16: linear RoPE under the old \"type\" key, 3 shards", { family: "llama", dtype: "F16", layers: 2, heads: 4, kv_heads: 2, d_model: 32, d_ff: 64, rope: "linear", rope_factor: 2, rope_type_key: "type", shards: 3, tokenizer: "llama3", seed: 2 }],
  ["mistral F32: window 4 on every layer", { family: "mistral", dtype: "F32", layers: 2, heads: 4, kv_heads: 2, d_model: 32, d_ff: 64, window: 4, seed: 3 }],
  ["mistral F16: window 3, kv_heads 1, 2 shards", { family: "mistral", dtype: "F16", layers: 3, heads: 3, kv_heads: 1, d_model: 24, d_ff: 40, window: 3, shards: 2, seed: 4 }],
  ["mistral BF16: window 6, rope_parameters llama3", { family: "mistral", dtype: "BF16", layers: 2, heads: 4, kv_heads: 4, d_model: 16, d_ff: 32, window: 6, rope: "llama3", rope_form: "new", seed: 5 }],
  ["qwen2 F32: q/k/v biases, window 5 from layer 1, tied, yarn", { family: "qwen2", dtype: "F32", layers: 2, heads: 4, kv_heads: 2, d_model: 32, d_ff: 48, window: 5, max_window_layers: 1, tied: true, rope: "yarn", seed: 6 }],
  ["qwen2 F16: kv_heads 1, vocab padded to 128s", { family: "qwen2", dtype: "F16", layers: 2, heads: 2, kv_heads: 1, d_model: 16, d_ff: 32, vocab_multiple: 128, seed: 7 }],
  ["qwen2 BF16: layer_types window 4 on every layer, 2 shards", { family: "qwen2", dtype: "BF16", layers: 3, heads: 4, kv_heads: 2, d_model: 24, d_ff: 40, window: 4, max_window_layers: 0, rope_form: "new", shards: 2, seed: 8 }],
  ["qwen3 BF16: q/k norm, head_dim 16 != 32/4, window 4 in layer_types, yarn, 2 shards", { family: "qwen3", dtype: "BF16", layers: 2, heads: 4, kv_heads: 2, head_dim: 16, d_model: 32, d_ff: 48, window: 4, max_window_layers: 0, rope: "yarn", rope_form: "new", shards: 2, seed: 9 }],
  ["qwen3 F32: kv_heads 1, llama3 RoPE, untied", { family: "qwen3", dtype: "F32", layers: 2, heads: 3, kv_heads: 1, head_dim: 8, d_model: 16, d_ff: 32, rope: "llama3", rope_factor: 8, untied: true, seed: 10 }],
  ["qwen3 F16: window 3 from layer 1, rope_theta 1e6", { family: "qwen3", dtype: "F16", layers: 3, heads: 2, kv_heads: 2, d_model: 16, d_ff: 24, window: 3, max_window_layers: 1, rope_theta: 1e6, seed: 11 }],
  ["gemma2 F32: soft-caps 3 / 20, query_pre_attn_scalar 12, window 4", { family: "gemma2", dtype: "F32", layers: 2, heads: 4, kv_heads: 2, d_model: 32, d_ff: 64, window: 4, attn_softcap: 3, final_softcap: 20, query_pre_attn_scalar: 12, seed: 12 }],
  ["gemma2 BF16: kv_heads 1, head_dim 12, untied, 2 shards", { family: "gemma2", dtype: "BF16", layers: 3, heads: 2, kv_heads: 1, head_dim: 12, d_model: 16, d_ff: 32, window: 3, attn_softcap: 50, final_softcap: 30, untied: true, shards: 2, seed: 13 }],
  ["gemma2 F16: d_model 64, window 5, rope_parameters", { family: "gemma2", dtype: "F16", layers: 2, heads: 4, kv_heads: 2, d_model: 64, d_ff: 96, window: 5, attn_softcap: 5, final_softcap: 25, rope_form: "new", seed: 14 }],
  ["gemma3_text F16: 5 local : 1 global, window 4, linear 8 on global only", { family: "gemma3_text", dtype: "F16", layers: 6, heads: 2, kv_heads: 1, d_model: 16, d_ff: 32, window: 4, rope: "linear", rope_factor: 8, rope_theta: 1e6, seed: 15 }],
  ["gemma3_text BF16: rope_parameters per layer type + layer_types, yarn global", { family: "gemma3_text", dtype: "BF16", layers: 4, heads: 4, kv_heads: 2, d_model: 32, d_ff: 48, window: 3, sliding_pattern: 2, rope: "yarn", rope_form: "new", rope_theta: 1e6, seed: 16 }],
  ["gemma3_text F32: head_dim 24, soft-cap on the logits, untied", { family: "gemma3_text", dtype: "F32", layers: 3, heads: 2, kv_heads: 2, head_dim: 24, d_model: 16, d_ff: 32, window: 5, sliding_pattern: 3, final_softcap: 30, untied: true, seed: 17 }],
  ["gemma3 F32: the wrapper (language_model.model.*), window 3, 3 layers 2 local : 1 global", { family: "gemma3", dtype: "F32", layers: 3, heads: 4, kv_heads: 2, d_model: 16, d_ff: 32, window: 3, sliding_pattern: 3, rope: "linear", rope_factor: 8, rope_theta: 1e6, seed: 18 }],
  ["gemma3 BF16: the wrapper (model.language_model.*), rope_parameters, 2 shards", { family: "gemma3", dtype: "BF16", layers: 2, heads: 2, kv_heads: 1, d_model: 24, d_ff: 32, window: 4, sliding_pattern: 2, rope_form: "new", gemma3_naming: "new", shards: 2, seed: 19 }],
  ["gemma3 F16: the wrapper sharded, untied (language_model.lm_head), 6 layers", { family: "gemma3", dtype: "F16", layers: 6, heads: 2, kv_heads: 2, d_model: 16, d_ff: 24, window: 2, rope: "linear", rope_factor: 4, untied: true, shards: 3, seed: 20 }],
];
const QUICK = [0, 9, 20]; // llama kv_heads 1 + llama3; qwen3 BF16 window + yarn + shards; the gemma3 wrapper F16 sharded

const tokenizers = new Map();
async function libraryTokens(dir, text) {
  const file = path.join(dir, "tokenizer.json");
  if (!tokenizers.has(dir)) tokenizers.set(dir, Tokenizer.fromFile(file));
  const e = await tokenizers.get(dir).encode(text, null, { addSpecialTokens: true });
  return { ids: [...e.getIds()], tokens: [...e.getTokens()] };
}

/** Our forward (parsed stdout) against PyTorch's on the same ids; returns the largest differences.
 *  float32 logits meet 1e-4 relative easily; a float32 running sum over 150 000-262 000 of them does not
 *  (torch's own float32 softmax is ~1e-4 off there): the softmax over the vocabulary wants a double sum. */
function compareWithTorch(ours, dir, ids) {
  assert.deepEqual(ours.token_ids, ids, "the ids the model read");
  assert.equal(ours.tokens.length, ids.length);
  const top = ours.next[0].length;
  const wanted = [...new Set(ours.next.flat().map((n) => n.id))];
  const ref = torchFamilyReference(dir, ids, { top, probsAt: wanted });
  for (const key of ["family", "layers", "heads", "kv_heads", "d_model", "d_head", "vocab_size", "positions", "causal", "windows", "params"])
    assert.deepEqual(ours.model[key], ref.model[key], `model.${key}`);
  let attention = 0, probability = 0;
  assert.equal(ours.attention.length, ref.attention.length, "layers");
  ours.attention.forEach((layer, l) => {
    assert.equal(layer.length, ref.attention[l].length, `layer ${l}: heads`);
    const W = ref.model.windows[l];
    layer.forEach((head, h) => head.forEach((row, i) => row.forEach((w, j) => {
      if (j > i || (W !== null && i - j >= W)) assert.equal(w, 0, `layer ${l} head ${h}: (${i}, ${j}) is masked: exactly 0`);
      attention = Math.max(attention, Math.abs(w - ref.attention[l][h][i][j]));
    })));
  });
  assert.equal(ours.next.length, ids.length, "a next-token list per position");
  ours.next.forEach((options, t) => {
    assert.ok(Math.abs(options[0].p - ref.next[t][0].p) <= 1e-4 * ref.next[t][0].p + 1e-7,
      `position ${t}: top p ${options[0].p} vs PyTorch ${ref.next[t][0].p}`);
    for (const n of options) {
      const p = ref.probs_at[t][wanted.indexOf(n.id)];
      probability = Math.max(probability, Math.abs(n.p - p) / p);
      assert.equal(typeof n.token, "string");
    }
  });
  assert.ok(attention <= 1e-4, `attention within 1e-4 of PyTorch (worst ${attention})`);
  assert.ok(probability <= 1e-4, `next-token probabilities within 1e-4 relative (worst ${probability})`);
  return { attention, probability };
}

for (const [index, [name, options]] of CASES.entries()) {
  if (!FULL && !QUICK.includes(index)) continue;
  test(`families: ${name}`, async () => {
    const dir = makeFamilyModel(options);
    try {
      for (const text of FULL ? TEXTS : TEXTS.slice(0, 2)) {
        const library = await libraryTokens(dir, text);
        const byIds = cli(["model", "--dir", dir, "--ids", library.ids.join(","), "--top", "5"]);
        assert.equal(byIds.status, 0, byIds.stderr);
        const ours = JSON.parse(byIds.stdout);
        assert.equal(ours.model.family, JSON.parse(fs.readFileSync(path.join(dir, "config.json"), "utf8")).model_type);
        const worst = compareWithTorch(ours, dir, library.ids);
        // our tokenizer on the same text: the library's ids, and then the very same numbers
        const byText = cli(["model", "--dir", dir, "--text", text, "--top", "5"]);
        assert.equal(byText.status, 0, byText.stderr);
        const fromText = JSON.parse(byText.stdout);
        assert.deepEqual(fromText.token_ids, library.ids, "--text finds the ids of Hugging Face's tokenizer");
        assert.deepEqual(fromText.attention, ours.attention, "--text and --ids: the same attention");
        assert.deepEqual(fromText.next, ours.next, "--text and --ids: the same next tokens");
        console.log(`# ${name}: T ${library.ids.length}, attention ${worst.attention.toExponential(1)}, p ${worst.probability.toExponential(1)}`);
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
}

test("families: hostile folders and ids are refused by name, one line, exit 2", () => {
  const small = { layers: 2, d_model: 16, d_ff: 24, tokenizer: "llama2" };
  const good = makeFamilyModel({ ...small, family: "llama", heads: 4, kv_heads: 2, untied: true, shards: 2 });
  const qwen = makeFamilyModel({ ...small, family: "qwen2", heads: 4, kv_heads: 2 });
  const made = [good, qwen];
  try {
    for (const dir of [good, qwen]) {
      const r = cli(["model", "--dir", dir, "--ids", "1,2,3"]);
      assert.equal(r.status, 0, `the good folder ${path.basename(dir)} loads: ${r.stderr}`);
    }
    const cases = badFamilyModels(good, qwen);
    made.push(...cases.map((c) => c.dir));
    for (const { name, dir, file, word } of cases) {
      const r = cli(["model", "--dir", dir, "--ids", "1,2,3"]);
      assert.equal(r.status, 2, `${name}: exit 2 (got ${r.status}; ${r.stderr})`);
      assert.equal(r.stdout, "", name);
      assert.equal(r.stderr.trim().split("\n").length, 1, `${name}: one line: ${r.stderr}`);
      const files = Array.isArray(file) ? file : [file];
      assert.ok(files.some((f) => r.stderr.includes(f)), `${name}: names ${files.join(" or ")}: ${r.stderr}`);
      assert.ok(r.stderr.includes(word), `${name}: mentions ${word}: ${r.stderr}`);
    }
    for (const ids of ["", "1,x", "1,-2", "32000"]) {
      const r = cli(["model", "--dir", good, "--ids", ids]);
      assert.equal(r.status, 2, `--ids "${ids}": exit 2 (got ${r.status}; ${r.stderr})`);
      assert.ok(r.stderr.includes("--ids"), `--ids "${ids}": ${r.stderr}`);
    }
  } finally {
    for (const dir of made) fs.rmSync(dir, { recursive: true, force: true });
  }
});
