// Text → token ids for real models: GPT-2's byte-level BPE (its pre-tokenisation rule, byte-to-
// unicode map and merges), Hugging Face's tokenizer.json pipeline for BPE models (Llama, Qwen, Mistral,
// Gemma, RoBERTa) and WordPiece models (BERT, DistilBERT), and a word-level vocabulary. Not a file
// parser: src/api/tokenizer_files.h reads vocab.json / merges.txt / tokenizer.json / vocab.txt and
// builds these.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace attn {

class TokenRegex;

// Hugging Face's tokenizer pipeline as a tokenizer.json describes it, for BPE and WordPiece models:
// added tokens, normalizers, pre-tokenizers, the model's options, the post-processor's template and the
// decoder.
// src/api/tokenizer_files.cpp reads it from the file; TextTokenizer::from_pipeline checks and runs it.
struct TokenizerPipeline {
  struct AddedToken {
    std::string content;
    int id = -1;
    bool special = false, single_word = false, lstrip = false, rstrip = false, normalized = false;
  };
  struct Normalizer {
    enum class Type { NFC, NFKC, NFD, NFKD, Lowercase, Prepend, Replace, StripAccents, Bert } type = Type::NFC;
    std::string text;     // Prepend's text, Replace's String pattern
    std::string content;  // what Replace puts instead
    std::shared_ptr<const TokenRegex> regex;  // Replace with a Regex pattern
    // BertNormalizer, in this order: clean_text drops NUL, U+FFFD and control / format / private-use
    // characters (not tab, newline, CR) and makes every whitespace a ' '; handle_chinese_chars puts
    // spaces around CJK ideographs; strip_accents is NFD then every nonspacing mark (Mn) dropped (the
    // file's null means "as lowercase", resolved by the reader); lowercase as the Lowercase normalizer.
    bool clean_text = true, handle_chinese_chars = true, strip_accents = true, lowercase = true;
  };
  enum class Behavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };
  struct PreTokenizer {
    // Bert: split at whitespace (removed) and around each punctuation character (kept alone);
    // WhitespaceSplit: split at whitespace only. Whitespace is Unicode's White_Space (Rust's).
    enum class Type { ByteLevel, Split, Metaspace, Bert, WhitespaceSplit } type = Type::ByteLevel;
    bool add_prefix_space = false, use_regex = true;  // ByteLevel
    std::string pattern;                              // Split with a String pattern
    std::shared_ptr<const TokenRegex> regex;          // Split with a Regex pattern
    Behavior behavior = Behavior::Isolated;
    bool invert = false;
    std::uint32_t replacement = 0x2581;  // Metaspace: '▁'
    enum class Prepend { Always, First, Never } prepend = Prepend::Always;
    bool split = true;
  };
  struct Decoder {
    bool byte_level = false;  // ByteLevel: the byte alphabet back to bytes
    std::vector<std::pair<std::string, std::string>> replaces;  // Replace (String), in order, per token
    bool byte_fallback = false;  // ByteFallback: <0x41> is the byte 0x41
    bool join_with_spaces = false;  // no decoder at all: Hugging Face joins the tokens with spaces
    std::uint32_t strip_char = ' ';
    int strip_start = 0, strip_stop = 0;  // Strip after Fuse: characters off both ends of the text
    // WordPiece: a token after the first loses its wordpiece_prefix ("##") or gains a leading space;
    // cleanup then joins " ." " ," " n't" " 's" and the like, token by token, as the library does.
    bool wordpiece = false, cleanup = false;
    std::string wordpiece_prefix = "##";
  };

  // BPE (merges) or WordPiece (greedy longest-match-first over the vocabulary: a word's first piece as
  // spelled, each later piece with continuing_subword_prefix; a word with any piece not found, or longer
  // than max_input_chars_per_word characters, is the one unk_id).
  enum class Model { BPE, WordPiece } model = Model::BPE;
  std::size_t max_input_chars_per_word = 100;

  std::vector<std::string> vocab;  // the model's vocabulary, vocab[id]
  std::vector<std::pair<std::string, std::string>> merges;
  bool byte_fallback = false, fuse_unk = false, ignore_merges = false;
  int unk_id = -1;
  std::string continuing_subword_prefix, end_of_word_suffix;
  std::vector<AddedToken> added;  // ids past the model's vocabulary extend it
  std::vector<Normalizer> normalizers;
  std::vector<PreTokenizer> pre_tokenizers;
  std::vector<int> template_before, template_after;  // the post-processor's special ids around the text
  Decoder decoder;
};

// Longest text a model tokenizer accepts (bytes of UTF-8).
constexpr std::size_t kMaxModelTextBytes = 1u << 20;

class TextTokenizer {
 public:
  // every BPE tokenizer is ByteLevelBpe, as before; WordPiece is a tokenizer.json WordPiece model
  enum class Kind { ByteLevelBpe, WordLevel, WordPiece };

  // GPT-2's tokenizer. vocab[id] is the token in the byte-to-unicode alphabet ("Ġit"); merges in
  // priority order, each a pair of such strings. Throws std::invalid_argument naming what is wrong.
  static TextTokenizer byte_level_bpe(std::vector<std::string> vocab,
                                      std::vector<std::pair<std::string, std::string>> merges);
  // Whole words split on whitespace (and punctuation as its own token); unknown words map to unk_id.
  // lowercase: Hugging Face's Lowercase normalizer first. Only for an ASCII vocabulary (throws
  // otherwise), where lowercasing the letters whose lowercase is ASCII (A-Z and the Kelvin sign) is
  // exactly Unicode's: a word with any other letter is unknown to such a vocabulary either way.
  static TextTokenizer word_level(std::vector<std::string> vocab, int unk_id, bool lowercase = false);

  // Hugging Face's pipeline (tokenizer.json): added tokens, normalizers, pre-tokenizers, BPE with
  // byte fallback and unk or WordPiece, a template. Throws std::invalid_argument naming what is wrong
  // (a WordPiece model without its unk token among them).
  static TextTokenizer from_pipeline(TokenizerPipeline pipeline);

  Kind kind() const { return kind_; }
  // Every id: the model's vocabulary and the added tokens past it.
  int vocab_size() const { return static_cast<int>(vocab_.size()); }
  // Token ids of a UTF-8 text; throws std::invalid_argument for invalid UTF-8 or text over the limit.
  // Without the post-processor's special tokens (Hugging Face's add_special_tokens=False).
  std::vector<int> encode(const std::string& text) const;
  // add_special: with them (the BOS of Llama 2 and Gemma): what the model reads.
  std::vector<int> encode(const std::string& text, bool add_special) const;
  // The first id the template puts before the text (a BOS), or -1.
  int bos_id() const;
  // An added token that the tokenizer treats as special (<s>, <|im_start|>): shown and decoded as is.
  bool is_special(int id) const;
  // The id of the special added token written `content` ("[MASK]", "<pad>"), or -1.
  int special_id(const std::string& content) const;
  // The masked-language model's mask token: the special "[MASK]" (BERT) or "<mask>" (RoBERTa), or -1.
  int mask_id() const;
  // The raw bytes the token stands for (UTF-8 when whole; a piece of a character when BPE split it).
  // A WordPiece continuation ("##ing") stands for "ing" when the decoder is WordPiece's.
  std::string token_bytes(int id) const;
  // The token for a learner: a leading space as "·" ("·it"), newlines and tabs visible ("↵", "→"),
  // bytes that are not whole characters as <F0 9F>. WordPiece tokens are shown as the vocabulary spells
  // them, as bertviz shows BERT's: a word's first piece as the word ("play"), a continuation with its
  // prefix ("##ing"), so a learner sees where a word was cut; [CLS] [SEP] [MASK] as written.
  // An id past the vocabulary (a model's padded rows) is "<unused N>"; a negative one throws.
  std::string display(int id) const;
  std::string decode(const std::vector<int>& ids) const;
  // The vocabulary's own spelling of a token ("Ġit" for byte-level BPE, the word for WordLevel).
  const std::string& vocab_token(int id) const;
  int unk_id() const { return unk_id_; }  // WordLevel's and WordPiece's unknown-word id; -1 for byte-level BPE
  bool lowercase() const { return lowercase_; }

 private:
  struct Merge {
    int rank;
    int merged_id;
  };
  struct Pipeline;  // src/core/tokenizer_pipeline.cpp
  void check_id(int id) const;
  void bpe_piece(const std::string& piece, std::vector<int>& out) const;
  void encode_pipeline(const std::string& text, std::vector<int>& ids) const;
  void bpe_word(const std::vector<std::uint32_t>& word, std::vector<int>& out) const;
  void wordpiece_word(const std::vector<std::uint32_t>& word, std::vector<int>& out, long long* budget) const;
  // The WordPiece decoder's text into out; false (out untouched) when the file's decoder is another.
  bool decode_wordpiece(const std::vector<int>& ids, std::string& out) const;
  bool decode_joins_with_spaces() const;
  void decode_strip(std::string& text) const;  // the Strip decoder, when the file has one

  Kind kind_ = Kind::ByteLevelBpe;
  std::vector<std::string> vocab_;
  std::vector<std::string> bytes_;  // token_bytes of every id, decoded once
  std::unordered_map<std::string, int> ids_;
  // (left id << 32 | right id) → rank in the merges list and the id of the merged token
  std::unordered_map<unsigned long long, Merge> merges_;
  int byte_ids_[256] = {};  // id of the single-byte token of each byte; -1 when the vocabulary lacks it
  int unk_id_ = -1;
  bool lowercase_ = false;
  std::shared_ptr<const Pipeline> pipeline_;  // set by from_pipeline only
};

// GPT-2's pre-tokenisation: the text cut where the regex
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// (JavaScript's \p{L}, \p{N} and \s) matches; the pieces cover the text. Throws
// std::invalid_argument for invalid UTF-8 or text over kMaxModelTextBytes.
std::vector<std::string> gpt2_pretokenize(const std::string& text);
// At most max_bytes of s for an error message: whole characters only, control characters and
// invalid UTF-8 as '?', "..." when cut, so a hostile token cannot break the one-line message.
std::string printable_excerpt(const std::string& s, std::size_t max_bytes = 40);

}  // namespace attn
