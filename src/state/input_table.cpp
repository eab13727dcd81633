// The table of the app's inputs (see input_table.h): the rows, and the codecs they are made of.
// Not the state's logic: applying inputs and recomputing stays in app_state.cpp.
#include "input_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <type_traits>

#include "../api/compute_json.h"
#include "app_state.h"

namespace attn {

using nlohmann::json;

namespace {

[[noreturn]] void refuse(const InputField& f, const std::string& why) {
  throw std::invalid_argument(std::string(f.name) + ": " + why);
}

std::string listed(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& n : names) text += (text.empty() ? "" : ", ") + n;
  return text;
}

std::string number_text(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", x);
  return text;
}

int choice_index(const InputField& f, const json& v) {
  if (v.is_string())
    for (std::size_t i = 0; i < f.choices.size(); ++i)
      if (v.get<std::string>() == f.choices[i]) return static_cast<int>(i);
  refuse(f, "must be one of " + listed(f.choices));
}

std::vector<std::string> view_names() {
  std::vector<std::string> names;
  for (int i = 0; i < kViewCount; ++i) names.push_back(view_name(static_cast<View>(i)));
  return names;
}

std::vector<std::string> mistake_names() {
  std::vector<std::string> names;
  for (int i = 0; std::string(mistake_name(static_cast<Mistake>(i))) != "?"; ++i)
    names.push_back(mistake_name(static_cast<Mistake>(i)));
  return names;
}

std::vector<std::string> backend_choices() {
  std::vector<std::string> names = {"auto"};
  for (const char* name : kBackendNames) names.push_back(name);
  return names;
}

// A token input's value (an index, or a word of next's sentence: its first) checked against the
// tokens of next's sentence under next's model.
int token_index(const InputField& f, const AppState& s, const AppInputs& next, const json& v) {
  EmbeddedSentence queries;
  try {
    queries = query_tokens(s, next.model, next.sentence);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("sentence: ") + e.what());
  }
  const int T = static_cast<int>(queries.tokens.size());
  if (v.is_number_integer()) {
    const long long i = v.get<long long>();
    if (i < 0 || i >= T) refuse(f, "index must be from 0 to " + std::to_string(T - 1));
    return static_cast<int>(i);
  }
  if (v.is_string()) {
    const int i = find_token(queries, v.get<std::string>());
    if (i < 0) refuse(f, "\"" + v.get<std::string>() + "\" is not a token of the sentence");
    return i;
  }
  refuse(f, "must be a word of the sentence or its index");
}

// A row for the member M: equality and Reset's copy come from the member itself.
template <auto M>
InputField row(const char* name, const char* type, InputGroup group, UrlUse url, const char* doc) {
  InputField f;
  f.name = name, f.type = type, f.group = group, f.url = url, f.doc = doc;
  f.equal = [](const AppInputs& a, const AppInputs& b) { return a.*M == b.*M; };
  f.copy = [](AppInputs& to, const AppInputs& from) { to.*M = from.*M; };
  return f;
}

template <auto M>
InputField boolean(const char* name, InputGroup group, UrlUse url, const char* doc) {
  InputField f = row<M>(name, "boolean", group, url, doc);
  f.get = [](const AppInputs& in) { return json(in.*M); };
  f.set = [](const InputField& f, const AppState&, AppInputs& next, const json& v) {
    if (!v.is_boolean()) refuse(f, "must be true or false");
    next.*M = v.get<bool>();
  };
  return f;
}

template <auto M>
InputField integer(const char* name, long long lo, long long hi, InputGroup group, UrlUse url, const char* doc) {
  InputField f = row<M>(name, "integer", group, url, doc);
  f.min = static_cast<double>(lo), f.max = static_cast<double>(hi);
  f.get = [](const AppInputs& in) { return json(in.*M); };
  f.set = [](const InputField& f, const AppState&, AppInputs& next, const json& v) {
    const auto lo = static_cast<long long>(f.min), hi = static_cast<long long>(f.max);
    if (!v.is_number_integer() || v.get<long long>() < lo || v.get<long long>() > hi)
      refuse(f, "must be a whole number from " + std::to_string(lo) + " to " + std::to_string(hi));
    next.*M = static_cast<std::remove_reference_t<decltype(next.*M)>>(v.get<long long>());
  };
  return f;
}

template <auto M>
InputField text(const char* name, const char* doc) {
  InputField f = row<M>(name, "string", InputGroup::Lesson, UrlUse::Permalink, doc);
  f.get = [](const AppInputs& in) { return json(in.*M); };
  f.set = [](const InputField& f, const AppState&, AppInputs& next, const json& v) {
    if (!v.is_string()) refuse(f, "must be a string");
    next.*M = v.get<std::string>();
  };
  return f;
}

// The Derive view's 3 × 2 matrices, entries exact.
template <auto M>
InputField derive_matrix(const char* name, const char* doc) {
  InputField f = row<M>(name, "matrix", InputGroup::Lesson, UrlUse::Permalink, doc);
  f.rows = 3, f.cols = 2;
  f.get = [](const AppInputs& in) {
    json rows = json::array();
    for (Eigen::Index i = 0; i < (in.*M).rows(); ++i) {
      json r = json::array();
      for (Eigen::Index j = 0; j < (in.*M).cols(); ++j) r.push_back(exact_float((in.*M)(i, j)));
      rows.push_back(r);
    }
    return rows;
  };
  f.set = [](const InputField& f, const AppState&, AppInputs& next, const json& v) {
    Matrix m;
    try {
      m = matrix_from_json(v, f.name);
    } catch (const std::invalid_argument& e) {
      refuse(f, e.what());
    }
    if (m.rows() != f.rows || m.cols() != f.cols) refuse(f, "must be 3 rows of 2 numbers");
    next.*M = m;
  };
  return f;
}

std::vector<InputField> make_fields() {
  using G = InputGroup;
  using U = UrlUse;
  std::vector<InputField> t;

  InputField view = row<&AppInputs::view>("view", "choice", G::Place, U::Permalink, "the view shown");
  view.choices = view_names();
  view.get = [](const AppInputs& in) { return json(view_name(in.view)); };
  view.set = [](const InputField& f, const AppState&, AppInputs& next, const json& v) {
    next.view = static_cast<View>(choice_index(f, v));
  };
  t.push_back(view);

  InputField views = row<&AppInputs::embed_views>("views", "views", G::Setting, U::Read,
                                                  "the views an embed offers, comma-separated (none: all)");
  views.choices = view_names();
  views.get = [](const AppInputs& in) {
    json names = json::array();
    for (int i = 0; i < kViewCount; ++i)
      if (in.embed_views & (1u << i)) names.push_back(view_name(static_cast<View>(i)));
    return names;
  };
  views.set = [](const InputField& f, const AppState&, AppInputs& next, const json& v) {
    if (!v.is_array()) refuse(f, "must be an array of view names, e.g. [\"flow\", \"weights\"]");
    unsigned mask = 0;
    for (const json& name : v) {
      View chosen;
      if (!name.is_string() || !parse_view(name.get<std::string>(), &chosen)) refuse(f, "unknown view " + name.dump());
      mask |= 1u << static_cast<int>(chosen);
    }
    next.embed_views = mask;
  };
  t.push_back(views);

  InputField model = row<&AppInputs::model>("model", "string", G::Place, U::Permalink,
                                            "\"handmade\" or the name of a loaded model");
  model.get = [](const AppInputs& in) { return json(in.model); };
  model.set = [](const InputField& f, const AppState& s, AppInputs& next, const json& v) {
    if (!v.is_string() || (v != kHandmadeModel && !find_model(s, v.get<std::string>()))) {
      std::string names = std::string("\"") + kHandmadeModel + "\"";
      for (const LoadedModel& m : s.models) names += ", \"" + m.name + "\"";
      refuse(f, "must be the name of a loaded model: " + names);
    }
    if (v.get<std::string>() != next.model) next.layer = next.head = 0;  // another model: its first head unless named
    next.model = v.get<std::string>();
  };
  t.push_back(model);

  // The layer and the head are checked against the model's shape (the hand-made one has 1 and 1).
  const auto layer_or_head = [](const InputField& f, const AppState& s, AppInputs& next, const json& v) {
    const bool layer = std::string(f.name) == "layer";
    const LoadedModel* m = find_model(s, next.model);
    const int count = m ? (layer ? m->model->config.n_layer : m->model->config.n_head) : 1;
    if (!v.is_number_integer() || v.get<long long>() < 0 || v.get<long long>() >= count)
      refuse(f, "must be a whole number from 0 to " + std::to_string(count - 1) + " (" + next.model + " has " +
                    std::to_string(count) + " " + f.name + (count == 1 ? "" : "s") + ")");
    (layer ? next.layer : next.head) = static_cast<int>(v.get<long long>());
  };
  for (InputField f : {row<&AppInputs::layer>("layer", "integer", G::Place, U::Permalink, "the model's layer every view shows (0-based)"),
                       row<&AppInputs::head>("head", "integer", G::Place, U::Permalink, "the layer's head every view shows (0-based)")}) {
    f.min = 0, f.max = kMaxModelLayers - 1;
    if (std::string(f.name) == "head") f.max = kMaxModelHeads - 1;
    f.get = std::string(f.name) == "layer" ? +[](const AppInputs& in) { return json(in.layer); }
                                           : +[](const AppInputs& in) { return json(in.head); };
    f.set = layer_or_head;
    t.push_back(f);
  }

  t.push_back(text<&AppInputs::sentence>("sentence", "the sentence the queries (and keys and values) come from"));
  t.push_back(boolean<&AppInputs::cross>("cross", G::Lesson, U::Permalink,
                                         "cross-attention: keys and values come from kv_sentence"));
  t.push_back(text<&AppInputs::kv_sentence>("kv_sentence", "the sentence of the keys and values when cross is on"));

  InputField token = row<&AppInputs::token>("token", "token", G::Lesson, U::Permalink,
                                            "the selected query: its index, or a word of the sentence (its first)");
  token.min = 0, token.max = kMaxTokens - 1;
  token.get = [](const AppInputs& in) { return json(in.token); };
  token.set = [](const InputField& f, const AppState& s, AppInputs& next, const json& v) {
    next.token = token_index(f, s, next, v);
  };
  t.push_back(token);

  t.push_back(text<&AppInputs::compare_sentence>("compare_sentence", "Compare view: the second sentence (its query: the same word)"));
  t.push_back(boolean<&AppInputs::compare_tokens>("compare_tokens", G::Lesson, U::Permalink,
                                                  "Compare view: two query tokens of one sentence instead of two sentences"));
  InputField compare_token = row<&AppInputs::compare_token>(
      "compare_token", "token", G::Lesson, U::Permalink, "Compare view: the second query token (its index, or a word of the sentence)");
  compare_token.min = 0, compare_token.max = kMaxTokens - 1;
  compare_token.get = [](const AppInputs& in) { return json(in.compare_token); };
  compare_token.set = [](const InputField& f, const AppState& s, AppInputs& next, const json& v) {
    next.compare_token = token_index(f, s, next, v);
  };
  t.push_back(compare_token);

  t.push_back(boolean<&AppInputs::causal>("causal", G::Lesson, U::Permalink, "the causal mask: no query sees later keys"));
  t.push_back(boolean<&AppInputs::scale>("scale", G::Lesson, U::Permalink, "divide the scores by √d"));

  InputField temperature = row<&AppInputs::temperature>("temperature", "number", G::Lesson, U::Permalink,
                                                        "divides the scores before the softmax");
  temperature.min = kMinTemperature, temperature.max = kMaxTemperature;
  temperature.get = [](const AppInputs& in) { return json(exact_float(in.temperature)); };
  temperature.set = [](const InputField& f, const AppState&, AppInputs& next, const json& v) {
    if (!v.is_number() || !temperature_in_domain(v.get<double>()))  // attention.h's numeric domain
      refuse(f, "must be a number from " + number_text(f.min) + " to " + number_text(f.max));
    next.temperature = v.get<float>();
  };
  t.push_back(temperature);

  InputField mistake = row<&AppInputs::mistake>("mistake", "choice", G::Lesson, U::Permalink,
                                                "one of the common mistakes, computed for real");
  mistake.choices = mistake_names();
  mistake.get = [](const AppInputs& in) { return json(mistake_name(in.mistake)); };
  mistake.set = [](const InputField& f, const AppState&, AppInputs& next, const json& v) {
    next.mistake = static_cast<Mistake>(choice_index(f, v));
  };
  t.push_back(mistake);

  InputField weights_show = row<&AppInputs::weights_show>(
      "weights_show", "choice", G::Lesson, U::Permalink,
      "Weights view: the weights, each times the size of what its key sends (value_weighted), or the rollout "
      "through the layers (a loaded model)");
  weights_show.choices = {"weights", "value_weighted", "rollout"};
  weights_show.get = [](const AppInputs& in) { return json(weights_show_name(in.weights_show)); };
  weights_show.set = [](const InputField& f, const AppState&, AppInputs& next, const json& v) {
    next.weights_show = static_cast<WeightsShow>(choice_index(f, v));
  };
  t.push_back(weights_show);

  // Asking the model why: the shapes are checked here, whether they fit the model and the text when
  // the inputs apply (app_state.cpp: an entry asked for now is refused, one a new model or text no
  // longer fits is dropped with a note).
  InputField ablate = row<&AppInputs::ablate>("ablate", "heads", G::Lesson, U::Permalink,
                                              "heads switched off, [[layer, head], ...] (a loaded model)");
  ablate.get = [](const AppInputs& in) { return heads_json(in.ablate); };
  ablate.set = [](const InputField& f, const AppState&, AppInputs& next, const json& v) { next.ablate = heads_from_json(v, f.name); };
  t.push_back(ablate);
  InputField ablate_kind = row<&AppInputs::ablate_kind>("ablate_kind", "choice", G::Lesson, U::Permalink,
                                                        "what a switched-off head gives: zero, or its mean output over the positions up to each query");
  ablate_kind.choices = {"zero", "mean"};
  ablate_kind.get = [](const AppInputs& in) { return json(ablate_kind_name(in.ablate_kind)); };
  ablate_kind.set = [](const InputField& f, const AppState&, AppInputs& next, const json& v) {
    next.ablate_kind = choice_index(f, v) == 0 ? AblateKind::Zero : AblateKind::Mean;
  };
  t.push_back(ablate_kind);
  InputField cut = row<&AppInputs::cuts>("cut", "cuts", G::Lesson, U::Permalink,
                                         "links cut, [{layer, head (or \"all\"), query, key}, ...]: the key hidden from the query");
  cut.get = [](const AppInputs& in) { return cuts_json(in.cuts); };
  cut.set = [](const InputField& f, const AppState&, AppInputs& next, const json& v) { next.cuts = cuts_from_json(v, f.name); };
  t.push_back(cut);
  InputField patch = row<&AppInputs::patch>("patch", "patch", G::Lesson, U::Permalink,
                                            "{from: TEXT, heads: [[layer, head]]} or {from: TEXT, resid: [[layer, position]]}: "
                                            "copied from TEXT's run into the sentence's (as many tokens; null: none)");
  patch.get = [](const AppInputs& in) { return patch_json(in.patch); };
  patch.set = [](const InputField& f, const AppState&, AppInputs& next, const json& v) { next.patch = patch_from_json(v, f.name); };
  t.push_back(patch);

  t.push_back(boolean<&AppInputs::library_best_only>("library_best_only", G::Lesson, U::Permalink,
                                                     "Library view: read only the best-matching book"));
  t.push_back(integer<&AppInputs::step>("step", 0, 6, G::Lesson, U::Permalink, "Steps view: which of the 7 steps (0-based)"));
  t.push_back(derive_matrix<&AppInputs::derive_q>("derive_q", "Derive view: the 3 queries (d = 2)"));
  t.push_back(derive_matrix<&AppInputs::derive_k>("derive_k", "Derive view: the 3 keys"));
  t.push_back(derive_matrix<&AppInputs::derive_v>("derive_v", "Derive view: the 3 values"));
  t.push_back(integer<&AppInputs::derive_revealed>("derive_revealed", 0, AppInputs::kDeriveStages, G::Lesson, U::Permalink,
                                                   "Derive view: how many stages are revealed"));
  t.push_back(integer<&AppInputs::break_d>("break_d", 1, kMaxBreakD, G::Lesson, U::Permalink, "Break view: the width d"));
  t.push_back(integer<&AppInputs::break_T>("break_T", 1, 256, G::Lesson, U::Permalink, "Break view: the tokens T"));
  t.push_back(integer<&AppInputs::break_seed>("break_seed", 0, 1000000, G::Lesson, U::Permalink,
                                              "Break view: the seed of its random queries and keys"));
  t.push_back(integer<&AppInputs::cost_T>("cost_T", 16, 2048, G::Lesson, U::Permalink,
                                          "Cost view: T of the whole weight matrix it shows (d = 64)"));

  InputField backend = row<&AppInputs::backend>("backend", "choice", G::Setting, U::Permalink,
                                                "what computes the large problems (auto: the GPU from T = 512 when it is hardware)");
  backend.choices = backend_choices();
  backend.get = [](const AppInputs& in) { return json(in.backend); };
  backend.set = [](const InputField& f, const AppState&, AppInputs& next, const json& v) {
    next.backend = f.choices[choice_index(f, v)];
  };
  t.push_back(backend);

  t.push_back(integer<&AppInputs::checklist>("checklist", 0, 0xffff, G::Progress, U::None,
                                             "the ticked Prove-it items, one bit each (kept in the browser)"));
  InputField checks = row<&AppInputs::checks>("checks", "object", G::Progress, U::None,
                                              "the answers to the checks: Derive's predictions and each view's "
                                              "question, {id: {answer, question, right, passed}} (kept in the browser)");
  checks.get = [](const AppInputs& in) { return check_answers_to_json(in.checks); };
  checks.set = [](const InputField&, const AppState&, AppInputs& next, const json& v) {
    next.checks = check_answers_from_json(v);  // its messages name "checks.<id>"
  };
  t.push_back(checks);
  t.push_back(boolean<&AppInputs::embed>("embed", G::Setting, U::Read,
                                         "no surrounding chrome: one strip of controls and the view(s)"));

  InputField theme = row<&AppInputs::light_theme>("theme", "choice", G::Setting, U::Read,
                                                  "colours (default: the system's)");
  theme.choices = {"dark", "light"};
  theme.get = [](const AppInputs& in) { return json(in.light_theme ? "light" : "dark"); };
  theme.set = [](const InputField& f, const AppState&, AppInputs& next, const json& v) {
    next.light_theme = choice_index(f, v) == 1;
  };
  t.push_back(theme);
  t.push_back(boolean<&AppInputs::reduced_motion>("reduced_motion", G::Setting, U::Read,
                                                  "no animations (default: the system's)"));

  // The train view's recipe and probe as typed (a recipe that cannot train is kept: the view says why).
  InputField train = row<&AppInputs::train>("train", "object", G::Place, U::None,
                                            "Train view: {seed, lr, layers, heads, d_model, scale, steps, probe_frame, "
                                            "probe_creature, probe_thing, probe_adjective}");
  train.get = [](const AppInputs& in) { return train_form_to_json(in.train); };
  train.set = [](const InputField&, const AppState&, AppInputs& next, const json& v) {
    apply_train_form_json(next.train, v);  // its messages name "train.<setting>"
  };
  t.push_back(train);
  InputField tour = integer<&AppInputs::tour_step>("tour_step", -1, static_cast<long long>(tour_stops().size()) - 1,
                                                  G::Progress, U::None,
                                                  "the guided tour's stop, -1: no tour (?tour=1 starts or resumes it)");
  tour.set = [](const InputField& f, const AppState& s, AppInputs& next, const json& v) {
    const auto lo = static_cast<long long>(f.min), hi = static_cast<long long>(f.max);
    if (!v.is_number_integer() || v.get<long long>() < lo || v.get<long long>() > hi)
      refuse(f, "must be a whole number from " + std::to_string(lo) + " to " + std::to_string(hi));
    go_to_tour_stop(s, next, static_cast<int>(v.get<long long>()));  // a stop is a view and a model
  };
  t.push_back(tour);
  t.push_back(boolean<&AppInputs::advanced>("advanced", G::Setting, U::Read,
                                            "the controls show developer internals: the backend, the GPU, the state JSON"));
  t.push_back(boolean<&AppInputs::present>("present", G::Setting, U::Permalink,
                                           "presentation mode: large type, no controls column, every explanation on screen without hovering"));
  t.push_back(boolean<&AppInputs::heads_sweep>("heads_sweep", G::Place, U::None,
                                               "Heads view: switch every head off alone, a few at a time, in the model's worker where it runs (getState().view_data.sweep); false stops it"));
  InputField patch_sweep = row<&AppInputs::patch_sweep>(
      "patch_sweep", "choice", G::Place, U::None,
      "Compare view: copy every head's output (heads), or the stream at every layer and position (positions), from the "
      "second sentence's run into the first's alone, a few at a time, in the model's worker where it runs (getState().view_data.patch_sweep); none stops it");
  patch_sweep.choices = {"none", "heads", "positions"};
  patch_sweep.get = [](const AppInputs& in) {
    const char* const names[] = {"none", "heads", "positions"};
    return json(names[static_cast<int>(in.patch_sweep)]);
  };
  patch_sweep.set = [](const InputField& f, const AppState&, AppInputs& next, const json& v) {
    next.patch_sweep = static_cast<AppInputs::PatchSweep>(choice_index(f, v));
  };
  t.push_back(patch_sweep);
  return t;
}

const char* group_name(InputGroup g) {
  switch (g) {
    case InputGroup::Lesson: return "lesson";
    case InputGroup::Place: return "place";
    case InputGroup::Progress: return "progress";
    case InputGroup::Setting: return "setting";
  }
  return "?";
}

const char* url_name(UrlUse u) {
  switch (u) {
    case UrlUse::None: return "no";
    case UrlUse::Read: return "read";
    case UrlUse::Permalink: return "permalink";
  }
  return "?";
}

// data-kv-sentence for kv_sentence: the embed loader's attribute (dataset.kvSentence).
std::string data_attribute(const std::string& name) {
  std::string out = "data-";
  for (char c : name) out += c == '_' ? '-' : static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return out;
}

}  // namespace

const std::vector<InputField>& input_fields() {
  static const std::vector<InputField> fields = make_fields();
  return fields;
}

const InputField* find_input(const std::string& name) {
  for (const InputField& f : input_fields())
    if (name == f.name) return &f;
  return nullptr;
}

json input_table_json() {
  const AppInputs defaults;
  json table = json::array();
  for (const InputField& f : input_fields()) {
    json row = {{"name", f.name}, {"type", f.type}, {"default", f.get(defaults)}, {"group", group_name(f.group)},
                {"url", url_name(f.url)}, {"doc", f.doc}};
    row["data"] = f.url == UrlUse::None ? json(nullptr) : json(data_attribute(f.name));
    if (std::string(f.type) == "integer" || std::string(f.type) == "number" || std::string(f.type) == "token")
      row["min"] = f.min, row["max"] = f.max;
    if (!f.choices.empty()) row["choices"] = f.choices;
    if (f.rows) row["rows"] = f.rows, row["cols"] = f.cols;
    table.push_back(row);
  }
  return table;
}

void reset_lesson_inputs(AppInputs& inputs) {
  const AppInputs defaults;
  for (const InputField& f : input_fields())
    if (f.group == InputGroup::Lesson) f.copy(inputs, defaults);
}

}  // namespace attn
