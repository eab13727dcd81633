// The model folder loader and writer: config.json's rules, round trips of whole folders in every
// dtype (with and without the "transformer." prefix and lm_head.weight), streaming in any chunks,
// and hostile folders refused by name, GPT-2's files. Not the forward's tests (test_transformer.cpp); the
// other families' configs and shards: test_model_families.cpp.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "../../src/api/model_files.h"

namespace {

namespace fs = std::filesystem;

attn::TransformerConfig tiny_config(int vocab = 300) { return attn::gpt2_config(2, 2, 8, 16, vocab); }

// GPT-2's byte-to-unicode alphabet as UTF-8: the 256 one-byte tokens of a byte-level vocabulary.
std::vector<std::string> byte_symbols() {
  std::vector<int> printable;
  for (int b = 0; b < 256; ++b)
    if ((b >= '!' && b <= '~') || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff)) printable.push_back(b);
  std::vector<std::string> symbols(256);
  int extra = 0;
  for (int b = 0; b < 256; ++b) {
    const bool kept = std::find(printable.begin(), printable.end(), b) != printable.end();
    const int cp = kept ? b : 256 + extra++;
    std::string s;
    if (cp < 0x80) s += static_cast<char>(cp);
    else s += static_cast<char>(0xc0 | (cp >> 6)), s += static_cast<char>(0x80 | (cp & 0x3f));
    symbols[static_cast<std::size_t>(b)] = s;
  }
  return symbols;
}

// A 257-token byte-level BPE: the 256 bytes and one merge, "Ġ" + "t" (" t").
std::string vocab_json() {
  nlohmann::json v = nlohmann::json::object();
  const std::vector<std::string> symbols = byte_symbols();
  for (std::size_t i = 0; i < symbols.size(); ++i) v[symbols[i]] = i;
  v["\xc4\xa0t"] = 256;
  return v.dump();
}
const std::string kMerges = "#version: 0.2\n\xc4\xa0 t\n";
std::string tokenizer_json() {
  nlohmann::json t = {{"version", "1.0"}, {"added_tokens", nlohmann::json::array()}, {"normalizer", nullptr},
                      {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}}},
                      {"post_processor", nullptr}, {"decoder", {{"type", "ByteLevel"}}},
                      {"model", {{"type", "BPE"}, {"dropout", nullptr}, {"unk_token", nullptr},
                                 {"continuing_subword_prefix", ""}, {"end_of_word_suffix", ""}, {"fuse_unk", false},
                                 {"vocab", nlohmann::json::parse(vocab_json())}, {"merges", {"\xc4\xa0 t"}}}}};
  return t.dump();
}

std::string weights_bytes(const std::vector<attn::NamedTensor>& tensors, attn::Dtype dtype = attn::Dtype::F32) {
  return attn::safetensors_bytes(tensors, dtype);
}

// One model through the assembler: config, vocab + merges, then the weights in `chunk`-byte pieces.
attn::LoadedModel assemble(const std::string& config, const std::string& weights, std::size_t chunk = 4096,
                           bool known_size = true) {
  attn::ModelAssembler a("tiny");
  a.add_text_file("config.json", config);
  a.add_text_file("vocab.json", vocab_json());
  a.add_text_file("merges.txt", kMerges);
  a.begin_weights("model.safetensors", known_size ? weights.size() : 0);
  const auto* p = reinterpret_cast<const std::uint8_t*>(weights.data());
  for (std::size_t i = 0; i < weights.size(); i += chunk) a.feed_weights(p + i, std::min(chunk, weights.size() - i));
  return a.finish();
}

std::string model_refusal(const std::string& config, const std::string& weights) {
  try {
    assemble(config, weights, 7);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

std::string config_refusal(const std::string& text) {
  try {
    attn::parse_model_config(text);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

float round_trip(float v, attn::Dtype d) {
  if (d == attn::Dtype::F16) return attn::half_to_float(attn::float_to_half(v));
  if (d == attn::Dtype::BF16) return attn::bf16_to_float(attn::float_to_bf16(v));
  return v;
}

// Every tensor's values (the family's table, widened to float when held 16-bit).
std::vector<std::pair<std::string, std::vector<float>>> tensor_values(const attn::Transformer& m) {
  std::vector<std::pair<std::string, std::vector<float>>> out;
  for (const attn::TensorSlot& s : attn::family_tensors(const_cast<attn::Transformer&>(m), !m.lm_head.empty())) {
    std::int64_t n = 1;
    for (std::int64_t d : s.shape) n *= d;
    std::vector<float> v(static_cast<std::size_t>(n));
    for (std::int64_t k = 0; k < n; ++k)
      v[static_cast<std::size_t>(k)] = s.dtype == attn::Dtype::F32 ? static_cast<const float*>(s.data)[k]
                                                                    : attn::widen16(s.dtype, static_cast<const std::uint16_t*>(s.data)[k]);
    out.emplace_back(s.name, std::move(v));
  }
  return out;
}

// Every tensor of `got` equals `expected`'s after a trip through dtype `d`, bit for bit.
void check_same_weights(const attn::Transformer& got, const attn::Transformer& expected, attn::Dtype d) {
  const auto a = tensor_values(got), b = tensor_values(expected);
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    CAPTURE(b[i].first);
    REQUIRE(a[i].first == b[i].first);
    REQUIRE(a[i].second.size() == b[i].second.size());
    int differ = 0;
    for (std::size_t k = 0; k < b[i].second.size(); ++k) {
      const float want = round_trip(b[i].second[k], d);
      differ += std::memcmp(&a[i].second[k], &want, 4) != 0;
    }
    CHECK(differ == 0);
  }
}

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("attn_test_model_files_" + name);
  fs::remove_all(dir);
  return dir;
}

const std::string kConfig = attn::model_config_json(tiny_config());

}  // namespace

TEST_CASE("model files: config.json read as GPT-2's shape") {
  const attn::ModelConfigFile file = attn::parse_model_config(
      R"({"model_type":"gpt2","n_layer":12,"n_head":12,"n_embd":768,"n_positions":1024,"n_ctx":1024,)"
      R"("vocab_size":50257,"layer_norm_epsilon":1e-05,"activation_function":"gelu_new","n_inner":null,"unknown":[1]})");
  const attn::TransformerConfig& c = file.config;
  CHECK(file.layout == attn::WeightLayout::InOut);
  CHECK(file.tied_head);
  CHECK(c.family == "gpt2");
  CHECK(c.n_layer == 12);
  CHECK(c.n_head == 12);
  CHECK(c.n_kv_head == 12);
  CHECK(c.d_model == 768);
  CHECK(c.d_ff == 3072);
  CHECK(c.n_positions == 1024);
  CHECK(c.vocab_size == 50257);
  CHECK(c.norm_eps == 1e-5f);
  CHECK(c.head_dim == 64);
  CHECK(c.score_scale == 0.125f);
  CHECK(c.norm == attn::NormKind::LayerNorm);
  CHECK(c.positions == attn::PositionKind::Learned);
  CHECK(c.qkv_bias);
  CHECK_FALSE(c.gated_mlp);
  // n_ctx stands in for n_positions; epsilon defaults to 1e-5; gelu_pytorch_tanh is the same GELU.
  const attn::TransformerConfig d = attn::parse_model_config(
      R"({"model_type":"gpt2","n_layer":1,"n_head":2,"n_embd":4,"n_ctx":7,"vocab_size":9,"activation_function":"gelu_pytorch_tanh","n_inner":16})").config;
  CHECK(d.n_positions == 7);
  CHECK(d.norm_eps == 1e-5f);
  CHECK(d.score_scale == 1.0f / std::sqrt(2.0f));  // scale_attn_weights: Hugging Face's default is true
  // scale_attn_weights false: read, and written back (the writer leaves the default out)
  const attn::TransformerConfig raw = attn::parse_model_config(
      R"({"model_type":"gpt2","n_layer":1,"n_head":2,"n_embd":4,"n_ctx":7,"vocab_size":9,"scale_attn_weights":false})").config;
  CHECK(raw.score_scale == 1.0f);
  CHECK(attn::parse_model_config(attn::model_config_json(raw)).config == raw);
  CHECK_FALSE(raw == d);
  CHECK(kConfig.find("scale_attn_weights") == std::string::npos);
  // The writer's config reads back as the same config.
  CHECK(attn::parse_model_config(kConfig).config == tiny_config());
  CHECK(kConfig.find("\"layer_norm_epsilon\": 1e-05") != std::string::npos);
  CHECK(kConfig.find("\"activation_function\": \"gelu_new\"") != std::string::npos);
}

TEST_CASE("model files: config.json refused by name") {
  const std::string base = R"("n_layer":2,"n_head":2,"n_embd":8,"n_positions":16,"vocab_size":300)";
  const auto with = [&](const std::string& extra) { return "{\"model_type\":\"gpt2\"," + base + extra + "}"; };
  struct Case {
    std::string text;
    const char* message;
  };
  const std::vector<Case> cases = {
      {R"({"model_type":"falcon","n_layer":2})",
       "config.json: model_type \"falcon\" is not supported (the families here: gpt2, llama, mistral, qwen2, qwen3, "
       "gemma2, gemma3_text, gemma3)"},
      {"{" + base + "}", "config.json: no model_type (one of gpt2, llama,"},
      {"{\"model_type\":\"gpt2\",", "config.json: not valid JSON"},
      {"[]", "config.json: not a JSON object"},
      {R"({"model_type":"gpt2","n_layer":2,"n_head":4,"n_embd":10,"n_positions":16,"vocab_size":300})",
       "config.json: n_embd 10 is not divisible by n_head 4"},
      {R"({"model_type":"gpt2","n_layer":0,"n_head":2,"n_embd":8,"n_positions":16,"vocab_size":300})",
       "config.json: n_layer is 0, outside 1 to 128"},
      {R"({"model_type":"gpt2","n_layer":2,"n_head":-2,"n_embd":8,"n_positions":16,"vocab_size":300})",
       "config.json: n_head is -2, outside 1 to 128"},
      {R"({"model_type":"gpt2","n_layer":2,"n_head":2,"n_embd":8,"n_positions":16,"vocab_size":18446744073709551615})",
       "config.json: vocab_size is 18446744073709551615, outside 1 to 1048576"},
      {R"({"model_type":"gpt2","n_layer":2,"n_head":2,"n_embd":8.5,"n_positions":16,"vocab_size":300})",
       "config.json: n_embd must be a whole number (got 8.5)"},
      {R"({"model_type":"gpt2","n_layer":"2","n_head":2,"n_embd":8,"n_positions":16,"vocab_size":300})",
       "config.json: n_layer must be a whole number (got \"2\")"},
      {R"({"model_type":"gpt2","n_layer":2,"n_head":2,"n_embd":8,"n_positions":16})", "config.json: vocab_size is missing"},
      {R"({"model_type":"gpt2","n_layer":2,"n_head":2,"n_embd":8,"vocab_size":300})",
       "config.json: n_positions (or n_ctx) is missing"},
      {with(R"(,"layer_norm_epsilon":-1)"), "config.json: layer_norm_epsilon is -1; it must be a number from 1e-12 to 1"},
      {with(R"(,"activation_function":"relu")"), "config.json: activation_function \"relu\" is not supported"},
      {with(R"(,"n_inner":64)"), "config.json: n_inner 64 is not supported: the MLP here is 4 × n_embd = 32 wide"},
      {with(R"(,"scale_attn_by_inverse_layer_idx":true)"), "scale_attn_by_inverse_layer_idx is not supported"},
      {with(R"(,"add_cross_attention":true)"), "add_cross_attention is not supported"},
      {with(R"(,"scale_attn_weights":"no")"), "config.json: scale_attn_weights must be true or false (got \"no\")"},
      {R"({"model_type":"gpt2","n_layer":)" + std::string(100000, '[') + std::string(100000, ']') + "}",
       "config.json: n_layer must be a whole number (got array)"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.text.substr(0, 100));
    CHECK(config_refusal(c.text).find(c.message) != std::string::npos);
  }
  CHECK(config_refusal(with("")) == "");
}

TEST_CASE("model files: folders written and read back in every dtype, with and without the prefix") {
  const attn::Transformer original = attn::random_transformer(tiny_config(), 7);
  for (attn::Dtype dtype : {attn::Dtype::F32, attn::Dtype::F16, attn::Dtype::BF16}) {
    for (int variant = 0; variant < 4; ++variant) {
      attn::ModelSaveOptions options;
      options.dtype = dtype;
      options.transformer_prefix = variant & 1;
      options.lm_head = variant & 2;  // tied: written as wte's values, read back as tied
      const std::string dtype_text = attn::dtype_name(dtype);
      CAPTURE(dtype_text);
      CAPTURE(variant);
      const fs::path dir = fresh_dir("round_trip");
      const bool with_json = variant == 3;  // tokenizer.json instead of vocab.json + merges.txt
      attn::save_model_dir(original,
                           with_json ? std::map<std::string, std::string>{{"tokenizer.json", tokenizer_json()}}
                                     : std::map<std::string, std::string>{{"vocab.json", vocab_json()}, {"merges.txt", kMerges}},
                           dir.string(), options);
      const attn::LoadedModel loaded = attn::load_model_dir(dir.string() + "/");
      CHECK(loaded.name == "attn_test_model_files_round_trip");
      REQUIRE(loaded.model);
      REQUIRE(loaded.tokenizer);
      CHECK(loaded.tokenizer->vocab_size() == 257);
      CHECK(loaded.model->config == tiny_config());
      CHECK(loaded.model->lm_head.empty());
      CHECK(loaded.model->embed.dtype == dtype);  // held as the file has it
      CHECK(loaded.model->parameter_count() == original.parameter_count());
      check_same_weights(*loaded.model, original, dtype);
      // The header as GPT2LMHeadModel writes it when asked for the prefix.
      std::ifstream in(dir / "model.safetensors", std::ios::binary);
      std::string head(200, '\0');
      in.read(head.data(), 200);
      CHECK((head.find("\"transformer.wte.weight\"") != std::string::npos) == options.transformer_prefix);
      fs::remove_all(dir);
    }
  }
}

TEST_CASE("model files: an untied LM head is kept; a tied one stored twice is kept once") {
  attn::Transformer untied = attn::random_transformer(tiny_config(), 3);
  untied.lm_head = attn::random_transformer(tiny_config(), 4).embed;
  const attn::LoadedModel a = assemble(kConfig, weights_bytes(attn::model_named_tensors(untied)));
  REQUIRE(a.model->lm_head.rows == 300);
  CHECK(a.model->lm_head == untied.lm_head);
  CHECK(a.model->parameter_count() == untied.parameter_count());
  attn::ModelSaveOptions both;
  both.lm_head = true;
  const attn::Transformer tied = attn::random_transformer(tiny_config(), 3);
  const attn::LoadedModel b = assemble(kConfig, weights_bytes(attn::model_named_tensors(tied, both)));
  CHECK(b.model->lm_head.empty());
}

TEST_CASE("model files: the weights in any chunking give the same model") {
  const attn::Transformer original = attn::random_transformer(tiny_config(), 11);
  for (attn::Dtype dtype : {attn::Dtype::F32, attn::Dtype::BF16}) {
    attn::ModelSaveOptions options;
    options.dtype = dtype;
    options.transformer_prefix = true;
    const std::string bytes = attn::model_safetensors_bytes(original, options);
    for (std::size_t chunk : {1, 3, 7, 4096}) {
      CAPTURE(chunk);
      check_same_weights(*assemble(kConfig, bytes, chunk, chunk != 3).model, original, dtype);
    }
  }
}

TEST_CASE("model files: hostile weights refused by name") {
  const attn::Transformer m = attn::random_transformer(tiny_config(), 5);
  const std::vector<attn::NamedTensor> good = attn::model_named_tensors(m);
  std::vector<float> spare(300 * 8, 0.5f);
  const auto without = [&](const std::string& prefix) {
    std::vector<attn::NamedTensor> t;
    for (const auto& x : good)
      if (x.name.rfind(prefix, 0) != 0) t.push_back(x);
    return t;
  };
  const auto plus = [&](attn::NamedTensor extra) {
    std::vector<attn::NamedTensor> t = good;
    t.push_back(std::move(extra));
    return t;
  };
  std::vector<attn::NamedTensor> wrong_shape = good;
  for (auto& t : wrong_shape)
    if (t.name == "h.0.attn.c_attn.weight") t.shape = {8, 16};
  struct Case {
    const char* what;
    std::vector<attn::NamedTensor> tensors;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"shape not matching the config", wrong_shape,
       "model.safetensors: tensor \"h.0.attn.c_attn.weight\" has shape [8, 16] but config.json needs [8, 24]"},
      {"missing tensor", without("ln_f.bias"), "model.safetensors: missing tensor ln_f.bias"},
      {"missing layer", without("h.1."),
       "model.safetensors: missing tensors h.1.ln_1.weight, h.1.ln_1.bias, h.1.attn.c_attn.weight, "
       "h.1.attn.c_attn.bias, ... (12 in all)"},
      {"unknown tensor name", plus({"h.0.attn.rotary.weight", {2}, spare.data()}),
       "model.safetensors: tensor \"h.0.attn.rotary.weight\" is not part of a gpt2 model as config.json describes it"},
      {"a layer past the config", plus({"transformer.h.2.ln_1.weight", {8}, spare.data()}),
       "tensor \"transformer.h.2.ln_1.weight\" is not part of a gpt2 model as config.json describes it (config.json has 2 layers)"},
      {"a tensor twice", plus({"transformer.wte.weight", {300, 8}, spare.data()}),
       "tensor \"wte.weight\" appears twice (as \"wte.weight\" and \"transformer.wte.weight\")"},
      {"lm_head of the wrong shape", plus({"lm_head.weight", {8, 300}, spare.data()}),
       "tensor \"lm_head.weight\" has shape [8, 300] but config.json needs [300, 8]"},
  };
  for (const Case& c : cases) {
    const std::string what = c.what;
    CAPTURE(what);
    const std::string message = model_refusal(kConfig, weights_bytes(c.tensors));
    CAPTURE(message);
    CHECK(message.find(c.message) != std::string::npos);
  }
  // The causal-mask buffers of old checkpoints are skipped whatever their shape.
  std::vector<attn::NamedTensor> buffers = good;
  buffers.push_back({"h.0.attn.bias", {1, 1, 16, 16}, spare.data()});
  buffers.push_back({"transformer.h.1.attn.masked_bias", {}, spare.data()});
  CHECK(model_refusal(kConfig, weights_bytes(buffers, attn::Dtype::F16)) == "");
  // Truncated and over-long weights through the assembler.
  const std::string bytes = weights_bytes(good);
  CHECK(model_refusal(kConfig, bytes.substr(0, bytes.size() - 1)).find("past the end of the data") != std::string::npos);
  CHECK_THROWS_WITH_AS(assemble(kConfig, bytes.substr(0, bytes.size() - 1), 4096, false),
                       doctest::Contains("model.safetensors: the file is truncated"), std::invalid_argument);
  CHECK(model_refusal(kConfig, bytes + "!!").find("extra bytes") != std::string::npos);
}

TEST_CASE("model files: the folder's files refused by name") {
  const std::string weights = weights_bytes(attn::model_named_tensors(attn::random_transformer(tiny_config(), 1)));
  {  // A vocabulary larger than the model's embedding.
    const attn::TransformerConfig small = tiny_config(200);
    const std::string w = weights_bytes(attn::model_named_tensors(attn::random_transformer(small, 1)));
    CHECK(model_refusal(attn::model_config_json(small), w) ==
          "vocab.json: the vocabulary has 257 tokens, more than config.json's vocab_size 200");
  }
  attn::ModelAssembler a("x");
  CHECK_THROWS_WITH_AS(a.begin_weights("model.safetensors", 100), "model.safetensors: config.json must come before the weights",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(a.add_text_file("pytorch_model.bin", ""),
                       "pytorch_model.bin: only model.safetensors weights are read, not this format", std::invalid_argument);
  CHECK_THROWS_WITH_AS(a.add_text_file("model-00001-of-00002.safetensors", ""), doctest::Contains("is a weights file"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(a.add_text_file("notes.txt", ""), doctest::Contains("notes.txt: not a file of a model folder"),
                       std::invalid_argument);
  a.add_text_file("generation_config.json", "not even JSON");  // a companion: ignored
  CHECK_THROWS_WITH_AS(a.finish(), "config.json: missing (the model's shape)", std::invalid_argument);
  a.add_text_file("config.json", kConfig);
  CHECK_THROWS_WITH_AS(a.add_text_file("config.json", kConfig), "config.json: given twice", std::invalid_argument);
  CHECK_THROWS_WITH_AS(a.finish(), "model.safetensors: missing (the model's weights)", std::invalid_argument);
  // A file far too small for what the config asks is refused before the model is allocated.
  attn::ModelAssembler huge("huge");
  huge.add_text_file("config.json", R"({"model_type":"gpt2","n_layer":96,"n_head":128,"n_embd":8192,"n_positions":8192,"vocab_size":1048576})");
  CHECK_THROWS_WITH_AS(huge.begin_weights("model.safetensors", 1000),
                       doctest::Contains("model.safetensors: the file's 1000 bytes are too few for the model config.json describes"),
                       std::invalid_argument);
  // Size unknown: a 32-bit build (wasm) refuses what it could never address, before allocating.
  if (sizeof(void*) == 4)
    CHECK_THROWS_WITH_AS(huge.begin_weights("model.safetensors", 0),
                         doctest::Contains("of memory, more than this 32-bit build can address"), std::invalid_argument);
  // No tokenizer, or half of one.
  attn::ModelAssembler b("b");
  b.add_text_file("config.json", kConfig);
  b.begin_weights("model.safetensors", weights.size());
  b.feed_weights(reinterpret_cast<const std::uint8_t*>(weights.data()), 100);
  b.feed_weights(reinterpret_cast<const std::uint8_t*>(weights.data()) + 100, weights.size() - 100);
  CHECK_THROWS_WITH_AS(b.finish(), doctest::Contains("tokenizer.json: missing"), std::invalid_argument);
  attn::ModelAssembler c("c");
  c.add_text_file("config.json", kConfig);
  c.add_text_file("vocab.json", vocab_json());
  c.begin_weights("model.safetensors", weights.size());
  c.feed_weights(reinterpret_cast<const std::uint8_t*>(weights.data()), weights.size());
  CHECK_THROWS_WITH_AS(c.finish(), doctest::Contains("merges.txt: missing"), std::invalid_argument);
}

TEST_CASE("model files: folders on disk") {
  CHECK_THROWS_WITH_AS(attn::load_model_dir("/nonexistent/attn"), "/nonexistent/attn: not a folder", std::invalid_argument);
  const fs::path dir = fresh_dir("folder");
  fs::create_directories(dir);
  CHECK_THROWS_WITH_AS(attn::load_model_dir(dir.string()), doctest::Contains("config.json: missing from"),
                       std::invalid_argument);
  std::ofstream(dir / "config.json") << kConfig;
  std::ofstream(dir / "pytorch_model.bin") << "weights";
  std::ofstream(dir / "tokenizer.json") << tokenizer_json();
  std::ofstream(dir / "vocab.json") << "broken";  // tokenizer.json is preferred: never read
  CHECK_THROWS_WITH_AS(attn::load_model_dir(dir.string()),
                       doctest::Contains("(it has pytorch_model.bin: only safetensors weights are read)"),
                       std::invalid_argument);
  const attn::Transformer m = attn::random_transformer(tiny_config(), 2);
  std::ofstream(dir / "model.safetensors", std::ios::binary) << weights_bytes(attn::model_named_tensors(m), attn::Dtype::F16);
  const attn::LoadedModel loaded = attn::load_model_dir(dir.string());
  CHECK(loaded.name == "attn_test_model_files_folder");
  check_same_weights(*loaded.model, m, attn::Dtype::F16);
  fs::remove_all(dir);
}
