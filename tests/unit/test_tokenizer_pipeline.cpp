// Unit tests of Hugging Face's tokenizer pipeline in TextTokenizer: the regex engine, NFC / NFKC,
// added tokens, normalizers, pre-tokenizers, byte fallback, unk, templates, decoding and display.
// Not the real files: tests/cli/tokenizer_families.test.mjs checks those against the library itself.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "../../src/api/tokenizer_files.h"
#include "../../src/core/bpe.h"
#include "../../src/core/token_regex.h"
#include "../../src/core/unicode_norm.h"
#include "test_helpers.h"

using attn::TextTokenizer;
using attn::TokenRegex;
using attn::tokenizer_from_json;
using Ids = std::vector<int>;
using Spans = std::vector<std::pair<std::size_t, std::size_t>>;
using attn::test::code_points;

namespace {

Spans find_all(const std::string& pattern, const std::u32string& text) {
  const TokenRegex re(pattern);
  Spans out;
  long long budget = 100000;
  re.find_all(reinterpret_cast<const std::uint32_t*>(text.data()), text.size(), out, &budget);
  return out;
}

// A SentencePiece-style file as Llama 2 writes it: Prepend + Replace, no pre-tokenizer, byte fallback,
// a fused unknown token, the BOS template and the Replace / ByteFallback / Fuse / Strip decoder.
const char* kLlama2Like = R"j({
  "added_tokens": [{"id": 0, "content": "<unk>", "special": true, "normalized": false},
                   {"id": 1, "content": "<s>", "special": true, "normalized": false},
                   {"id": 2, "content": "</s>", "special": true, "normalized": false}],
  "normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "\u2581"},
                 {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]},
  "pre_tokenizer": null,
  "post_processor": {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                     {"Sequence": {"id": "A", "type_id": 0}}],
                     "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}},
  "decoder": {"type": "Sequence", "decoders": [{"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
              {"type": "ByteFallback"}, {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
  "model": {"type": "BPE", "dropout": null, "unk_token": "<unk>", "fuse_unk": true, "byte_fallback": true,
            "vocab": {"<unk>": 0, "<s>": 1, "</s>": 2, "<0xC3>": 3, "<0xA9>": 4, "\u2581": 5, "a": 6, "b": 7,
                      "\u2581a": 8, "ab": 9, "\u2581ab": 10},
            "merges": ["\u2581 a", "a b", "\u2581a b"]}})j";

// A Llama 3-style file: its Split regex, then ByteLevel without the regex, ignore_merges, an added
// token past the model's vocabulary.
std::string llama3_like(bool ignore_merges) {
  return std::string(R"j({
  "added_tokens": [{"id": 7, "content": "<|eot|>", "special": true, "normalized": false}],
  "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
    {"type": "Split", "pattern": {"Regex": "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
     "behavior": "Isolated", "invert": false},
    {"type": "ByteLevel", "add_prefix_space": false, "use_regex": false}]},
  "decoder": {"type": "ByteLevel"},
  "model": {"type": "BPE", "ignore_merges": )j") +
         (ignore_merges ? "true" : "false") + R"j(,
            "vocab": {"a": 0, "b": 1, "\u0120": 2, "\u0120a": 3, "ab": 4, "\u0120ab": 5, "abab": 6},
            "merges": [["\u0120", "a"], ["a", "b"], ["\u0120a", "b"]]}})j";
}

// Character tokens a b c - and the pairs a- b- -c -b --, cut by a Split on "-" with the given behaviour.
TextTokenizer dash_split(const std::string& behavior, bool invert = false) {
  return tokenizer_from_json(R"j({"pre_tokenizer": {"type": "Split", "pattern": {"String": "-"}, "behavior": ")j" + behavior +
                             R"j(", "invert": )j" + (invert ? "true" : "false") + R"j(},
    "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "c": 2, "-": 3, "a-": 4, "b-": 5, "-c": 6, "-b": 7, "--": 8},
              "merges": ["a -", "b -", "- c", "- b", "- -"]}})j");
}

TextTokenizer metaspace(const std::string& scheme, bool split) {
  return tokenizer_from_json(R"j({"added_tokens": [{"id": 4, "content": "<x>", "special": true, "normalized": false}],
    "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": ")j" + scheme + R"j(", "split": )j" +
                             (split ? "true" : "false") + R"j(},
    "decoder": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": ")j" + scheme + R"j("},
    "model": {"type": "BPE", "vocab": {"\u2581": 0, "a": 1, "\u2581a": 2, "b": 3}, "merges": ["\u2581 a"]}})j");
}

}  // namespace

TEST_CASE("token regex: quantifiers, lookahead, case-insensitive groups and Oniguruma's empty matches") {
  CHECK(find_all("\\p{N}{1,3}", U"12345") == Spans{{0, 3}, {3, 5}});
  CHECK(find_all("\\s+(?!\\S)|\\s+", U"a   b") == Spans{{1, 3}, {3, 4}});  // the last space goes with b's piece
  CHECK(find_all("(?i:'s|'re)", U"'S 'Re 'ſ 'x") == Spans{{0, 2}, {3, 6}, {7, 9}});  // ſ folds to s
  CHECK(find_all("a*", U"baa") == Spans{{0, 0}, {1, 3}});  // no empty match right after a match
  CHECK(find_all("[^\\r\\n\\p{L}\\p{N}]?\\p{L}+", U" héllo!wörld") == Spans{{0, 6}, {6, 12}});
  CHECK(find_all("\\s", U"\u0085\uFEFF\u3000") == Spans{{0, 1}, {2, 3}});  // White_Space, not JavaScript's \s
  CHECK(find_all("a|ab", U"ab") == Spans{{0, 1}});                      // leftmost alternative, not longest
  CHECK(find_all("(?:ab)+c|a", U"ababc") == Spans{{0, 5}});
  CHECK(find_all("x{2,}", U"xxxxx x") == Spans{{0, 5}});
}

TEST_CASE("token regex: what it does not understand is refused, and runaway backtracking is bounded") {
  for (const char* bad : {"(?<=a)b", "\\d+", "a**", "(a*)*", "[a", "\\p{Lu}", "a+?", "^a", "(a", "a)", "x{3,1}", "(?i:[a-z])"})
    CHECK_THROWS_AS(TokenRegex{bad}, std::invalid_argument);
  CHECK_THROWS_WITH_AS(TokenRegex{"\\d"}, "regex '\\d': the escape \\d is not supported (at byte 2)", std::invalid_argument);
  // an escaped newline, or a property name with control bytes: the message stays one line (fuzz_tokenizer_files)
  CHECK_THROWS_WITH_AS(TokenRegex{"[\\\n]"}, "regex '[\\?]': the escape \\? is not supported (at byte 3)", std::invalid_argument);
  CHECK_THROWS_WITH_AS(TokenRegex{"\\p{\tL}"}, "regex '\\p{?L}': the property \\p{?L} is not supported (only \\p{L} and \\p{N}) (at byte 6)",
                       std::invalid_argument);
  const TokenRegex runaway("(a|a)+b");
  const std::u32string as(40, U'a');
  Spans out;
  long long budget = 1000000;
  CHECK_THROWS_AS(runaway.find_all(reinterpret_cast<const std::uint32_t*>(as.data()), as.size(), out, &budget), std::invalid_argument);
}

TEST_CASE("NFC, NFKC and lowercase") {
  CHECK(attn::to_nfc(code_points(U"e\u0301")) == code_points(U"\u00E9"));
  CHECK(attn::to_nfc(code_points(U"\u1E9B\u0323")) == code_points(U"\u1E9B\u0323"));  // UAX #15's example: NFC keeps the long s
  CHECK(attn::to_nfkc(code_points(U"\u1E9B\u0323")) == code_points(U"\u1E69"));       // NFKC folds it to ṩ
  CHECK(attn::to_nfc(code_points(U"q\u0307\u0323")) == code_points(U"q\u0323\u0307"));  // marks in canonical order
  CHECK(attn::to_nfc(code_points(U"\u1100\u1161\u11A8")) == code_points(U"\uAC01"));     // Hangul jamo compose by formula
  CHECK(attn::to_nfc(code_points(U"\u212B")) == code_points(U"\u00C5"));                 // the angstrom sign is a singleton
  CHECK(attn::to_nfkc(code_points(U"\uFB01\u2460\u00BD")) == code_points(U"fi11\u20442"));
  CHECK(attn::to_nfc(code_points(U"\u0344")) == code_points(U"\u0308\u0301"));  // excluded from composition
  CHECK(attn::to_lowercase(code_points(U"A\u03A3\u0130\u00C9")) == code_points(U"a\u03C3i\u0307\u00E9"));
}

TEST_CASE("a Llama 2-style file: Prepend, Replace, merges, byte fallback, fused unk, BOS template, decoder") {
  const TextTokenizer t = tokenizer_from_json(kLlama2Like);
  CHECK(t.vocab_size() == 11);
  CHECK(t.bos_id() == 1);
  CHECK(t.encode("ab a") == Ids{10, 8});
  CHECK(t.encode("ab a", true) == Ids{1, 10, 8});
  CHECK(t.encode("\u00E9") == Ids{5, 3, 4});        // é is not a token: its two bytes are
  CHECK(t.encode("x\u00E9") == Ids{5, 3, 4, 0});    // x has no byte token: <unk>, placed after é's bytes as the library does
  CHECK(t.encode("xy") == Ids{5, 0});               // unknown neighbours fuse into one <unk>
  CHECK(t.encode("a<s>b") == Ids{8, 1, 5, 7});      // <s> matched in the raw text; each piece gets its own ▁
  CHECK(t.encode("") == Ids{});
  CHECK(t.encode("", true) == Ids{1});
  CHECK(t.encode("  ") == Ids{5, 5, 5});
  CHECK(t.encode("\u2581") == Ids{5, 5});
  CHECK_THROWS_AS(t.encode("a\xFF"), std::invalid_argument);
  CHECK(t.decode({10, 8}) == "ab a");
  CHECK(t.decode({5, 3, 4}) == "\u00E9");  // bytes joined, the leading space stripped
  CHECK(t.decode({1, 10}) == "<s> ab");
  CHECK(t.display(3) == "<C3>");
  CHECK(t.display(5) == "\u00B7");
  CHECK(t.display(10) == "\u00B7ab");
  CHECK(t.display(1) == "<s>");
  CHECK(t.is_special(2));
  CHECK_FALSE(t.is_special(9));
  CHECK(t.token_bytes(4) == "\xA9");
}

TEST_CASE("a Llama 3-style file: the Split regex, ByteLevel, ignore_merges and an added token past the vocabulary") {
  const TextTokenizer whole = tokenizer_from_json(llama3_like(true));
  CHECK(whole.vocab_size() == 8);
  CHECK(whole.encode("abab ab<|eot|>") == Ids{6, 5, 7});  // "abab" is a token, taken without merging
  const TextTokenizer merged = tokenizer_from_json(llama3_like(false));
  CHECK(merged.encode("abab ab<|eot|>") == Ids{4, 4, 5, 7});
  CHECK(merged.display(2) == "\u00B7");
  CHECK(merged.display(7) == "<|eot|>");
  CHECK(merged.decode({4, 5, 7}) == "ab ab<|eot|>");
  CHECK(merged.bos_id() == -1);
  CHECK(merged.encode("ab", true) == Ids{4});
}

TEST_CASE("Split behaviours on a - delimiter") {
  CHECK(dash_split("Isolated").encode("a-b--c") == Ids{0, 3, 1, 3, 3, 2});
  CHECK(dash_split("Removed").encode("a-b--c") == Ids{0, 1, 2});
  CHECK(dash_split("MergedWithPrevious").encode("a-b--c") == Ids{4, 5, 3, 2});
  CHECK(dash_split("MergedWithNext").encode("a-b--c") == Ids{0, 7, 3, 6});
  CHECK(dash_split("Contiguous").encode("a-b--c") == Ids{0, 3, 1, 8, 2});
  CHECK(dash_split("Removed", true).encode("a-b--c") == Ids{3, 3, 3});  // inverted: the text between is removed
}

TEST_CASE("Metaspace: prepend schemes, split, and the first piece only for 'first'") {
  CHECK(metaspace("first", true).encode("a b") == Ids{2, 0, 3});
  CHECK(metaspace("first", true).encode("a<x>a") == Ids{2, 4, 1});
  CHECK(metaspace("always", true).encode("a<x>a") == Ids{2, 4, 2});
  CHECK(metaspace("never", true).encode("a b") == Ids{1, 0, 3});
  CHECK(metaspace("first", false).encode("a b") == Ids{2, 0, 3});
  CHECK(metaspace("first", true).decode({2, 2, 0, 3}) == "a a b");
  CHECK(metaspace("never", true).decode({2, 3}) == " ab");
}

TEST_CASE("normalizers in a pipeline: NFC, NFKC, Lowercase, Replace with a regex") {
  const auto with = [](const std::string& normalizer) {
    return tokenizer_from_json(R"j({"normalizer": )j" + normalizer + R"j(, "model": {"type": "BPE",
      "vocab": {"e": 0, "\u0301": 1, "\u00e9": 2, "f": 3, "i": 4, "fi": 5, "_": 6}, "merges": ["f i"]}})j");
  };
  CHECK(with(R"j({"type": "NFC"})j").encode("e\u0301") == Ids{2});
  CHECK(with(R"j(null)j").encode("e\u0301") == Ids{0, 1});
  CHECK(with(R"j({"type": "NFKC"})j").encode("\uFB01") == Ids{5});
  CHECK(with(R"j({"type": "Lowercase"})j").encode("FI\u00C9") == Ids{5, 2});
  CHECK(with(R"j({"type": "Replace", "pattern": {"Regex": "\\s+"}, "content": "_"})j").encode("f \t i") == Ids{3, 6, 4});
}

TEST_CASE("added tokens: longest match, lstrip / rstrip, single_word, normalized ones after the normalizer") {
  const TextTokenizer t = tokenizer_from_json(R"j({
    "added_tokens": [{"id": 3, "content": "<a>", "special": true, "normalized": false},
                     {"id": 4, "content": "<a><a>", "special": true, "normalized": false},
                     {"id": 5, "content": "[L]", "lstrip": true, "rstrip": true, "normalized": false},
                     {"id": 6, "content": "y", "single_word": true, "normalized": false},
                     {"id": 7, "content": "Q", "normalized": true}],
    "normalizer": {"type": "Lowercase"},
    "model": {"type": "BPE", "vocab": {" ": 0, "w": 1, "x": 2}, "merges": []}})j");
  CHECK(t.vocab_size() == 8);
  CHECK(t.encode("<a><a><a>") == Ids{4, 3});
  CHECK(t.encode("x  [L]  x") == Ids{2, 5, 2});  // the spaces around [L] belong to it
  CHECK(t.encode("y xy y") == Ids{6, 0, 2, 0, 6});  // y inside a word is no added token (and no model token)
  CHECK(t.encode("Q") == Ids{7});  // a normalized token is matched after the normalizer: "Q" lowercases to its "q"
  CHECK(t.encode("xq") == Ids{2, 7});
}

TEST_CASE("tokenizer.json refusals: one line naming the file and the part") {
  const auto refused = [](const std::string& json) {
    try {
      (void)tokenizer_from_json(json, "t.json");
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const std::string model = R"j("model": {"type": "BPE", "vocab": {"a": 0}, "merges": []})j";
  CHECK(refused(R"j({"normalizer": {"type": "Precompiled"}, )j" + model + "}") ==
        "t.json: normalizer 'Precompiled' is not supported (NFC, NFKC, NFD, NFKD, Lowercase, StripAccents, BertNormalizer, Prepend, "
        "Replace, Sequence)");
  CHECK(refused(R"j({"pre_tokenizer": {"type": "Split", "pattern": {"Regex": "(?<=a)"}, "behavior": "Isolated"}, )j" + model + "}") ==
        "t.json: pre_tokenizer Split: regex '(?<=a)': this kind of group (?<= is not supported (at byte 2)");
  CHECK(refused(R"j({"pre_tokenizer": {"type": "Split", "pattern": {"String": "a"}, "behavior": "Sideways"}, )j" + model + "}") ==
        "t.json: pre_tokenizer Split's behavior 'Sideways' is not one the library has");
  CHECK(refused(R"j({"added_tokens": [{"id": 3, "content": "<x>"}], )j" + model + "}") ==
        "t.json: added token '<x>' has the id 3, outside the vocabulary and not the next free id, 1 (the id Hugging Face's "
        "tokenizers would give it)");
  CHECK(refused(R"j({"post_processor": {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>"}},
                  {"Sequence": {"id": "A"}}], "special_tokens": {}}, )j" + model + "}") ==
        "t.json: TemplateProcessing's special token '<s>' is not in its special_tokens");
  CHECK(refused(R"j({"decoder": {"type": "CTC"}, )j" + model + "}") ==
        "t.json: decoder 'CTC' is not supported (ByteLevel, Metaspace, Replace, ByteFallback, Fuse, Strip, WordPiece)");
  CHECK(refused(R"j({"model": {"type": "BPE", "dropout": 0.1, "vocab": {"a": 0}, "merges": []}})j") ==
        "t.json: a BPE model with dropout is not supported (it samples; only null)");
  CHECK(refused(R"j({"model": {"type": "BPE", "unk_token": "<unk>", "vocab": {"a": 0}, "merges": []}})j") ==
        "t.json: the unk_token '<unk>' is not a token");
}

TEST_CASE("continuing_subword_prefix and end_of_word_suffix") {
  const TextTokenizer t = tokenizer_from_json(R"j({"model": {"type": "BPE", "continuing_subword_prefix": "##",
    "end_of_word_suffix": "</w>", "vocab": {"a": 0, "##b": 1, "ab": 2, "##c</w>": 3, "abc</w>": 4, "c</w>": 5},
    "merges": ["a ##b", "ab ##c</w>"]}})j");
  CHECK(t.encode("abc") == Ids{4});
  CHECK(t.encode("c") == Ids{5});
}

TEST_CASE("a normalizer that makes the text grow without bound is refused, not run out of memory") {
  const TextTokenizer t = tokenizer_from_json(R"j({"normalizer": {"type": "Replace", "pattern": {"String": "a"},
    "content": "aaaaaaaa"}, "model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}})j");
  CHECK(t.encode("aa") == Ids(16, 0));
  CHECK_THROWS_AS(t.encode(std::string(600000, 'a')), std::invalid_argument);  // 4.8 million characters
}
