// The model folder loader (config.json, model.safetensors or its shards, tokenizer files →
// Transformer and TextTokenizer) and writer. Hugging Face's file names live here; each family's
// fields and tensor names in model_families.cpp.
#include "model_files.h"

#include <algorithm>
#include <cstring>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <new>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <utility>

#include "tokenizer_files.h"
#include "../core/refuse.h"
#include "text.h"

namespace attn {

namespace fs = std::filesystem;

namespace {

std::string base_name(const std::string& file_name) {
  const std::size_t slash = file_name.find_last_of("/\\");
  return slash == std::string::npos ? file_name : file_name.substr(slash + 1);
}

}  // namespace

// [SECTION] file roles -------------------------------------------------------------------------

ModelFileRole model_file_role(const std::string& file_name) {
  const std::string n = base_name(file_name);
  if (n == "config.json") return ModelFileRole::Config;
  if (n == "tokenizer.json") return ModelFileRole::Tokenizer;
  if (n == "vocab.json") return ModelFileRole::Vocab;
  if (n == "merges.txt") return ModelFileRole::Merges;
  if (n == "vocab.txt") return ModelFileRole::VocabTxt;
  if (n == "model.safetensors.index.json") return ModelFileRole::Index;
  if (ends_with(n, ".safetensors")) return ModelFileRole::Weights;
  static const char* const companions[] = {
      "generation_config.json", "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json",
      "README.md", "readme.md", ".gitattributes", "LICENSE", "LICENSE.txt", "LICENSE.md", ".DS_Store"};
  for (const char* c : companions)
    if (n == c) return ModelFileRole::Ignored;
  return ModelFileRole::Unknown;
}

namespace {

[[noreturn]] void refuse_unknown_file(const std::string& file_name) {
  const std::string n = base_name(file_name);
  for (const char* ext : {".bin", ".pt", ".pth", ".h5", ".msgpack", ".ot", ".onnx", ".ckpt", ".gguf"})
    if (ends_with(n, ext)) refuse(n, "only model.safetensors weights are read, not this format");
  if (ends_with(n, ".safetensors.index.json")) refuse(n, "only model.safetensors.index.json indexes the shards");
  refuse(n, "not a file of a model folder (config.json, model.safetensors or model.safetensors.index.json + shards, "
         "tokenizer.json or vocab.json + merges.txt)");
}

}  // namespace

std::shared_ptr<const TextTokenizer> tokenizer_from_files(const std::map<std::string, std::string>& files) {
  const auto file = [&](const char* n) { const auto it = files.find(n); return it == files.end() ? nullptr : &it->second; };
  if (const std::string* json = file("tokenizer.json")) return std::make_shared<const TextTokenizer>(tokenizer_from_json(*json));
  const std::string *vocab = file("vocab.json"), *merges = file("merges.txt"), *vocab_txt = file("vocab.txt");
  if (vocab && merges) return std::make_shared<const TextTokenizer>(tokenizer_from_vocab_merges(*vocab, *merges));
  if (vocab) refuse("merges.txt", "missing (vocab.json needs it, or give tokenizer.json)");
  if (merges) refuse("vocab.json", "missing (merges.txt needs it, or give tokenizer.json)");
  if (vocab_txt) {
    const std::string* config = file("tokenizer_config.json");
    return std::make_shared<const TextTokenizer>(
        tokenizer_from_vocab_txt(*vocab_txt, config ? *config : "", "vocab.txt", "tokenizer_config.json"));
  }
  refuse("tokenizer.json", "missing (or vocab.json + merges.txt, or a BERT's vocab.txt): the model needs its tokenizer");
}

// [SECTION] the assembler ----------------------------------------------------------------------

ModelAssembler::ModelAssembler(std::string name) : name_(std::move(name)) {}
ModelAssembler::~ModelAssembler() = default;

void ModelAssembler::add_text_file(const std::string& file_name, const std::string& bytes) {
  const std::string n = base_name(file_name);
  const ModelFileRole role = model_file_role(n);
  if (role == ModelFileRole::Ignored && n == "tokenizer_config.json" && bytes.size() <= kMaxModelTextFileBytes) {
    tokenizer_files_[n] = bytes;  // read only with a vocab.txt (its do_lower_case)
    return;
  }
  if (role == ModelFileRole::Ignored) return;
  if (role == ModelFileRole::Unknown) refuse_unknown_file(n);
  if (role == ModelFileRole::Weights) refuse(n, "is a weights file: stream it (begin_weights), not as text");
  if (bytes.size() > kMaxModelTextFileBytes)
    refuse(n, megabytes(bytes.size()) + " is over the " + megabytes(kMaxModelTextFileBytes) + " limit for a text file");
  switch (role) {
    case ModelFileRole::Config:
      if (config_) refuse(n, "given twice");
      if (model_ || reader_) refuse(n, "must come before the weights");
      config_ = parse_model_config(bytes, n);
      break;
    case ModelFileRole::Tokenizer:
    case ModelFileRole::Vocab:
    case ModelFileRole::Merges:
    case ModelFileRole::VocabTxt:
      if (tokenizer_files_.count(n)) refuse(n, "given twice");
      if (role == ModelFileRole::Tokenizer) json_tokenizer_ = std::make_shared<const TextTokenizer>(tokenizer_from_json(bytes, n));
      tokenizer_files_[n] = bytes;  // (the others are read at finish())
      break;
    case ModelFileRole::Index: {
      if (index_) refuse(n, "given twice");
      if (model_ || reader_) refuse(n, "must come before the shards");
      const nlohmann::json root = nlohmann::json::parse(bytes, nullptr, /*allow_exceptions=*/false);
      if (root.is_discarded() || !root.is_object()) refuse(n, "not a JSON object");
      const auto map = root.find("weight_map");
      if (map == root.end() || !map->is_object() || map->empty())
        refuse(n, "weight_map is missing (an object from each tensor's name to its shard file)");
      std::unordered_map<std::string, std::string> index;
      for (auto it = map->begin(); it != map->end(); ++it) {
        if (!it.value().is_string()) refuse(n, "weight_map " + quoted_name(it.key()) + " is not a file name");
        const std::string shard = it.value().get<std::string>();
        const bool control = std::any_of(shard.begin(), shard.end(),
                                         [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
        if (shard != base_name(shard) || !ends_with(shard, ".safetensors") || shard.size() > 200 || control)
          refuse(n, "weight_map " + quoted_name(it.key()) + " names " + quoted_name(shard) +
                     ", not a .safetensors file beside the index");
        if (std::find(shard_order_.begin(), shard_order_.end(), shard) == shard_order_.end()) {
          if (static_cast<int>(shard_order_.size()) == kMaxShards)
            refuse(n, "names more than " + std::to_string(kMaxShards) + " shard files");
          shard_order_.push_back(shard);
        }
        index[it.key()] = shard;
      }
      index_ = std::move(index);
      break;
    }
    default:
      break;
  }
}

void ModelAssembler::begin_weights(const std::string& file_name, std::uint64_t file_size) {
  const std::string n = base_name(file_name);
  const ModelFileRole role = model_file_role(n);
  if (role != ModelFileRole::Weights) {
    if (role == ModelFileRole::Unknown) refuse_unknown_file(n);
    refuse(n, "is not a weights file (model.safetensors or a shard)");
  }
  if (finished_) refuse(n, "the model is already assembled");
  if (!config_) refuse(n, "config.json must come before the weights");
  if (reader_) end_weights_file();
  if (std::find(shards_done_.begin(), shards_done_.end(), n) != shards_done_.end()) refuse(n, "given twice");
  if (index_) {
    if (std::find(shard_order_.begin(), shard_order_.end(), n) == shard_order_.end())
      refuse(n, "is not one of the shards model.safetensors.index.json names");
  } else if (n != "model.safetensors") {
    refuse(n, "a sharded model needs its model.safetensors.index.json first (else one model.safetensors)");
  } else {
    // The smallest file that can hold the config's tensors (all 2-byte): refuse before allocating,
    // so a hostile config cannot ask for gigabytes with a tiny file.
    // every number 16-bit; an encoder's masked-LM head not counted (a file may leave it out)
    TransformerConfig least_config = config_->config;
    least_config.has_lm_head = least_config.head_transform = least_config.head_bias = false;
    const std::uint64_t needed = transformer_weight_bytes(least_config, Dtype::F32) / 2;
    if (file_size != 0 && file_size < needed)
      refuse(n, "the file's " + std::to_string(file_size) + " bytes are too few for the model config.json describes (" +
                 megabytes(needed) + " as 16-bit numbers)");
  }
  // A 32-bit build (wasm) refuses what it could never address, before a byte is read.
  const std::uint64_t least = transformer_weight_bytes(config_->config, Dtype::BF16);
  if (sizeof(void*) == 4 && least > (std::uint64_t{3} << 30))
    refuse(n, "the model needs at least " + megabytes(least) + " of memory, more than this 32-bit build can address");
  weights_name_ = n;
  reader_ = std::make_unique<SafetensorsReader>(n, file_size, [this](const TensorInfo& t) { return destination(t); });
}

void ModelAssembler::allocate(Dtype dtype) {
  TransformerConfig c = config_->config;
  const auto table_name = [&](const std::string& name) { return family_alias(c.family, strip_family_prefix(c.family, name)); };
  // An encoder's file may come without its masked-LM head (BertModel's): then the model has none and
  // makes no predictions. Any part of the head in the files means the whole head must be there.
  if (c.head_transform) {
    bool any_head_part = false;
    const auto check = [&](const std::string& name) {
      any_head_part = any_head_part || (!family_ignores_tensor(c.family, name) && family_head_part(c.family, table_name(name)));
    };
    if (index_)
      for (const auto& entry : *index_) check(entry.first);
    for (const TensorInfo& t : reader_->tensors()) check(t.name);
    if (!any_head_part) c.has_lm_head = c.head_transform = c.head_bias = false;
  }
  // An own head: an untied model's, or one a tied model's files carry anyway (GPT2LMHeadModel saves
  // it; finish() keeps one copy when it equals the embedding).
  bool own_head = c.has_lm_head && !config_->tied_head;
  const auto is_head = [&](const std::string& name) { return c.has_lm_head && table_name(name) == head_tensor(c.family); };
  if (index_)
    for (const auto& entry : *index_) own_head = own_head || is_head(entry.first);
  for (const TensorInfo& t : reader_->tensors()) own_head = own_head || is_head(t.name);
  const std::uint64_t needed = transformer_weight_bytes(c, dtype) + (own_head ? static_cast<std::uint64_t>(c.vocab_size) * c.d_model * dtype_bytes(dtype) : 0);
  if (sizeof(void*) == 4 && needed > (std::uint64_t{3} << 30))
    refuse(weights_name_, "the model needs " + megabytes(needed) + " of memory, more than this 32-bit build can address");
  try {
    // the matrices' numbers unset: every one comes from the files (finish() zeroes an optional one that did not)
    model_ = std::make_unique<Transformer>(c, dtype, config_->layout, /*zero_matrices=*/false);
    if (own_head) model_->lm_head.allocate(dtype, c.vocab_size, c.d_model, true, /*zeros=*/false);
  } catch (const std::bad_alloc&) {
    refuse(weights_name_, "the model needs " + megabytes(needed) + " of memory and the allocation failed");
  } catch (const std::length_error&) {
    refuse(weights_name_, "the model needs " + megabytes(needed) + " of memory and the allocation failed");
  }
  for (TensorSlot& slot : family_tensors(*model_, own_head)) {
    if (slot.name == head_tensor(c.family)) slot.optional = config_->tied_head;
    const std::string name = slot.name;
    slots_[name] = Slot{std::move(slot), ""};
    slot_order_.push_back(name);
  }
}

TensorTarget ModelAssembler::destination(const TensorInfo& info) {
  const std::string& type = config_->config.family;
  if (index_) shard_tensors_.insert(info.name);
  if (family_ignores_tensor(type, info.name)) {
    ++skipped_tensors_;
    return {};
  }
  const std::string stripped = strip_family_prefix(type, info.name);
  const std::string name = family_alias(type, stripped);
  if (!family_head_part(type, name)) file_prefix_ = info.name.substr(0, info.name.size() - stripped.size());
  const std::string what = "tensor " + quoted_name(info.name);
  if (index_) {
    const auto it = index_->find(info.name);
    if (it == index_->end()) refuse(weights_name_, what + " is not in model.safetensors.index.json's weight_map");
    if (it->second != weights_name_)
      refuse(weights_name_, what + " belongs to " + quoted_name(it->second) + " by model.safetensors.index.json");
  }
  if (!model_) {
    // The model is held in the format of the first header's embedding (or first matrix): kept 16-bit
    // when the file is, so a BF16 checkpoint takes its own size in memory, not twice it.
    Dtype dtype = info.dtype;
    bool found = false;
    for (const TensorInfo& t : reader_->tensors()) {
      if (t.shape.size() != 2 || family_ignores_tensor(type, t.name)) continue;
      const bool embedding = strip_family_prefix(type, t.name) == embedding_tensor(type);
      if (!found || embedding) dtype = t.dtype, found = true;
      if (embedding) break;
    }
    allocate(dtype);
  }
  const auto it = slots_.find(name);
  if (it == slots_.end()) {
    std::string hint;
    unsigned layer = 0;
    const int L = config_->config.n_layer;
    if ((std::sscanf(name.c_str(), "h.%u.", &layer) == 1 || std::sscanf(name.c_str(), "layers.%u.", &layer) == 1) &&
        layer >= static_cast<unsigned>(L))
      hint = " (config.json has " + std::to_string(L) + " layers)";
    refuse(weights_name_, what + " is not part of a " + type + " model as config.json describes it" + hint);
  }
  Slot& slot = it->second;
  // a tied copy under its other name (an encoder's decoder bias beside the head's bias): one is read
  if (!slot.seen_as.empty() && (stripped != name || strip_family_prefix(type, slot.seen_as) != name)) return {};
  if (!slot.seen_as.empty())
    refuse(weights_name_, "tensor " + quoted_name(name) + " appears twice (as " + quoted_name(slot.seen_as) + " and " +
                           quoted_name(info.name) + ")");
  if (info.shape != slot.where.shape)
    refuse(weights_name_, what + " has shape " + shape_text(info.shape) + " but config.json needs " + shape_text(slot.where.shape));
  if (slot.where.dtype != Dtype::F32 && info.dtype != slot.where.dtype)
    refuse(weights_name_, what + " is " + dtype_name(info.dtype) + " but the model's other matrices are " +
                           dtype_name(slot.where.dtype) + " (one format for all matrices)");
  slot.seen_as = info.name;
  return {slot.where.data, slot.where.dtype};
}

void ModelAssembler::feed_weights(const std::uint8_t* data, std::size_t n) {
  if (!reader_) refuse(weights_name_.empty() ? "model.safetensors" : weights_name_, "begin_weights was not called");
  reader_->feed(data, n);
}

void ModelAssembler::end_weights_file() {
  reader_->finish();
  reader_.reset();
  shards_done_.push_back(weights_name_);
}

LoadedModel ModelAssembler::finish() {
  if (finished_) refuse(name_, "the model is already assembled");
  if (!config_) refuse("config.json", "missing (the model's shape)");
  if (!reader_ && shards_done_.empty())
    refuse(index_ ? shard_order_.front() : "model.safetensors", "missing (the model's weights)");
  if (reader_) end_weights_file();
  for (const std::string& shard : shard_order_)
    if (std::find(shards_done_.begin(), shards_done_.end(), shard) == shards_done_.end())
      refuse(shard, "missing: model.safetensors.index.json names it");
  if (!model_) refuse(shards_done_.back(), "holds no tensor of the model");
  if (index_)
    for (const auto& [tensor, shard] : *index_)
      if (!shard_tensors_.count(tensor))
        refuse(shard, "does not hold tensor " + quoted_name(tensor) + ", which model.safetensors.index.json puts there");
  std::vector<std::string> missing;
  for (const std::string& name : slot_order_)
    if (slots_[name].seen_as.empty() && !slots_[name].where.optional)
      missing.push_back(family_head_part(model_->config.family, name) ? name : file_prefix_ + name);  // as the files name them
  for (const std::string& name : slot_order_) {  // an optional matrix the files left out: zeros, as allocated unset
    const TensorSlot& where = slots_[name].where;
    if (slots_[name].seen_as.empty() && where.optional && where.shape.size() == 2)
      std::memset(where.data, 0, static_cast<std::size_t>(where.shape[0] * where.shape[1]) * dtype_bytes(where.dtype));
  }
  if (!missing.empty()) {
    std::string list;
    for (std::size_t i = 0; i < missing.size() && i < 4; ++i) list += (i ? ", " : "") + missing[i];
    if (missing.size() > 4) list += ", ... (" + std::to_string(missing.size()) + " in all)";
    refuse(index_ ? "model.safetensors.index.json" : weights_name_,
        std::string(missing.size() == 1 ? "missing tensor " : "missing tensors ") + list);
  }
  // An own head equal to the embedding is a tied head: keep one copy.
  if (!model_->lm_head.empty() && model_->lm_head == model_->embed) model_->lm_head = Weights{};

  const std::shared_ptr<const TextTokenizer> tokenizer = json_tokenizer_ ? json_tokenizer_ : tokenizer_from_files(tokenizer_files_);
  const std::string tokenizer_name = tokenizer_files_.count("tokenizer.json") ? "tokenizer.json"
                                     : tokenizer_files_.count("vocab.json")   ? "vocab.json"
                                                                              : "vocab.txt";
  if (tokenizer->vocab_size() > config_->config.vocab_size)
    refuse(tokenizer_name, "the vocabulary has " + std::to_string(tokenizer->vocab_size()) +
                            " tokens, more than config.json's vocab_size " + std::to_string(config_->config.vocab_size));
  finished_ = true;
  LoadedModel out;
  out.name = name_;
  out.model = std::shared_ptr<const Transformer>(std::move(model_));
  out.tokenizer = tokenizer;
  out.tokenizer_files = std::move(tokenizer_files_);
  if (!config_->wrapper.empty() && skipped_tensors_ > 0)
    out.skipped = std::to_string(skipped_tensors_) + " tensors of the " + config_->wrapper +
                  " image model (its vision tower and projector) were skipped: only its text model is shown";
  slots_.clear();
  return out;
}

// [SECTION] folders on disk --------------------------------------------------------------------

namespace {

std::string read_text_file(const fs::path& path) {
  const std::string n = path.filename().string();
  std::error_code ec;
  const std::uintmax_t size = fs::file_size(path, ec);
  if (ec) refuse(n, "cannot be read (" + ec.message() + ")");
  if (size > kMaxModelTextFileBytes)
    refuse(n, megabytes(size) + " is over the " + megabytes(kMaxModelTextFileBytes) + " limit for a text file");
  std::ifstream in(path, std::ios::binary);
  std::string text(static_cast<std::size_t>(size), '\0');
  if (!in || !in.read(text.data(), static_cast<std::streamsize>(size))) refuse(n, "cannot be read");
  return text;
}

}  // namespace

LoadedModel load_model_dir(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) refuse(dir, "not a folder");
  fs::path folder = fs::path(dir).lexically_normal();
  if (folder.filename().empty()) folder = folder.parent_path();
  std::string name = folder.filename().string();
  if (name.empty() || name == "." || name == "..") name = fs::weakly_canonical(dir, ec).filename().string();
  ModelAssembler assembler(name.empty() ? "model" : name);

  const fs::path root(dir);
  const auto has = [&](const char* f) { return fs::is_regular_file(root / f, ec); };
  if (!has("config.json")) refuse("config.json", "missing from " + dir);
  assembler.add_text_file("config.json", read_text_file(root / "config.json"));
  if (has("tokenizer.json")) {
    assembler.add_text_file("tokenizer.json", read_text_file(root / "tokenizer.json"));
  } else {
    if (has("vocab.json")) assembler.add_text_file("vocab.json", read_text_file(root / "vocab.json"));
    if (has("merges.txt")) assembler.add_text_file("merges.txt", read_text_file(root / "merges.txt"));
    if (!has("vocab.json") && has("vocab.txt")) {
      assembler.add_text_file("vocab.txt", read_text_file(root / "vocab.txt"));
      if (has("tokenizer_config.json"))
        assembler.add_text_file("tokenizer_config.json", read_text_file(root / "tokenizer_config.json"));
    }
  }
  const auto stream = [&](const std::string& file) {
    const fs::path weights = root / file;
    if (!fs::is_regular_file(weights, ec)) refuse(file, "missing from " + dir);
    const std::uintmax_t size = fs::file_size(weights, ec);
    if (ec) refuse(file, "cannot be read (" + ec.message() + ")");
    std::ifstream in(weights, std::ios::binary);
    if (!in) refuse(file, "cannot be opened");
    assembler.begin_weights(file, size);
    std::vector<char> chunk(1u << 20);
    while (in) {
      in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
      const std::streamsize got = in.gcount();
      if (got > 0) assembler.feed_weights(reinterpret_cast<const std::uint8_t*>(chunk.data()), static_cast<std::size_t>(got));
    }
    if (in.bad()) refuse(file, "a read failed");
  };
  if (has("model.safetensors.index.json")) {
    assembler.add_text_file("model.safetensors.index.json", read_text_file(root / "model.safetensors.index.json"));
    for (const std::string& shard : assembler.shards()) stream(shard);
  } else if (has("model.safetensors")) {
    stream("model.safetensors");
  } else {
    const bool bin = has("pytorch_model.bin");
    refuse("model.safetensors", "missing from " + dir +
                                 (bin ? " (it has pytorch_model.bin: only safetensors weights are read)" : ""));
  }
  return assembler.finish();
}

// [SECTION] the writer -------------------------------------------------------------------------

std::vector<NamedTensor> model_named_tensors(const Transformer& m, const ModelSaveOptions& options) {
  for (const Weights* w : {&m.embed, &m.lm_head})
    if (!w->empty() && w->dtype != Dtype::F32) throw std::invalid_argument("model.safetensors: writing needs float weights");
  for (const TransformerBlock& b : m.blocks)
    if (b.qkv.dtype != Dtype::F32) throw std::invalid_argument("model.safetensors: writing needs float weights");
  // The table points into the model to read it: the writer does not change what it points at.
  Transformer& model = const_cast<Transformer&>(m);
  const bool own_head = !m.lm_head.empty();
  const std::string p = options.transformer_prefix ? family_prefixes(m.config.family).front() : "";
  std::vector<NamedTensor> t;
  for (const TensorSlot& slot : family_tensors(model, own_head || options.lm_head)) {
    const bool head = family_head_part(m.config.family, slot.name);  // never prefixed: it sits beside the base model
    t.push_back({head ? slot.name : p + slot.name, slot.shape, static_cast<const float*>(slot.data)});
  }
  return t;
}

std::string model_safetensors_bytes(const Transformer& model, const ModelSaveOptions& options) {
  return safetensors_bytes(model_named_tensors(model, options), options.dtype, {{"format", "pt"}});
}

void save_model_dir(const Transformer& model, const std::map<std::string, std::string>& tokenizer_files,
                    const std::string& dir, const ModelSaveOptions& options) {
  for (const auto& [name, bytes] : tokenizer_files) {
    const ModelFileRole role = model_file_role(name);
    if (name != base_name(name) ||
        (role != ModelFileRole::Tokenizer && role != ModelFileRole::Vocab && role != ModelFileRole::Merges))
      throw std::invalid_argument("save_model_dir: " + quoted_name(name) + " is not a tokenizer file name");
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error(dir + ": cannot create the folder (" + ec.message() + ")");
  const auto write_text = [&](const std::string& name, const std::string& bytes) {
    const fs::path path = fs::path(dir) / name;
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) throw std::runtime_error(path.string() + ": cannot be written");
  };
  write_text("config.json", model_config_json(model.config));
  for (const auto& [name, bytes] : tokenizer_files) write_text(name, bytes);
  write_safetensors((fs::path(dir) / "model.safetensors").string(), model_named_tensors(model, options), options.dtype,
                    {{"format", "pt"}});
}

}  // namespace attn
