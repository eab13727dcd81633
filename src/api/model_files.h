// The one loader of model folders (Hugging Face's layout): config.json, model.safetensors and
// tokenizer.json or vocab.json + merges.txt, from a folder on disk, dropped files or a download.
// Hugging Face's names stop here: past this file the core's own structs (Gpt2Model, TextTokenizer).
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "../core/bpe.h"
#include "../core/gpt2.h"
#include "safetensors.h"

namespace attn {

// config.json → Gpt2Config: model_type must be "gpt2" (any other is refused by name), n_layer,
// n_head, n_embd, n_positions, vocab_size, layer_norm_epsilon (default 1e-5). Throws
// std::invalid_argument("config.json: ...").
Gpt2Config parse_gpt2_config(const std::string& text, const std::string& file_name = "config.json");

struct LoadedModel {
  std::string name;                                   // e.g. "openai-community/gpt2" or the folder's name
  std::shared_ptr<const Gpt2Model> model;
  std::shared_ptr<const TextTokenizer> tokenizer;
};

// Assembles one model from its files, in any order except that config.json comes before the
// weights. Every problem throws std::invalid_argument naming the file and what is wrong.
class ModelAssembler {
 public:
  explicit ModelAssembler(std::string name);
  // config.json, tokenizer.json, vocab.json, merges.txt (other names are refused by name).
  void add_text_file(const std::string& file_name, const std::string& bytes);
  // model.safetensors, streamed: begin, feed chunks in order, then finish().
  void begin_weights(const std::string& file_name, std::uint64_t file_size);
  void feed_weights(const std::uint8_t* data, std::size_t n);
  // Checks that every file and tensor is there (tokenizer vocabulary = config.vocab_size, ...).
  LoadedModel finish();

 private:
  // implementation members are the loader author's to add
  std::string name_;
};

// A folder on disk through the same assembler (the CLI and the desktop app).
LoadedModel load_model_dir(const std::string& dir);

}  // namespace attn
