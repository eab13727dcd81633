// Hugging Face's tokenizer files → TextTokenizer: tokenizer.json (model type BPE or WordPiece with its
// pipeline of added tokens, normalizers, pre-tokenizers, post-processor and decoder, or WordLevel),
// vocab.json + merges.txt, or BERT's vocab.txt (+ tokenizer_config.json). Every problem throws
// std::invalid_argument("<file name>: <what is wrong>", with the line for merges.txt).
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
// A BERT folder without tokenizer.json: vocab.txt (one token a line, the line number its id) read as
// transformers' BertTokenizerFast converts it: WordPiece with "##" and [UNK], the BertNormalizer
// (lowercase from tokenizer_config.json's do_lower_case, default true; tokenize_chinese_chars and
// strip_accents likewise), the BertPreTokenizer, [CLS] … [SEP] and the WordPiece decoder. The special
// tokens ([UNK] [SEP] [PAD] [CLS] [MASK], or the config's names) that the vocabulary has are special.
// config_json may be empty (no tokenizer_config.json).
TextTokenizer tokenizer_from_vocab_txt(const std::string& vocab_txt, const std::string& config_json = "",
                                       const std::string& vocab_name = "vocab.txt",
                                       const std::string& config_name = "tokenizer_config.json");

}  // namespace attn
