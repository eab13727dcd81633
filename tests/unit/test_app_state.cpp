// The app's state without a window: which backend computes the large problems, the inputs that
// choose it (backend, cost_T), and the table of inputs behind setState, getState and Reset.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <set>
#include <stdexcept>
#include <string>

#include "../../src/state/app_state.h"
#include "../../src/state/input_table.h"
#include "../../src/api/trained_model_bytes.h"
#include "../../src/core/corpus.h"

using namespace attn;

namespace {
GpuFacts hardware_gpu() {
  GpuFacts g;
  g.available = true;
  g.renderer = "ANGLE (NVIDIA GeForce)";
  g.speed_checked = true;  // timed at start: a T = 512 problem in 0.8 ms on the GPU, 2.6 ms on the CPU
  g.speed_check_T = 512;
  g.gpu_ms = 0.8;
  g.cpu_ms = 2.6;
  return g;
}
// WebKit's name for any GPU, llvmpipe included: not a software name, and measured slower.
GpuFacts masked_software_gpu() {
  GpuFacts g = hardware_gpu();
  g.renderer = "Apple GPU";
  g.gpu_ms = 41.5;
  g.cpu_ms = 2.6;
  return g;
}
GpuFacts software_gpu() {
  GpuFacts g = hardware_gpu();
  g.software = true;
  g.renderer = "ANGLE (Google, Vulkan 1.3.0 (SwiftShader Device))";
  return g;
}
GpuFacts no_gpu() {
  GpuFacts g;
  g.unavailable_reason = "no EXT_color_buffer_float";
  return g;
}
}  // namespace

TEST_CASE("auto puts large problems on a hardware GPU and small ones on the SIMD kernel") {
  CHECK(choose_backend("auto", kGpuFromT, hardware_gpu()).name == "webgl");
  CHECK(choose_backend("auto", 2048, hardware_gpu()).name == "webgl");
  const BackendChoice small = choose_backend("auto", kGpuFromT - 1, hardware_gpu());
  CHECK(small.name == "simd");
  CHECK(small.reason.find("small") != std::string::npos);
}

TEST_CASE("auto never picks a software GPU or a missing one, and says why") {
  const BackendChoice software = choose_backend("auto", 2048, software_gpu());
  CHECK(software.name == "simd");
  CHECK(software.reason.find("software") != std::string::npos);
  const BackendChoice missing = choose_backend("auto", 2048, no_gpu());
  CHECK(missing.name == "simd");
  CHECK(missing.reason.find("EXT_color_buffer_float") != std::string::npos);
}

TEST_CASE("auto trusts what was measured, not the GPU's name") {
  const BackendChoice masked = choose_backend("auto", 2048, masked_software_gpu());
  CHECK(masked.name == "simd");
  CHECK(masked.reason.find("slower than the CPU") != std::string::npos);
  CHECK(masked.reason.find("GPU 41.5 ms, CPU 2.6 ms") != std::string::npos);
  GpuFacts unmeasured = hardware_gpu();  // the check failed or never ran: the CPU computes
  unmeasured.speed_checked = false;
  const BackendChoice unknown = choose_backend("auto", 2048, unmeasured);
  CHECK(unknown.name == "simd");
  CHECK(unknown.reason.find("could not be measured") != std::string::npos);
  GpuFacts tie = hardware_gpu();  // as fast as the CPU is not faster
  tie.gpu_ms = tie.cpu_ms;
  CHECK(choose_backend("auto", 2048, tie).name == "simd");
  const BackendChoice fast = choose_backend("auto", 2048, hardware_gpu());
  CHECK(fast.name == "webgl");
  CHECK(fast.reason.find("GPU 0.8 ms, CPU 2.6 ms") != std::string::npos);
  // by hand the GPU is used anyway, and the reason says it is slower
  const BackendChoice by_hand = choose_backend("webgl", 2048, masked_software_gpu());
  CHECK(by_hand.name == "webgl");
  CHECK(by_hand.reason.find("slower than the CPU") != std::string::npos);
}

TEST_CASE("a backend chosen by hand is used; webgl without a GPU falls back to simd with the reason") {
  for (const char* name : kBackendNames) CHECK(choose_backend(name, 16, hardware_gpu()).name == name);
  CHECK(choose_backend("webgl", 16, software_gpu()).name == "webgl");
  const BackendChoice fallback = choose_backend("webgl", 2048, no_gpu());
  CHECK(fallback.name == "simd");
  CHECK(fallback.reason.find("unavailable") != std::string::npos);
}

TEST_CASE("backend and cost_T are inputs: set by JSON, refused with the key named, kept in the state JSON") {
  AppState s = make_initial_state();
  CHECK(s.inputs.backend == "auto");
  apply_state_json(s, {{"backend", "eigen"}, {"cost_T", 512}}, 0.0);
  CHECK(s.inputs.backend == "eigen");
  CHECK(s.inputs.cost_T == 512);
  const nlohmann::json j = state_to_json(s);
  CHECK(j["backend"] == "eigen");
  CHECK(j["cost_T"] == 512);
  CHECK(inputs_to_json(s)["backend"] == "eigen");
  CHECK_FALSE(inputs_to_json(s).contains("weights"));  // the light part carries no matrices

  for (const nlohmann::json& bad : {nlohmann::json{{"backend", "cuda"}}, nlohmann::json{{"backend", 3}},
                                    nlohmann::json{{"cost_T", 4096}}, nlohmann::json{{"cost_T", 8}},
                                    nlohmann::json{{"cost_T", 1.5}}}) {
    CAPTURE(bad.dump());
    const std::string key = bad.begin().key();
    CHECK_THROWS_WITH_AS(apply_state_json(s, bad, 0.0), doctest::Contains(key.c_str()), std::invalid_argument);
    CHECK(s.inputs.backend == "eigen");  // nothing changed
    CHECK(s.inputs.cost_T == 512);
  }
}

// [SECTION] The table of inputs (src/state/input_table.cpp)

namespace {
// A valid value other than the default for each input the hand-made model allows to change
// (layer and head have one value there, the model one name): null when there is none.
nlohmann::json other_value(const InputField& f, const nlohmann::json& fallback) {
  const std::string type = f.type;
  if (type == "boolean") return !fallback.get<bool>();
  if (type == "integer") return fallback == f.max ? nlohmann::json(static_cast<long long>(f.min)) : nlohmann::json(static_cast<long long>(f.max));
  if (type == "token") return 2;
  if (type == "number") return 0.3;
  if (type == "string") return std::string(f.name) == "model" ? nlohmann::json(nullptr) : nlohmann::json("the cat saw the dog");
  if (type == "choice") return f.choices[0] == fallback ? f.choices[1] : f.choices[0];
  if (type == "views") return {"weights", "cost"};
  if (type == "matrix") return {{1, 2}, {3, 4}, {5, 6.5}};
  if (type == "cuts") return {{{"layer", 0}, {"head", 0}, {"query", 7}, {"key", 1}}};  // 'it' cannot see 'animal'
  if (type == "heads") return {{0, 0}};
  if (type == "patch") return {{"from", "The animal didn't cross the street because it was wide"}, {"heads", {{0, 0}}}};
  if (std::string(f.name) == "checks")  // the answers: one to the Flow view's question
    return {{"flow", {{"answer", "100"}, {"question", "How many scores?"}, {"right", true}, {"passed", true}}}};
  if (type == "object") {  // the train view's form: another seed
    nlohmann::json other = fallback;
    other["seed"] = 7;
    return other;
  }
  return nullptr;
}
}  // namespace

TEST_CASE("every input of the table: set by its name, read back the same, seen by ==, restored by Reset for the lesson only") {
  const AppInputs defaults;
  int changed = 0;
  for (const InputField& f : input_fields()) {
    CAPTURE(f.name);
    AppState s = make_initial_state();
    nlohmann::json value = other_value(f, f.get(defaults));
    if (std::string(f.name) == "layer" || std::string(f.name) == "head" || std::string(f.name) == "model") {
      // the hand-made model: one layer, one head; anything else is refused with the key named
      CHECK_THROWS_WITH_AS(apply_state_json(s, {{f.name, std::string(f.name) == "model" ? nlohmann::json("gpt9") : nlohmann::json(1)}}, 0.0),
                           doctest::Contains(f.name), std::invalid_argument);
      continue;
    }
    if (std::string(f.name) == "ablate" || std::string(f.name) == "patch") {
      // no W_O and no next-token head to switch off or patch: refused, saying why (the cuts apply)
      CHECK_THROWS_WITH_AS(apply_state_json(s, {{f.name, value}}, 0.0), doctest::Contains("cut links instead"), std::invalid_argument);
      CHECK(f.equal(s.inputs, defaults));
      continue;
    }
    REQUIRE_FALSE(value.is_null());
    apply_state_json(s, {{f.name, value}}, 0.0);
    CHECK(f.get(s.inputs) == value);
    CHECK(inputs_to_json(s)[f.name] == value);
    CHECK_FALSE(f.equal(s.inputs, defaults));
    AppInputs reset = s.inputs;
    reset_lesson_inputs(reset);
    CHECK(f.equal(reset, defaults) == (f.group == InputGroup::Lesson));
    ++changed;
  }
  CHECK(changed >= 25);
}

TEST_CASE("Reset restores the lesson and keeps the view, the model, the Prove-it ticks, the theme and the motion") {
  AppState s = make_initial_state();
  apply_state_json(s, {{"view", "break"}, {"checklist", 5}, {"theme", "light"}, {"reduced_motion", true},
                       {"backend", "scalar"}, {"causal", true}, {"temperature", 2.5}, {"break_d", 7}, {"step", 3},
                       {"sentence", "the cat saw the dog"}},
                   0.0);
  AppInputs next = s.inputs;
  reset_lesson_inputs(next);
  CHECK(next.view == View::Break);
  CHECK(next.checklist == 5u);
  CHECK(next.light_theme);
  CHECK(next.reduced_motion);
  CHECK(next.backend == "scalar");
  CHECK_FALSE(next.causal);
  CHECK(next.temperature == 1.0f);
  CHECK(next.break_d == 512);
  CHECK(next.step == 0);
  CHECK(next.sentence == kLessonSentence);
}

TEST_CASE("numbers leave the state exactly: the shortest text that reads back as the same float") {
  CHECK(exact_float(0.1f) == 0.1);  // not 0.10000000149011612
  CHECK(exact_float(1.0f) == 1.0);
  CHECK(exact_float(kMinTemperature) == 0.05);
  std::uint32_t seed = 7;
  AppState s = make_initial_state();
  for (int i = 0; i < 20000; ++i) {
    seed = seed * 1664525u + 1013904223u;
    const float x = kMinTemperature + (kMaxTemperature - kMinTemperature) * static_cast<float>(seed >> 8) / 16777216.0f;
    CAPTURE(x);
    REQUIRE(static_cast<float>(exact_float(x)) == x);
    // the fewest digits: one digit fewer does not read back (any float's bits, any exponent, too)
    std::uint32_t bits = seed ^ (seed << 13);
    float any = 0;
    std::memcpy(&any, &bits, sizeof any);
    for (const float v : {x, std::isfinite(any) ? any : x}) {
      const double e = exact_float(v);
      CHECK(static_cast<float>(e) == v);
      char text[32];
      int digits = 1;  // e's own significant digits
      for (; digits < 17; ++digits) {
        std::snprintf(text, sizeof text, "%.*g", digits, e);
        if (std::strtod(text, nullptr) == e) break;
      }
      std::snprintf(text, sizeof text, "%.*g", std::max(1, digits - 1), static_cast<double>(v));
      CHECK((digits == 1 || std::strtof(text, nullptr) != v));
    }
    if (i % 400 == 0) {  // and through the JSON text that getState and a permalink carry
      apply_state_json(s, {{"temperature", x}}, 0.0);
      const std::string text = inputs_to_json(s)["temperature"].dump();
      apply_state_json(s, {{"temperature", 1}}, 0.0);
      apply_state_json(s, nlohmann::json::parse("{\"temperature\":" + text + "}"), 0.0);
      CHECK(s.inputs.temperature == x);
    }
  }
}

TEST_CASE("the token by index: the second \"the\" stays the second") {
  AppState s = make_initial_state();
  apply_state_json(s, {{"sentence", "the cat saw the dog"}, {"token", 3}}, 0.0);
  CHECK(s.inputs.token == 3);
  CHECK(inputs_to_json(s)["token"] == 3);
  apply_state_json(s, {{"token", "the"}}, 0.0);  // a word: its first
  CHECK(s.inputs.token == 0);
  CHECK_THROWS_WITH_AS(apply_state_json(s, {{"token", 5}}, 0.0), doctest::Contains("token"), std::invalid_argument);
}

TEST_CASE("the table for the page: names unique, every default valid, URL use and data- attribute named") {
  const nlohmann::json table = input_table_json();
  std::set<std::string> names;
  for (const nlohmann::json& row : table) {
    CAPTURE(row.dump());
    CHECK(names.insert(row["name"].get<std::string>()).second);
    CHECK(row["doc"].get<std::string>().size() > 5);
    AppState s = make_initial_state();
    CHECK_NOTHROW(apply_state_json(s, {{row["name"].get<std::string>(), row["default"]}}, 0.0));
    CHECK(s.inputs == AppInputs{});
    if (row["url"] == "no") CHECK(row["data"].is_null());
  }
  CHECK(table[0]["name"] == "view");
  CHECK(find_input("kv_sentence") != nullptr);
  CHECK((*std::find_if(table.begin(), table.end(), [](const nlohmann::json& r) { return r["name"] == "kv_sentence"; }))["data"] ==
        "data-kv-sentence");
}

TEST_CASE("the Mistakes view's correct trace is the state's: the same head with no mistake, √d on for Forget √d") {
  AppState s = make_initial_state();
  apply_state_json(s, {{"mistake", "none"}, {"causal", true}}, 0.0);
  const Matrix plain = s.model.trace.weights;
  CHECK(s.model.without_mistake.weights == plain);
  for (const char* mistake : {"mask_after_softmax", "mask_with_zero", "softmax_wrong_axis", "swap_keys_values", "forget_scale"}) {
    CAPTURE(mistake);
    apply_state_json(s, {{"mistake", mistake}}, 0.0);
    CHECK(s.model.trace.weights != plain);             // the mistake shows
    CHECK(s.model.without_mistake.weights == plain);   // and beside it the head as it should be
  }
  // Forget √d against the divided scores even with the controls' √d switched off
  apply_state_json(s, {{"scale", false}, {"mistake", "none"}}, 0.0);
  const Matrix undivided = s.model.trace.weights;
  CHECK(undivided != plain);
  apply_state_json(s, {{"mistake", "forget_scale"}}, 0.0);
  CHECK(s.model.without_mistake.weights == plain);
}

TEST_CASE("a tour stop opens its view and the model its prompt is about, where the page holds it") {
  AppState s = make_initial_state();
  const std::vector<TourStop>& stops = tour_stops();
  const auto trained = std::find_if(stops.begin(), stops.end(), [](const TourStop& t) { return t.model == std::string(kBuiltInTrainedModel); });
  REQUIRE(trained != stops.end());
  const int at = static_cast<int>(trained - stops.begin());
  // no trained model held (as in these tests): the stop keeps the model and opens its view
  AppInputs next = s.inputs;
  go_to_tour_stop(s, next, at);
  CHECK(next.tour_step == at);
  CHECK(next.view == trained->view);
  CHECK(next.model == kHandmadeModel);
  // a stop on the hand-made model chooses it again, at its first head; -1 ends the tour only
  next.model = "elsewhere";
  next.layer = 2;
  go_to_tour_stop(s, next, 0);
  CHECK(next.model == kHandmadeModel);
  CHECK(next.layer == 0);
  CHECK(next.view == stops[0].view);
  go_to_tour_stop(s, next, -1);
  CHECK(next.tour_step == -1);
  CHECK(next.view == stops[0].view);
  for (const TourStop& t : stops) CHECK((t.model == std::string(kHandmadeModel) || t.model == std::string(kBuiltInTrainedModel)));
}

// [SECTION] Asking the model why, as inputs (ablate, ablate_kind, cut, patch)

namespace {
// The app with a random GPT-2 model "toy" of `layers` × 2 heads on the Train view's corpus (its
// tokenizer reads the lesson's sentences), loaded through the page's loader.
AppState with_toy_model(int layers, std::uint64_t seed) {
  const Corpus corpus = make_corpus(1);
  const Transformer model = random_transformer(gpt2_config(layers, 2, 16, 32, static_cast<int>(corpus.vocab.size())), seed,
                                               Dtype::F32, WeightLayout::InOut, 0.3);
  AppState s = make_initial_state();
  add_model(s, load_model_files("toy", trained_model_files(model, corpus)));
  return s;
}
}  // namespace

TEST_CASE("interventions as inputs: the page's run is the core's, none is the model as it is, a new text drops what no longer fits") {
  AppState s = with_toy_model(2, 5);
  const std::string a = "the animal didn't cross the street because it was tired";
  const std::string b = "the animal didn't cross the street because it was wide";
  apply_state_json(s, {{"model", "toy"}, {"sentence", a}}, 0.0);
  const Transformer& m = *find_model(s, "toy")->model;
  const std::vector<int> ids = s.model.token_ids;
  const int T = static_cast<int>(ids.size()), last = T - 1;
  apply_state_json(s, {{"token", last}}, 0.0);
  ForwardOptions opts;
  opts.predict_from = T;  // as the page: the LM head on the shown row only
  const auto base = s.model.base_forward;
  CHECK(s.model.forward == base);
  CHECK_FALSE(s.model.effect.shown);
  CHECK(inputs_to_json(s)["intervention"]["active"] == false);

  // Each change against transformer_forward with that intervention: the same numbers, bit for bit.
  const auto same_as = [&](const Intervention& edit) {
    ForwardOptions with = opts;
    with.intervention = &edit;
    const ModelTrace expected = transformer_forward(m, ids, with);
    REQUIRE(s.model.forward->layers.size() == expected.layers.size());
    for (std::size_t l = 0; l < expected.layers.size(); ++l)
      for (std::size_t h = 0; h < expected.layers[l].thumbnails.size(); ++h)
        CHECK((s.model.forward->layers[l].thumbnails[h].array() == expected.layers[l].thumbnails[h].array()).all());
    CHECK((s.model.forward->final_normed.array() == expected.final_normed.array()).all());
    const LayerDetail shown = layer_detail(m, expected, s.inputs.layer);
    // (the view's head recomputed by the attention kernel from the layer's q, k, v: float rounding apart)
    CHECK((s.model.trace.weights - shown.weights[static_cast<std::size_t>(s.inputs.head)]).cwiseAbs().maxCoeff() < 1e-6f);
    const EditEffect& e = s.model.effect;
    REQUIRE(e.shown);
    CHECK(e.position == last);
    CHECK(e.target == next_tokens_at(m, *base, last, 1).front().id);
    CHECK(e.base_log_prob == token_log_prob(m, *base, last, e.target));
    CHECK(e.log_prob == token_log_prob(m, expected, last, e.target));
    CHECK(s.model.next.front().p == next_tokens_at(m, expected, last, 1).front().p);
  };
  apply_state_json(s, {{"ablate", {{1, 0}}}, {"view", "heads"}}, 0.0);
  // the Heads view's attribution: of the changed run, for the unchanged run's answer, adding up
  REQUIRE(s.model.attribution);
  const LogitAttribution direct = attribute_logit(m, *s.model.forward, last, s.model.unchanged_next().front().id);
  CHECK((s.model.attribution->heads.array() == direct.heads.array()).all());
  CHECK(s.model.attribution->sum() == doctest::Approx(s.model.attribution->logit).epsilon(1e-5));
  Intervention edit;
  edit.ablate = {{1, 0}};
  same_as(edit);
  CHECK(s.model.effect.delta() != 0.0);
  const nlohmann::json shown = inputs_to_json(s)["intervention"];
  CHECK(shown["active"] == true);
  CHECK(shown["delta_log_prob"].get<double>() == doctest::Approx(s.model.effect.delta()));
  CHECK(state_to_json(s)["ablate"] == nlohmann::json{{1, 0}});

  apply_state_json(s, {{"ablate_kind", "mean"}}, 0.0);
  edit.ablate_kind = AblateKind::Mean;
  same_as(edit);

  // A cut in every head of layer 0: the shown head's cell is 0, its row still sums to 1.
  apply_state_json(s, {{"cut", {{{"layer", 0}, {"head", "all"}, {"query", last}, {"key", 1}}}}}, 0.0);
  edit.cuts = {{0, -1, last, 1}};
  same_as(edit);
  CHECK(s.model.trace.weights(last, 1) == 0.0f);
  CHECK(s.model.trace.weights.row(last).sum() == doctest::Approx(1.0).epsilon(1e-6));

  // A patch of head 0.1 from the twin sentence: its output there, and the share it restores.
  apply_state_json(s, {{"ablate", nlohmann::json::array()}, {"cut", nlohmann::json::array()},
                       {"patch", {{"from", b}, {"heads", {{0, 1}}}}}},
                   0.0);
  const ModelTrace source = transformer_forward(m, find_model(s, "toy")->tokenizer->encode(b, true), opts);
  const Intervention patch = with_patches(m, Intervention{}, source, {{0, 1}}, {});
  same_as(patch);
  const EditEffect& e = s.model.effect;
  CHECK(e.patched);
  CHECK(e.source_log_prob == token_log_prob(m, source, last, e.target));
  CHECK(e.restored == restored_fraction(e.log_prob, e.source_log_prob, e.base_log_prob));

  // Refused, naming the input, with nothing changed: a head the model lacks, a query's last key,
  // a patch from a text of another length.
  const AppInputs before = s.inputs;
  for (const nlohmann::json& bad :
       {nlohmann::json{{"ablate", {{2, 0}}}}, nlohmann::json{{"ablate", {{0}}}},
        nlohmann::json{{"cut", {{{"layer", 0}, {"head", 0}, {"query", 0}, {"key", 0}}}}},
        nlohmann::json{{"cut", {{{"layer", 0}, {"head", 0}, {"query", 1}, {"key", 2}}}}},
        nlohmann::json{{"patch", {{"from", "the animal was tired"}, {"heads", {{0, 0}}}}}},
        nlohmann::json{{"patch", {{"from", b}}}}}) {
    CAPTURE(bad.dump());
    CHECK_THROWS_WITH_AS(apply_state_json(s, bad, 0.0), doctest::Contains(bad.begin().key().c_str()), std::invalid_argument);
    CHECK(s.inputs == before);
  }

  // Compare: B runs with the switched-off heads and cut links too (not the patch), where they fit it.
  apply_state_json(s, {{"view", "compare"}, {"compare_sentence", b}, {"patch", nullptr}, {"ablate", {{1, 0}}},
                       {"cut", {{{"layer", 0}, {"head", 1}, {"query", last}, {"key", 2}}}}},
                   0.0);
  {
    Intervention both;
    both.ablate = {{1, 0}};
    both.ablate_kind = AblateKind::Mean;  // (as set above)
    both.cuts = {{0, 1, last, 2}};
    ForwardOptions with = opts;
    with.intervention = &both;
    const ModelTrace expected = transformer_forward(m, s.model.compare_forward->token_ids, with);
    CHECK(s.model.compare_edited != s.model.compare_forward);
    CHECK((s.model.compare_edited->final_normed.array() == expected.final_normed.array()).all());
    CHECK(s.model.compare_edit_note.empty());
    apply_state_json(s, {{"compare_sentence", "the animal was tired"}}, 0.0);  // too short for the cut
    CHECK(s.model.compare_edited == s.model.compare_forward);
    CHECK(s.model.compare_edit_note.find("B runs without your changes: cut 0.1") == 0);
    apply_state_json(s, {{"view", "heads"}, {"ablate", nlohmann::json::array()}, {"cut", nlohmann::json::array()}}, 0.0);
  }

  // Undone: the model as it is again, the very same run.
  apply_state_json(s, {{"patch", nullptr}}, 0.0);
  CHECK(s.model.forward == base);
  CHECK_FALSE(s.model.effect.shown);

  // A shorter text: the cut of its last query no longer fits and is dropped with a note; the
  // switched-off head stays.
  apply_state_json(s, {{"ablate", {{1, 1}}}, {"cut", {{{"layer", 1}, {"head", 0}, {"query", last}, {"key", 2}}}}}, 0.0);
  apply_state_json(s, {{"sentence", "the animal was tired"}}, 0.0);
  CHECK(s.inputs.cuts.empty());
  CHECK(s.inputs.ablate == std::vector<HeadRef>{{1, 1}});
  CHECK(s.model.edit_note.find("Dropped") == 0);
  CHECK(inputs_to_json(s)["intervention"]["note"] == s.model.edit_note);
  // The hand-made model takes no switched-off head: dropped too when the learner goes back to it.
  apply_state_json(s, {{"model", "handmade"}}, 0.0);
  CHECK(s.inputs.ablate.empty());
  CHECK(s.model.edit_note.find("cut links instead") != std::string::npos);
}

TEST_CASE("the hand-made model takes cut links: its one head renormalises without them") {
  AppState s = make_initial_state();
  const AttentionTrace plain = s.model.trace;
  apply_state_json(s, {{"cut", {{{"layer", 0}, {"head", 0}, {"query", 7}, {"key", 1}}}}}, 0.0);
  CHECK(s.model.trace.weights(7, 1) == 0.0f);
  // the row's other weights, in the ratios they had: the softmax's own renormalisation
  const float rest = 1.0f - plain.weights(7, 1);
  for (int j = 0; j < plain.weights.cols(); ++j)
    if (j != 1) CHECK(s.model.trace.weights(7, j) == doctest::Approx(plain.weights(7, j) / rest).epsilon(1e-5));
  for (int i = 0; i < plain.weights.rows(); ++i)
    if (i != 7) CHECK((s.model.trace.weights.row(i).array() == plain.weights.row(i).array()).all());
  CHECK_THROWS_WITH_AS(apply_state_json(s, {{"cut", {{{"layer", 1}, {"head", 0}, {"query", 7}, {"key", 1}}}}}, 0.0),
                       doctest::Contains("one layer and one head"), std::invalid_argument);
}

TEST_CASE("the Weights view's readings: value-weighted is each weight times what its key sends, rollout multiplies through the layers") {
  AppState s = with_toy_model(3, 7);
  apply_state_json(s, {{"model", "toy"}, {"sentence", "the animal was tired"}, {"layer", 2}, {"head", 1}, {"view", "weights"}}, 0.0);
  CHECK(s.model.influence == nullptr);
  apply_state_json(s, {{"weights_show", "value_weighted"}}, 0.0);
  REQUIRE(s.model.influence);
  const Transformer& m = *find_model(s, "toy")->model;
  const LayerDetail detail = layer_detail(m, *s.model.forward, 2);
  // ‖v_j W_O^h‖ by hand: head 1's value columns times its rows of W_O
  const int hd = m.config.head_dim;
  const Weights& o = m.blocks[2].o;  // F32, stored (in, out): x·W
  REQUIRE((o.dtype == Dtype::F32 && !o.transposed));
  const Matrix wo = Eigen::Map<const Matrix>(o.f32.data(), o.rows, o.cols);
  for (int j = 0; j < static_cast<int>(detail.value.rows()); ++j) {
    const Vector sent = detail.value.row(j).segment(hd, hd) * wo.middleRows(hd, hd);
    CHECK(s.model.influence->value_norms[j] == doctest::Approx(sent.norm()).epsilon(1e-5));
    for (int i = 0; i < static_cast<int>(detail.value.rows()); ++i)
      CHECK(s.model.influence->values(i, j) == doctest::Approx(detail.weights[1](i, j) * sent.norm()).epsilon(1e-5));
  }
  // Rollout to layer 3: (0.5·A + 0.5·I) of each layer's head mean, rows renormalised, multiplied.
  apply_state_json(s, {{"weights_show", "rollout"}}, 0.0);
  const int T = static_cast<int>(s.model.token_ids.size());
  Matrix expected = Matrix::Identity(T, T);
  for (int l = 0; l < 3; ++l) {
    const LayerDetail d = layer_detail(m, *s.model.forward, l);
    Matrix mean = Matrix::Zero(T, T);
    for (const Matrix& w : d.weights) mean += w / static_cast<float>(d.weights.size());
    Matrix mixed = 0.5f * mean + 0.5f * Matrix::Identity(T, T);
    for (int i = 0; i < T; ++i) mixed.row(i) /= mixed.row(i).sum();
    expected = mixed * expected;
  }
  CHECK((s.model.influence->values - expected).cwiseAbs().maxCoeff() < 1e-5f);
  for (int i = 0; i < T; ++i) CHECK(s.model.influence->values.row(i).sum() == doctest::Approx(1.0).epsilon(1e-5));
  apply_state_json(s, {{"view", "heads"}}, 0.0);  // only the Weights view draws it: not computed elsewhere
  CHECK(s.model.influence == nullptr);
  // The hand-made model: no W_O, so the value's own length; no layers to roll out through.
  AppState h = make_initial_state();
  apply_state_json(h, {{"weights_show", "value_weighted"}, {"view", "weights"}}, 0.0);
  REQUIRE(h.model.influence);
  for (int j = 0; j < static_cast<int>(h.model.trace.value.rows()); ++j)
    CHECK(h.model.influence->values(3, j) == doctest::Approx(h.model.trace.weights(3, j) * h.model.trace.value.row(j).norm()));
  CHECK_THROWS_WITH_AS(apply_state_json(h, {{"weights_show", "rollout"}}, 0.0), doctest::Contains("weights_show"), std::invalid_argument);
}
