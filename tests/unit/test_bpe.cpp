// Unit tests for the model tokenizers: GPT-2's pre-tokeniser split by hand, byte-level BPE on a tiny
// hand-made vocabulary, readable token text, WordLevel, and the tokenizer file readers' refusals.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "../../src/api/tokenizer_files.h"
#include "../../src/core/bpe.h"

using namespace attn;
using Pieces = std::vector<std::string>;
using Ids = std::vector<int>;

TEST_CASE("GPT-2 pre-tokeniser: words, contractions, numbers, punctuation") {
  CHECK(gpt2_pretokenize("Hello world") == Pieces{"Hello", " world"});
  CHECK(gpt2_pretokenize("I'm here, they're") == Pieces{"I", "'m", " here", ",", " they", "'re"});
  CHECK(gpt2_pretokenize("we'll've'd") == Pieces{"we", "'ll", "'ve", "'d"});
  CHECK(gpt2_pretokenize("IT'S") == Pieces{"IT", "'", "S"});  // the contractions are lower case only
  CHECK(gpt2_pretokenize("x 's") == Pieces{"x", " '", "s"});
  CHECK(gpt2_pretokenize("abc123 4567") == Pieces{"abc", "123", " 4567"});
  CHECK(gpt2_pretokenize("\xC2\xB2\xC2\xB3 \xC2\xBD") == Pieces{"\xC2\xB2\xC2\xB3", " \xC2\xBD"});  // ²³ ½ are numbers
  CHECK(gpt2_pretokenize("!!! ?? ...x") == Pieces{"!!!", " ??", " ...", "x"});
  CHECK(gpt2_pretokenize("!!'s") == Pieces{"!!'", "s"});  // the punctuation run takes the apostrophe
  CHECK(gpt2_pretokenize("").empty());
}

TEST_CASE("GPT-2 pre-tokeniser: whitespace runs keep their last space for the next word") {
  CHECK(gpt2_pretokenize("a   b") == Pieces{"a", "  ", " b"});
  CHECK(gpt2_pretokenize("a b  ") == Pieces{"a", " b", "  "});        // a trailing run stays whole
  CHECK(gpt2_pretokenize("   ") == Pieces{"   "});
  CHECK(gpt2_pretokenize("  x") == Pieces{" ", " x"});
  CHECK(gpt2_pretokenize("x\n\ny") == Pieces{"x", "\n", "\n", "y"});
  CHECK(gpt2_pretokenize("x \ny") == Pieces{"x", " ", "\n", "y"});
  CHECK(gpt2_pretokenize("x  \n") == Pieces{"x", "  \n"});
  CHECK(gpt2_pretokenize("a\t\tb") == Pieces{"a", "\t", "\t", "b"});  // only a plain space joins a word
  // JavaScript's \s: no-break space and U+FEFF are spaces, U+0085 (NEL) is not
  CHECK(gpt2_pretokenize("x\xC2\xA0\xC2\xA0y") == Pieces{"x", "\xC2\xA0", "\xC2\xA0", "y"});
  CHECK(gpt2_pretokenize("x\xEF\xBB\xBF\xEF\xBB\xBFy") == Pieces{"x", "\xEF\xBB\xBF", "\xEF\xBB\xBF", "y"});
  CHECK(gpt2_pretokenize("x\xC2\x85\xC2\x85y") == Pieces{"x", "\xC2\x85\xC2\x85", "y"});
}

TEST_CASE("GPT-2 pre-tokeniser: letters of other scripts, marks, emoji") {
  CHECK(gpt2_pretokenize("\xE6\x97\xA5\xE6\x9C\xAC \xE3\x83\x86\xE3\x82\xAD") ==
        Pieces{"\xE6\x97\xA5\xE6\x9C\xAC", " \xE3\x83\x86\xE3\x82\xAD"});  // 日本 テキ
  CHECK(gpt2_pretokenize("\xD9\x85\xD8\xB1\xD8\xAD\xD8\xA8\xD8\xA7 \xD8\xA8\xD9\x83") ==
        Pieces{"\xD9\x85\xD8\xB1\xD8\xAD\xD8\xA8\xD8\xA7", " \xD8\xA8\xD9\x83"});  // مرحبا بك
  // नमस्ते: the virama and the vowel sign are marks, not letters, so they split the word
  CHECK(gpt2_pretokenize("\xE0\xA4\xA8\xE0\xA4\xAE\xE0\xA4\xB8\xE0\xA5\x8D\xE0\xA4\xA4\xE0\xA5\x87") ==
        Pieces{"\xE0\xA4\xA8\xE0\xA4\xAE\xE0\xA4\xB8", "\xE0\xA5\x8D", "\xE0\xA4\xA4", "\xE0\xA5\x87"});
  CHECK(gpt2_pretokenize("cafe\xCC\x81!") == Pieces{"cafe", "\xCC\x81!"});  // a combining accent is "other"
  CHECK(gpt2_pretokenize("\xF0\x9F\x98\x80\xF0\x9F\x98\x80 x") == Pieces{"\xF0\x9F\x98\x80\xF0\x9F\x98\x80", " x"});
  CHECK(gpt2_pretokenize("\xF0\x9D\x90\x80\xF0\x9D\x90\x81") == Pieces{"\xF0\x9D\x90\x80\xF0\x9D\x90\x81"});  // 𝐀𝐁
}

TEST_CASE("GPT-2 pre-tokeniser: invalid UTF-8 and text over the limit are refused") {
  CHECK_THROWS_WITH_AS(gpt2_pretokenize("ab\xFF"), "text: not valid UTF-8 at byte 2", std::invalid_argument);
  CHECK_THROWS_AS(gpt2_pretokenize("\xED\xA0\x80"), std::invalid_argument);      // a surrogate
  CHECK_THROWS_AS(gpt2_pretokenize("\xC0\xAF"), std::invalid_argument);          // overlong '/'
  CHECK_THROWS_AS(gpt2_pretokenize("\xF4\x90\x80\x80"), std::invalid_argument);  // past U+10FFFF
  CHECK_THROWS_AS(gpt2_pretokenize("\xE2\x82"), std::invalid_argument);          // cut short
  CHECK_THROWS_AS(gpt2_pretokenize(std::string(kMaxModelTextBytes + 1, 'a')), std::invalid_argument);
  CHECK(gpt2_pretokenize(std::string(kMaxModelTextBytes, 'a')).size() == 1);
}

namespace {

// "Ġ" is the byte-level symbol of a space, "Ċ" of a newline.
TextTokenizer tiny_bpe() {
  std::vector<std::string> vocab = {"a", "b", "c", "\xC4\xA0", "ab", "bc", "abc", "\xC4\xA0" "ab", "'", "s", "'s", "!", "\xC4\x8A", "aa"};
  std::vector<std::pair<std::string, std::string>> merges = {
      {"a", "b"}, {"b", "c"}, {"ab", "c"}, {"\xC4\xA0", "ab"}, {"'", "s"}, {"a", "a"}};
  return TextTokenizer::byte_level_bpe(vocab, merges);
}

}  // namespace

TEST_CASE("byte-level BPE: merges by rank on a hand-made vocabulary") {
  const TextTokenizer t = tiny_bpe();
  CHECK(t.kind() == TextTokenizer::Kind::ByteLevelBpe);
  CHECK(t.vocab_size() == 14);
  CHECK(t.encode("abc") == Ids{6});     // a b c → ab c (rank 1 before b c) → abc
  CHECK(t.encode("bc") == Ids{5});
  CHECK(t.encode("abab") == Ids{4, 4});
  CHECK(t.encode(" abc") == Ids{3, 6});  // Ġ ab c: "ab c" (rank 3) before "Ġ ab" (rank 4), and Ġ abc is no merge
  CHECK(t.encode(" ab") == Ids{7});
  CHECK(t.encode("aaa") == Ids{13, 0});  // overlapping pairs: the leftmost wins
  CHECK(t.encode("aaaa") == Ids{13, 13});
  CHECK(t.encode("a's") == Ids{0, 10});
  CHECK(t.encode("a!!") == Ids{0, 11, 11});
  CHECK(t.encode("a\n") == Ids{0, 12});
  CHECK(t.encode("").empty());
  CHECK_THROWS_WITH_AS(t.encode("ax"), "text: the vocabulary has no token for the byte 0x78", std::invalid_argument);
  CHECK_THROWS_AS(t.encode("a\xFF"), std::invalid_argument);
}

TEST_CASE("byte-level BPE: one rank's occurrences are all merged before the pairs they create") {
  // "ab a" ranks before "a b": GPT-2 merges both a b of "abab" in one pass (ab ab); merging the pair
  // "ab a" as soon as it appears would give aba b instead.
  const TextTokenizer t = TextTokenizer::byte_level_bpe({"a", "b", "ab", "aba"}, {{"ab", "a"}, {"a", "b"}});
  CHECK(t.encode("abab") == Ids{2, 2});
  CHECK(t.encode("aba") == Ids{3});
}

TEST_CASE("byte-level BPE: a 1 MiB word merges in n log n, not n squared") {
  std::vector<std::string> vocab = {"a"};
  std::vector<std::pair<std::string, std::string>> merges;
  for (int k = 0; k < 10; ++k) {  // a a → aa, aa aa → aaaa, ... up to 1024 a's
    merges.emplace_back(vocab.back(), vocab.back());
    vocab.push_back(vocab.back() + vocab.back());
  }
  const TextTokenizer t = TextTokenizer::byte_level_bpe(vocab, merges);
  const Ids ids = t.encode(std::string(kMaxModelTextBytes, 'a'));
  REQUIRE(ids.size() == 1024);  // 2^20 / 2^10
  CHECK(ids.front() == 10);
  CHECK(ids.back() == 10);
}

TEST_CASE("byte-level BPE: bytes, readable text, decoding") {
  // "Ġit", "Ċ" (newline), "ĉ" (tab), "č" (CR), "ðŁĺ" (F0 9F 98: part of 😀), "Ã©" (é), "Ġð" (space + F0)
  const TextTokenizer t = TextTokenizer::byte_level_bpe(
      {"\xC4\xA0it", "\xC4\x8A", "\xC4\x89", "\xC4\x8D", "\xC3\xB0\xC5\x81\xC4\xBA", "\xC3\x83\xC2\xA9", "\xC4\xA0\xC3\xB0",
       "\xC4\xA0\xC4\xA0", "<|endoftext|>", "\xC3\x82\xC4\xA7"},
      {});
  CHECK(t.token_bytes(0) == " it");
  CHECK(t.display(0) == "\xC2\xB7it");  // ·it
  CHECK(t.display(1) == "\xE2\x86\xB5");  // ↵
  CHECK(t.display(2) == "\xE2\x86\x92");  // →
  CHECK(t.display(3) == "<0D>");
  CHECK(t.token_bytes(4) == "\xF0\x9F\x98");
  CHECK(t.display(4) == "<F0 9F 98>");
  CHECK(t.display(5) == "\xC3\xA9");  // é, a whole character
  CHECK(t.display(6) == "\xC2\xB7<F0>");
  CHECK(t.display(7) == "\xC2\xB7\xC2\xB7");
  CHECK(t.display(8) == "<|endoftext|>");
  CHECK(t.display(9) == "<C2 85>");  // "Âħ": U+0085, an invisible control character

  CHECK(t.vocab_token(0) == "\xC4\xA0it");
  CHECK(t.decode({0, 1, 5}) == " it\n\xC3\xA9");
  CHECK(t.display(10) == "<unused 10>");  // a model row past the vocabulary (Qwen pads its LM head)
  CHECK_THROWS_AS(t.display(-1), std::invalid_argument);
  CHECK_THROWS_AS(t.token_bytes(-1), std::invalid_argument);
  CHECK_THROWS_AS(t.decode({0, 99}), std::invalid_argument);
}

TEST_CASE("byte-level BPE: a bad vocabulary or merge list is refused") {
  using V = std::vector<std::string>;
  CHECK_THROWS_AS(TextTokenizer::byte_level_bpe({}, {}), std::invalid_argument);
  CHECK_THROWS_WITH_AS(TextTokenizer::byte_level_bpe(V{"a", "b", "a"}, {}), "token 'a' appears twice (ids 0 and 2)",
                       std::invalid_argument);
  CHECK_THROWS_AS(TextTokenizer::byte_level_bpe(V{"a", ""}, {}), std::invalid_argument);
  CHECK_THROWS_AS(TextTokenizer::byte_level_bpe(V{"a", "\xFF"}, {}), std::invalid_argument);
  CHECK_THROWS_WITH_AS(TextTokenizer::byte_level_bpe(V{"a", "b"}, {{"a", "b"}}),
                       "merge 1 ('a' 'b'): the result 'ab' is not in the vocabulary", std::invalid_argument);
  CHECK_THROWS_WITH_AS(TextTokenizer::byte_level_bpe(V{"a", "ab"}, {{"a", "b"}}),
                       "merge 1 ('a' 'b'): 'b' is not in the vocabulary", std::invalid_argument);
}

TEST_CASE("WordLevel: words between spaces, punctuation alone, unknown words → unk") {
  const TextTokenizer t = TextTokenizer::word_level({"[UNK]", "the", "cat", ".", "sat", ",", "caf\xC3\xA9"}, 0);
  CHECK(t.kind() == TextTokenizer::Kind::WordLevel);
  CHECK(t.unk_id() == 0);
  CHECK(t.encode("The cat sat, the cat.") == Ids{0, 2, 4, 5, 1, 2, 3});
  CHECK(t.encode("cat's") == Ids{2, 0, 0});  // cat ' s
  CHECK(t.encode("  the\t\ncat  ") == Ids{1, 2});
  CHECK(t.encode("caf\xC3\xA9.") == Ids{6, 3});
  CHECK(t.encode("").empty());
  CHECK(t.display(1) == "the");
  CHECK(t.decode({1, 2, 3}) == "the cat .");
  CHECK_THROWS_AS(t.encode("\xFF"), std::invalid_argument);
  CHECK_THROWS_AS(TextTokenizer::word_level({"a"}, 1), std::invalid_argument);
  CHECK_THROWS_AS(TextTokenizer::word_level({"a"}, -1), std::invalid_argument);
}

TEST_CASE("WordLevel with Lowercase: capitals read as the vocabulary's words, ASCII vocabularies only") {
  const TextTokenizer t = TextTokenizer::word_level({"[UNK]", "the", "cat", ".", "ok"}, 0, true);
  CHECK(t.lowercase());
  CHECK(t.encode("The CAT.") == Ids{1, 2, 3});
  CHECK(t.encode("O\xE2\x84\xAA") == Ids{4});          // O + KELVIN SIGN lowercases to "ok"
  CHECK(t.encode("\xC3\x89t\xC3\xA9") == Ids{0});     // other letters: unknown either way
  CHECK_FALSE(TextTokenizer::word_level({"[UNK]", "the"}, 0).lowercase());
  CHECK(TextTokenizer::word_level({"[UNK]", "the"}, 0).encode("The") == Ids{0});
  CHECK_THROWS_WITH_AS(TextTokenizer::word_level({"[UNK]", "caf\xC3\xA9"}, 0, true),
                       "lowercasing is supported for an ASCII vocabulary only, and 'caf\xC3\xA9' is not ASCII",
                       std::invalid_argument);
}

TEST_CASE("tokenizer files: vocab.json + merges.txt and tokenizer.json give the same tokenizer") {
  const std::string vocab = R"({"a": 0, "b": 1, "c": 2, "ab": 3, "abc": 4, "\u0120": 5})";
  const TextTokenizer from_pair = tokenizer_from_vocab_merges(vocab, "#version: 0.2\r\na b\r\nab c\r\n");
  CHECK(from_pair.encode("abc ab") == Ids{4, 5, 3});
  const std::string json_strings = R"({"model": {"type": "BPE", "vocab": )" + vocab +
                                   R"(, "merges": ["a b", "ab c"]}, "pre_tokenizer": {"type": "ByteLevel"}})";
  const std::string json_pairs = R"({"model": {"type": "BPE", "vocab": )" + vocab +
                                 R"(, "merges": [["a", "b"], ["ab", "c"]]}, "pre_tokenizer": {"type": "Sequence",
                                 "pretokenizers": [{"type": "ByteLevel", "add_prefix_space": false}]}})";
  CHECK(tokenizer_from_json(json_strings).encode("abc ab") == Ids{4, 5, 3});
  CHECK(tokenizer_from_json(json_pairs).encode("abc ab") == Ids{4, 5, 3});
  const TextTokenizer words = tokenizer_from_json(R"({"model": {"type": "WordLevel", "vocab": {"<unk>": 0, "hi": 1},
                                                      "unk_token": "<unk>"}})");
  CHECK(words.kind() == TextTokenizer::Kind::WordLevel);
  CHECK(words.encode("hi there!") == Ids{1, 0, 0});
}

TEST_CASE("tokenizer files: every refusal names the file (and the line of merges.txt)") {
  const std::string vocab = R"({"a": 0, "b": 1, "ab": 2})";
  CHECK_THROWS_WITH_AS(tokenizer_from_vocab_merges(vocab, "a b\nab\n", "v.json", "m.txt"),
                       "m.txt: line 2: expected two tokens separated by one space, got 'ab'", std::invalid_argument);
  CHECK_THROWS_WITH_AS(tokenizer_from_vocab_merges(vocab, "a\tb\n", "v.json", "m.txt"),
                       "m.txt: line 1: expected two tokens separated by one space, got 'a?b'", std::invalid_argument);
  CHECK_THROWS_WITH_AS(tokenizer_from_vocab_merges(vocab, "#version: 0.2\nb a\n", "v.json", "m.txt"),
                       "m.txt: line 2: the result 'ba' is not in the vocabulary", std::invalid_argument);
  CHECK_THROWS_WITH_AS(tokenizer_from_vocab_merges(R"({"a": 0, "b": 5})", "", "v.json", "m.txt"),
                       "v.json: the vocabulary: the id 5 of 'b' is outside 0..1 (ids must be exactly 0 to the number of "
                       "tokens - 1)",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(tokenizer_from_json(R"({"model": {"type": "Unigram"}})", "t.json"),
                       "t.json: model type 'Unigram' is not supported (only BPE, WordPiece and WordLevel)", std::invalid_argument);
  CHECK_THROWS_AS(tokenizer_from_json(std::string(kMaxTokenizerFileBytes + 1, ' '), "t.json"), std::invalid_argument);
  CHECK_THROWS_AS(tokenizer_from_json("{\"model\": ", "t.json"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(tokenizer_from_json(R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []},
                                               "pre_tokenizer": {"type": "Whitespace"}})", "t.json"),
                       "t.json: pre_tokenizer 'Whitespace' is not supported (ByteLevel, Split, Metaspace, BertPreTokenizer, WhitespaceSplit, Sequence)", std::invalid_argument);
}

TEST_CASE("error messages quote hostile text safely") {
  CHECK(printable_excerpt("a\nb\xFF") == "a?b?");
  CHECK(printable_excerpt(std::string(100, 'x'), 10) == "xxxxxxxxxx...");
  CHECK(printable_excerpt("\xC3\xA9\xC3\xA9", 3) == "\xC3\xA9...");  // never half a character
}
