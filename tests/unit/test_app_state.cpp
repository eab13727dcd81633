// The app's state without a window: which backend computes the large problems, the inputs that
// choose it (backend, cost_T), and the table of inputs behind setState, getState and Reset.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>

#include "../../src/ui/app_state.h"
#include "../../src/ui/input_table.h"

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

// [SECTION] The table of inputs (src/ui/input_table.cpp)

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
