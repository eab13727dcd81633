// The model folder loader (config.json, model.safetensors, tokenizer files → Gpt2Model and
// TextTokenizer) and writer. The only place that knows Hugging Face's file and tensor names.
#include "model_files.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <new>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <utility>

#include "tokenizer_files.h"

namespace attn {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void bad(const std::string& file, const std::string& problem) {
  throw std::invalid_argument(file + ": " + problem);
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string megabytes(std::uint64_t bytes) { return std::to_string((bytes + (1u << 20) - 1) >> 20) + " MB"; }

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::string base_name(const std::string& file_name) {
  const std::size_t slash = file_name.find_last_of("/\\");
  return slash == std::string::npos ? file_name : file_name.substr(slash + 1);
}

// A value for a message: scalars as written (cut), arrays and objects by their kind only (dumping
// a hostile, deeply nested value would recurse without bound).
std::string value_text(const nlohmann::json& v) {
  return v.is_primitive() ? v.dump().substr(0, 40) : std::string(v.type_name());
}

// A config value as an int in [lo, hi]; `present` false when the key is absent or null.
int config_int(const nlohmann::json& root, const char* key, int lo, int hi, const std::string& file, bool& present) {
  const auto it = root.find(key);
  present = it != root.end() && !it->is_null();
  if (!present) return 0;
  if (!it->is_number_integer())
    bad(file, std::string(key) + " must be a whole number (got " + value_text(*it) + ")");
  const bool negative = !it->is_number_unsigned() && it->get<std::int64_t>() < 0;
  const std::uint64_t magnitude = negative ? 0 : it->get<std::uint64_t>();
  if (negative || magnitude < static_cast<std::uint64_t>(lo) || magnitude > static_cast<std::uint64_t>(hi))
    bad(file, std::string(key) + " is " + it->dump() + ", outside " + std::to_string(lo) + " to " + std::to_string(hi));
  return static_cast<int>(magnitude);
}

int required_int(const nlohmann::json& root, const char* key, int lo, int hi, const std::string& file) {
  bool present = false;
  const int v = config_int(root, key, lo, hi, file, present);
  if (!present) bad(file, std::string(key) + " is missing");
  return v;
}

bool flag(const nlohmann::json& root, const char* key, bool fallback) {
  const auto it = root.find(key);
  return it != root.end() && it->is_boolean() ? it->get<bool>() : fallback;
}

}  // namespace

// [SECTION] config.json ------------------------------------------------------------------------

Gpt2Config parse_gpt2_config(const std::string& text, const std::string& file_name) {
  if (text.size() > kMaxModelTextFileBytes) bad(file_name, megabytes(text.size()) + " is too large for a config");
  const nlohmann::json root = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) bad(file_name, "not valid JSON");
  if (!root.is_object()) bad(file_name, "not a JSON object");
  const auto type = root.find("model_type");
  if (type == root.end() || !type->is_string())
    bad(file_name, "no model_type (GPT-2 family models have model_type \"gpt2\")");
  if (type->get<std::string>() != "gpt2")
    bad(file_name, "model_type " + quoted_name(type->get<std::string>()) +
                       " is not supported: only GPT-2 family models (model_type \"gpt2\")");

  Gpt2Config c;
  c.n_layer = required_int(root, "n_layer", 1, kMaxModelLayers, file_name);
  c.n_head = required_int(root, "n_head", 1, kMaxModelHeads, file_name);
  c.n_embd = required_int(root, "n_embd", 1, kMaxModelWidth, file_name);
  bool present = false;
  c.n_positions = config_int(root, "n_positions", 1, kMaxModelPositions, file_name, present);
  if (!present) c.n_positions = config_int(root, "n_ctx", 1, kMaxModelPositions, file_name, present);
  if (!present) bad(file_name, "n_positions (or n_ctx) is missing");
  c.vocab_size = required_int(root, "vocab_size", 1, kMaxVocab, file_name);
  if (c.n_embd % c.n_head != 0)
    bad(file_name, "n_embd " + std::to_string(c.n_embd) + " is not divisible by n_head " + std::to_string(c.n_head) +
                       " (every head needs the same width)");

  const auto eps = root.find("layer_norm_epsilon");
  if (eps != root.end() && !eps->is_null()) {
    const double e = eps->is_number() ? eps->get<double>() : -1.0;
    if (!(e > 0 && e <= 1)) bad(file_name, "layer_norm_epsilon must be a number in (0, 1]");
    c.layer_norm_epsilon = static_cast<float>(e);
  }
  const auto act = root.find("activation_function");
  if (act != root.end() && !act->is_null()) {
    const std::string name = act->is_string() ? act->get<std::string>() : value_text(*act);
    if (name != "gelu_new" && name != "gelu_pytorch_tanh")
      bad(file_name, "activation_function " + quoted_name(name) +
                         " is not supported: GPT-2 uses the tanh GELU (gelu_new or gelu_pytorch_tanh)");
  }
  const int inner = config_int(root, "n_inner", 1, 4 * kMaxModelWidth, file_name, present);
  if (present && inner != 4 * c.n_embd)
    bad(file_name, "n_inner " + std::to_string(inner) + " is not supported: the MLP here is 4 × n_embd = " +
                       std::to_string(4 * c.n_embd) + " wide");
  if (flag(root, "scale_attn_by_inverse_layer_idx", false))
    bad(file_name, "scale_attn_by_inverse_layer_idx is not supported (scores are scaled by 1/sqrt(head width) only)");
  const auto scale = root.find("scale_attn_weights");
  if (scale != root.end() && !scale->is_null() && !scale->is_boolean())
    bad(file_name, "scale_attn_weights must be true or false, got " + value_text(*scale));
  c.scale_attn_weights = flag(root, "scale_attn_weights", true);
  if (flag(root, "add_cross_attention", false)) bad(file_name, "add_cross_attention is not supported (decoder only)");
  validate_config(c, file_name);
  return c;
}

std::uint64_t gpt2_parameter_bytes(const Gpt2Config& c) {
  const std::uint64_t C = static_cast<std::uint64_t>(c.n_embd);
  const std::uint64_t per_block = 2 * C + (3 * C * C + 3 * C) + (C * C + C) + 2 * C + (4 * C * C + 4 * C) + (4 * C * C + C);
  const std::uint64_t n = static_cast<std::uint64_t>(c.vocab_size) * C + static_cast<std::uint64_t>(c.n_positions) * C +
                          static_cast<std::uint64_t>(c.n_layer) * per_block + 2 * C;
  return 4 * n;
}

// [SECTION] file roles -------------------------------------------------------------------------

ModelFileRole model_file_role(const std::string& file_name) {
  const std::string n = base_name(file_name);
  if (n == "config.json") return ModelFileRole::Config;
  if (n == "tokenizer.json") return ModelFileRole::Tokenizer;
  if (n == "vocab.json") return ModelFileRole::Vocab;
  if (n == "merges.txt") return ModelFileRole::Merges;
  if (n == "model.safetensors") return ModelFileRole::Weights;
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
    if (ends_with(n, ext)) bad(n, "only model.safetensors weights are read, not this format");
  if (ends_with(n, ".safetensors") || ends_with(n, ".safetensors.index.json"))
    bad(n, "only one model.safetensors is read (sharded or renamed weights are not)");
  bad(n, "not a file of a GPT-2 model folder (config.json, model.safetensors, tokenizer.json or vocab.json + merges.txt)");
}

}  // namespace

// [SECTION] the assembler ----------------------------------------------------------------------

ModelAssembler::ModelAssembler(std::string name) : name_(std::move(name)) {}
ModelAssembler::~ModelAssembler() = default;

void ModelAssembler::add_text_file(const std::string& file_name, const std::string& bytes) {
  const std::string n = base_name(file_name);
  const ModelFileRole role = model_file_role(n);
  if (role == ModelFileRole::Ignored) return;
  if (role == ModelFileRole::Unknown) refuse_unknown_file(n);
  if (role == ModelFileRole::Weights) bad(n, "the weights are streamed (begin_weights), not added as text");
  if (finished_) bad(n, "the model is already assembled");
  if (bytes.size() > kMaxModelTextFileBytes)
    bad(n, megabytes(bytes.size()) + " is over the " + megabytes(kMaxModelTextFileBytes) + " limit for a text file");
  switch (role) {
    case ModelFileRole::Config:
      if (config_) bad(n, "given twice");
      config_ = parse_gpt2_config(bytes, n);
      break;
    case ModelFileRole::Tokenizer:
      if (json_tokenizer_) bad(n, "given twice");
      json_tokenizer_ = std::make_shared<const TextTokenizer>(tokenizer_from_json(bytes, n));
      break;
    case ModelFileRole::Vocab:
      if (vocab_text_) bad(n, "given twice");
      vocab_text_ = bytes;
      break;
    case ModelFileRole::Merges:
      if (merges_text_) bad(n, "given twice");
      merges_text_ = bytes;
      break;
    default:
      break;
  }
}

void ModelAssembler::begin_weights(const std::string& file_name, std::uint64_t file_size) {
  const std::string n = base_name(file_name);
  const ModelFileRole role = model_file_role(n);
  if (role != ModelFileRole::Weights) {
    if (role == ModelFileRole::Unknown) refuse_unknown_file(n);
    bad(n, "is not a weights file (model.safetensors)");
  }
  if (reader_ || finished_) bad(n, "given twice");
  if (!config_) bad(n, "config.json must come before the weights");
  const Gpt2Config& c = *config_;
  const std::uint64_t needed = gpt2_parameter_bytes(c);
  // The smallest file that can hold the config's tensors (all 2-byte): refuse before allocating,
  // so a hostile config cannot ask for gigabytes with a tiny file.
  if (file_size != 0 && file_size < needed / 2)
    bad(n, "the file's " + std::to_string(file_size) + " bytes are too few for the model config.json describes (" +
               megabytes(needed) + " as F32, at least half of that as F16)");
  if (sizeof(void*) == 4 && needed > (std::uint64_t{3} << 30))
    bad(n, "the model needs " + megabytes(needed) + " of memory, more than this 32-bit build can address");
  try {
    model_ = std::make_unique<Gpt2Model>(c);
  } catch (const std::bad_alloc&) {
    bad(n, "the model needs " + megabytes(needed) + " of memory and the allocation failed");
  } catch (const std::length_error&) {
    bad(n, "the model needs " + megabytes(needed) + " of memory and the allocation failed");
  }
  weights_name_ = n;

  const std::int64_t C = c.n_embd;
  auto add = [this](const std::string& name, float* data, std::vector<std::int64_t> shape) {
    slots_[name] = Slot{data, std::move(shape), ""};
    slot_order_.push_back(name);
  };
  add("wte.weight", model_->wte.data(), {c.vocab_size, C});
  add("wpe.weight", model_->wpe.data(), {c.n_positions, C});
  for (int i = 0; i < c.n_layer; ++i) {
    Gpt2Block& b = model_->blocks[static_cast<std::size_t>(i)];
    const std::string p = "h." + std::to_string(i) + ".";
    add(p + "ln_1.weight", b.ln_1_g.data(), {C});
    add(p + "ln_1.bias", b.ln_1_b.data(), {C});
    add(p + "attn.c_attn.weight", b.c_attn_w.data(), {C, 3 * C});
    add(p + "attn.c_attn.bias", b.c_attn_b.data(), {3 * C});
    add(p + "attn.c_proj.weight", b.attn_c_proj_w.data(), {C, C});
    add(p + "attn.c_proj.bias", b.attn_c_proj_b.data(), {C});
    add(p + "ln_2.weight", b.ln_2_g.data(), {C});
    add(p + "ln_2.bias", b.ln_2_b.data(), {C});
    add(p + "mlp.c_fc.weight", b.c_fc_w.data(), {C, 4 * C});
    add(p + "mlp.c_fc.bias", b.c_fc_b.data(), {4 * C});
    add(p + "mlp.c_proj.weight", b.mlp_c_proj_w.data(), {4 * C, C});
    add(p + "mlp.c_proj.bias", b.mlp_c_proj_b.data(), {C});
  }
  add("ln_f.weight", model_->ln_f_g.data(), {C});
  add("ln_f.bias", model_->ln_f_b.data(), {C});
  reader_ = std::make_unique<SafetensorsReader>(n, file_size, [this](const TensorInfo& t) { return destination(t); });
}

float* ModelAssembler::destination(const TensorInfo& info) {
  static const std::string prefix = "transformer.";
  const std::string name = info.name.compare(0, prefix.size(), prefix) == 0 ? info.name.substr(prefix.size()) : info.name;
  // The causal mask buffers old checkpoints carry: the forward builds its own mask.
  if (ends_with(name, ".attn.bias") || ends_with(name, ".attn.masked_bias")) return nullptr;
  const Gpt2Config& c = *config_;
  const std::string what = "tensor " + quoted_name(info.name);
  if (name == "lm_head.weight") {
    const std::vector<std::int64_t> expected = {c.vocab_size, c.n_embd};
    if (info.shape != expected)
      bad(weights_name_, what + " has shape " + shape_text(info.shape) + " but config.json needs " + shape_text(expected));
    if (model_->lm_head.size() != 0) bad(weights_name_, what + " appears twice");
    try {
      model_->lm_head.resize(c.vocab_size, c.n_embd);
    } catch (const std::bad_alloc&) {
      bad(weights_name_, "the untied lm_head.weight needs " +
                             megabytes(4ull * static_cast<std::uint64_t>(c.vocab_size) * static_cast<std::uint64_t>(c.n_embd)) +
                             " more memory and the allocation failed");
    }
    return model_->lm_head.data();
  }
  const auto it = slots_.find(name);
  if (it == slots_.end()) {
    std::string hint;
    unsigned layer = 0;
    if (std::sscanf(name.c_str(), "h.%u.", &layer) == 1 && layer >= static_cast<unsigned>(c.n_layer))
      hint = " (config.json has " + std::to_string(c.n_layer) + " layers)";
    bad(weights_name_, what + " is not part of a GPT-2 model" + hint);
  }
  Slot& slot = it->second;
  if (!slot.seen_as.empty())
    bad(weights_name_, "tensor " + quoted_name(name) + " appears twice (as " + quoted_name(slot.seen_as) + " and " +
                           quoted_name(info.name) + ")");
  if (info.shape != slot.shape)
    bad(weights_name_, what + " has shape " + shape_text(info.shape) + " but config.json needs " + shape_text(slot.shape));
  slot.seen_as = info.name;
  return slot.data;
}

void ModelAssembler::feed_weights(const std::uint8_t* data, std::size_t n) {
  if (!reader_) bad(weights_name_.empty() ? "model.safetensors" : weights_name_, "begin_weights was not called");
  reader_->feed(data, n);
}

LoadedModel ModelAssembler::finish() {
  if (finished_) bad(name_, "the model is already assembled");
  if (!config_) bad("config.json", "missing (the model's shape)");
  if (!reader_) bad("model.safetensors", "missing (the model's weights)");
  reader_->finish();
  std::vector<std::string> missing;
  for (const std::string& name : slot_order_)
    if (slots_[name].seen_as.empty()) missing.push_back(name);
  if (!missing.empty()) {
    std::string list;
    for (std::size_t i = 0; i < missing.size() && i < 4; ++i) list += (i ? ", " : "") + missing[i];
    if (missing.size() > 4) list += ", ... (" + std::to_string(missing.size()) + " in all)";
    bad(weights_name_, std::string(missing.size() == 1 ? "missing tensor " : "missing tensors ") + list);
  }
  // A head equal to the embedding is the tied head GPT-2 has: keep one copy.
  if (model_->lm_head.size() != 0 && model_->lm_head == model_->wte) model_->lm_head.resize(0, 0);

  std::shared_ptr<const TextTokenizer> tokenizer = json_tokenizer_;
  std::string tokenizer_name = "tokenizer.json";
  if (!tokenizer) {
    if (vocab_text_ && merges_text_) {
      tokenizer = std::make_shared<const TextTokenizer>(tokenizer_from_vocab_merges(*vocab_text_, *merges_text_));
      tokenizer_name = "vocab.json";
    } else if (vocab_text_) {
      bad("merges.txt", "missing (vocab.json needs it, or give tokenizer.json)");
    } else if (merges_text_) {
      bad("vocab.json", "missing (merges.txt needs it, or give tokenizer.json)");
    } else {
      bad("tokenizer.json", "missing (or vocab.json + merges.txt): the model needs its tokenizer");
    }
  }
  if (tokenizer->vocab_size() > config_->vocab_size)
    bad(tokenizer_name, "the vocabulary has " + std::to_string(tokenizer->vocab_size()) +
                            " tokens, more than config.json's vocab_size " + std::to_string(config_->vocab_size));
  finished_ = true;
  LoadedModel out;
  out.name = name_;
  out.model = std::shared_ptr<const Gpt2Model>(std::move(model_));
  out.tokenizer = tokenizer;
  reader_.reset();
  slots_.clear();
  return out;
}

// [SECTION] folders on disk --------------------------------------------------------------------

namespace {

std::string read_text_file(const fs::path& path) {
  const std::string n = path.filename().string();
  std::error_code ec;
  const std::uintmax_t size = fs::file_size(path, ec);
  if (ec) bad(n, "cannot be read (" + ec.message() + ")");
  if (size > kMaxModelTextFileBytes)
    bad(n, megabytes(size) + " is over the " + megabytes(kMaxModelTextFileBytes) + " limit for a text file");
  std::ifstream in(path, std::ios::binary);
  std::string text(static_cast<std::size_t>(size), '\0');
  if (!in || !in.read(text.data(), static_cast<std::streamsize>(size))) bad(n, "cannot be read");
  return text;
}

}  // namespace

LoadedModel load_model_dir(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) bad(dir, "not a folder");
  fs::path folder = fs::path(dir).lexically_normal();
  if (folder.filename().empty()) folder = folder.parent_path();
  std::string name = folder.filename().string();
  if (name.empty() || name == "." || name == "..") name = fs::weakly_canonical(dir, ec).filename().string();
  ModelAssembler assembler(name.empty() ? "model" : name);

  const fs::path root(dir);
  const auto has = [&](const char* f) { return fs::is_regular_file(root / f, ec); };
  if (!has("config.json")) bad("config.json", "missing from " + dir);
  assembler.add_text_file("config.json", read_text_file(root / "config.json"));
  if (has("tokenizer.json")) {
    assembler.add_text_file("tokenizer.json", read_text_file(root / "tokenizer.json"));
  } else {
    if (has("vocab.json")) assembler.add_text_file("vocab.json", read_text_file(root / "vocab.json"));
    if (has("merges.txt")) assembler.add_text_file("merges.txt", read_text_file(root / "merges.txt"));
  }
  if (!has("model.safetensors")) {
    const bool bin = has("pytorch_model.bin");
    bad("model.safetensors", "missing from " + dir +
                                 (bin ? " (it has pytorch_model.bin: only safetensors weights are read)" : ""));
  }
  const fs::path weights = root / "model.safetensors";
  const std::uintmax_t size = fs::file_size(weights, ec);
  if (ec) bad("model.safetensors", "cannot be read (" + ec.message() + ")");
  std::ifstream in(weights, std::ios::binary);
  if (!in) bad("model.safetensors", "cannot be opened");
  assembler.begin_weights("model.safetensors", size);
  std::vector<char> chunk(1u << 20);
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    const std::streamsize got = in.gcount();
    if (got > 0) assembler.feed_weights(reinterpret_cast<const std::uint8_t*>(chunk.data()), static_cast<std::size_t>(got));
  }
  if (in.bad()) bad("model.safetensors", "a read failed");
  return assembler.finish();
}

// [SECTION] the writer -------------------------------------------------------------------------

std::vector<NamedTensor> gpt2_named_tensors(const Gpt2Model& m, const ModelSaveOptions& options) {
  const std::string p = options.transformer_prefix ? "transformer." : "";
  const std::int64_t C = m.config.n_embd;
  std::vector<NamedTensor> t;
  t.push_back({p + "wte.weight", {m.wte.rows(), m.wte.cols()}, m.wte.data()});
  t.push_back({p + "wpe.weight", {m.wpe.rows(), m.wpe.cols()}, m.wpe.data()});
  for (std::size_t i = 0; i < m.blocks.size(); ++i) {
    const Gpt2Block& b = m.blocks[i];
    const std::string h = p + "h." + std::to_string(i) + ".";
    t.push_back({h + "ln_1.weight", {C}, b.ln_1_g.data()});
    t.push_back({h + "ln_1.bias", {C}, b.ln_1_b.data()});
    t.push_back({h + "attn.c_attn.weight", {C, 3 * C}, b.c_attn_w.data()});
    t.push_back({h + "attn.c_attn.bias", {3 * C}, b.c_attn_b.data()});
    t.push_back({h + "attn.c_proj.weight", {C, C}, b.attn_c_proj_w.data()});
    t.push_back({h + "attn.c_proj.bias", {C}, b.attn_c_proj_b.data()});
    t.push_back({h + "ln_2.weight", {C}, b.ln_2_g.data()});
    t.push_back({h + "ln_2.bias", {C}, b.ln_2_b.data()});
    t.push_back({h + "mlp.c_fc.weight", {C, 4 * C}, b.c_fc_w.data()});
    t.push_back({h + "mlp.c_fc.bias", {4 * C}, b.c_fc_b.data()});
    t.push_back({h + "mlp.c_proj.weight", {4 * C, C}, b.mlp_c_proj_w.data()});
    t.push_back({h + "mlp.c_proj.bias", {C}, b.mlp_c_proj_b.data()});
  }
  t.push_back({p + "ln_f.weight", {C}, m.ln_f_g.data()});
  t.push_back({p + "ln_f.bias", {C}, m.ln_f_b.data()});
  // An untied head is always written (it is the model); a tied one only when asked, as wte's values.
  if (m.lm_head.size() != 0) t.push_back({"lm_head.weight", {m.lm_head.rows(), m.lm_head.cols()}, m.lm_head.data()});
  else if (options.lm_head) t.push_back({"lm_head.weight", {m.wte.rows(), m.wte.cols()}, m.wte.data()});
  return t;
}

std::string gpt2_config_json(const Gpt2Config& c) {
  // The epsilon as its shortest float text (1e-05, not 9.999999747378752e-06).
  char eps[32];
  for (int digits = 1; digits <= 9; ++digits) {
    std::snprintf(eps, sizeof eps, "%.*g", digits, static_cast<double>(c.layer_norm_epsilon));
    if (std::strtof(eps, nullptr) == c.layer_norm_epsilon) break;
  }
  nlohmann::ordered_json j;
  j["architectures"] = {"GPT2LMHeadModel"};
  j["model_type"] = "gpt2";
  j["activation_function"] = "gelu_new";
  j["n_layer"] = c.n_layer;
  j["n_head"] = c.n_head;
  j["n_embd"] = c.n_embd;
  j["n_positions"] = c.n_positions;
  j["n_ctx"] = c.n_positions;
  j["vocab_size"] = c.vocab_size;
  j["layer_norm_epsilon"] = std::strtod(eps, nullptr);
  if (!c.scale_attn_weights) j["scale_attn_weights"] = false;  // Hugging Face's default is true
  return j.dump(2) + "\n";
}

void write_gpt2_safetensors(std::ostream& out, const Gpt2Model& model, const ModelSaveOptions& options) {
  write_safetensors(out, gpt2_named_tensors(model, options), options.dtype, {{"format", "pt"}});
}

void save_model_dir(const Gpt2Model& model, const std::map<std::string, std::string>& tokenizer_files,
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
  write_text("config.json", gpt2_config_json(model.config));
  for (const auto& [name, bytes] : tokenizer_files) write_text(name, bytes);
  write_safetensors((fs::path(dir) / "model.safetensors").string(), gpt2_named_tensors(model, options), options.dtype,
                    {{"format", "pt"}});
}

}  // namespace attn
