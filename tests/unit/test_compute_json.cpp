// The JSON request/response of `compute` (CLI and page): results and every kind of bad input.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "../../src/api/compute_json.h"

using namespace attn;
using nlohmann::json;

namespace {
std::string error_of(const std::string& request) {
  try {
    compute_text(request);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("compute: the lesson's Derive example through JSON") {
  const json r = json::parse(compute_text(R"({"Q":[[1,0],[0,1],[1,1]],"K":[[1,0],[0,1],[1,1]],"V":[[1,2],[3,4],[5,6]]})"));
  CHECK(r["weights"][2][2].get<double>() == doctest::Approx(0.5).epsilon(0.01));
  CHECK(r["output"][1][0].get<double>() == doctest::Approx(3.41).epsilon(0.005));
  CHECK(r["scores"][0][0].get<double>() == doctest::Approx(0.7071).epsilon(1e-4));
  CHECK(r["backend"] == "simd");
}

TEST_CASE("compute: causal scores are null where masked; every backend agrees") {
  for (const char* backend : {"scalar", "eigen", "simd"}) {
    const json r = json::parse(compute_text(std::string(R"({"Q":[[1,0],[0,1]],"K":[[1,0],[0,1]],"V":[[1],[2]],"causal":true,"backend":")") +
                                            backend + "\"}"));
    CHECK(r["scores"][0][1].is_null());
    CHECK(r["weights"][0][1].get<double>() == 0.0);
    CHECK(r["output"][0][0].get<double>() == doctest::Approx(1.0));
    CHECK(r["backend"] == backend);
  }
}

TEST_CASE("compute: X and W* with X_kv (cross-attention)") {
  const json r = json::parse(compute_text(
      R"({"X":[[1,0]],"X_kv":[[1,0,0],[0,1,0]],"Wq":[[1,0],[0,1]],"Wk":[[1,0],[0,1],[0,0]],"Wv":[[1],[2],[3]],"scale":false})"));
  // q = [1,0]; keys [1,0], [0,1] -> scores 1, 0; values 1, 2
  const double e = std::exp(1.0);
  CHECK(r["weights"][0][0].get<double>() == doctest::Approx(e / (e + 1)));
  CHECK(r["output"][0][0].get<double>() == doctest::Approx((e + 2) / (e + 1)));
}

TEST_CASE("compute: bad requests name what is wrong") {
  CHECK(error_of("{").rfind("malformed JSON", 0) == 0);
  CHECK(error_of("[1,2]") == "the request must be a JSON object");
  CHECK(error_of(R"({"Q":[[1]],"K":[[1]]})") == "missing \"V\"");
  CHECK(error_of(R"({"Q":[[1,2],[3]],"K":[[1,2]],"V":[[1]]})").find("ragged") != std::string::npos);
  CHECK(error_of(R"({"Q":[[1,2]],"K":[[1]],"V":[[1]]})").find("same width") != std::string::npos);
  CHECK(error_of(R"({"Q":[],"K":[[1]],"V":[[1]]})") == "\"Q\" is empty");
  CHECK(error_of(R"({"Q":[["a"]],"K":[[1]],"V":[[1]]})") == "\"Q\"[0][0] is not a number");
  CHECK(error_of(R"({"Q":[[1e308]],"K":[[1]],"V":[[1]]})").find("finite") != std::string::npos);
  CHECK(error_of(R"({"Q":[[1e999]],"K":[[1]],"V":[[1]]})").rfind("malformed JSON", 0) == 0);
  CHECK(error_of(R"({"Q":[[1]],"K":[[1]],"V":[[1]],"backend":"gpu"})").find("backend") != std::string::npos);
  CHECK(error_of(R"({"Q":[[1]],"K":[[1]],"V":[[1]],"causal":"yes"})") == "\"causal\" must be true or false");
  CHECK(error_of(R"({"Q":[[1]],"K":[[1]],"V":[[1]],"temperature":0})").find("temperature") != std::string::npos);
  CHECK(error_of(R"({"Q":[[1]],"K":[[1]],"V":[[1]],"colour":1})") == "unknown key \"colour\"");
  CHECK(error_of(R"({"Q":[[1]],"K":[[1]],"V":[[1]],"X":[[1]]})").find("either") != std::string::npos);
  CHECK(error_of(std::string(100000, '[') + std::string(100000, ']')).find("nested deeper") != std::string::npos);
  std::string wide = R"({"Q":[[)";
  for (int i = 0; i < 1100; ++i) wide += (i ? ",1" : "1");
  wide += R"(]],"K":[[1]],"V":[[1]]})";
  CHECK(error_of(wide).find("limit") != std::string::npos);
}
