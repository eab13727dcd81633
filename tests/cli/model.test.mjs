// `attention_cli model` against PyTorch: random GPT-2 models (1–3 layers, 1–4 heads, n_embd 8–96,
// GPT-2's own 50 257-token vocabulary, F32/F16/BF16, with and without the "transformer." prefix and
// lm_head) give the attention of every layer and head and the next-token probabilities of
// tests/models/torch_reference.py within 1e-4; the tokens are gpt-3-encoder's; bad folders are
// refused by name (exit 2, one line on stderr).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import path from "node:path";
import { createRequire } from "node:module";
import { ROOT, makeModel, torchReference, badModels } from "../models/fixtures.mjs";

const CLI = process.env.ATTN_CLI || path.join(ROOT, "build/native/attention_cli");
const encoder = createRequire(import.meta.url)(path.join(ROOT, "node_modules/gpt-3-encoder"));

function cli(args) {
  const r = spawnSync(CLI, args, { encoding: "utf8", timeout: 120000, maxBuffer: 1 << 30 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const TEXTS = ["The animal didn't cross the street because it was tired",
  "When the teacher gave the student the book, she smiled. It's 2026: 3.14 ≠ π — naïve café 🙂!"];
const CONFIGS = [
  { layers: 1, heads: 1, embd: 8, dtype: "F32" },
  { layers: 2, heads: 3, embd: 24, dtype: "F16", prefix: true, lm_head: true },
  { layers: 3, heads: 4, embd: 96, dtype: "BF16", tokenizer: "json", buffers: true, seed: 3 },
  { layers: 2, heads: 2, embd: 16, dtype: "F32", prefix: true, seed: 5 },
];

/** Our forward against PyTorch's for one model folder and text; returns the largest differences. */
export function compareWithTorch(ours, dir, text) {
  assert.deepEqual(ours.token_ids, encoder.encode(text), "token ids are gpt-3-encoder's");
  assert.deepEqual(ours.tokens, ours.token_ids.map((id) => encoder.decode([id])));
  const ids = [...new Set(ours.next.flat().map((n) => n.id))];
  const ref = torchReference(dir, ours.token_ids, { top: ours.next[0].length, probsAt: ids });
  let attention = 0, probability = 0;
  assert.equal(ours.attention.length, ref.attention.length);
  ours.attention.forEach((layer, l) => layer.forEach((head, h) => head.forEach((row, i) => row.forEach((w, j) => {
    if (j > i) assert.equal(w, 0, `layer ${l} head ${h}: (${i}, ${j}) above the diagonal is exactly 0`);
    attention = Math.max(attention, Math.abs(w - ref.attention[l][h][i][j]));
  }))));
  ours.next.forEach((options, t) => {
    assert.ok(Math.abs(options[0].p - ref.next[t][0].p) <= 1e-4 * ref.next[t][0].p + 1e-7, `position ${t}: top p`);
    for (const n of options) {
      const p = ref.probs_at[t][ids.indexOf(n.id)];
      probability = Math.max(probability, Math.abs(n.p - p) / p);
      assert.equal(n.token, encoder.decode([n.id]));
    }
  });
  assert.ok(attention <= 1e-4, `attention within 1e-4 of PyTorch (worst ${attention})`);
  assert.ok(probability <= 1e-4, `next-token probabilities within 1e-4 relative (worst ${probability})`);
  return { attention, probability };
}

test("model: every layer and head and the next tokens match PyTorch", () => {
  for (const config of CONFIGS) {
    const dir = makeModel(config);
    for (const text of TEXTS) {
      const r = cli(["model", "--dir", dir, "--text", text, "--top", "5"]);
      assert.equal(r.status, 0, r.stderr);
      const ours = JSON.parse(r.stdout);
      assert.equal(ours.model.family, "gpt2");
      assert.equal(ours.model.layers, config.layers);
      assert.equal(ours.model.heads, config.heads);
      assert.equal(ours.model.d_model, config.embd);
      assert.equal(ours.model.vocab_size, 50257);
      const C = config.embd;
      const params = 50257 * C + 64 * C + config.layers * (12 * C * C + 13 * C) + 2 * C;
      assert.equal(ours.model.params, params);
      const worst = compareWithTorch(ours, dir, text);
      console.log(`# ${JSON.stringify(config)}: T ${ours.token_ids.length}, attention ${worst.attention.toExponential(1)}, p ${worst.probability.toExponential(1)}`);
    }
  }
});

test("model: bad folders and texts are refused by name, one line, exit 2", () => {
  const good = makeModel({ layers: 1, heads: 2, embd: 8 });
  assert.equal(cli(["model", "--dir", good, "--text", "fine"]).status, 0);
  for (const [name, dir, mention] of badModels(good)) {
    const r = cli(["model", "--dir", dir, "--text", "hello"]);
    assert.equal(r.status, 2, `${name}: exit 2 (got ${r.status}; ${r.stderr})`);
    assert.equal(r.stdout, "", name);
    assert.equal(r.stderr.trim().split("\n").length, 1, `${name}: one line`);
    assert.ok(r.stderr.includes(mention), `${name}: names ${mention}: ${r.stderr}`);
  }
  for (const [args, mention] of [[["--text", ""], "text"], [["--text", "a ".repeat(70)], "tokens"], [["--text", "x", "--top", "0"], "--top"]]) {
    const r = cli(["model", "--dir", good, ...args]);
    assert.equal(r.status, 2, args.join(" "));
    assert.ok(r.stderr.includes(mention), `${args}: ${r.stderr}`);
  }
  const missing = cli(["model", "--dir", "/nonexistent/folder", "--text", "x"]);
  assert.equal(missing.status, 2);
  assert.ok(missing.stderr.includes("/nonexistent/folder"), missing.stderr);
});
