// Unit tests of the tokenizers of BERT-style encoders in TextTokenizer: the WordPiece model, the
// BertNormalizer and its Unicode pieces (NFD, categories), the BertPreTokenizer, BertProcessing /
// RobertaProcessing, the WordPiece decoder, display, vocab.txt, and the refusals.
// Not the real files: tests/cli/tokenizer_wordpiece.test.mjs checks those against the library itself.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "../../src/api/tokenizer_files.h"
#include "../../src/core/bpe.h"
#include "../../src/core/unicode_norm.h"
#include "test_helpers.h"

using attn::CharCategory;
using attn::TextTokenizer;
using attn::tokenizer_from_json;
using attn::tokenizer_from_vocab_txt;
using Ids = std::vector<int>;
using attn::test::code_points;

namespace {

// ids: 0 [PAD] 1 [UNK] 2 [CLS] 3 [SEP] 4 [MASK] 5 un 6 ##aff 7 ##able 8 aff 9 a 10 ##a 11 play 12 ##ing
// 13 , 14 ! 15 creme 16 é 17 ##é 18 中 19 $ 20 5 21 hello 22 world 23 ' 24 s 25 ##s
const char* kWordPieceVocab = R"({"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "[MASK]": 4, "un": 5, "##aff": 6, "##able": 7,
  "aff": 8, "a": 9, "##a": 10, "play": 11, "##ing": 12, ",": 13, "!": 14, "creme": 15, "\u00e9": 16, "##\u00e9": 17,
  "\u4e2d": 18, "$": 19, "5": 20, "hello": 21, "world": 22, "'": 23, "s": 24, "##s": 25})";

// A BERT tokenizer.json: the normalizer's options as given, BertPreTokenizer, [CLS] … [SEP] by
// BertProcessing, the WordPiece decoder.
std::string bert_json(const std::string& normalizer, int max_chars = 100, const std::string& vocab = kWordPieceVocab) {
  return std::string(R"({
  "added_tokens": [{"id": 0, "content": "[PAD]", "special": true, "normalized": false},
                   {"id": 1, "content": "[UNK]", "special": true, "normalized": false},
                   {"id": 2, "content": "[CLS]", "special": true, "normalized": false},
                   {"id": 3, "content": "[SEP]", "special": true, "normalized": false},
                   {"id": 4, "content": "[MASK]", "special": true, "normalized": false}],
  "normalizer": )") + normalizer + R"(,
  "pre_tokenizer": {"type": "BertPreTokenizer"},
  "post_processor": {"type": "BertProcessing", "sep": ["[SEP]", 3], "cls": ["[CLS]", 2]},
  "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": true},
  "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
            "max_input_chars_per_word": )" + std::to_string(max_chars) + R"(, "vocab": )" + vocab + "}}";
}

const char* kUncased = R"({"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true, "strip_accents": null, "lowercase": true})";
const char* kCased = R"({"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true, "strip_accents": null, "lowercase": false})";

std::string tokenizer_refusal(const std::string& text, const std::string& name = "tokenizer.json") {
  try {
    tokenizer_from_json(text, name);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(accepted)";
}

}  // namespace

TEST_CASE("WordPiece: greedy longest-match-first, ## continuations, the whole word [UNK] when a piece fails") {
  const TextTokenizer t = tokenizer_from_json(bert_json(kUncased));
  CHECK(t.kind() == TextTokenizer::Kind::WordPiece);
  CHECK(t.unk_id() == 1);
  CHECK(t.encode("unaffable") == Ids{5, 6, 7});  // un ##aff ##able: "un" is the longest start
  CHECK(t.encode("playing") == Ids{11, 12});
  CHECK(t.encode("aff") == Ids{8});               // a whole word in the vocabulary
  CHECK(t.encode("affable") == Ids{8, 7});
  CHECK(t.encode("playingx") == Ids{1});          // no ##x: the whole word, not just its tail
  CHECK(t.encode("unaffable playingx play") == Ids{5, 6, 7, 1, 11});
  CHECK(t.encode("ing") == Ids{1});               // a continuation cannot start a word
  CHECK(t.encode("") == Ids{});
}

TEST_CASE("WordPiece: max_input_chars_per_word counts characters, and a longer word is one [UNK]") {
  const TextTokenizer t = tokenizer_from_json(bert_json(kCased, 4));
  CHECK(t.encode("aaaa") == Ids{9, 10, 10, 10});
  CHECK(t.encode("aaaaa") == Ids{1});
  CHECK(t.encode("\u00e9\u00e9\u00e9\u00e9") == Ids{16, 17, 17, 17});  // 4 characters, 8 bytes: not too long
  CHECK(t.encode("\u00e9\u00e9\u00e9\u00e9\u00e9") == Ids{1});
  const TextTokenizer zero = tokenizer_from_json(bert_json(kCased, 0));
  CHECK(zero.encode("a play") == Ids{1, 1});
}

TEST_CASE("BertNormalizer: lowercase, accents stripped when strip_accents is null and lowercase is on") {
  const TextTokenizer uncased = tokenizer_from_json(bert_json(kUncased));
  CHECK(uncased.encode("CRÈME Play") == Ids{15, 11});
  CHECK(uncased.encode("Cre\u0300me") == Ids{15});  // already decomposed: the mark is dropped
  const TextTokenizer cased = tokenizer_from_json(bert_json(kCased));  // null strip_accents follows lowercase: kept
  CHECK(cased.encode("cr\u00e8me") == Ids{1});
  CHECK(cased.encode("Play") == Ids{1});
  const TextTokenizer stripped = tokenizer_from_json(bert_json(
      R"({"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true, "strip_accents": true, "lowercase": false})"));
  CHECK(stripped.encode("cr\u00e8me \u00e9") == Ids{15, 1});  // é → e, which this vocabulary lacks
}

TEST_CASE("BertNormalizer: clean_text drops control and format characters and makes whitespace a space") {
  const TextTokenizer t = tokenizer_from_json(bert_json(kUncased));
  CHECK(t.encode(std::string("pl\x01" "ay\x7f") + "ing") == Ids{11, 12});
  CHECK(t.encode(std::string("play\0ing", 8)) == Ids{11, 12});
  CHECK(t.encode("play\u200bing\u00ad") == Ids{11, 12});    // zero-width space, soft hyphen: Cf
  CHECK(t.encode("play\ufffding\ue000") == Ids{11, 12});     // replacement character, private use
  CHECK(t.encode("play\u00a0ing") == Ids{11, 1});            // no-break space: a space, so "ing" starts a word
  CHECK(t.encode("play\u0085ing") == Ids{11, 12});           // NEL is Cc before it is whitespace: dropped
  CHECK(t.encode("a\tplay\r\nworld") == Ids{9, 11, 22});
  const TextTokenizer raw = tokenizer_from_json(bert_json(
      R"({"type": "BertNormalizer", "clean_text": false, "handle_chinese_chars": true, "strip_accents": false, "lowercase": false})"));
  CHECK(raw.encode("play\u200bing") == Ids{1});
}

TEST_CASE("BertNormalizer: CJK ideographs are words of their own; kana and Hangul are not") {
  const TextTokenizer t = tokenizer_from_json(bert_json(kUncased));
  CHECK(t.encode("a\u4e2dplay") == Ids{9, 18, 11});
  CHECK(t.encode("a\u30abplay") == Ids{1});  // katakana: part of the word
  const TextTokenizer off = tokenizer_from_json(bert_json(
      R"({"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": false, "strip_accents": null, "lowercase": true})"));
  CHECK(off.encode("a\u4e2dplay") == Ids{1});
}

TEST_CASE("BertPreTokenizer: whitespace removed, each punctuation character a word, ASCII symbols included") {
  const TextTokenizer t = tokenizer_from_json(bert_json(kUncased));
  CHECK(t.encode("hello,world!") == Ids{21, 13, 22, 14});
  CHECK(t.encode("$5") == Ids{19, 20});             // $ is a symbol (Sc), but ASCII punctuation to BERT
  CHECK(t.encode("hello's") == Ids{21, 23, 24});
  CHECK(t.encode("hello\u2014world") == Ids{21, 1, 22});  // em dash: Pd
  CHECK(t.encode("hello\u00a7world") == Ids{21, 1, 22});  // section sign: Po
  CHECK(t.encode("hello+world") == Ids{21, 1, 22});       // + is ASCII punctuation to Rust
  CHECK(t.encode("hello\u00d7world") == Ids{1});          // × is Sm, not ASCII: part of the word
}

TEST_CASE("WordPiece: [MASK] inside text, the template, display and decode") {
  const TextTokenizer t = tokenizer_from_json(bert_json(kUncased));
  CHECK(t.encode("play [MASK]!") == Ids{11, 4, 14});
  CHECK(t.encode("play[MASK]ing") == Ids{11, 4, 1});
  CHECK(t.encode("[mask]") == Ids{1, 1, 1});  // added tokens match before lowercasing: "[", "mask", "]"
  CHECK(t.encode("playing", true) == Ids{2, 11, 12, 3});
  CHECK(t.bos_id() == 2);
  CHECK(t.mask_id() == 4);
  CHECK(t.special_id("[SEP]") == 3);
  CHECK(t.special_id("play") == -1);
  CHECK(t.display(12) == "##ing");
  CHECK(t.display(11) == "play");
  CHECK(t.display(2) == "[CLS]");
  CHECK(t.token_bytes(12) == "ing");
  CHECK(t.vocab_token(12) == "##ing");
  // the decoder: continuations join, other tokens get a space, then the library's cleanup per token
  CHECK(t.decode({11, 12, 13, 5, 6, 7, 14}) == "playing, unaffable!");
  CHECK(t.decode({2, 11, 4, 3}) == "[CLS] play [MASK] [SEP]");
  CHECK(t.decode({12, 11}) == "##ing play");  // the first token keeps its prefix, as in the library
  CHECK(t.decode({}) == "");
}

TEST_CASE("WordPiece decoder: cleanup off keeps the spaces before punctuation") {
  std::string json = bert_json(kUncased);
  json.replace(json.find("\"cleanup\": true"), 15, "\"cleanup\": false");
  const TextTokenizer t = tokenizer_from_json(json);
  CHECK(t.decode({11, 12, 13, 14}) == "playing , !");
}

TEST_CASE("RobertaProcessing and BertProcessing put the file's ids around the text") {
  std::string json = bert_json(kUncased);
  json.replace(json.find("\"BertProcessing\""), 16, "\"RobertaProcessing\"");
  const TextTokenizer t = tokenizer_from_json(json);
  CHECK(t.encode("play", true) == Ids{2, 11, 3});
  std::string bad = bert_json(kUncased);
  bad.replace(bad.find("[\"[SEP]\", 3]"), 12, "[\"[SEP]\", 99]");
  CHECK(tokenizer_refusal(bad).find("tokenizer.json: token id 99 is outside the vocabulary") == 0);
  std::string no_id = bert_json(kUncased);
  no_id.replace(no_id.find("[\"[SEP]\", 3]"), 12, "[\"[SEP]\"]");
  CHECK(tokenizer_refusal(no_id) == "tokenizer.json: BertProcessing's sep must be [token, id] with a whole-number id");
}

TEST_CASE("WordPiece: a vocabulary without its unk_token is refused in one line naming the file") {
  const std::string vocab = R"({"hello": 0, "##s": 1})";
  const std::string message = tokenizer_refusal(bert_json(kUncased, 100, vocab), "bert/tokenizer.json");
  // (the added tokens name ids the vocabulary lacks too; the unk token is checked first)
  CHECK(message ==
        "bert/tokenizer.json: the WordPiece model's unk_token '[UNK]' is not in its vocabulary (a word it cannot split would have no token)");
  CHECK(message.find('\n') == std::string::npos);
  CHECK(tokenizer_refusal(R"({"model": {"type": "WordPiece", "unk_token": "<unk>", "vocab": {"[UNK]": 0}}})") ==
        "tokenizer.json: the WordPiece model's unk_token '<unk>' is not in its vocabulary (a word it cannot split would have no token)");
  CHECK(tokenizer_refusal(R"({"model": {"type": "WordPiece", "max_input_chars_per_word": -1, "vocab": {"[UNK]": 0}}})") ==
        "tokenizer.json: the WordPiece model's max_input_chars_per_word must be a whole number of 0 or more");
  CHECK(tokenizer_refusal(R"({"model": {"type": "WordPiece", "unk_token": 5, "vocab": {"[UNK]": 0}}})") ==
        "tokenizer.json: the WordPiece model needs a \"unk_token\" string");
  CHECK(tokenizer_refusal(R"({"model": {"type": "WordPiece", "vocab": {"[UNK]": 0}}, "pre_tokenizer": {"type": "Whitespace"}})")
            .find("tokenizer.json: pre_tokenizer 'Whitespace' is not supported") == 0);
  // a minimal file: [UNK] by default, no normalizer or pre-tokenizer, the text one word
  const TextTokenizer minimal = tokenizer_from_json(R"({"model": {"type": "WordPiece", "vocab": {"[UNK]": 0, "a": 1, "##b": 2}}})");
  CHECK(minimal.encode("ab") == Ids{1, 2});
  CHECK(minimal.encode("ab ab") == Ids{0});
  CHECK(minimal.decode({1, 2}) == "a ##b");  // no decoder: the library joins the tokens with spaces
}

TEST_CASE("vocab.txt: BERT's folder without tokenizer.json, as transformers converts it") {
  const std::string vocab = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nhello\n##s\nHello\r\n\u00e9\n";
  const TextTokenizer uncased = tokenizer_from_vocab_txt(vocab);
  CHECK(uncased.kind() == TextTokenizer::Kind::WordPiece);
  CHECK(uncased.vocab_size() == 9);
  CHECK(uncased.encode("HELLOs, [MASK]", true) == Ids{2, 5, 6, 1, 4, 3});
  CHECK(uncased.encode("\u00e9") == Ids{1});  // accents stripped: "e"
  CHECK(uncased.mask_id() == 4);
  const TextTokenizer cased = tokenizer_from_vocab_txt(vocab, R"({"do_lower_case": false})");
  CHECK(cased.encode("Hello hello HELLO \u00e9") == Ids{7, 5, 1, 8});
  CHECK(cased.decode({7, 6}) == "Hellos");
  const TextTokenizer named = tokenizer_from_vocab_txt("<pad>\n<oov>\nhi\n", R"({"unk_token": {"content": "<oov>"}})");
  CHECK(named.encode("hi there") == Ids{2, 1});
  CHECK(named.encode("hi", true) == Ids{2});  // no [CLS] / [SEP] in this vocabulary: no template
  try {
    tokenizer_from_vocab_txt("hello\nworld\n", "", "bert/vocab.txt");
    FAIL("accepted a vocabulary without [UNK]");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()) == "bert/vocab.txt: the unknown-word token '[UNK]' is not in the vocabulary");
  }
  CHECK_THROWS_WITH_AS(tokenizer_from_vocab_txt("[UNK]\n\nx\n"), "vocab.txt: token 1 is empty", std::invalid_argument);
  CHECK_THROWS_WITH_AS(tokenizer_from_vocab_txt("[UNK]\n", "{\"do_lower_case\": 1}"),
                       "tokenizer_config.json: the config's do_lower_case must be true or false", std::invalid_argument);
}

TEST_CASE("NFD, NFKD and the categories BERT asks about") {
  CHECK(attn::to_nfd(code_points(U"\u00e9")) == code_points(U"e\u0301"));
  CHECK(attn::to_nfd(code_points(U"\u1e9b\u0323")) == code_points(U"\u017f\u0323\u0307"));  // marks in canonical order
  CHECK(attn::to_nfd(code_points(U"\ufb01")) == code_points(U"\ufb01"));                    // a compatibility ligature stays
  CHECK(attn::to_nfkd(code_points(U"\ufb01\u00e9")) == code_points(U"fie\u0301"));
  CHECK(attn::to_nfd(code_points(U"\uac00")) == code_points(U"\u1100\u1161"));             // Hangul by formula, not composed again
  CHECK(attn::char_category(0x301) == CharCategory::NonspacingMark);
  CHECK(attn::char_category(0x903) == CharCategory::OtherMark);   // Devanagari visarga: Mc
  CHECK(attn::char_category(',') == CharCategory::Punctuation);
  CHECK(attn::char_category('$') == CharCategory::Other);          // Sc
  CHECK(attn::char_category(0x2014) == CharCategory::Punctuation);
  CHECK(attn::char_category(0x1) == CharCategory::Control);
  CHECK(attn::char_category(0x200b) == CharCategory::Control);     // Cf
  CHECK(attn::char_category(0x10fffd) == CharCategory::Control);   // Co
  CHECK(attn::char_category('a') == CharCategory::Other);
  // as the library's Unicode 8.0 tables have them: later punctuation is not punctuation, a later-changed
  // category is the old one
  CHECK(attn::char_category(0x61d) == CharCategory::Other);        // Arabic end of text mark (Unicode 14)
  CHECK(attn::char_category(0x166d) == CharCategory::Punctuation); // Po in 8.0, So now
}

TEST_CASE("StripAccents and NFD as normalizers, WhitespaceSplit as the pre-tokenizer") {
  const std::string json = R"({"normalizer": {"type": "Sequence", "normalizers": [{"type": "NFD"}, {"type": "StripAccents"}]},
    "pre_tokenizer": {"type": "WhitespaceSplit"},
    "model": {"type": "WordPiece", "vocab": {"[UNK]": 0, "creme": 1, "a,": 2, "##b": 3}}})";
  const TextTokenizer t = tokenizer_from_json(json);
  CHECK(t.encode("cr\u00e8me  a,b\u3000creme") == Ids{1, 2, 3, 1});
  CHECK(t.encode("cre\u0903me") == Ids{1});  // Mc is a mark too for StripAccents
}

TEST_CASE("WordPiece: a hostile file (no word limit, a huge token) is refused for the text, not hung on") {
  // every position walks 20 000 bytes of the long token's path to find only "##a": budgeted
  const std::string json = R"({"model": {"type": "WordPiece", "max_input_chars_per_word": 100000000,
    "vocab": {"[UNK]": 0, "a": 1, "##a": 2, "##)" + std::string(20000, 'a') + R"(b": 3}}})";
  const TextTokenizer t = tokenizer_from_json(json);
  CHECK(t.encode("aaaa") == Ids{1, 2, 2, 2});
  CHECK_THROWS_WITH_AS(t.encode(std::string(200000, 'a')), "text: the WordPiece model needs too many steps for a word of 200000 characters",
                       std::invalid_argument);
}
