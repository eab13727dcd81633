// Hugging Face's tokenizer files → TextTokenizer: tokenizer.json (model type BPE with its pipeline of
// added tokens, normalizers, pre-tokenizers, post-processor and decoder, or WordLevel) or
// vocab.json + merges.txt. Every problem throws std::invalid_argument("<file name>: <what is wrong>",
// with the line for merges.txt).
#pragma once
#include <cstddef>
#include <string>

#include "../core/bpe.h"

namespace attn {

// Larger tokenizer files are refused (GPT-2's are ~1.4 MB; the largest common ones ~20 MB).
constexpr std::size_t kMaxTokenizerFileBytes = 64u << 20;

TextTokenizer tokenizer_from_json(const std::string& text, const std::string& file_name = "tokenizer.json");
TextTokenizer tokenizer_from_vocab_merges(const std::string& vocab_json, const std::string& merges_txt,
                                          const std::string& vocab_name = "vocab.json",
                                          const std::string& merges_name = "merges.txt");

}  // namespace attn
