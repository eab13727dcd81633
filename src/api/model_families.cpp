// Each family's config.json fields and tensor-name table (see model_families.h). A family is a
// configuration of the one core plus its names: GPT-2, then the Llama-style families as the diff
// from Llama (Mistral: a window; Qwen 2: q/k/v biases; Qwen 3: q/k norm; Gemma 2 / 3: sandwich norms,
// (1 + w), √d embedding, query_pre_attn_scalar, caps, local / global layers); the encoders BERT,
// DistilBERT and RoBERTa as GPT-2's LayerNorm block turned bidirectional and post-norm, with a norm on
// the embeddings, token types and a masked-LM head.
#include "model_families.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "safetensors.h"
#include "../core/refuse.h"
#include "text.h"

namespace attn {

using nlohmann::json;

namespace {

// A value for a message: scalars as written (cut), arrays and objects by their kind only (dumping
// a hostile, deeply nested value would recurse without bound).
std::string value_text(const json& v) { return v.is_primitive() ? v.dump().substr(0, 40) : std::string(v.type_name()); }

// The fields of one config object (config.json itself, or Gemma 3's text_config), read with the
// file's name in every message.
struct Fields {
  const json& root;
  const std::string& file;
  std::string where;  // "" or "text_config." for messages

  const json* find(const char* key) const {
    const auto it = root.find(key);
    return it == root.end() || it->is_null() ? nullptr : &*it;
  }
  std::string name(const char* key) const { return where + key; }
  // An int in [lo, hi]; `fallback` when absent or null (a fallback < lo: the field is required).
  long long integer(const char* key, long long lo, long long hi, long long fallback) const {
    const json* v = find(key);
    if (!v) {
      if (fallback < lo) refuse(file, name(key) + " is missing");
      return fallback;
    }
    if (!v->is_number_integer()) refuse(file, name(key) + " must be a whole number (got " + value_text(*v) + ")");
    const bool negative = !v->is_number_unsigned() && v->get<std::int64_t>() < 0;
    const std::uint64_t magnitude = negative ? 0 : v->get<std::uint64_t>();
    if (negative || magnitude < static_cast<std::uint64_t>(lo) || magnitude > static_cast<std::uint64_t>(hi))
      refuse(file, name(key) + " is " + v->dump() + ", outside " + std::to_string(lo) + " to " + std::to_string(hi));
    return static_cast<long long>(magnitude);
  }
  double number(const char* key, double lo, double hi, double fallback) const {
    const json* v = find(key);
    if (!v) return fallback;
    const double x = v->is_number() ? v->get<double>() : std::nan("");
    if (!(x >= lo && x <= hi))
      refuse(file, name(key) + " is " + value_text(*v) + "; it must be a number from " + json(lo).dump() + " to " + json(hi).dump());
    return x;
  }
  bool flag(const char* key, bool fallback) const {
    const json* v = find(key);
    if (!v) return fallback;
    if (!v->is_boolean()) refuse(file, name(key) + " must be true or false (got " + value_text(*v) + ")");
    return v->get<bool>();
  }
  std::string text(const char* key, const std::string& fallback) const {
    const json* v = find(key);
    if (!v) return fallback;
    if (!v->is_string()) refuse(file, name(key) + " must be a string (got " + value_text(*v) + ")");
    return v->get<std::string>();
  }
  void refuse_if(bool condition, const char* key, const std::string& why) const {
    if (condition) refuse(file, name(key) + " " + value_text(*find(key)) + " is not supported: " + why);
  }
};

// [SECTION] GPT-2 ----------------------------------------------------------------------------

ModelConfigFile gpt2_from(const Fields& f) {
  const int L = static_cast<int>(f.integer("n_layer", 1, kMaxModelLayers, -1));
  const int H = static_cast<int>(f.integer("n_head", 1, kMaxModelHeads, -1));
  const int C = static_cast<int>(f.integer("n_embd", 1, kMaxModelWidth, -1));
  if (!f.find("n_positions") && !f.find("n_ctx")) refuse(f.file, "n_positions (or n_ctx) is missing");
  const int P = static_cast<int>(f.find("n_positions") ? f.integer("n_positions", 1, kMaxModelPositions, -1)
                                                        : f.integer("n_ctx", 1, kMaxModelPositions, -1));
  const int V = static_cast<int>(f.integer("vocab_size", 1, kMaxVocab, -1));
  if (C % H != 0)
    refuse(f.file, "n_embd " + std::to_string(C) + " is not divisible by n_head " + std::to_string(H) +
                    " (every head needs the same width)");
  const double eps = f.number("layer_norm_epsilon", 1e-12, 1, 1e-5);
  const json* activation = f.find("activation_function");
  const std::string act = !activation ? "gelu_new" : activation->is_string() ? activation->get<std::string>() : value_text(*activation);
  if (act != "gelu_new" && act != "gelu_pytorch_tanh")
    refuse(f.file, "activation_function " + quoted_name(act) +
                    " is not supported: GPT-2 uses the tanh GELU (gelu_new or gelu_pytorch_tanh)");
  const long long inner = f.integer("n_inner", 1, 4ll * kMaxModelWidth, 4ll * C);
  if (inner != 4ll * C)
    refuse(f.file, "n_inner " + std::to_string(inner) + " is not supported: the MLP here is 4 × n_embd = " +
                    std::to_string(4 * C) + " wide");
  if (f.flag("scale_attn_by_inverse_layer_idx", false))
    refuse(f.file, "scale_attn_by_inverse_layer_idx is not supported (scores are scaled by 1/sqrt(head width) only)");
  if (f.flag("add_cross_attention", false)) refuse(f.file, "add_cross_attention is not supported (decoder only)");
  ModelConfigFile out;
  out.config = gpt2_config(L, H, C, P, V, f.flag("scale_attn_weights", true), static_cast<float>(eps));
  out.layout = WeightLayout::InOut;
  out.tied_head = true;
  return out;
}

// [SECTION] the Llama-style families -----------------------------------------------------------

// One rope form (rope_scaling / rope_parameters entry, or the top-level rope_theta) → RopeConfig.
// `context`: config.json's max_position_embeddings (0 when absent), the trained context a scaling
// falls back on.
RopeConfig rope_from(const Fields& f, const json* scaling, const char* scaling_key, double theta, long long context) {
  RopeConfig r;
  r.theta = theta;
  if (!scaling) return r;
  if (!scaling->is_object()) refuse(f.file, f.name(scaling_key) + " must be an object (got " + value_text(*scaling) + ")");
  const Fields s{*scaling, f.file, f.where + scaling_key + "."};
  std::string type = s.text("rope_type", "");
  if (type.empty()) type = s.text("type", "default");
  if (s.find("rope_theta")) r.theta = s.number("rope_theta", 1.0001, 1e12, theta);
  if (type == "default") return r;
  if (type != "linear" && type != "llama3" && type != "yarn")
    refuse(f.file, f.name(scaling_key) + " type " + quoted_name(type) +
                    " is not supported (rotary scaling here: default, linear, llama3 or yarn)");
  r.factor = s.number("factor", 1, 1e4, -1);
  if (r.factor < 1) refuse(f.file, s.name("factor") + " is missing (rope scaling needs its factor)");
  if (type == "linear") {
    r.scaling = RopeScaling::Linear;
    return r;
  }
  r.original_max_positions = static_cast<int>(s.integer("original_max_position_embeddings", 1, 1 << 24,
                                                        context > 0 ? context : -1));
  if (type == "llama3") {
    r.scaling = RopeScaling::Llama3;
    r.low_freq_factor = s.number("low_freq_factor", 1e-6, 1e6, 1);
    r.high_freq_factor = s.number("high_freq_factor", 1e-6, 1e6, 4);
    return r;
  }
  r.scaling = RopeScaling::Yarn;
  r.beta_fast = s.number("beta_fast", 1e-6, 1e6, 32);
  r.beta_slow = s.number("beta_slow", 1e-6, 1e6, 1);
  r.truncate = s.flag("truncate", true);
  const auto mscale_of = [](double scale, double m) { return scale <= 1 ? 1.0 : 0.1 * m * std::log(scale) + 1.0; };
  const double mscale = s.number("mscale", 0, 1e3, 0), mscale_all = s.number("mscale_all_dim", 0, 1e3, 0);
  r.attention_factor = s.number("attention_factor", 1e-6, 100, 0);
  if (r.attention_factor == 0)
    r.attention_factor = mscale > 0 && mscale_all > 0 ? mscale_of(r.factor, mscale) / mscale_of(r.factor, mscale_all)
                                                      : mscale_of(r.factor, 1);
  return r;
}

// Whether each layer is a sliding-window one: layer_types when given, else the family's rule.
std::vector<bool> sliding_layers(const Fields& f, int L, const std::vector<bool>& by_rule) {
  const json* types = f.find("layer_types");
  if (!types) return by_rule;
  if (!types->is_array() || static_cast<int>(types->size()) != L)
    refuse(f.file, f.name("layer_types") + " must list one type for each of the " + std::to_string(L) + " layers");
  std::vector<bool> sliding;
  for (const json& t : *types) {
    const std::string name = t.is_string() ? t.get<std::string>() : value_text(t);
    if (name != "full_attention" && name != "sliding_attention")
      refuse(f.file, f.name("layer_types") + " has " + quoted_name(name) +
                      ": only full_attention and sliding_attention are supported");
    sliding.push_back(name == "sliding_attention");
  }
  return sliding;
}

ModelConfigFile llama_style_from(const Fields& f, const std::string& type) {
  const bool gemma = type == "gemma2" || type == "gemma3_text";
  const bool qwen = type == "qwen2" || type == "qwen3";
  // What every Llama-style config refuses: the options that change the architecture beyond the core.
  for (const char* experts : {"num_local_experts", "num_experts", "n_routed_experts"})
    if (const json* v = f.find(experts))
      f.refuse_if(!(v->is_number_integer() && v->get<long long>() <= 1), experts, "mixture-of-experts models are not supported");
  if (f.find("partial_rotary_factor"))
    f.refuse_if(f.number("partial_rotary_factor", 0, 1, 1) != 1.0, "partial_rotary_factor",
                "these families rotate the whole head (partial rotary is refused)");
  if (f.find("alibi")) f.refuse_if(f.flag("alibi", false), "alibi", "ALiBi positions are not supported");
  if (f.find("pretraining_tp"))
    f.refuse_if(f.integer("pretraining_tp", 1, 1 << 20, 1) != 1, "pretraining_tp", "only 1 (the usual layout)");

  TransformerConfig c;
  c.family = type;
  c.d_model = static_cast<int>(f.integer("hidden_size", 1, kMaxModelWidth, -1));
  c.d_ff = static_cast<int>(f.integer("intermediate_size", 1, kMaxModelFfWidth, -1));
  c.n_layer = static_cast<int>(f.integer("num_hidden_layers", 1, kMaxModelLayers, -1));
  c.n_head = static_cast<int>(f.integer("num_attention_heads", 1, kMaxModelHeads, -1));
  c.n_kv_head = static_cast<int>(f.integer("num_key_value_heads", 1, kMaxModelHeads, c.n_head));
  if (c.n_head % c.n_kv_head != 0)
    refuse(f.file, f.name("num_attention_heads") + " " + std::to_string(c.n_head) + " is not a multiple of " +
                    f.name("num_key_value_heads") + " " + std::to_string(c.n_kv_head) +
                    " (query heads share key/value heads in equal groups)");
  const int default_head_dim = gemma ? 256 : type == "qwen3" ? 128 : (c.d_model % c.n_head == 0 ? c.d_model / c.n_head : -1);
  c.head_dim = static_cast<int>(f.integer("head_dim", 1, kMaxModelHeadDim, default_head_dim));
  c.vocab_size = static_cast<int>(f.integer("vocab_size", 1, kMaxVocab, -1));
  c.norm = NormKind::RmsNorm;
  c.norm_eps = static_cast<float>(f.number("rms_norm_eps", 1e-12, 1, 1e-6));
  c.positions = PositionKind::Rope;
  c.score_scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
  c.gated_mlp = true;
  const bool attention_bias = f.flag("attention_bias", false);
  c.qkv_bias = attention_bias || type == "qwen2";
  c.o_bias = attention_bias;
  c.mlp_bias = f.flag("mlp_bias", false);
  c.qk_norm = type == "qwen3" || type == "gemma3_text";

  std::string act = f.text("hidden_activation", "");
  if (act.empty()) act = f.text("hidden_act", gemma ? "gelu_pytorch_tanh" : "silu");
  if (act == "silu" || act == "swish") c.activation = Activation::Silu;
  else if (act == "gelu_pytorch_tanh" || act == "gelu_new") c.activation = Activation::GeluTanh;
  else if (act == "gelu") c.activation = Activation::GeluErf;
  else refuse(f.file, f.name("hidden_act") + " " + quoted_name(act) + " is not supported (silu, gelu or gelu_pytorch_tanh)");

  // Positions: the older rope_theta + rope_scaling, or the newer rope_parameters (per layer type
  // for Gemma 3: full_attention / sliding_attention).
  const double theta = f.number("rope_theta", 1.0001, 1e12, type == "gemma3_text" ? 1e6 : 10000);
  const long long context = f.find("max_position_embeddings") ? f.integer("max_position_embeddings", 1, 1 << 24, -1) : 0;
  RopeConfig global = rope_from(f, f.find("rope_scaling"), "rope_scaling", theta, context);
  RopeConfig local;
  local.theta = f.number("rope_local_base_freq", 1.0001, 1e12, 10000);
  if (const json* params = f.find("rope_parameters")) {
    if (!params->is_object()) refuse(f.file, f.name("rope_parameters") + " must be an object");
    const bool per_type = params->contains("full_attention") || params->contains("sliding_attention");
    if (per_type) {
      const Fields p{*params, f.file, f.where + "rope_parameters."};
      if (p.find("full_attention")) global = rope_from(p, p.find("full_attention"), "full_attention", theta, context);
      if (p.find("sliding_attention"))
        local = rope_from(p, p.find("sliding_attention"), "sliding_attention", local.theta, context);
    } else {
      global = rope_from(f, params, "rope_parameters", theta, context);
    }
  }

  // Windows: Mistral's applies to every layer; Qwen's only with use_sliding_window, to the layers
  // from max_window_layers on; Gemma 2 alternates (even layers local); Gemma 3 has one global layer
  // in every sliding_window_pattern. layer_types, when given, says it for every family.
  const int L = c.n_layer;
  // null: no window; a window of 0 tokens would hide every key, itself included.
  const long long window = f.find("sliding_window") ? f.integer("sliding_window", 1, 1 << 30, -1) : 0;
  std::vector<bool> by_rule(static_cast<std::size_t>(L), false);
  if (type == "mistral") {
    by_rule.assign(static_cast<std::size_t>(L), window > 0);
  } else if (qwen) {
    const bool use = f.flag("use_sliding_window", false);
    const long long from = f.integer("max_window_layers", 0, 1 << 20, L);
    for (int l = 0; l < L; ++l) by_rule[static_cast<std::size_t>(l)] = use && l >= from;
  } else if (type == "gemma2") {
    for (int l = 0; l < L; ++l) by_rule[static_cast<std::size_t>(l)] = l % 2 == 0;
  } else if (type == "gemma3_text") {
    const long long pattern = f.integer("sliding_window_pattern", 1, 1 << 20, 6);
    for (int l = 0; l < L; ++l) by_rule[static_cast<std::size_t>(l)] = (l + 1) % pattern != 0;
  }
  std::vector<bool> sliding = sliding_layers(f, L, by_rule);
  if (qwen && !f.flag("use_sliding_window", false)) sliding.assign(static_cast<std::size_t>(L), false);
  c.layers.resize(static_cast<std::size_t>(L));
  for (int l = 0; l < L; ++l) {
    LayerSpec& spec = c.layers[static_cast<std::size_t>(l)];
    const bool is_sliding = sliding[static_cast<std::size_t>(l)];
    if (is_sliding) {
      if (window <= 0) refuse(f.file, f.name("sliding_window") + " is missing or 0, yet layer " + std::to_string(l) +
                                       " is a sliding-window layer");
      spec.window = static_cast<int>(std::min<long long>(window, 1 << 30));
    }
    spec.rope = type == "gemma3_text" && is_sliding ? local : global;
  }

  if (gemma) {
    c.norm_plus_one = true;
    c.sandwich_norms = true;
    c.embed_scale = std::sqrt(static_cast<float>(c.d_model));
    const double scalar = f.number("query_pre_attn_scalar", 1e-6, 1e9, 256);
    c.score_scale = static_cast<float>(1.0 / std::sqrt(scalar));
    c.attn_softcap = static_cast<float>(f.number("attn_logit_softcapping", 0, 1e6, type == "gemma2" ? 50.0 : 0.0));
    c.final_softcap = static_cast<float>(f.number("final_logit_softcapping", 0, 1e6, type == "gemma2" ? 30.0 : 0.0));
  }
  ModelConfigFile out;
  out.config = c;
  out.layout = WeightLayout::OutIn;
  out.tied_head = f.flag("tie_word_embeddings", gemma);
  return out;
}

// [SECTION] the encoders: BERT, DistilBERT, RoBERTa ---------------------------------------------

// What every encoder here is: learned positions, LayerNorm after each add (and on the embeddings),
// biases everywhere, every query sees every key, the exact GELU, and a masked-LM head (dense, GELU,
// LayerNorm, the decoder tied to the embedding with its own bias) when the file has one.
TransformerConfig encoder_config(const Fields& f, int C, int L, int H, int F, int V, int P, float eps, const char* act_key,
                                 const std::string& act) {
  if (C % H != 0)
    refuse(f.file, "the width " + std::to_string(C) + " is not divisible by the " + std::to_string(H) +
                    " heads (every head needs the same width)");
  if (act != "gelu")
    refuse(f.file, f.name(act_key) + " " + quoted_name(act) +
                    " is not supported: the encoders here use the exact (erf) GELU, \"gelu\"");
  TransformerConfig c;
  c.d_model = C, c.n_layer = L, c.n_head = c.n_kv_head = H, c.head_dim = C / H, c.d_ff = F, c.vocab_size = V;
  c.n_positions = P;
  c.norm = NormKind::LayerNorm, c.norm_eps = eps;
  c.positions = PositionKind::Learned;
  c.layers.assign(static_cast<std::size_t>(L), LayerSpec{});
  c.qkv_bias = c.o_bias = c.mlp_bias = true;
  c.score_scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
  c.activation = Activation::GeluErf;
  c.causal = false;
  c.post_norm = true;
  c.embed_norm = true;
  c.has_lm_head = c.head_transform = c.head_bias = true;  // the loader drops the head when the file has none
  return c;
}

ModelConfigFile encoder_from(const Fields& f, const std::string& type) {
  ModelConfigFile out;
  out.layout = WeightLayout::OutIn;
  out.tied_head = f.flag("tie_word_embeddings", true);
  if (type == "distilbert") {
    // DistilBERT: BERT with fewer layers, no token types, its own field names; its LayerNorms' epsilon
    // is fixed at 1e-12, and sinusoidal positions (sinusoidal_pos_embds) are a table in the file like
    // learned ones.
    const int C = static_cast<int>(f.integer("dim", 1, kMaxModelWidth, -1));
    const int L = static_cast<int>(f.integer("n_layers", 1, kMaxModelLayers, -1));
    const int H = static_cast<int>(f.integer("n_heads", 1, kMaxModelHeads, -1));
    const int F = static_cast<int>(f.integer("hidden_dim", 1, kMaxModelFfWidth, -1));
    const int V = static_cast<int>(f.integer("vocab_size", 1, kMaxVocab, -1));
    const int P = static_cast<int>(f.integer("max_position_embeddings", 1, kMaxModelPositions, 512));
    f.flag("sinusoidal_pos_embds", false);  // checked for its type only: the table is in the file either way
    out.config = encoder_config(f, C, L, H, F, V, P, 1e-12f, "activation", f.text("activation", "gelu"));
  } else {
    // BERT, and RoBERTa = BERT whose positions start at pad_token_id + 1.
    if (f.flag("is_decoder", false)) refuse(f.file, f.name("is_decoder") + " true is not supported (a BERT used as a decoder)");
    if (f.flag("add_cross_attention", false)) refuse(f.file, f.name("add_cross_attention") + " true is not supported");
    const std::string positions = f.text("position_embedding_type", "absolute");
    if (positions != "absolute")
      refuse(f.file, f.name("position_embedding_type") + " " + quoted_name(positions) +
                      " is not supported: only absolute (a learned position table) is");
    const int C = static_cast<int>(f.integer("hidden_size", 1, kMaxModelWidth, -1));
    const int L = static_cast<int>(f.integer("num_hidden_layers", 1, kMaxModelLayers, -1));
    const int H = static_cast<int>(f.integer("num_attention_heads", 1, kMaxModelHeads, -1));
    const int F = static_cast<int>(f.integer("intermediate_size", 1, kMaxModelFfWidth, -1));
    const int V = static_cast<int>(f.integer("vocab_size", 1, kMaxVocab, -1));
    const int P = static_cast<int>(f.integer("max_position_embeddings", 1, kMaxModelPositions, 512));
    const long long types = f.integer("type_vocab_size", 0, kMaxModelPositions, 2);
    if (types == 0)
      refuse(f.file, f.name("type_vocab_size") + " is 0: " + type +
                      " adds a token-type embedding to every token (type 0 at least), so its table needs a row");
    const float eps = static_cast<float>(f.number("layer_norm_eps", 1e-12, 1, 1e-12));
    out.config = encoder_config(f, C, L, H, F, V, P, eps, "hidden_act", f.text("hidden_act", "gelu"));
    out.config.n_token_types = static_cast<int>(types);
    if (type == "roberta") {
      // positions count from padding_idx + 1 (the pad token's own row is padding_idx)
      const long long pad = f.integer("pad_token_id", 0, kMaxModelPositions, 1);
      if (pad + 1 >= P)
        refuse(f.file, f.name("pad_token_id") + " " + std::to_string(pad) + " leaves no position: positions start at pad_token_id + 1 = " +
                        std::to_string(pad + 1) + " of max_position_embeddings " + std::to_string(P));
      out.config.position_offset = static_cast<int>(pad + 1);
    }
  }
  out.config.family = type;
  return out;
}

bool is_encoder(const std::string& type) { return type == "bert" || type == "distilbert" || type == "roberta"; }

const std::vector<std::string> kLlamaStyle = {"llama", "mistral", "qwen2", "qwen3", "gemma2", "gemma3_text"};

bool is_llama_style(const std::string& type) {
  return type == "gemma3" || std::find(kLlamaStyle.begin(), kLlamaStyle.end(), type) != kLlamaStyle.end();
}

bool starts_with(const std::string& s, const std::string& head) { return s.compare(0, head.size(), head) == 0; }

}  // namespace

const std::vector<std::string>& supported_model_types() {
  static const std::vector<std::string> types = {"gpt2",   "llama",  "mistral",     "qwen2", "qwen3",
                                                 "gemma2", "gemma3_text", "gemma3", "bert",  "distilbert",
                                                 "roberta"};
  return types;
}

ModelConfigFile parse_model_config(const std::string& text, const std::string& file_name) {
  if (text.size() > (64u << 20)) refuse(file_name, megabytes(text.size()) + " is too large for a config");
  const json root = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) refuse(file_name, "not valid JSON");
  if (!root.is_object()) refuse(file_name, "not a JSON object");
  const auto type_it = root.find("model_type");
  std::string list, encoders;  // the decoders, then the encoders
  for (const std::string& t : supported_model_types())
    (is_encoder(t) ? encoders : list) += ((is_encoder(t) ? encoders : list).empty() ? "" : ", ") + t;
  if (type_it == root.end() || !type_it->is_string())
    refuse(file_name, "no model_type (one of " + list + "; or the encoders " + encoders + ")");
  const std::string type = type_it->get<std::string>();
  if (type == "modernbert")
    refuse(file_name, "model_type \"modernbert\" is not supported: its local layers see a window on both sides of each "
                   "token (keys i − w/2 … i + w/2; the core's windows look back only) and its first layer has no "
                   "attention norm");
  const auto& types = supported_model_types();
  if (std::find(types.begin(), types.end(), type) == types.end())
    refuse(file_name, "model_type " + quoted_name(type) + " is not supported (the families here: " + list +
                       "); the encoders: " + encoders);
  const Fields top{root, file_name, ""};
  ModelConfigFile out;
  if (type == "gpt2") {
    out = gpt2_from(top);
  } else if (type == "gemma3") {
    // A vision-language model: its text model's fields sit in text_config.
    const json* text_config = top.find("text_config");
    if (!text_config || !text_config->is_object()) refuse(file_name, "text_config is missing (gemma3 keeps its text model there)");
    const Fields inner{*text_config, file_name, "text_config."};
    out = llama_style_from(inner, "gemma3_text");
    out.config.family = "gemma3";
    out.wrapper = "gemma3";
    if (!text_config->contains("tie_word_embeddings")) out.tied_head = top.flag("tie_word_embeddings", true);
  } else if (is_encoder(type)) {
    out = encoder_from(top, type);
  } else {
    out = llama_style_from(top, type);
  }
  validate_config(out.config, file_name);
  return out;
}

// [SECTION] the tensor-name tables ---------------------------------------------------------------

const char kHeadTensor[] = "lm_head.weight";

std::string embedding_tensor(const std::string& model_type) {
  if (is_encoder(model_type)) return "embeddings.word_embeddings.weight";
  return model_type == "gpt2" ? "wte.weight" : "embed_tokens.weight";
}

std::string head_tensor(const std::string& model_type) {
  if (model_type == "bert") return "cls.predictions.decoder.weight";
  if (model_type == "distilbert") return "vocab_projector.weight";
  if (model_type == "roberta") return "lm_head.decoder.weight";
  return kHeadTensor;
}

bool family_head_part(const std::string& model_type, const std::string& name) {
  if (model_type == "bert") return starts_with(name, "cls.predictions.");
  if (model_type == "distilbert") return starts_with(name, "vocab_");
  if (model_type == "roberta") return starts_with(name, "lm_head.");
  return name == kHeadTensor;
}

std::string family_alias(const std::string& model_type, const std::string& name) {
  if (!is_encoder(model_type)) return name;
  // the decoder's bias is the head's bias (Hugging Face ties them; files may carry either or both)
  if (name == "cls.predictions.decoder.bias") return "cls.predictions.bias";
  if (name == "lm_head.decoder.bias") return "lm_head.bias";
  // older BERT checkpoints name a LayerNorm's weight and bias gamma and beta
  if (name.find("LayerNorm.") != std::string::npos || name.find("layer_norm.") != std::string::npos) {
    if (ends_with(name, ".gamma")) return name.substr(0, name.size() - 6) + ".weight";
    if (ends_with(name, ".beta")) return name.substr(0, name.size() - 5) + ".bias";
  }
  return name;
}

std::vector<TensorSlot> family_tensors(Transformer& m, bool lm_head) {
  const TransformerConfig& c = m.config;
  const std::int64_t C = c.d_model, F = c.d_ff, hd = c.head_dim, H = c.n_head, KV = c.n_kv_head;
  std::vector<TensorSlot> t;
  const auto matrix = [&](const std::string& name, Weights& w, std::int64_t first_row, std::int64_t rows) {
    std::uint8_t* base = static_cast<std::uint8_t*>(w.data()) + first_row * w.cols * static_cast<std::int64_t>(dtype_bytes(w.dtype));
    t.push_back({name, {rows, w.cols}, base, w.dtype, false});
  };
  const auto vector = [&](const std::string& name, Vector& v, std::int64_t first, std::int64_t n) {
    t.push_back({name, {n}, v.data() + first, Dtype::F32, false});
  };
  const auto head = [&](const std::string& name) {
    if (!lm_head) return;
    Weights& w = m.lm_head.empty() ? m.embed : m.lm_head;
    matrix(name, w, 0, w.rows);
  };
  if (is_encoder(c.family)) {
    const bool distil = c.family == "distilbert";
    matrix(embedding_tensor(c.family), m.embed, 0, m.embed.rows);
    matrix("embeddings.position_embeddings.weight", m.position_table, 0, m.position_table.rows);
    if (c.n_token_types > 0) matrix("embeddings.token_type_embeddings.weight", m.token_type_table, 0, m.token_type_table.rows);
    vector("embeddings.LayerNorm.weight", m.embed_norm_w, 0, C);
    vector("embeddings.LayerNorm.bias", m.embed_norm_b, 0, C);
    for (std::size_t i = 0; i < m.blocks.size(); ++i) {
      TransformerBlock& b = m.blocks[i];
      const std::string p = (distil ? "transformer.layer." : "encoder.layer.") + std::to_string(i) + ".";
      // role → name: q, k, v, the attention's output and its norm, the MLP's two layers and its norm
      const std::string q = distil ? "attention.q_lin" : "attention.self.query";
      const std::string k = distil ? "attention.k_lin" : "attention.self.key";
      const std::string v = distil ? "attention.v_lin" : "attention.self.value";
      const std::string o = distil ? "attention.out_lin" : "attention.output.dense";
      const std::string attn_norm = distil ? "sa_layer_norm" : "attention.output.LayerNorm";
      const std::string up = distil ? "ffn.lin1" : "intermediate.dense";
      const std::string down = distil ? "ffn.lin2" : "output.dense";
      const std::string mlp_norm = distil ? "output_layer_norm" : "output.LayerNorm";
      matrix(p + q + ".weight", b.qkv, 0, C);
      vector(p + q + ".bias", b.qkv_b, 0, C);
      matrix(p + k + ".weight", b.qkv, C, C);
      vector(p + k + ".bias", b.qkv_b, C, C);
      matrix(p + v + ".weight", b.qkv, 2 * C, C);
      vector(p + v + ".bias", b.qkv_b, 2 * C, C);
      matrix(p + o + ".weight", b.o, 0, C);
      vector(p + o + ".bias", b.o_b, 0, C);
      vector(p + attn_norm + ".weight", b.attn_norm_w, 0, C);
      vector(p + attn_norm + ".bias", b.attn_norm_b, 0, C);
      matrix(p + up + ".weight", b.up, 0, F);
      vector(p + up + ".bias", b.up_b, 0, F);
      matrix(p + down + ".weight", b.down, 0, C);
      vector(p + down + ".bias", b.down_b, 0, C);
      vector(p + mlp_norm + ".weight", b.mlp_norm_w, 0, C);
      vector(p + mlp_norm + ".bias", b.mlp_norm_b, 0, C);
    }
    if (c.head_transform) {
      // the masked-LM head: transform (dense, GELU, LayerNorm), the decoder's bias, the decoder (tied
      // unless the file has its own)
      const std::string dense = c.family == "bert" ? "cls.predictions.transform.dense" : distil ? "vocab_transform" : "lm_head.dense";
      const std::string norm = c.family == "bert" ? "cls.predictions.transform.LayerNorm" : distil ? "vocab_layer_norm" : "lm_head.layer_norm";
      const std::string bias = c.family == "bert" ? "cls.predictions.bias" : distil ? "vocab_projector.bias" : "lm_head.bias";
      matrix(dense + ".weight", m.head_dense, 0, C);
      vector(dense + ".bias", m.head_dense_b, 0, C);
      vector(norm + ".weight", m.head_norm_w, 0, C);
      vector(norm + ".bias", m.head_norm_b, 0, C);
      vector(bias, m.lm_head_b, 0, c.vocab_size);
      head(head_tensor(c.family));
    }
  } else if (c.family == "gpt2") {
    matrix(embedding_tensor(c.family), m.embed, 0, m.embed.rows);
    matrix("wpe.weight", m.position_table, 0, m.position_table.rows);
    for (std::size_t i = 0; i < m.blocks.size(); ++i) {
      TransformerBlock& b = m.blocks[i];
      const std::string p = "h." + std::to_string(i) + ".";
      vector(p + "ln_1.weight", b.attn_norm_w, 0, C);
      vector(p + "ln_1.bias", b.attn_norm_b, 0, C);
      matrix(p + "attn.c_attn.weight", b.qkv, 0, C);
      vector(p + "attn.c_attn.bias", b.qkv_b, 0, 3 * C);
      matrix(p + "attn.c_proj.weight", b.o, 0, C);
      vector(p + "attn.c_proj.bias", b.o_b, 0, C);
      vector(p + "ln_2.weight", b.mlp_norm_w, 0, C);
      vector(p + "ln_2.bias", b.mlp_norm_b, 0, C);
      matrix(p + "mlp.c_fc.weight", b.up, 0, C);
      vector(p + "mlp.c_fc.bias", b.up_b, 0, 4 * C);
      matrix(p + "mlp.c_proj.weight", b.down, 0, 4 * C);
      vector(p + "mlp.c_proj.bias", b.down_b, 0, C);
    }
    vector("ln_f.weight", m.final_norm_w, 0, C);
    vector("ln_f.bias", m.final_norm_b, 0, C);
    head(kHeadTensor);
  } else {
    // Llama's names; the others differ only in what a block has (the fields of the config).
    const bool sandwich = c.sandwich_norms;
    matrix(embedding_tensor(c.family), m.embed, 0, m.embed.rows);
    for (std::size_t i = 0; i < m.blocks.size(); ++i) {
      TransformerBlock& b = m.blocks[i];
      const std::string p = "layers." + std::to_string(i) + ".";
      vector(p + "input_layernorm.weight", b.attn_norm_w, 0, C);
      matrix(p + "self_attn.q_proj.weight", b.qkv, 0, H * hd);
      matrix(p + "self_attn.k_proj.weight", b.qkv, H * hd, KV * hd);
      matrix(p + "self_attn.v_proj.weight", b.qkv, (H + KV) * hd, KV * hd);
      if (c.qkv_bias) {
        vector(p + "self_attn.q_proj.bias", b.qkv_b, 0, H * hd);
        vector(p + "self_attn.k_proj.bias", b.qkv_b, H * hd, KV * hd);
        vector(p + "self_attn.v_proj.bias", b.qkv_b, (H + KV) * hd, KV * hd);
      }
      if (c.qk_norm) {
        vector(p + "self_attn.q_norm.weight", b.q_norm_w, 0, hd);
        vector(p + "self_attn.k_norm.weight", b.k_norm_w, 0, hd);
      }
      matrix(p + "self_attn.o_proj.weight", b.o, 0, C);
      if (c.o_bias) vector(p + "self_attn.o_proj.bias", b.o_b, 0, C);
      // Gemma's four norms: after attention, before and after the MLP; Llama's second norm is the MLP's.
      if (sandwich) {
        vector(p + "post_attention_layernorm.weight", b.post_attn_norm_w, 0, C);
        vector(p + "pre_feedforward_layernorm.weight", b.mlp_norm_w, 0, C);
        vector(p + "post_feedforward_layernorm.weight", b.post_mlp_norm_w, 0, C);
      } else {
        vector(p + "post_attention_layernorm.weight", b.mlp_norm_w, 0, C);
      }
      matrix(p + "mlp.gate_proj.weight", b.up, 0, F);
      matrix(p + "mlp.up_proj.weight", b.up, F, F);
      matrix(p + "mlp.down_proj.weight", b.down, 0, C);
      if (c.mlp_bias) {
        vector(p + "mlp.gate_proj.bias", b.up_b, 0, F);
        vector(p + "mlp.up_proj.bias", b.up_b, F, F);
        vector(p + "mlp.down_proj.bias", b.down_b, 0, C);
      }
    }
    vector("norm.weight", m.final_norm_w, 0, C);
    head(kHeadTensor);
  }
  return t;
}

const std::vector<std::string>& family_prefixes(const std::string& type) {
  static const std::vector<std::string> gpt2 = {"transformer."};
  static const std::vector<std::string> llama = {"model."};
  static const std::vector<std::string> gemma3 = {"model.language_model.", "language_model.model.", "language_model.",
                                                  "model."};
  static const std::vector<std::string> bert = {"bert."}, distilbert = {"distilbert."}, roberta = {"roberta."};
  static const std::vector<std::string> none;
  if (type == "gpt2") return gpt2;
  if (type == "bert") return bert;
  if (type == "distilbert") return distilbert;
  if (type == "roberta") return roberta;
  if (type == "gemma3") return gemma3;
  return is_llama_style(type) ? llama : none;
}

std::string strip_family_prefix(const std::string& type, const std::string& name) {
  for (const std::string& p : family_prefixes(type))
    if (starts_with(name, p)) return name.substr(p.size());
  return name;
}

bool family_ignores_tensor(const std::string& type, const std::string& name) {
  if (type == "gpt2") return ends_with(name, ".attn.bias") || ends_with(name, ".attn.masked_bias");
  if (is_encoder(type)) {
    // buffers of the position and type ids, the pooler (BertModel's), the next-sentence head (BertForPreTraining)
    const std::string n = strip_family_prefix(type, name);
    return n == "embeddings.position_ids" || n == "embeddings.token_type_ids" || starts_with(n, "pooler.") ||
           starts_with(n, "cls.seq_relationship.");
  }
  if (type == "gemma3")
    for (const char* p : {"vision_tower.", "multi_modal_projector.", "model.vision_tower.", "model.multi_modal_projector."})
      if (starts_with(name, p)) return true;
  // Rotary frequencies some older checkpoints saved: the forward computes its own.
  return ends_with(name, ".rotary_emb.inv_freq");
}

std::string model_config_json(const TransformerConfig& c) {
  if (c.family != "gpt2") throw std::invalid_argument("config.json: writing is for GPT-2 configurations (got " + c.family + ")");
  // The epsilon as its shortest float text (1e-05, not 9.999999747378752e-06).
  char eps[32];
  for (int digits = 1; digits <= 9; ++digits) {
    std::snprintf(eps, sizeof eps, "%.*g", digits, static_cast<double>(c.norm_eps));
    if (std::strtof(eps, nullptr) == c.norm_eps) break;
  }
  nlohmann::ordered_json j;
  j["architectures"] = {"GPT2LMHeadModel"};
  j["model_type"] = "gpt2";
  j["activation_function"] = "gelu_new";
  j["n_layer"] = c.n_layer;
  j["n_head"] = c.n_head;
  j["n_embd"] = c.d_model;
  j["n_positions"] = c.n_positions;
  j["n_ctx"] = c.n_positions;
  j["vocab_size"] = c.vocab_size;
  j["layer_norm_epsilon"] = std::strtod(eps, nullptr);
  if (c.score_scale == 1.0f && c.head_dim != 1) j["scale_attn_weights"] = false;  // Hugging Face's default is true
  return j.dump(2) + "\n";
}

}  // namespace attn
