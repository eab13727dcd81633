// Text → token ids for real models: GPT-2's byte-level BPE (its pre-tokenisation rule, byte-to-
// unicode map and merges) and a word-level vocabulary. Not a file parser: src/api/tokenizer_files.h
// reads vocab.json / merges.txt / tokenizer.json and builds these.
#pragma once
#include <cstddef>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace attn {

// Longest text a model tokenizer accepts (bytes of UTF-8).
constexpr std::size_t kMaxModelTextBytes = 1u << 20;

class TextTokenizer {
 public:
  enum class Kind { ByteLevelBpe, WordLevel };

  // GPT-2's tokenizer. vocab[id] is the token in the byte-to-unicode alphabet ("Ġit"); merges in
  // priority order, each a pair of such strings. Throws std::invalid_argument naming what is wrong.
  static TextTokenizer byte_level_bpe(std::vector<std::string> vocab,
                                      std::vector<std::pair<std::string, std::string>> merges);
  // Whole words split on whitespace (and punctuation as its own token); unknown words map to unk_id.
  static TextTokenizer word_level(std::vector<std::string> vocab, int unk_id);

  Kind kind() const { return kind_; }
  int vocab_size() const { return static_cast<int>(vocab_.size()); }
  // Token ids of a UTF-8 text; throws std::invalid_argument for invalid UTF-8 or text over the limit.
  std::vector<int> encode(const std::string& text) const;
  // The raw bytes the token stands for (UTF-8 when whole; a piece of a character when BPE split it).
  std::string token_bytes(int id) const;
  // The token for a learner: a leading space as "·" ("·it"), newlines and tabs visible ("↵", "→"),
  // bytes that are not whole characters as <F0 9F>.
  std::string display(int id) const;
  std::string decode(const std::vector<int>& ids) const;

 private:
  Kind kind_ = Kind::ByteLevelBpe;
  std::vector<std::string> vocab_;
  // implementation detail members (ranks, lookup tables) are the tokenizer author's to add
  std::unordered_map<std::string, int> ids_;
  std::unordered_map<std::string, int> merge_ranks_;
  int unk_id_ = -1;
};

}  // namespace attn
