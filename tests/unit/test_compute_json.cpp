// The JSON request/response of `compute` (CLI and page): results and every kind of bad input.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
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
Matrix test_infinite_row() {
  Matrix m(1, 2);
  m << 1.0f, -std::numeric_limits<float>::infinity();
  return m;
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

TEST_CASE("compute: the numeric domain, refused by name") {
  const std::string qkv = R"({"Q":[[1]],"K":[[1]],"V":[[1]],"temperature":)";
  CHECK(error_of(qkv + "1e-40}") == "\"temperature\" must be a number from 0.05 to 20 (got 1e-40)");
  CHECK(error_of(qkv + "20.001}") == "\"temperature\" must be a number from 0.05 to 20 (got 20.001)");
  CHECK(error_of(qkv + "0.0499}").find("\"temperature\" must be") == 0);
  CHECK(error_of(qkv + "\"hot\"}") == "\"temperature\" must be a number from 0.05 to 20");
  // Both limits are accepted; one query, two keys with scores 1 and 0 (Q·K, d = 1).
  for (const double t : {0.05, 20.0}) {
    const json r = json::parse(compute_text(
        R"({"Q":[[1]],"K":[[1],[0]],"V":[[1],[0]],"temperature":)" + std::to_string(t) + "}"));
    const double e = std::exp(1.0 / t);  // weights e^(1/t) / (e^(1/t) + 1) and 1 / (e^(1/t) + 1)
    CHECK(r["weights"][0][0].get<double>() == doctest::Approx(e / (e + 1)).epsilon(1e-6));
    CHECK(r["weights"][0][1].get<double>() == doctest::Approx(1 / (e + 1)).epsilon(1e-5));
  }
  // A projection whose product passes the entry limit is named as the product.
  CHECK(error_of(R"({"X":[[1e6,1e6]],"Wq":[[1e6],[1e6]],"Wk":[[1],[1]],"Wv":[[1],[1]]})") ==
        "Q = X·Wq[0][0] is too large (|value| must be at most 1e+06)");
}

TEST_CASE("compute: the size of the result is limited before anything is computed") {
  // 4096 x 1 inputs ask for two 4096 x 4096 matrices: 33 558 528 numbers.
  std::string column = "[";
  for (int i = 0; i < 4096; ++i) column += (i ? ",[1]" : "[1]");
  column += "]";
  const std::string message = error_of(R"({"Q":)" + column + R"(,"K":)" + column + R"(,"V":)" + column + "}");
  CHECK(message == "the result would hold 33558528 numbers (scores and weights 4096 x 4096, output 4096 x 1); "
                   "the limit is 4194304: ask for fewer queries or keys");
  // 1024 x 1024 (2 098 176 numbers) is inside the limit.
  std::string half = "[";
  for (int i = 0; i < 1024; ++i) half += (i ? ",[1]" : "[1]");
  half += "]";
  const json r = json::parse(compute_text(R"({"Q":)" + half + R"(,"K":)" + half + R"(,"V":)" + half + "}"));
  CHECK(r["weights"].size() == 1024);
  CHECK(r["weights"][1023][5].get<double>() == doctest::Approx(1.0 / 1024));
}

TEST_CASE("compute: null means masked, and nothing else") {
  const json r = json::parse(compute_text(R"({"Q":[[1],[2]],"K":[[1],[3]],"V":[[1],[2]],"causal":true})"));
  CHECK(r["scores"][0][1].is_null());
  CHECK(r["scores"][1][1].get<double>() == doctest::Approx(6.0));
  CHECK(r["weights"][0][1].get<double>() == 0.0);
  // A backend that returns NaN is an error that names the entry, never a null in the answer.
  register_backend("test-nan", [](const Matrix& q, const Matrix& k, const Matrix& v, const AttentionOptions&) {
    AttentionResult bad;
    bad.weights = Matrix::Constant(q.rows(), k.rows(), 0.5f);
    bad.output = Matrix::Zero(q.rows(), v.cols());
    bad.weights(1, 0) = std::nanf("");
    return bad;
  });
  try {
    compute_text(R"({"Q":[[1],[2]],"K":[[1],[3]],"V":[[1],[2]],"backend":"test-nan"})");
    FAIL("a NaN came back as an answer");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()).rfind("the result's \"weights\"[1][0] is not a finite number", 0) == 0);
  }
  // Without the mask, an infinite score is not "masked": an error too.
  CHECK_THROWS_WITH_AS(result_matrix_to_json(test_infinite_row(), "scores", false),
                       doctest::Contains("\"scores\"[0][1] is not a finite number"), std::runtime_error);
  CHECK(result_matrix_to_json(test_infinite_row(), "scores", true)[0][1].is_null());
}
