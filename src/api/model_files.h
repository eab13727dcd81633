// The one loader of model folders (Hugging Face's layout): config.json, model.safetensors and
// tokenizer.json or vocab.json + merges.txt, from a folder on disk, dropped files or a download;
// and the writer of such folders (tests, benchmarks, training).
// Hugging Face's names stop here: past this file the core's own structs (Gpt2Model, TextTokenizer).
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "../core/bpe.h"
#include "../core/gpt2.h"
#include "safetensors.h"

namespace attn {

// config.json → Gpt2Config: model_type must be "gpt2" (any other is refused by name), n_layer,
// n_head, n_embd, n_positions (or n_ctx), vocab_size as whole numbers within gpt2.h's limits,
// layer_norm_epsilon (default 1e-5); activation_function, when present, gelu_new or
// gelu_pytorch_tanh; scale_attn_weights (default true; false: scores not divided by √head_dim);
// options that change the architecture (n_inner other than 4·n_embd,
// scale_attn_by_inverse_layer_idx, add_cross_attention) are refused.
// Other keys are ignored. Throws std::invalid_argument("config.json: ...").
Gpt2Config parse_gpt2_config(const std::string& text, const std::string& file_name = "config.json");

// Bytes of float32 parameters a config needs (a tied LM head once), computed without allocating.
std::uint64_t gpt2_parameter_bytes(const Gpt2Config& config);

struct LoadedModel {
  std::string name;                                   // e.g. "openai-community/gpt2" or the folder's name
  std::shared_ptr<const Gpt2Model> model;
  std::shared_ptr<const TextTokenizer> tokenizer;
};

// What a file of a model folder is to the loader, by its base name.
enum class ModelFileRole {
  Config,     // config.json
  Tokenizer,  // tokenizer.json
  Vocab,      // vocab.json
  Merges,     // merges.txt
  Weights,    // model.safetensors
  Ignored,    // companions that change nothing here: generation_config.json, tokenizer_config.json,
              // special_tokens_map.json, added_tokens.json, README.md, .gitattributes, LICENSE...
  Unknown,    // anything else (pytorch_model.bin, sharded weights, ...): refused by name
};
ModelFileRole model_file_role(const std::string& file_name);

// Largest text file (config, tokenizer) accepted; GPT-2's tokenizer.json is about 1.4 MB.
constexpr std::size_t kMaxModelTextFileBytes = 64u << 20;

// Assembles one model from its files, in any order except that config.json comes before the
// weights. Every problem throws std::invalid_argument naming the file and what is wrong; after a
// throw from the weights the assembler is spent (make a new one).
class ModelAssembler {
 public:
  explicit ModelAssembler(std::string name);
  ~ModelAssembler();
  // config.json, tokenizer.json, vocab.json, merges.txt; companions (ModelFileRole::Ignored) are
  // accepted and ignored; other names are refused by name. A file given twice is refused.
  void add_text_file(const std::string& file_name, const std::string& bytes);
  // model.safetensors, streamed: begin, feed chunks in order, then finish(). file_size 0: unknown.
  // Allocates the model from config.json first (a file too small for the config is refused
  // before allocating; std::bad_alloc becomes a message with the megabytes needed).
  void begin_weights(const std::string& file_name, std::uint64_t file_size);
  void feed_weights(const std::uint8_t* data, std::size_t n);
  // Checks that every file and tensor is there and builds the tokenizer (tokenizer.json preferred
  // over vocab.json + merges.txt; its vocabulary no larger than config.vocab_size).
  LoadedModel finish();
  // Bytes of the weights file fed so far (for a progress bar).
  std::uint64_t weights_received() const { return reader_ ? reader_->bytes_received() : 0; }

 private:
  struct Slot {
    float* data = nullptr;
    std::vector<std::int64_t> shape;
    std::string seen_as;  // the name it arrived under ("" while missing)
  };
  float* destination(const TensorInfo& info);

  std::string name_;
  std::optional<Gpt2Config> config_;
  std::shared_ptr<const TextTokenizer> json_tokenizer_;  // from tokenizer.json (read when given)
  std::optional<std::string> vocab_text_, merges_text_;  // read at finish() when no tokenizer.json
  std::string weights_name_;
  std::unique_ptr<Gpt2Model> model_;
  std::unique_ptr<SafetensorsReader> reader_;
  std::unordered_map<std::string, Slot> slots_;  // by name without "transformer."
  std::vector<std::string> slot_order_;         // the names in model order (for "missing" messages)
  bool finished_ = false;
};

// A folder on disk through the same assembler (the CLI and the desktop app): config.json,
// model.safetensors (read in 1 MiB chunks), tokenizer.json or else vocab.json + merges.txt.
// The model's name is the folder's base name.
LoadedModel load_model_dir(const std::string& dir);

// How save_model_dir and write_gpt2_safetensors write the weights.
struct ModelSaveOptions {
  Dtype dtype = Dtype::F32;
  bool transformer_prefix = false;  // names as GPT2LMHeadModel saves them ("transformer.wte.weight")
  bool lm_head = false;             // also write "lm_head.weight" (wte's values when the head is tied)
};

// The model's tensors under Hugging Face's names, in GPT-2's order (pointers into `model`).
std::vector<NamedTensor> gpt2_named_tensors(const Gpt2Model& model, const ModelSaveOptions& options = {});
// config.json's text for a config (model_type gpt2, activation_function gelu_new).
std::string gpt2_config_json(const Gpt2Config& config);
void write_gpt2_safetensors(std::ostream& out, const Gpt2Model& model, const ModelSaveOptions& options = {});
// Writes dir/config.json, dir/model.safetensors and every tokenizer file given (name → bytes, e.g.
// {"vocab.json", ...}, {"merges.txt", ...}; names must be tokenizer files) into `dir`, creating it.
// Throws std::invalid_argument for bad names, std::runtime_error when a file cannot be written.
void save_model_dir(const Gpt2Model& model, const std::map<std::string, std::string>& tokenizer_files,
                    const std::string& dir, const ModelSaveOptions& options = {});

}  // namespace attn
