// AppState: applying inputs, and the state's JSON (see app_state.h).
#include "app_state.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <stdexcept>

#include "../api/compute_json.h"
#include "../api/model_json.h"

namespace attn {

using nlohmann::json;

namespace {
struct ViewInfo {
  View view;
  const char* name;
  const char* title;
};
constexpr ViewInfo kViews[kViewCount] = {
    {View::Flow, "flow", "Flow"},           {View::Weights, "weights", "Weights"},   {View::Heads, "heads", "Heads"},
    {View::Library, "library", "Library"},  {View::Steps, "steps", "Steps"},
    {View::Derive, "derive", "Derive"},     {View::Break, "break", "Break"},
    {View::Mistakes, "mistakes", "Mistakes"}, {View::Build, "build", "Build"},
    {View::Cost, "cost", "Cost T²"},        {View::Practice, "practice", "Practice"},
    {View::Compare, "compare", "Compare"},
};
[[noreturn]] void bad(const std::string& key, const std::string& why) {
  throw std::invalid_argument(key + ": " + why);
}
}  // namespace

const char* view_name(View v) { return kViews[static_cast<int>(v)].name; }
const char* view_title(View v) { return kViews[static_cast<int>(v)].title; }
bool parse_view(const std::string& name, View* v) {
  for (const ViewInfo& info : kViews)
    if (name == info.name) {
      *v = info.view;
      return true;
    }
  return false;
}

Matrix AppInputs::derive_default_qk() {
  Matrix m(3, 2);
  m << 1, 0, 0, 1, 1, 1;  // token 3 is "both"
  return m;
}

Matrix AppInputs::derive_default_v() {
  Matrix m(3, 2);
  m << 1, 2, 3, 4, 5, 6;
  return m;
}

bool AppInputs::operator==(const AppInputs& o) const {
  return sentence == o.sentence && cross == o.cross && kv_sentence == o.kv_sentence && token == o.token &&
         causal == o.causal && scale == o.scale && temperature == o.temperature && mistake == o.mistake &&
         library_best_only == o.library_best_only && view == o.view && step == o.step && derive_q == o.derive_q &&
         derive_k == o.derive_k && derive_v == o.derive_v && derive_revealed == o.derive_revealed &&
         break_d == o.break_d && break_T == o.break_T && break_seed == o.break_seed && checklist == o.checklist &&
         embed == o.embed && embed_views == o.embed_views && light_theme == o.light_theme &&
         reduced_motion == o.reduced_motion && backend == o.backend && cost_T == o.cost_T && model == o.model &&
         layer == o.layer && head == o.head && compare_sentence == o.compare_sentence &&
         compare_tokens == o.compare_tokens && compare_token == o.compare_token;
}

std::string weights_csv(const AppState& s) {
  auto quoted = [](const std::string& text) {  // RFC 4180: double the quotes, quote every field
    std::string out = "\"";
    for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
  };
  const Matrix& w = s.model.trace.weights;
  std::string csv = quoted("query \\ key");
  for (const Token& t : s.model.keys.tokens) csv += "," + quoted(t.text);
  csv += "\n";
  char number[32];
  for (Eigen::Index i = 0; i < w.rows(); ++i) {
    csv += quoted(s.model.queries.tokens[i].text);
    for (Eigen::Index j = 0; j < w.cols(); ++j) {
      std::snprintf(number, sizeof number, ",%.6f", static_cast<double>(w(i, j)));
      csv += number;
    }
    csv += "\n";
  }
  return csv;
}

int find_token(const EmbeddedSentence& sentence, const std::string& word) {
  std::string lower = word;
  for (char& c : lower)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  for (std::size_t i = 0; i < sentence.tokens.size(); ++i)
    if (sentence.tokens[i].lower == lower) return static_cast<int>(i);
  return -1;
}

BackendChoice choose_backend(const std::string& requested, int T, const GpuFacts& gpu) {
  const std::string T_text = "T = " + std::to_string(T);
  if (requested == "webgl" && !gpu.available)
    return {"simd", "the GPU path is unavailable (" + gpu.unavailable_reason + "): the SIMD kernel computes instead"};
  if (requested == "webgl" && gpu.software)
    return {"webgl", "chosen by hand; this GPU is a software renderer, slower than the CPU"};
  if (requested != "auto") return {requested, "chosen by hand"};
  if (!gpu.available) return {"simd", "auto: no GPU path here (" + gpu.unavailable_reason + ")"};
  if (gpu.software) return {"simd", "auto: the GPU here is a software renderer, slower than the CPU"};
  if (T < kGpuFromT)
    return {"simd", "auto: " + T_text + " is small; the GPU pays off from T = " + std::to_string(kGpuFromT)};
  return {"webgl", "auto: " + T_text + " is large, and a hardware GPU is there"};
}

namespace {

// A loaded model's tokens as a learner reads them: the text "·it" (display), and for look-ups by
// word (setState({token: "it"})) the decoded text without its spaces, lower-cased.
std::vector<Token> model_tokens(const TextTokenizer& tokenizer, const std::vector<int>& ids) {
  std::vector<Token> tokens;
  for (int id : ids) {
    Token t;
    t.text = tokenizer.display(id);
    const std::string bytes = tokenizer.token_bytes(id);
    const std::size_t first = bytes.find_first_not_of(" \t\n\r"), last = bytes.find_last_not_of(" \t\n\r");
    t.lower = first == std::string::npos ? bytes : bytes.substr(first, last - first + 1);
    for (char& c : t.lower)
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    tokens.push_back(std::move(t));
  }
  return tokens;
}

// The tokens a sentence has under a model (the hand-made lexicon or a loaded tokenizer); throws
// std::invalid_argument for text the model cannot read.
std::vector<int> model_token_ids(const LoadedModel& m, const std::string& sentence) {
  if (sentence.find_first_not_of(" \t\n\r") == std::string::npos)
    throw std::invalid_argument("sentence is empty: type a few words");
  std::vector<int> ids = m.tokenizer->encode(sentence);
  const int longest = std::min(kMaxTokens, m.model->config.n_positions);
  if (static_cast<int>(ids.size()) > longest)
    throw std::invalid_argument("sentence has " + std::to_string(ids.size()) + " tokens; " + m.name + " reads at most " +
                                std::to_string(longest) + " here: shorten it");
  return ids;
}

EmbeddedSentence sentence_tokens(const AppState& state, const std::string& model, const std::string& sentence) {
  const LoadedModel* m = find_model(state, model);
  if (!m) return embed_sentence(sentence);
  EmbeddedSentence e;
  e.tokens = model_tokens(*m->tokenizer, model_token_ids(*m, sentence));
  e.unknown.assign(e.tokens.size(), false);
  return e;
}

// The hand-made model's one layer and one head, in the shape every model's trace has.
std::shared_ptr<const ModelTrace> handmade_forward(const EmbeddedSentence& queries, const AttentionTrace& trace) {
  auto forward = std::make_shared<ModelTrace>();
  LayerTrace layer;
  layer.x = queries.x;
  layer.query = trace.query, layer.key = trace.key, layer.value = trace.value;
  layer.weights = {trace.weights};
  layer.head_outputs = trace.output;
  forward->layers.push_back(std::move(layer));
  return forward;
}

}  // namespace

void add_model(AppState& state, LoadedModel model) {
  for (LoadedModel& m : state.models)
    if (m.name == model.name) {
      m = std::move(model);
      return;
    }
  state.models.push_back(std::move(model));
}

const LoadedModel* find_model(const AppState& state, const std::string& name) {
  for (const LoadedModel& m : state.models)
    if (m.name == name) return &m;
  return nullptr;
}

json current_model_info(const AppState& state) {
  if (const LoadedModel* m = find_model(state, state.inputs.model)) return model_info_json(*m);
  const WorkedModel& w = worked_model();
  return {{"name", kHandmadeModel}, {"family", "handmade"}, {"layers", 1}, {"heads", 1},
          {"d_model", kFeatures}, {"d_head", kHeadDim}, {"vocab_size", nullptr},
          {"params", w.wq.size() + w.wk.size() + w.wv.size()}};
}

bool apply_inputs(AppState& state, const AppInputs& next, double now) {
  AppModel model;
  AppInputs applied = next;
  std::string key = "model";
  try {
    const LoadedModel* loaded = find_model(state, next.model);
    if (!loaded && next.model != kHandmadeModel)
      throw std::invalid_argument("no model named \"" + next.model + "\" is loaded");
    AttentionOptions o;
    o.causal = next.causal;
    o.scale = next.scale;
    o.temperature = next.temperature;
    o.mistake = next.mistake;
    if (loaded) {
      // A GPT-2 model: its own tokens, the forward once per model and text (not per layer, head or
      // token), and the chosen head's trace. It is a decoder: always causal, never cross-attention.
      const Gpt2Config& c = loaded->model->config;
      applied.layer = std::clamp(next.layer, 0, c.n_layer - 1);
      applied.head = std::clamp(next.head, 0, c.n_head - 1);
      key = "sentence";
      const bool same_forward = state.model.forward && state.model.forward_model == loaded->model &&
                                state.inputs.sentence == next.sentence;
      model.token_ids = same_forward ? state.model.token_ids : model_token_ids(*loaded, next.sentence);
      model.forward = same_forward ? state.model.forward
                                   : std::make_shared<const ModelTrace>(gpt2_forward(*loaded->model, model.token_ids));
      model.forward_model = loaded->model;
      model.queries.tokens = same_forward ? state.model.queries.tokens : model_tokens(*loaded->tokenizer, model.token_ids);
      model.queries.unknown.assign(model.queries.tokens.size(), false);
      model.queries.x = model.forward->layers[applied.layer].x;
      model.keys = model.queries;
      key = "options";
      o.causal = true;
      model.trace = gpt2_head_trace(*model.forward, applied.layer, applied.head, c.head_dim(), o);
    } else {
      applied.layer = applied.head = 0;
      key = "sentence";
      model.queries = embed_sentence(next.sentence);
      key = "kv_sentence";
      model.keys = next.cross ? embed_sentence(next.kv_sentence) : model.queries;
      key = "options";
      const WorkedModel& w = worked_model();
      model.trace = attend_projected(model.queries.x, model.keys.x, w.wq, w.wk, w.wv, o);
      model.forward = handmade_forward(model.queries, model.trace);
    }
    key = "compare_sentence";
    applied.compare_token = std::clamp(next.compare_token, 0, static_cast<int>(model.queries.tokens.size()) - 1);
    if (next.view == View::Compare && !next.compare_tokens) {
      if (loaded) {
        const Gpt2Config& c = loaded->model->config;
        const bool same = state.model.compare_forward && state.model.compare_forward_model == loaded->model &&
                          state.inputs.compare_sentence == next.compare_sentence;
        const std::vector<int> ids = model_token_ids(*loaded, next.compare_sentence);
        model.compare_forward = same ? state.model.compare_forward
                                     : std::make_shared<const ModelTrace>(gpt2_forward(*loaded->model, ids));
        model.compare_forward_model = loaded->model;
        model.compare_queries.tokens = model_tokens(*loaded->tokenizer, ids);
        model.compare_queries.unknown.assign(model.compare_queries.tokens.size(), false);
        model.compare_queries.x = model.compare_forward->layers[applied.layer].x;
        model.compare = gpt2_head_trace(*model.compare_forward, applied.layer, applied.head, c.head_dim(), o);
      } else {
        model.compare_queries = embed_sentence(next.compare_sentence);
        const EmbeddedSentence& keys = next.cross ? model.keys : model.compare_queries;
        const WorkedModel& w = worked_model();
        model.compare = attend_projected(model.compare_queries.x, keys.x, w.wq, w.wk, w.wv, o);
      }
    }
    key = "derive";
    AttentionOptions derive_options;  // the derive view follows the lesson: scaled, no mask
    model.derive = attend(next.derive_q, next.derive_k, next.derive_v, derive_options);
    key = "break";
    const BreakResult& old = state.model.saturation;
    const bool same_break = state.revision > 0 && old.d == next.break_d && old.T == next.break_T &&
                            old.seed == static_cast<std::uint64_t>(next.break_seed);
    model.saturation = same_break ? old : run_break_experiment(next.break_d, next.break_T, next.break_seed);
    const bool same_range = state.revision > 0 && old.d == next.break_d && old.T == next.break_T;
    model.saturation_range = same_range ? state.model.saturation_range : break_ratio_range(next.break_d, next.break_T, 0);
  } catch (const std::invalid_argument& e) {
    state.error = e.what();
    state.error_key = key;
    return false;
  }
  const bool changed = applied != state.inputs || state.revision == 0;
  state.inputs = applied;
  // A new sentence may be shorter: keep the selected row inside it.
  state.inputs.token = std::clamp(next.token, 0, static_cast<int>(model.queries.tokens.size()) - 1);
  state.inputs.step = std::clamp(next.step, 0, 6);
  state.inputs.derive_revealed = std::clamp(next.derive_revealed, 0, AppInputs::kDeriveStages);
  state.model = std::move(model);
  state.error.clear();
  state.error_key.clear();
  if (changed) {
    ++state.revision;
    state.changed_at = now;
  }
  return true;
}

AppState make_initial_state() {
  AppState s;
  apply_inputs(s, AppInputs{}, 0.0);
  return s;
}

json inputs_to_json(const AppState& s) {
  const AppInputs& in = s.inputs;
  auto token_texts = [](const EmbeddedSentence& e) {
    json a = json::array();
    for (const Token& tok : e.tokens) a.push_back(tok.text);
    return a;
  };
  json unknown = json::array();
  for (bool u : s.model.queries.unknown) unknown.push_back(u);
  json j;
  j["view"] = view_name(in.view);
  j["model"] = in.model;
  j["layer"] = in.layer;
  j["head"] = in.head;
  j["model_info"] = current_model_info(s);
  j["sentence"] = in.sentence;
  j["cross"] = in.cross;
  j["kv_sentence"] = in.kv_sentence;
  j["token"] = in.token;
  j["token_text"] = s.model.queries.tokens[in.token].text;
  j["causal"] = in.causal;
  j["scale"] = in.scale;
  j["temperature"] = in.temperature;
  j["mistake"] = mistake_name(in.mistake);
  j["library_best_only"] = in.library_best_only;
  j["step"] = in.step;
  j["derive_q"] = matrix_to_json(in.derive_q);
  j["derive_k"] = matrix_to_json(in.derive_k);
  j["derive_v"] = matrix_to_json(in.derive_v);
  j["derive_revealed"] = in.derive_revealed;
  j["break_d"] = in.break_d;
  j["break_T"] = in.break_T;
  j["break_seed"] = in.break_seed;
  j["checklist"] = in.checklist;
  j["compare_sentence"] = in.compare_sentence;
  j["compare_tokens"] = in.compare_tokens;
  j["compare_token"] = in.compare_token;
  j["backend"] = in.backend;
  j["cost_T"] = in.cost_T;
  j["embed"] = in.embed;
  json views = json::array();
  for (const ViewInfo& info : kViews)
    if (in.embed_views & (1u << static_cast<int>(info.view))) views.push_back(info.name);
  j["views"] = views;
  j["theme"] = in.light_theme ? "light" : "dark";
  j["reduced_motion"] = in.reduced_motion;
  j["tokens"] = token_texts(s.model.queries);
  j["kv_tokens"] = token_texts(s.model.keys);
  j["unknown"] = unknown;
  j["error"] = s.error;
  j["revision"] = s.revision;
  return j;
}

json state_to_json(const AppState& s) {
  const AttentionTrace& t = s.model.trace;
  json j = inputs_to_json(s);
  j["d"] = t.key.cols();
  j["score_factor"] = t.score_factor;
  j["scores"] = matrix_to_json(t.masked_scores);
  j["weights"] = matrix_to_json(t.weights);
  j["output"] = matrix_to_json(t.output);
  json next = json::array();  // what a loaded model would write after the selected token
  if (const LoadedModel* m = find_model(s, s.inputs.model))
    for (const NextToken& n : top_next_tokens(*s.model.forward, s.inputs.token, 5))
      next.push_back({{"token", m->tokenizer->display(n.id)}, {"id", n.id}, {"p", n.p}});
  j["next"] = next;
  return j;
}

void apply_state_json(AppState& s, const json& partial, double now) {
  if (!partial.is_object()) throw std::invalid_argument("state: setState takes an object of inputs");
  AppInputs next = s.inputs;
  // Resolve "token" after the sentence, since a word is looked up in the new sentence.
  for (const auto& item : partial.items()) {
    const std::string& key = item.key();
    const json& v = item.value();
    if (key == "sentence" || key == "kv_sentence" || key == "compare_sentence") {
      if (!v.is_string()) bad(key, "must be a string");
      (key == "sentence" ? next.sentence : key == "kv_sentence" ? next.kv_sentence : next.compare_sentence) =
          v.get<std::string>();
    } else if (key == "cross" || key == "causal" || key == "scale" || key == "library_best_only" || key == "embed" ||
               key == "reduced_motion" || key == "compare_tokens") {
      if (!v.is_boolean()) bad(key, "must be true or false");
      const bool b = v.get<bool>();
      if (key == "compare_tokens") next.compare_tokens = b;
      if (key == "cross") next.cross = b;
      if (key == "causal") next.causal = b;
      if (key == "scale") next.scale = b;
      if (key == "library_best_only") next.library_best_only = b;
      if (key == "embed") next.embed = b;
      if (key == "reduced_motion") next.reduced_motion = b;
    } else if (key == "backend") {
      const auto known = [](const std::string& name) {
        return name == "auto" || std::find(std::begin(kBackendNames), std::end(kBackendNames), name) != std::end(kBackendNames);
      };
      if (!v.is_string() || !known(v.get<std::string>())) bad(key, "must be one of auto, scalar, eigen, simd, webgl");
      next.backend = v.get<std::string>();
    } else if (key == "theme") {
      if (!v.is_string() || (v != "dark" && v != "light")) bad(key, "must be \"dark\" or \"light\"");
      next.light_theme = v == "light";
    } else if (key == "views") {
      if (!v.is_array()) bad(key, "must be an array of view names, e.g. [\"flow\", \"weights\"]");
      unsigned mask = 0;
      for (const json& name : v) {
        View view;
        if (!name.is_string() || !parse_view(name.get<std::string>(), &view))
          bad(key, "unknown view " + name.dump());
        mask |= 1u << static_cast<int>(view);
      }
      next.embed_views = mask;
    } else if (key == "temperature") {
      if (!v.is_number() || !temperature_in_domain(v.get<double>()))  // attention.h's numeric domain
        bad(key, "must be a number from 0.05 to 20");
      next.temperature = v.get<float>();
    } else if (key == "mistake") {
      if (!v.is_string() || !parse_mistake(v.get<std::string>(), &next.mistake))
        bad(key, "must be one of none, forget_scale, softmax_wrong_axis, mask_after_softmax, mask_with_zero, "
                 "swap_keys_values");
    } else if (key == "view") {
      if (!v.is_string() || !parse_view(v.get<std::string>(), &next.view)) {
        std::string names;
        for (const ViewInfo& info : kViews) names += std::string(names.empty() ? "" : ", ") + info.name;
        bad(key, "must be one of " + names);
      }
    } else if (key == "step" || key == "derive_revealed" || key == "break_d" || key == "break_T" ||
               key == "break_seed" || key == "checklist" || key == "cost_T") {
      struct Range {
        const char* key;
        long long lo, hi;
        int* target;
      };
      int checklist_bits = static_cast<int>(next.checklist);
      const Range ranges[] = {{"step", 0, 6, &next.step},
                              {"derive_revealed", 0, AppInputs::kDeriveStages, &next.derive_revealed},
                              {"break_d", 1, kMaxBreakD, &next.break_d},
                              {"break_T", 1, 256, &next.break_T},
                              {"break_seed", 0, 1000000, &next.break_seed},
                              {"cost_T", 16, 2048, &next.cost_T},
                              {"checklist", 0, 0xffff, &checklist_bits}};
      for (const Range& r : ranges)
        if (key == r.key) {
          if (!v.is_number_integer() || v.get<long long>() < r.lo || v.get<long long>() > r.hi)
            bad(key, "must be a whole number from " + std::to_string(r.lo) + " to " + std::to_string(r.hi));
          *r.target = static_cast<int>(v.get<long long>());
        }
      next.checklist = static_cast<unsigned>(checklist_bits);
    } else if (key == "derive_q" || key == "derive_k" || key == "derive_v") {
      Matrix m;
      try {
        m = matrix_from_json(v, key.c_str());
      } catch (const std::invalid_argument& e) {
        bad(key, e.what());
      }
      if (m.rows() != 3 || m.cols() != 2) bad(key, "must be 3 rows of 2 numbers");
      (key == "derive_q" ? next.derive_q : key == "derive_k" ? next.derive_k : next.derive_v) = m;
    } else if (key == "model") {
      if (!v.is_string() || (v != kHandmadeModel && !find_model(s, v.get<std::string>()))) {
        std::string names = std::string("\"") + kHandmadeModel + "\"";
        for (const LoadedModel& m : s.models) names += ", \"" + m.name + "\"";
        bad(key, "must be the name of a loaded model: " + names);
      }
      next.model = v.get<std::string>();
    } else if (key != "token" && key != "compare_token" && key != "layer" && key != "head") {
      bad(key, "is not an input of the explainer");
    }
  }
  // Layer and head after the model, since they are checked against its shape.
  const LoadedModel* model = find_model(s, next.model);
  if (next.model != s.inputs.model) next.layer = next.head = 0;  // another model: its first head unless named
  for (const char* key : {"layer", "head"}) {
    if (!partial.contains(key)) continue;
    const json& v = partial[key];
    const int count = model ? (std::string(key) == "layer" ? model->model->config.n_layer : model->model->config.n_head) : 1;
    if (!v.is_number_integer() || v.get<long long>() < 0 || v.get<long long>() >= count)
      bad(key, "must be a whole number from 0 to " + std::to_string(count - 1) + " (" + next.model + " has " +
                   std::to_string(count) + " " + key + (count == 1 ? "" : "s") + ")");
    (std::string(key) == "layer" ? next.layer : next.head) = static_cast<int>(v.get<long long>());
  }
  EmbeddedSentence queries;
  try {
    queries = sentence_tokens(s, next.model, next.sentence);
  } catch (const std::invalid_argument& e) {
    bad("sentence", e.what());
  }
  // "token" and "compare_token": a word of the sentence or an index.
  const auto token_input = [&](const char* key, int* target) {
    const json& v = partial[key];
    const int T = static_cast<int>(queries.tokens.size());
    if (v.is_number_integer()) {
      const long long i = v.get<long long>();
      if (i < 0 || i >= T) bad(key, "index must be from 0 to " + std::to_string(T - 1));
      *target = static_cast<int>(i);
    } else if (v.is_string()) {
      const int i = find_token(queries, v.get<std::string>());
      if (i < 0) bad(key, "\"" + v.get<std::string>() + "\" is not a token of the sentence");
      *target = i;
    } else {
      bad(key, "must be a word of the sentence or its index");
    }
  };
  if (partial.contains("compare_token")) token_input("compare_token", &next.compare_token);
  if (partial.contains("token")) {
    token_input("token", &next.token);
  } else if (partial.contains("sentence") || partial.contains("model")) {
    // A new sentence: keep the same word selected if it is still there ("it" by default).
    const int same = find_token(queries, s.model.queries.tokens[s.inputs.token].lower);
    next.token = same >= 0 ? same : std::min(next.token, static_cast<int>(queries.tokens.size()) - 1);
  }
  if (!apply_inputs(s, next, now)) {  // the caller gets the error; the screen keeps its last good state
    const std::string key = s.error_key, why = s.error;
    s.error.clear();
    s.error_key.clear();
    bad(key, why);
  }
}

}  // namespace attn
