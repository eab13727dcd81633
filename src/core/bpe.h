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
  // lowercase: Hugging Face's Lowercase normalizer first. Only for an ASCII vocabulary (throws
  // otherwise), where lowercasing the letters whose lowercase is ASCII (A-Z and the Kelvin sign) is
  // exactly Unicode's: a word with any other letter is unknown to such a vocabulary either way.
  static TextTokenizer word_level(std::vector<std::string> vocab, int unk_id, bool lowercase = false);

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
  // The vocabulary's own spelling of a token ("Ġit" for byte-level BPE, the word for WordLevel).
  const std::string& vocab_token(int id) const;
  int unk_id() const { return unk_id_; }  // WordLevel's unknown-word id; -1 for byte-level BPE
  bool lowercase() const { return lowercase_; }

 private:
  struct Merge {
    int rank;
    int merged_id;
  };
  void check_id(int id) const;
  void bpe_piece(const std::string& piece, std::vector<int>& out) const;

  Kind kind_ = Kind::ByteLevelBpe;
  std::vector<std::string> vocab_;
  std::vector<std::string> bytes_;  // token_bytes of every id, decoded once
  std::unordered_map<std::string, int> ids_;
  // (left id << 32 | right id) → rank in the merges list and the id of the merged token
  std::unordered_map<unsigned long long, Merge> merges_;
  int byte_ids_[256] = {};  // id of the single-byte token of each byte; -1 when the vocabulary lacks it
  int unk_id_ = -1;
  bool lowercase_ = false;
};

// GPT-2's pre-tokenisation: the text cut where the regex
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// (JavaScript's \p{L}, \p{N} and \s) matches; the pieces cover the text. Throws
// std::invalid_argument for invalid UTF-8 or text over kMaxModelTextBytes.
std::vector<std::string> gpt2_pretokenize(const std::string& text);
// At most max_bytes of s for an error message: whole characters only, control characters and
// invalid UTF-8 as '?', "..." when cut, so a hostile token cannot break the one-line message.
std::string printable_excerpt(const std::string& s, std::size_t max_bytes = 40);
// The Unicode version the letter / number / space tables were generated from (Python's unicodedata).
const char* unicode_tables_version();

}  // namespace attn
