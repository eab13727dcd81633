// A model's weights and a forward's trace as a JSON header plus raw numbers (model_transfer.h).
// Not a loader: nothing here knows a file format or a family's tensor names.
#include "model_transfer.h"

#include <cstring>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace attn {

using nlohmann::json;

namespace {

// Every tensor of a model in one fixed order (the order both ends walk). `f` takes Weights& or Vector&.
template <class Model, class F>
void each_tensor(Model& m, F&& f) {
  f(m.embed);
  f(m.position_table);
  for (auto& b : m.blocks) {
    f(b.attn_norm_w), f(b.attn_norm_b), f(b.qkv), f(b.qkv_b), f(b.q_norm_w), f(b.k_norm_w), f(b.o), f(b.o_b);
    f(b.post_attn_norm_w), f(b.mlp_norm_w), f(b.mlp_norm_b), f(b.up), f(b.up_b), f(b.down), f(b.down_b);
    f(b.post_mlp_norm_w);
  }
  f(m.final_norm_w), f(m.final_norm_b), f(m.lm_head), f(m.token_type_table), f(m.embed_norm_w), f(m.embed_norm_b);
  f(m.head_dense), f(m.head_dense_b), f(m.head_norm_w), f(m.head_norm_b), f(m.lm_head_b);
}

json rope_json(const RopeConfig& r) {
  return {r.theta, static_cast<int>(r.scaling), r.factor, r.low_freq_factor, r.high_freq_factor, r.original_max_positions,
          r.beta_fast, r.beta_slow, r.attention_factor, r.truncate};
}
RopeConfig rope_from(const json& j) {
  RopeConfig r;
  r.theta = j.at(0);
  r.scaling = static_cast<RopeScaling>(j.at(1).get<int>());
  r.factor = j.at(2), r.low_freq_factor = j.at(3), r.high_freq_factor = j.at(4);
  r.original_max_positions = j.at(5);
  r.beta_fast = j.at(6), r.beta_slow = j.at(7), r.attention_factor = j.at(8);
  r.truncate = j.at(9);
  return r;
}

// The config field by field (every member of TransformerConfig: operator== checks them all).
#define ATTN_CONFIG_FIELDS(X)                                                                                     \
  X(family) X(n_layer) X(n_head) X(n_kv_head) X(head_dim) X(d_model) X(d_ff) X(vocab_size) X(n_positions)        \
  X(norm_plus_one) X(norm_eps) X(sandwich_norms) X(qkv_bias) X(o_bias) X(mlp_bias) X(qk_norm) X(attn_softcap)      \
  X(final_softcap) X(score_scale) X(embed_scale) X(gated_mlp) X(causal) X(post_norm) X(embed_norm)                 \
  X(n_token_types) X(position_offset) X(has_lm_head) X(head_transform) X(head_bias)

json config_json(const TransformerConfig& c) {
  json j;
#define WRITE(name) j[#name] = c.name;
  ATTN_CONFIG_FIELDS(WRITE)
#undef WRITE
  j["norm"] = static_cast<int>(c.norm);
  j["positions"] = static_cast<int>(c.positions);
  j["activation"] = static_cast<int>(c.activation);
  json layers = json::array();
  for (const LayerSpec& l : c.layers) layers.push_back({l.window, rope_json(l.rope)});
  j["layers"] = layers;
  return j;
}

TransformerConfig config_from(const json& j) {
  TransformerConfig c;
#define READ(name) j.at(#name).get_to(c.name);
  ATTN_CONFIG_FIELDS(READ)
#undef READ
  c.norm = static_cast<NormKind>(j.at("norm").get<int>());
  c.positions = static_cast<PositionKind>(j.at("positions").get<int>());
  c.activation = static_cast<Activation>(j.at("activation").get<int>());
  for (const json& l : j.at("layers")) c.layers.push_back({l.at(0).get<int>(), rope_from(l.at(1))});
  return c;
}

struct Describe {
  json& list;
  void operator()(const Weights& w) { list.push_back({static_cast<int>(w.dtype), w.rows, w.cols, w.transposed}); }
  void operator()(const Vector& v) { list.push_back(v.size()); }
};

}  // namespace

std::string transformer_header(const Transformer& model) {
  json tensors = json::array();
  each_tensor(model, Describe{tensors});
  return json{{"config", config_json(model.config)}, {"tensors", tensors}}.dump();
}

std::vector<TensorBytes> transformer_tensors(const Transformer& model) {
  std::vector<TensorBytes> out;
  struct Collect {
    std::vector<TensorBytes>& out;
    void operator()(const Weights& w) {
      out.push_back({w.dtype == Dtype::F32 ? static_cast<const void*>(w.f32.data()) : static_cast<const void*>(w.u16.data()), w.bytes()});
    }
    void operator()(const Vector& v) { out.push_back({v.data(), static_cast<std::size_t>(v.size()) * sizeof(float)}); }
  };
  each_tensor(model, Collect{out});
  return out;
}

std::unique_ptr<Transformer> transformer_from_header(const std::string& header) {
  try {
    const json j = json::parse(header);
    auto model = std::make_unique<Transformer>();
    model->config = config_from(j.at("config"));
    validate_config(model->config, "model");
    model->blocks.resize(static_cast<std::size_t>(model->config.n_layer));
    const json& tensors = j.at("tensors");
    std::size_t next = 0;
    struct Allocate {
      const json& tensors;
      std::size_t& next;
      void operator()(Weights& w) {
        const json& d = tensors.at(next++);
        const int dtype = d.at(0).get<int>(), rows = d.at(1).get<int>(), cols = d.at(2).get<int>();
        if (dtype < 0 || dtype > 2 || rows < 0 || cols < 0) throw std::invalid_argument("model: a bad tensor shape");
        // unset: the page sends every number (transformer_slots), and an answer is computed only after
        if (rows > 0 && cols > 0) w.allocate(static_cast<Dtype>(dtype), rows, cols, d.at(3).get<bool>(), /*zeros=*/false);
        else w.dtype = static_cast<Dtype>(dtype), w.rows = rows, w.cols = cols, w.transposed = d.at(3).get<bool>();
      }
      void operator()(Vector& v) {
        const long long n = tensors.at(next++).get<long long>();
        if (n < 0 || n > (1LL << 31)) throw std::invalid_argument("model: a bad vector size");
        v = Vector::Zero(n);
      }
    };
    each_tensor(*model, Allocate{tensors, next});
    if (next != tensors.size()) throw std::invalid_argument("model: the header names more tensors than a model has");
    return model;
  } catch (const json::exception& e) {
    throw std::invalid_argument(std::string("model: a bad header (") + e.what() + ")");
  }
}

std::vector<TensorDestination> transformer_slots(Transformer& model) {
  std::vector<TensorDestination> out;
  struct Collect {
    std::vector<TensorDestination>& out;
    void operator()(Weights& w) { out.push_back({w.empty() ? nullptr : w.data(), w.bytes()}); }
    void operator()(Vector& v) { out.push_back({v.data(), static_cast<std::size_t>(v.size()) * sizeof(float)}); }
  };
  each_tensor(model, Collect{out});
  return out;
}

namespace {
void append(std::vector<float>& numbers, const Matrix& m) {
  numbers.insert(numbers.end(), m.data(), m.data() + m.size());
}
json shape_json(const Matrix& m) { return {m.rows(), m.cols()}; }
}  // namespace

ForwardExtras forward_extras(const Transformer& model, const ModelTrace& trace, const ForwardExtrasAsk& ask,
                             const ForwardCache* cache) {
  const TransformerConfig& c = model.config;
  ForwardExtras e;
  if (ask.layer >= 0 && ask.layer < c.n_layer)
    e.layer = ask.layer, e.detail = std::make_shared<const LayerDetail>(layer_detail(model, trace, ask.layer));
  if (ask.position >= 0 && ask.position < static_cast<int>(trace.token_ids.size()) && ask.top > 0) {
    e.position = ask.position;
    e.next = next_tokens_at(model, trace, ask.position, ask.top);
    if (ask.attribution && !e.next.empty() && why_no_attribution(c).empty()) {
      const int target = e.next.front().id;
      e.attribution = std::make_shared<const LogitAttribution>(
          cache && cache->model == &model && cache->token_ids == trace.token_ids && trace.intervention.empty()
              ? attribute_logit(model, *cache, ask.position, target)
              : attribute_logit(model, trace, ask.position, target));
    }
  }
  return e;
}

namespace {
// The extras' header (their matrices' shapes) and numbers, after the trace's.
json pack_extras(const ForwardExtras& e, std::vector<float>& numbers) {
  json out = {{"layer", e.layer}, {"position", e.position}};
  json next = json::array();
  for (const NextToken& n : e.next) next.push_back({n.id, n.p});
  out["next"] = next;
  if (const LayerDetail* d = e.detail.get()) {
    json shapes = json::array();
    for (const Matrix* m : {&d->x, &d->query, &d->key, &d->value, &d->query_projected, &d->key_projected, &d->query_normed,
                            &d->key_normed, &d->head_outputs, &d->stream_in}) {
      shapes.push_back(shape_json(*m));
      append(numbers, *m);
    }
    json weights = json::array();
    for (const Matrix& w : d->weights) {
      weights.push_back(shape_json(w));
      append(numbers, w);
    }
    out["detail"] = {{"matrices", shapes}, {"weights", weights}};
  }
  if (const LogitAttribution* a = e.attribution.get()) {
    out["attribution"] = {{"position", a->position}, {"target", a->target}, {"against", a->against}, {"logit", a->logit},
                          {"offset", a->offset}, {"embeddings", a->embeddings}, {"heads", shape_json(a->heads)},
                          {"post_norms_frozen", a->post_norms_frozen},
                          {"biases", std::vector<float>(a->biases.data(), a->biases.data() + a->biases.size())},
                          {"mlps", std::vector<float>(a->mlps.data(), a->mlps.data() + a->mlps.size())}};
    append(numbers, a->heads);
  }
  return out;
}
}  // namespace

PackedTrace pack_trace(const ModelTrace& trace, const ForwardExtras* extras) {
  if (!trace.intervention.empty()) throw std::invalid_argument("pack_trace: a run with an intervention is not sent");
  PackedTrace packed;
  json layers = json::array();
  for (const LayerTrace& l : trace.layers) {
    json summaries = json::array(), thumbnails = json::array();
    for (const HeadSummary& s : l.summaries)
      summaries.push_back({static_cast<int>(s.pattern), s.previous, s.first, s.self, s.next, s.ahead, s.spread, s.top_key,
                           s.top_key_share, s.rows_used, s.first_value_ratio, s.sink});
    for (const Matrix& t : l.thumbnails) {
      thumbnails.push_back(shape_json(t));
      append(packed.numbers, t);
    }
    layers.push_back({{"summaries", summaries}, {"thumbnails", thumbnails}});
  }
  json streams = json::array();
  for (const Matrix& s : trace.streams) {
    streams.push_back(shape_json(s));
    append(packed.numbers, s);
  }
  append(packed.numbers, trace.final_normed);
  json next = json::array();
  for (const std::vector<NextToken>& options : trace.next) {
    json row = json::array();
    for (const NextToken& n : options) row.push_back({n.id, n.p});
    next.push_back(row);
  }
  json header = {{"token_ids", trace.token_ids}, {"layers", layers}, {"stream_every", trace.stream_every},
                 {"streams", streams}, {"final_normed", shape_json(trace.final_normed)}, {"next", next},
                 {"padding", trace.padding}, {"token_types", trace.token_types}};
  if (extras) header["extras"] = pack_extras(*extras, packed.numbers);
  packed.header = header.dump();
  return packed;
}

ModelTrace unpack_trace(const std::string& header, const float* numbers, std::size_t count, ForwardExtras* extras,
                        std::vector<TensorDestination>* into) {
  try {
    const json j = json::parse(header);
    ModelTrace trace;
    std::size_t at = 0;
    const auto take = [&](const json& s) {
      const long long rows = s.at(0).get<long long>(), cols = s.at(1).get<long long>();
      if (rows < 0 || cols < 0 || static_cast<unsigned long long>(rows * cols) > count - at)
        throw std::invalid_argument("trace: fewer numbers than its header says");
      Matrix m(rows, cols);
      const std::size_t bytes = static_cast<std::size_t>(m.size()) * sizeof(float);
      if (into) into->push_back({m.data(), bytes});  // (moving an Eigen matrix keeps its buffer)
      else if (m.size() > 0) std::memcpy(m.data(), numbers + at, bytes);
      at += static_cast<std::size_t>(m.size());
      return m;
    };
    j.at("token_ids").get_to(trace.token_ids);
    for (const json& l : j.at("layers")) {
      LayerTrace layer;
      for (const json& s : l.at("summaries")) {
        HeadSummary h;
        h.pattern = static_cast<HeadPattern>(s.at(0).get<int>());
        h.previous = s.at(1), h.first = s.at(2), h.self = s.at(3), h.next = s.at(4), h.ahead = s.at(5), h.spread = s.at(6);
        h.top_key = s.at(7), h.top_key_share = s.at(8), h.rows_used = s.at(9), h.first_value_ratio = s.at(10);
        h.sink = s.at(11);
        layer.summaries.push_back(h);
      }
      for (const json& t : l.at("thumbnails")) layer.thumbnails.push_back(take(t));
      trace.layers.push_back(std::move(layer));
    }
    trace.stream_every = j.at("stream_every");
    for (const json& s : j.at("streams")) trace.streams.push_back(take(s));
    trace.final_normed = take(j.at("final_normed"));
    for (const json& row : j.at("next")) {
      std::vector<NextToken> options;
      for (const json& n : row) options.push_back({n.at(0).get<int>(), n.at(1).get<float>()});
      trace.next.push_back(std::move(options));
    }
    trace.padding = j.at("padding");
    j.at("token_types").get_to(trace.token_types);
    if (j.contains("extras")) {  // read (and its numbers counted) whether or not the caller keeps them
      const json& x = j.at("extras");
      ForwardExtras e;
      e.layer = x.at("layer"), e.position = x.at("position");
      for (const json& n : x.at("next")) e.next.push_back({n.at(0).get<int>(), n.at(1).get<float>()});
      if (x.contains("detail")) {
        auto d = std::make_shared<LayerDetail>();
        const json& m = x.at("detail").at("matrices");
        if (m.size() != 10) throw std::invalid_argument("trace: a layer's detail of " + std::to_string(m.size()) + " matrices");
        std::size_t k = 0;
        for (Matrix* into : {&d->x, &d->query, &d->key, &d->value, &d->query_projected, &d->key_projected, &d->query_normed,
                             &d->key_normed, &d->head_outputs, &d->stream_in})
          *into = take(m.at(k++));
        for (const json& w : x.at("detail").at("weights")) d->weights.push_back(take(w));
        e.detail = std::move(d);
      }
      if (x.contains("attribution")) {
        const json& a = x.at("attribution");
        auto out = std::make_shared<LogitAttribution>();
        out->position = a.at("position"), out->target = a.at("target"), out->against = a.at("against");
        out->logit = a.at("logit"), out->offset = a.at("offset"), out->embeddings = a.at("embeddings");
        out->post_norms_frozen = a.at("post_norms_frozen");
        const std::vector<float> biases = a.at("biases"), mlps = a.at("mlps");
        out->biases = Eigen::Map<const Vector>(biases.data(), static_cast<Eigen::Index>(biases.size()));
        out->mlps = Eigen::Map<const Vector>(mlps.data(), static_cast<Eigen::Index>(mlps.size()));
        out->heads = take(a.at("heads"));
        e.attribution = std::move(out);
      }
      if (extras) *extras = std::move(e);
    }
    if (at != count) throw std::invalid_argument("trace: more numbers than its header says");
    return trace;
  } catch (const json::exception& e) {
    throw std::invalid_argument(std::string("trace: a bad header (") + e.what() + ")");
  }
}

}  // namespace attn
