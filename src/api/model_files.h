// The one loader of model folders (Hugging Face's layout): config.json, model.safetensors (or a
// sharded model.safetensors.index.json + its shards) and tokenizer.json or vocab.json + merges.txt,
// from a folder on disk, dropped files or a download; and the writer of such folders (tests,
// benchmarks, training). Hugging Face's names stop here (with model_families.h, which holds each
// family's): past these files the core's own structs (Transformer, TextTokenizer).
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "../core/bpe.h"
#include "../core/transformer.h"
#include "model_families.h"
#include "safetensors.h"

namespace attn {

struct LoadedModel {
  std::string name;                                   // e.g. "openai-community/gpt2" or the folder's name
  std::shared_ptr<const Transformer> model;
  std::shared_ptr<const TextTokenizer> tokenizer;
  std::string skipped;                                // what the files had that the text model does not use ("" none)
  // The tokenizer's own files as given (name → bytes), for the model's worker, which builds the same tokenizer
  // from them (tokenizer_from_files); the page drops them once they are sent.
  std::map<std::string, std::string> tokenizer_files;
};

// The tokenizer a model folder's files make: tokenizer.json, else vocab.json + merges.txt, else vocab.txt
// (+ tokenizer_config.json). Throws std::invalid_argument naming the file missing or wrong.
std::shared_ptr<const TextTokenizer> tokenizer_from_files(const std::map<std::string, std::string>& files);

// What a file of a model folder is to the loader, by its base name.
enum class ModelFileRole {
  Config,     // config.json
  Tokenizer,  // tokenizer.json
  Vocab,      // vocab.json
  Merges,     // merges.txt
  Weights,    // model.safetensors, or a shard the index names (model-00001-of-00002.safetensors)
  Index,      // model.safetensors.index.json: which shard holds each tensor
  Ignored,    // companions that change nothing here: generation_config.json, tokenizer_config.json,
              // special_tokens_map.json, added_tokens.json, README.md, .gitattributes, LICENSE...
  Unknown,    // anything else (pytorch_model.bin, ...): refused by name
  VocabTxt,   // vocab.txt: a BERT folder's WordPiece vocabulary (with tokenizer_config.json, when no tokenizer.json)
};
ModelFileRole model_file_role(const std::string& file_name);

// Largest text file (config, tokenizer, index) accepted; Gemma 3's tokenizer.json is about 33 MB.
constexpr std::size_t kMaxModelTextFileBytes = 64u << 20;
// Most shards a sharded checkpoint may have.
constexpr int kMaxShards = 1024;

// Assembles one model from its files, in any order except that config.json (and the index, for a
// sharded checkpoint) comes before the weights. The weights stay in the file's format (F32, F16 or
// BF16) as the first weights header has them. Every problem throws std::invalid_argument naming the
// file and what is wrong; after a throw from the weights the assembler is spent (make a new one).
class ModelAssembler {
 public:
  explicit ModelAssembler(std::string name);
  ~ModelAssembler();
  // config.json, tokenizer.json, vocab.json, merges.txt, vocab.txt, model.safetensors.index.json;
  // companions (ModelFileRole::Ignored) are accepted and ignored, except tokenizer_config.json, kept for
  // a vocab.txt; other names are refused by name. A file given twice is refused.
  void add_text_file(const std::string& file_name, const std::string& bytes);
  // A weights file, streamed: begin, feed chunks in order, then the next file or finish().
  // file_size 0: unknown. model.safetensors alone, or each shard the index names, once. The model is
  // allocated when the first header has been read (std::bad_alloc becomes a message with the
  // megabytes needed); a single file too small for the config is refused before that.
  void begin_weights(const std::string& file_name, std::uint64_t file_size);
  void feed_weights(const std::uint8_t* data, std::size_t n);
  // Checks that every file, shard and tensor is there and builds the tokenizer (tokenizer.json
  // preferred over vocab.json + merges.txt, then vocab.txt (+ tokenizer_config.json); its vocabulary
  // no larger than config's vocab_size).
  LoadedModel finish();
  // The configuration once config.json was given (null before).
  const ModelConfigFile* config() const { return config_ ? &*config_ : nullptr; }
  // The shard files the index names, in its order (empty without an index).
  const std::vector<std::string>& shards() const { return shard_order_; }

 private:
  struct Slot {
    TensorSlot where;
    std::string seen_as;  // the name it arrived under ("" while missing)
  };
  TensorTarget destination(const TensorInfo& info);
  void allocate(Dtype dtype);
  void end_weights_file();

  std::string name_;
  std::optional<ModelConfigFile> config_;
  std::shared_ptr<const TextTokenizer> json_tokenizer_;  // from tokenizer.json (read when given)
  std::map<std::string, std::string> tokenizer_files_;  // every tokenizer file given (the rest read at finish())
  std::optional<std::unordered_map<std::string, std::string>> index_;  // tensor (as in the files) → shard
  std::vector<std::string> shard_order_;
  std::vector<std::string> shards_done_;
  std::unordered_set<std::string> shard_tensors_;  // every tensor the shards held (to check the index)
  std::string weights_name_;                     // the weights file being read now
  std::unique_ptr<Transformer> model_;
  std::unique_ptr<SafetensorsReader> reader_;
  std::unordered_map<std::string, Slot> slots_;  // by the table's name (prefix removed)
  std::vector<std::string> slot_order_;          // the names in model order (for "missing" messages)
  std::string file_prefix_;                      // the prefix the files put before the table's names
  int skipped_tensors_ = 0;
  bool finished_ = false;
};

// A folder on disk through the same assembler (the CLI and the desktop app): config.json,
// model.safetensors or model.safetensors.index.json + its shards (read in 1 MiB chunks),
// tokenizer.json or else vocab.json + merges.txt, or else vocab.txt (+ tokenizer_config.json). The
// model's name is the folder's base name.
LoadedModel load_model_dir(const std::string& dir);

// How save_model_dir and model_safetensors_bytes write the weights (a float-held model's).
struct ModelSaveOptions {
  Dtype dtype = Dtype::F32;
  bool transformer_prefix = false;  // names as GPT2LMHeadModel saves them ("transformer.wte.weight")
  bool lm_head = false;             // also write "lm_head.weight" (wte's values when the head is tied)
};

// The model's tensors under its family's names, in the family's order (pointers into `model`, which
// must hold float weights). transformer_prefix: GPT-2's names as GPT2LMHeadModel saves them.
std::vector<NamedTensor> model_named_tensors(const Transformer& model, const ModelSaveOptions& options = {});
std::string model_safetensors_bytes(const Transformer& model, const ModelSaveOptions& options = {});
// Writes dir/config.json, dir/model.safetensors and every tokenizer file given (name → bytes, e.g.
// {"vocab.json", ...}, {"merges.txt", ...}; names must be tokenizer files) into `dir`, creating it.
// Throws std::invalid_argument for bad names, std::runtime_error when a file cannot be written.
void save_model_dir(const Transformer& model, const std::map<std::string, std::string>& tokenizer_files,
                    const std::string& dir, const ModelSaveOptions& options = {});

}  // namespace attn
