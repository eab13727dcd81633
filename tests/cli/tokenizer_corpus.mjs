// The texts every tokenizer test compares with Hugging Face's tokenizers library: scripts, normalization
// forms, code, whitespace runs, emoji, control characters and the special-token spellings of every family
// (tokenizer_families.test.mjs, tokenizer_wordpiece.test.mjs), seeded random texts from fragments, and one
// CLI run that tokenizes a batch of texts.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
const zwjFamily = "\u{1F468}\u200D\u{1F469}\u200D\u{1F467}\u200D\u{1F466}";
export const CORPUS = [
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

// `count` texts of `length` fragments each, drawn by a seeded LCG (the same texts for the same seed).
export function randomTexts(fragments, count, length, seed) {
  const texts = [];
  for (let t = 0; t < count; ++t) {
    let s = "";
    for (let k = 0; k < length; ++k) {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      s += fragments[(seed >>> 12) % fragments.length]; // the LCG's low bits repeat too soon
    }
    texts.push(s);
  }
  return texts;
}

// Every text without and then with the special tokens, in one run of `cli tokenize --batch` on a
// tokenizer.json: the CLI's answers in that order.
export function tokenizeBatch(cli, file, texts) {
  const input = [false, true].flatMap((special) => texts.map((text) => ({ text, add_special_tokens: special })));
  const r = spawnSync(cli, ["tokenize", "--tokenizer-json", file, "--batch"], { input: JSON.stringify(input), encoding: "utf8",
    timeout: 120000, maxBuffer: 256 << 20 });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}
