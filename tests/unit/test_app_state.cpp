// The app's state without a window: which backend computes the large problems, and the inputs
// that choose it (backend, cost_T) through the same JSON the URL and setState use.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "../../src/ui/app_state.h"

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
