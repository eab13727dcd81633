// A model's weights and the views' answer as a JSON header plus raw numbers (model_transfer.h).
// Not a loader: nothing here knows a file format or a family's tensor names.
#include "model_transfer.h"

#include <cmath>
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

// [SECTION] The views' answer: the header's parts and the numbers in one order, written by Pack and read back
// by Unpack part by part in the same order.
namespace {
struct Pack {
  std::vector<float>& numbers;
  json matrix(const Matrix& m) {
    numbers.insert(numbers.end(), m.data(), m.data() + m.size());
    return {m.rows(), m.cols()};
  }
  json vector(const Vector& v) { return std::vector<float>(v.data(), v.data() + v.size()); }
  static json next(const std::vector<NextToken>& options) {
    json out = json::array();
    for (const NextToken& n : options) out.push_back({n.id, n.p});
    return out;
  }
  json trace(const ModelTrace& t) {
    json layers = json::array();
    for (const LayerTrace& l : t.layers) {
      json summaries = json::array(), thumbnails = json::array();
      for (const HeadSummary& s : l.summaries)
        summaries.push_back({static_cast<int>(s.pattern), s.previous, s.first, s.self, s.next, s.ahead, s.spread, s.top_key,
                             s.top_key_share, s.rows_used, s.first_value_ratio, s.sink});
      for (const Matrix& m : l.thumbnails) thumbnails.push_back(matrix(m));
      layers.push_back({{"summaries", summaries}, {"thumbnails", thumbnails}});
    }
    json streams = json::array();
    for (const Matrix& m : t.streams) streams.push_back(matrix(m));
    json rows = json::array();
    for (const std::vector<NextToken>& options : t.next) rows.push_back(next(options));
    return {{"token_ids", t.token_ids}, {"layers", layers}, {"stream_every", t.stream_every}, {"streams", streams},
            {"final_normed", matrix(t.final_normed)}, {"next", rows}, {"padding", t.padding}, {"token_types", t.token_types}};
  }
  json detail(const LayerDetail& d) {
    json matrices = json::array(), weights = json::array();
    for (const Matrix* m : {&d.x, &d.query, &d.key, &d.value, &d.query_projected, &d.key_projected, &d.query_normed,
                            &d.key_normed, &d.head_outputs, &d.stream_in})
      matrices.push_back(matrix(*m));
    for (const Matrix& w : d.weights) weights.push_back(matrix(w));
    return {{"matrices", matrices}, {"weights", weights}};
  }
  json attribution(const LogitAttribution& a) {
    return {{"position", a.position}, {"target", a.target}, {"against", a.against}, {"logit", a.logit},
            {"offset", a.offset}, {"embeddings", a.embeddings}, {"heads", matrix(a.heads)},
            {"post_norms_frozen", a.post_norms_frozen}, {"biases", vector(a.biases)}, {"mlps", vector(a.mlps)}};
  }
};

struct Unpack {
  const float* numbers;
  std::size_t count;
  std::vector<TensorDestination>* into;
  std::size_t at = 0;
  Matrix matrix(const json& s) {
    const long long rows = s.at(0).get<long long>(), cols = s.at(1).get<long long>();
    if (rows < 0 || cols < 0 || static_cast<unsigned long long>(rows * cols) > count - at)
      throw std::invalid_argument("views: fewer numbers than the header says");
    Matrix m(rows, cols);
    const std::size_t bytes = static_cast<std::size_t>(m.size()) * sizeof(float);
    if (into) into->push_back({m.data(), bytes});  // (moving an Eigen matrix keeps its buffer)
    else if (m.size() > 0) std::memcpy(m.data(), numbers + at, bytes);
    at += static_cast<std::size_t>(m.size());
    return m;
  }
  static Vector vector(const json& v) {
    const std::vector<float> f = v;
    return Eigen::Map<const Vector>(f.data(), static_cast<Eigen::Index>(f.size()));
  }
  static std::vector<NextToken> next(const json& v) {
    std::vector<NextToken> out;
    for (const json& n : v) out.push_back({n.at(0).get<int>(), n.at(1).get<float>()});
    return out;
  }
  ModelTrace trace(const json& j) {
    ModelTrace t;
    j.at("token_ids").get_to(t.token_ids);
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
      for (const json& m : l.at("thumbnails")) layer.thumbnails.push_back(matrix(m));
      t.layers.push_back(std::move(layer));
    }
    t.stream_every = j.at("stream_every");
    for (const json& m : j.at("streams")) t.streams.push_back(matrix(m));
    t.final_normed = matrix(j.at("final_normed"));
    for (const json& row : j.at("next")) t.next.push_back(next(row));
    t.padding = j.at("padding");
    j.at("token_types").get_to(t.token_types);
    return t;
  }
  LayerDetail detail(const json& j) {
    LayerDetail d;
    const json& m = j.at("matrices");
    if (m.size() != 10) throw std::invalid_argument("views: a layer's detail of " + std::to_string(m.size()) + " matrices");
    std::size_t k = 0;
    for (Matrix* to : {&d.x, &d.query, &d.key, &d.value, &d.query_projected, &d.key_projected, &d.query_normed,
                       &d.key_normed, &d.head_outputs, &d.stream_in})
      *to = matrix(m.at(k++));
    for (const json& w : j.at("weights")) d.weights.push_back(matrix(w));
    return d;
  }
  LogitAttribution attribution(const json& a) {
    LogitAttribution out;
    out.position = a.at("position"), out.target = a.at("target"), out.against = a.at("against");
    out.logit = a.at("logit"), out.offset = a.at("offset"), out.embeddings = a.at("embeddings");
    out.heads = matrix(a.at("heads"));
    out.post_norms_frozen = a.at("post_norms_frozen");
    out.biases = vector(a.at("biases"));
    out.mlps = vector(a.at("mlps"));
    return out;
  }
};

// The runs in the order they are packed: the answer's member, and whether `held` (an ask) kept its inputs.
struct RunSlot {
  const char* name;
  std::shared_ptr<const ModelTrace> ModelViews::*run;
  bool (*same)(const ModelViewsAsk& a, const ModelViewsAsk& held);
};
const RunSlot kRuns[] = {
    {"base", &ModelViews::base, [](const ModelViewsAsk& a, const ModelViewsAsk& h) { return a.ids == h.ids; }},
    {"patch_source", &ModelViews::patch_source, [](const ModelViewsAsk& a, const ModelViewsAsk& h) { return a.patch_ids == h.patch_ids; }},
    {"shown", &ModelViews::shown,
     [](const ModelViewsAsk& a, const ModelViewsAsk& h) {
       return a.ids == h.ids && same_edits(a.edit, h.edit) && a.patch_ids == h.patch_ids && a.patch_heads == h.patch_heads &&
              a.patch_resid == h.patch_resid;
     }},
    {"compare_base", &ModelViews::compare_base,
     [](const ModelViewsAsk& a, const ModelViewsAsk& h) { return h.compare && a.compare_ids == h.compare_ids; }},
    {"compare_shown", &ModelViews::compare_shown,
     [](const ModelViewsAsk& a, const ModelViewsAsk& h) {
       return h.compare && a.compare_ids == h.compare_ids && same_edits(a.compare_edit, h.compare_edit);
     }},
};
}  // namespace

PackedTrace pack_model_views(const ModelViews& v, const ModelViewsAsk* held) {
  PackedTrace packed;
  Pack p{packed.numbers};
  json header = {{"ask", model_views_ask_json(v.ask)}};
  json runs = json::object();
  for (const RunSlot& r : kRuns) {
    const std::shared_ptr<const ModelTrace>& run = v.*r.run;
    if (!run) continue;
    if (r.run == &ModelViews::shown && run == v.base) runs[r.name] = "base";
    else if (r.run == &ModelViews::compare_shown && run == v.compare_base) runs[r.name] = "compare_base";
    else if (held && r.same(v.ask, *held)) runs[r.name] = "held";
    else runs[r.name] = p.trace(*run);
  }
  header["runs"] = runs;
  if (v.detail) header["detail"] = p.detail(*v.detail);
  if (v.compare_detail) header["compare_detail"] = p.detail(*v.compare_detail);
  header["next"] = Pack::next(v.next);
  const EditEffect& e = v.effect;
  header["effect"] = {{"shown", e.shown}, {"position", e.position}, {"target", e.target}, {"base_log_prob", e.base_log_prob},
                      {"log_prob", e.log_prob}, {"patched", e.patched}, {"source_log_prob", e.source_log_prob},
                      {"restored", std::isnan(e.restored) ? json(nullptr) : json(e.restored)}, {"base_next", Pack::next(e.base_next)}};
  if (v.attribution) header["attribution"] = p.attribution(*v.attribution);
  if (v.influence) header["influence"] = {{"values", p.matrix(v.influence->values)}, {"value_norms", p.vector(v.influence->value_norms)}};
  const AroundHeadView& a = v.around;
  header["around"] = {{"loaded", a.loaded}, {"head", a.head}, {"token", a.token}, {"stream_in", a.stream_in},
                      {"attention_update", a.attention_update}, {"mlp_update", a.mlp_update}, {"stream_out", a.stream_out},
                      {"head_parts", a.head_parts}, {"head_shares", a.head_shares}, {"shares_add_up", a.shares_add_up}};
  if (const HeadProjections* hp = v.projections.get()) {
    json weights = json::array(), biases = json::array();
    for (int which = 0; which < 3; ++which) weights.push_back(p.matrix(hp->weights[which])), biases.push_back(p.vector(hp->biases[which]));
    header["projections"] = {{"weights", weights}, {"biases", biases}};
  }
  const TwinAsk& t = v.twins;
  json heads = json::array();
  for (const AskedHead& h : t.heads) heads.push_back({h.share_a, h.share_b, h.answer_a, h.answer_b, h.delta_a, h.delta_b});
  header["twins"] = {{"shown", t.shown}, {"position", t.position}, {"layer", t.layer}, {"answer_a", t.answer_a},
                     {"answer_b", t.answer_b}, {"p_a", t.p_a}, {"p_b", t.p_b}, {"target", t.target}, {"against", t.against},
                     {"difference_a", t.difference_a}, {"difference_b", t.difference_b}, {"rest_a", t.rest_a},
                     {"rest_b", t.rest_b}, {"ablated", t.ablated}, {"heads", heads}};
  packed.header = header.dump();
  return packed;
}

ModelViews unpack_model_views(const std::string& header, const float* numbers, std::size_t count, const ModelViews* held,
                              std::vector<TensorDestination>* into) {
  try {
    const json j = json::parse(header);
    Unpack u{numbers, count, into};
    ModelViews v;
    v.ask = model_views_ask_from_json(j.at("ask"));
    const json& runs = j.at("runs");
    for (const RunSlot& r : kRuns) {
      if (!runs.contains(r.name)) continue;
      const json& run = runs.at(r.name);
      std::shared_ptr<const ModelTrace>& to = v.*r.run;
      if (run == "base") to = v.base;
      else if (run == "compare_base") to = v.compare_base;
      else if (run == "held") {
        to = held ? held->*r.run : nullptr;
        if (!to || !r.same(v.ask, held->ask)) throw std::invalid_argument(std::string("views: the ") + r.name + " run is not held here");
      } else to = std::make_shared<const ModelTrace>(u.trace(run));
    }
    if (j.contains("detail")) v.detail = std::make_shared<const LayerDetail>(u.detail(j.at("detail")));
    if (j.contains("compare_detail")) v.compare_detail = std::make_shared<const LayerDetail>(u.detail(j.at("compare_detail")));
    v.next = Unpack::next(j.at("next"));
    const json& e = j.at("effect");
    EditEffect& f = v.effect;
    f.shown = e.at("shown"), f.position = e.at("position"), f.target = e.at("target");
    f.base_log_prob = e.at("base_log_prob"), f.log_prob = e.at("log_prob"), f.patched = e.at("patched");
    f.source_log_prob = e.at("source_log_prob");
    f.restored = e.at("restored").is_null() ? std::nan("") : e.at("restored").get<double>();
    f.base_next = Unpack::next(e.at("base_next"));
    if (j.contains("attribution")) v.attribution = std::make_shared<const LogitAttribution>(u.attribution(j.at("attribution")));
    if (j.contains("influence")) {
      const json& i = j.at("influence");
      Matrix values = u.matrix(i.at("values"));
      v.influence = std::make_shared<const Influence>(Influence{std::move(values), Unpack::vector(i.at("value_norms"))});
    }
    const json& a = j.at("around");
    AroundHeadView& r = v.around;
    r.loaded = a.at("loaded"), r.head = a.at("head"), r.token = a.at("token"), r.stream_in = a.at("stream_in");
    r.attention_update = a.at("attention_update"), r.mlp_update = a.at("mlp_update"), r.stream_out = a.at("stream_out");
    a.at("head_parts").get_to(r.head_parts);
    a.at("head_shares").get_to(r.head_shares);
    r.shares_add_up = a.at("shares_add_up");
    if (j.contains("projections")) {
      const json& hp = j.at("projections");
      auto out = std::make_shared<HeadProjections>();
      for (int which = 0; which < 3; ++which) {
        out->weights[which] = u.matrix(hp.at("weights").at(which));
        out->biases[which] = Unpack::vector(hp.at("biases").at(which));
      }
      v.projections = std::move(out);
    }
    const json& t = j.at("twins");
    TwinAsk& w = v.twins;
    w.shown = t.at("shown"), w.position = t.at("position"), w.layer = t.at("layer"), w.answer_a = t.at("answer_a");
    w.answer_b = t.at("answer_b"), w.p_a = t.at("p_a"), w.p_b = t.at("p_b"), w.target = t.at("target"), w.against = t.at("against");
    w.difference_a = t.at("difference_a"), w.difference_b = t.at("difference_b"), w.rest_a = t.at("rest_a"), w.rest_b = t.at("rest_b");
    w.ablated = t.at("ablated");
    for (const json& h : t.at("heads"))
      w.heads.push_back({h.at(0).get<float>(), h.at(1).get<float>(), h.at(2).get<int>(), h.at(3).get<int>(), h.at(4).get<float>(),
                         h.at(5).get<float>()});
    if (u.at != count) throw std::invalid_argument("views: more numbers than the header says");
    return v;
  } catch (const json::exception& e) {
    throw std::invalid_argument(std::string("views: a bad header (") + e.what() + ")");
  }
}

}  // namespace attn
