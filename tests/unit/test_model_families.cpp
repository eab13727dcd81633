// Each family's config.json fields read into the one core configuration (defaults as Hugging Face's
// config classes have them, both rope forms, window rules), refusals by field, and the assembler on
// Llama-style names: one file or an index + shards, and hostile shards refused by file.
// (Against PyTorch: tests/cli/families.test.mjs; GPT-2's files: test_model_files.cpp.)
#include <doctest/doctest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "../../src/api/model_files.h"
#include "../../src/api/model_json.h"

namespace {

using nlohmann::json;

json llama_json() {
  return {{"model_type", "llama"}, {"hidden_size", 16}, {"intermediate_size", 24}, {"num_hidden_layers", 2},
          {"num_attention_heads", 4}, {"num_key_value_heads", 2}, {"vocab_size", 50}};
}

attn::TransformerConfig parse(const json& j) { return attn::parse_model_config(j.dump()).config; }

std::string family_refusal(const json& j) {
  try {
    attn::parse_model_config(j.dump());
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

std::string safetensors_bytes(const std::vector<attn::NamedTensor>& tensors) {
  return attn::safetensors_bytes(tensors, attn::Dtype::BF16);
}

// A WordLevel tokenizer of `n` words (w0 … w{n−1}), enough for the assembler's check.
std::string word_tokenizer(int n) {
  json vocab = json::object();
  for (int i = 0; i < n; ++i) vocab["w" + std::to_string(i)] = i;
  return json{{"model", {{"type", "WordLevel"}, {"vocab", vocab}, {"unk_token", "w0"}}},
              {"pre_tokenizer", {{"type", "WhitespaceSplit"}}}}
      .dump();
}

}  // namespace

TEST_CASE("families: Llama's fields and Hugging Face's defaults") {
  const attn::ModelConfigFile file = attn::parse_model_config(llama_json().dump());
  const attn::TransformerConfig& c = file.config;
  CHECK(file.layout == attn::WeightLayout::OutIn);
  CHECK_FALSE(file.tied_head);  // LlamaConfig's tie_word_embeddings default
  CHECK(c.family == "llama");
  CHECK(c.n_kv_head == 2);
  CHECK(c.head_dim == 4);  // hidden_size / heads
  CHECK(c.norm == attn::NormKind::RmsNorm);
  CHECK(c.norm_eps == 1e-6f);
  CHECK(c.positions == attn::PositionKind::Rope);
  CHECK(c.layers[1].rope.theta == 10000);
  CHECK(c.gated_mlp);
  CHECK(c.activation == attn::Activation::Silu);
  CHECK(c.score_scale == 0.5f);
  CHECK_FALSE(c.any_window());
  CHECK_FALSE(c.qkv_bias);
  // num_key_value_heads absent: one K/V head per query head; head_dim given apart from the width.
  json j = llama_json();
  j.erase("num_key_value_heads");
  j["head_dim"] = 6;
  j["tie_word_embeddings"] = true;
  j["attention_bias"] = true;
  const attn::ModelConfigFile g = attn::parse_model_config(j.dump());
  CHECK(g.config.n_kv_head == 4);
  CHECK(g.config.head_dim == 6);
  CHECK(g.tied_head);
  CHECK(g.config.qkv_bias);
  CHECK(g.config.o_bias);
}

TEST_CASE("families: rope scaling in the older and the newer form") {
  json old_form = llama_json();
  old_form["rope_theta"] = 500000.0;
  old_form["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", 32.0}, {"low_freq_factor", 1.0},
                              {"high_freq_factor", 4.0}, {"original_max_position_embeddings", 8192}};
  json new_form = llama_json();
  new_form["rope_parameters"] = {{"rope_type", "llama3"}, {"rope_theta", 500000.0}, {"factor", 32.0},
                                 {"low_freq_factor", 1.0}, {"high_freq_factor", 4.0},
                                 {"original_max_position_embeddings", 8192}};
  const attn::TransformerConfig a = parse(old_form), b = parse(new_form);
  CHECK(a.layers[0].rope.scaling == attn::RopeScaling::Llama3);
  CHECK(a.layers[0].rope.theta == 500000);
  CHECK(a.layers[0].rope.factor == 32);
  CHECK(a.layers[0].rope.original_max_positions == 8192);
  CHECK(a == b);
  // yarn: the attention factor 0.1·ln(factor) + 1 when not given.
  json yarn = llama_json();
  yarn["rope_scaling"] = {{"type", "yarn"}, {"factor", 4.0}, {"original_max_position_embeddings", 32768}};
  CHECK(parse(yarn).layers[0].rope.attention_factor == doctest::Approx(0.1 * std::log(4.0) + 1));
  json linear = llama_json();
  linear["rope_scaling"] = {{"type", "linear"}, {"factor", 2.0}};
  CHECK(parse(linear).layers[1].rope.scaling == attn::RopeScaling::Linear);
  json plain = llama_json();
  plain["rope_scaling"] = {{"rope_type", "default"}};
  CHECK(parse(plain).layers[0].rope.scaling == attn::RopeScaling::None);
}

TEST_CASE("families: windows per family (Mistral everywhere, Qwen from max_window_layers, layer_types)") {
  json mistral = llama_json();
  mistral["model_type"] = "mistral";
  mistral["sliding_window"] = 5;
  const attn::TransformerConfig m = parse(mistral);
  CHECK(m.layers[0].window == 5);
  CHECK(m.layers[1].window == 5);
  mistral["sliding_window"] = nullptr;  // null: full attention
  CHECK_FALSE(parse(mistral).any_window());

  json qwen = llama_json();
  qwen["model_type"] = "qwen2";
  qwen["sliding_window"] = 7;
  qwen["max_window_layers"] = 1;
  CHECK_FALSE(parse(qwen).any_window());  // use_sliding_window defaults to false
  CHECK(parse(qwen).qkv_bias);            // Qwen 2: q, k, v biases, no o bias
  CHECK_FALSE(parse(qwen).o_bias);
  qwen["use_sliding_window"] = true;
  attn::TransformerConfig q = parse(qwen);
  CHECK(q.layers[0].window == 0);
  CHECK(q.layers[1].window == 7);
  qwen["layer_types"] = {"sliding_attention", "full_attention"};
  q = parse(qwen);
  CHECK(q.layers[0].window == 7);
  CHECK(q.layers[1].window == 0);
  qwen["model_type"] = "qwen3";
  q = parse(qwen);
  CHECK(q.qk_norm);
  CHECK_FALSE(q.qkv_bias);
}

TEST_CASE("families: Gemma 2 and Gemma 3 as their config classes default them") {
  json g2 = llama_json();
  g2["model_type"] = "gemma2";
  g2["sliding_window"] = 4;
  const attn::ModelConfigFile f2 = attn::parse_model_config(g2.dump());
  const attn::TransformerConfig& a = f2.config;
  CHECK(f2.tied_head);
  CHECK(a.head_dim == 256);
  CHECK(a.score_scale == 1.0f / 16);  // query_pre_attn_scalar 256
  CHECK(a.attn_softcap == 50);
  CHECK(a.final_softcap == 30);
  CHECK(a.norm_plus_one);
  CHECK(a.sandwich_norms);
  CHECK(a.embed_scale == doctest::Approx(4.0));  // √16
  CHECK(a.activation == attn::Activation::GeluTanh);
  CHECK(a.layers[0].window == 4);  // even layers local
  CHECK(a.layers[1].window == 0);

  json g3 = llama_json();
  g3["model_type"] = "gemma3_text";
  g3["num_hidden_layers"] = 7;
  g3["sliding_window"] = 3;
  g3["head_dim"] = 8;
  g3["query_pre_attn_scalar"] = 16;
  g3["rope_scaling"] = {{"rope_type", "linear"}, {"factor", 8.0}};
  const attn::TransformerConfig b = parse(g3);
  CHECK(b.qk_norm);
  CHECK(b.attn_softcap == 0);
  CHECK(b.score_scale == 0.25f);
  for (int l = 0; l < 7; ++l) {
    CAPTURE(l);
    const bool global = l == 5;  // one global layer in every 6
    CHECK(b.layers[static_cast<std::size_t>(l)].window == (global ? 0 : 3));
    CHECK(b.layers[static_cast<std::size_t>(l)].rope.theta == (global ? 1e6 : 10000));
    CHECK(b.layers[static_cast<std::size_t>(l)].rope.scaling == (global ? attn::RopeScaling::Linear : attn::RopeScaling::None));
  }
  // The vision-language wrapper: the text model in text_config, the family named as the file says.
  const json wrapper = {{"model_type", "gemma3"}, {"text_config", g3}, {"vision_config", {{"hidden_size", 8}}}};
  const attn::ModelConfigFile w = attn::parse_model_config(wrapper.dump());
  CHECK(w.wrapper == "gemma3");
  CHECK(w.config.family == "gemma3");
  CHECK(w.config.layers == b.layers);
  // rope_parameters per layer type (the newer form)
  g3.erase("rope_scaling");
  g3["rope_parameters"] = {{"full_attention", {{"rope_type", "linear"}, {"factor", 8.0}, {"rope_theta", 1e6}}},
                           {"sliding_attention", {{"rope_type", "default"}, {"rope_theta", 10000.0}}}};
  CHECK(parse(g3).layers == b.layers);
}

TEST_CASE("families: what the core does not do is refused by field") {
  struct Case {
    const char* key;
    json value;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"num_local_experts", 8, "config.json: num_local_experts 8 is not supported: mixture-of-experts models are not supported"},
      {"partial_rotary_factor", 0.5, "config.json: partial_rotary_factor 0.5 is not supported"},
      {"alibi", true, "config.json: alibi true is not supported: ALiBi positions are not supported"},
      {"rope_scaling", {{"type", "longrope"}, {"factor", 2.0}}, "config.json: rope_scaling type \"longrope\" is not supported"},
      {"rope_scaling", {{"type", "llama3"}, {"factor", 2.0}}, "config.json: rope_scaling.original_max_position_embeddings is missing"},
      {"num_key_value_heads", 3, "config.json: num_attention_heads 4 is not a multiple of num_key_value_heads 3"},
      {"head_dim", 0, "config.json: head_dim is 0, outside 1 to 512"},
      {"hidden_act", "relu", "config.json: hidden_act \"relu\" is not supported"},
      {"rms_norm_eps", -1, "config.json: rms_norm_eps is -1; it must be a number from 1e-12 to 1"},
      {"sliding_window", 0, "config.json: sliding_window is 0, outside 1 to 1073741824"},
      {"layer_types", {"full_attention"}, "config.json: layer_types must list one type for each of the 2 layers"},
      {"layer_types", {"full_attention", "chunked_attention"}, "config.json: layer_types has \"chunked_attention\""},
      {"rope_theta", 0, "config.json: rope_theta is 0; it must be a number from"},
  };
  for (const Case& c : cases) {
    json j = llama_json();
    j[c.key] = c.value;
    const std::string got = family_refusal(j);
    CAPTURE(got);
    CHECK(got.find(c.message) != std::string::npos);
  }
  CHECK(family_refusal({{"model_type", "gemma3"}}).find("config.json: text_config is missing") != std::string::npos);
  json sliding = llama_json();
  sliding["layer_types"] = {"sliding_attention", "full_attention"};
  CHECK(family_refusal(sliding).find("sliding_window is missing or 0, yet layer 0 is a sliding-window layer") != std::string::npos);
  CHECK(family_refusal(llama_json()) == "");
}

TEST_CASE("families: a Llama-style model from one file or from an index and its shards") {
  attn::TransformerConfig c = parse(llama_json());
  attn::Transformer original = attn::random_transformer(c, 3, attn::Dtype::F32, attn::WeightLayout::OutIn, 0.3);
  original.lm_head = attn::random_transformer(c, 4, attn::Dtype::F32, attn::WeightLayout::OutIn, 0.3).embed;  // untied
  attn::ModelSaveOptions with_prefix;
  with_prefix.transformer_prefix = true;  // the family's own prefix: "model."
  const std::vector<attn::NamedTensor> tensors = attn::model_named_tensors(original, with_prefix);
  REQUIRE(tensors.front().name == "model.embed_tokens.weight");
  CHECK(tensors.back().name == "lm_head.weight");  // untied: written, without the prefix
  const std::string config = llama_json().dump(), tokenizer = word_tokenizer(50);
  const std::vector<int> ids = {1, 5, 9, 2, 7};

  // Two shards: the first half of the tensors, then the rest; the index says which is where.
  const std::size_t half = tensors.size() / 2;
  const std::vector<attn::NamedTensor> first(tensors.begin(), tensors.begin() + static_cast<std::ptrdiff_t>(half)),
      second(tensors.begin() + static_cast<std::ptrdiff_t>(half), tensors.end());
  const std::string shard1 = "model-00001-of-00002.safetensors", shard2 = "model-00002-of-00002.safetensors";
  json index = {{"metadata", {{"total_size", 0}}}, {"weight_map", json::object()}};
  for (const auto& t : first) index["weight_map"][t.name] = shard1;
  for (const auto& t : second) index["weight_map"][t.name] = shard2;
  const auto sharded = [&](const json& idx, const std::vector<std::pair<std::string, std::string>>& files) {
    attn::ModelAssembler a("sharded");
    a.add_text_file("config.json", config);
    a.add_text_file("tokenizer.json", tokenizer);
    a.add_text_file("model.safetensors.index.json", idx.dump());
    for (const auto& [name, bytes] : files) {
      a.begin_weights(name, bytes.size());
      a.feed_weights(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
    }
    return a.finish();
  };
  const std::string bytes1 = safetensors_bytes(first), bytes2 = safetensors_bytes(second);
  const attn::LoadedModel s = sharded(index, {{shard1, bytes1}, {shard2, bytes2}});
  CHECK(s.model->embed.dtype == attn::Dtype::BF16);  // held as the files have it
  CHECK_FALSE(s.model->lm_head.empty());

  attn::ModelAssembler one("one");
  one.add_text_file("config.json", config);
  one.add_text_file("tokenizer.json", tokenizer);
  const std::string whole = safetensors_bytes(tensors);
  one.begin_weights("model.safetensors", whole.size());
  one.feed_weights(reinterpret_cast<const std::uint8_t*>(whole.data()), whole.size());
  const attn::LoadedModel o = one.finish();
  CHECK(o.model->blocks[1].qkv == s.model->blocks[1].qkv);
  const attn::ModelTrace a = attn::transformer_forward(*o.model, ids), b = attn::transformer_forward(*s.model, ids);
  CHECK(attn::layer_detail(*o.model, a, 1).weights[3] == attn::layer_detail(*s.model, b, 1).weights[3]);
  CHECK(a.layers[1].thumbnails[3] == b.layers[1].thumbnails[3]);
  CHECK(a.next[4][0].id == b.next[4][0].id);

  // Hostile shards, each refused by the file it concerns.
  const auto refused = [&](const json& idx, const std::vector<std::pair<std::string, std::string>>& files) {
    try {
      sharded(idx, files);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(refused(index, {{shard1, bytes1}}) == shard2 + ": missing: model.safetensors.index.json names it");
  CHECK(refused(index, {{shard1, bytes1}, {"model-00003-of-00003.safetensors", bytes2}}) ==
        "model-00003-of-00003.safetensors: is not one of the shards model.safetensors.index.json names");
  json moved = index;
  moved["weight_map"]["model.norm.weight"] = shard1;  // the index says shard 1, the file is shard 2
  CHECK(refused(moved, {{shard1, bytes1}, {shard2, bytes2}}) ==
        shard2 + ": tensor \"model.norm.weight\" belongs to \"" + shard1 + "\" by model.safetensors.index.json");
  json ghost = index;
  ghost["weight_map"]["model.layers.7.mlp.up_proj.weight"] = shard1;
  CHECK(refused(ghost, {{shard1, bytes1}, {shard2, bytes2}}) ==
        shard1 + ": does not hold tensor \"model.layers.7.mlp.up_proj.weight\", which model.safetensors.index.json puts there");
  std::vector<attn::NamedTensor> twice = second;
  twice.push_back(first.front());
  CHECK(refused(index, {{shard1, bytes1}, {shard2, safetensors_bytes(twice)}}).find("belongs to") != std::string::npos);
  CHECK(refused({{"weight_map", json::array()}}, {}) ==
        "model.safetensors.index.json: weight_map is missing (an object from each tensor's name to its shard file)");
  CHECK(refused({{"weight_map", {{"model.norm.weight", "../evil.safetensors"}}}}, {}).find("not a .safetensors file beside the index") !=
        std::string::npos);
  // A control byte in a shard's name would reach every later message about that file (found by fuzz_model_config).
  const std::string newline = refused({{"weight_map", {{"model.norm.weight", "model-1\nof-2.safetensors"}}}}, {});
  CHECK(newline.find("not a .safetensors file beside the index") != std::string::npos);
  CHECK(newline.find('\n') == std::string::npos);
}

TEST_CASE("families: a model with more rows than its tokenizer has tokens (padded vocabularies)") {
  // Qwen's 151 936 rows hold 151 669 tokens: the LM head may put any row among the top next tokens.
  json config = llama_json();
  config["vocab_size"] = 64;
  config["tie_word_embeddings"] = true;
  attn::TransformerConfig c = parse(config);
  const attn::Transformer m = attn::random_transformer(c, 8, attn::Dtype::F32, attn::WeightLayout::OutIn, 0.3);
  attn::ModelAssembler a("padded");
  a.add_text_file("config.json", config.dump());
  a.add_text_file("tokenizer.json", word_tokenizer(50));
  const std::string bytes = safetensors_bytes(attn::model_named_tensors(m));
  a.begin_weights("model.safetensors", bytes.size());
  a.feed_weights(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  const attn::LoadedModel loaded = a.finish();
  CHECK(loaded.tokenizer->display(57) == "<unused 57>");
  CHECK_THROWS_AS(loaded.tokenizer->display(-1), std::invalid_argument);
  const json trace = attn::model_trace_json(loaded, std::vector<int>{1, 2, 3}, 64);  // every row is among the top 64
  bool unused_seen = false;
  for (const json& n : trace["next"][2]) unused_seen = unused_seen || n["token"] == "<unused " + std::to_string(n["id"].get<int>()) + ">";
  CHECK(unused_seen);
}
