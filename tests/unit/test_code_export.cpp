// The generated NumPy / PyTorch programs: matrices, settings and their order, for the worked example.
// Not a run of the programs: tests/cli/code_export.test.mjs runs the NumPy one under Python.
#include <doctest/doctest.h>

#include <cstdlib>
#include <sstream>
#include <string>

#include "../../src/api/code_export.h"

using namespace attn;

namespace {
CodeInput lesson_input(const AttentionOptions& options) {
  const EmbeddedSentence e = embed_sentence(kLessonSentence);
  return worked_example_code_input(e, e, false, options);
}

bool has(const std::string& code, const std::string& piece) { return code.find(piece) != std::string::npos; }

// The numbers of the literal row that ends with "# note" (the first such row).
std::vector<float> literal_row(const std::string& code, const std::string& note) {
  const std::size_t end = code.find("],  # " + note + "\n");
  REQUIRE(end != std::string::npos);
  const std::size_t start = code.rfind('[', end);
  std::vector<float> values;
  std::istringstream cells(code.substr(start + 1, end - start - 1));
  for (std::string cell; std::getline(cells, cell, ',');) values.push_back(std::strtof(cell.c_str(), nullptr));
  return values;
}
}  // namespace

TEST_CASE("numpy code: the lesson's matrices written out, row by row") {
  const std::string code = numpy_code(lesson_input({}));
  CHECK(has(code, "import numpy as np\n"));
  CHECK_FALSE(has(code, "torch"));
  CHECK(has(code, "x = np.array([\n"));
  CHECK(has(code, "x_kv = x  #"));  // self-attention reuses the same tokens
  // "it" is the pronoun: X has a 1 in the pronoun column (the third), all else 0.
  CHECK(literal_row(code, "it") == std::vector<float>{0, 0, 1, 0, 0, 0, 0, 0});
  // W_Q's pronoun row asks for a creature (3) and a little for a thing (1); W holds 2.5, so 3 wide.
  CHECK(has(code, "w_query = np.array([\n"));
  CHECK(has(code, "    [  3,   1,   0,   0],  # pronoun\n"));
  CHECK(has(code, "w_key = np.array([\n    [2, 0, 0, 0],  # creature\n"));
  // W_V: a thing hands on 0.4 of its feature (its key says 2), so that column is 3 wide too.
  CHECK(has(code, "w_value = np.array([\n    [  1,   0,   0,   0],  # creature\n    [  0, 0.4,   0,   0],  # thing\n"));
  CHECK(has(code, "], dtype=np.float32)\n"));
  CHECK(has(code, "queries = x @ w_query"));
  CHECK(has(code, "keys = x_kv @ w_key"));
  CHECK(has(code, "values = x_kv @ w_value"));
  CHECK(has(code, "# Q (10, 4)"));
  CHECK(has(code, "weights = exp_scores / exp_scores.sum(axis=1, keepdims=True)  # (10, 10)"));
  CHECK(has(code, "output = weights @ values  # (10, 4)"));
  CHECK(has(code, "print_rows(\"weights\", weights)\nprint_rows(\"output\", output)\n"));
}

TEST_CASE("numpy code: each setting appears only when it is on") {
  AttentionOptions plain;
  const std::string base = numpy_code(lesson_input(plain));
  CHECK(has(base, "scores = scores / np.sqrt(d)"));
  CHECK(has(base, "temperature = 1\nscores = scores / temperature"));
  CHECK_FALSE(has(base, "-np.inf"));
  CHECK(has(base, "no causal mask"));

  AttentionOptions causal;
  causal.causal = true;
  const std::string masked = numpy_code(lesson_input(causal));
  CHECK(has(masked, "future = np.triu(np.ones(scores.shape, dtype=bool), k=1)\nscores[future] = -np.inf\n"));
  // The mask goes in before the softmax (as -inf), after the scaling.
  CHECK(masked.find("scores[future] = -np.inf") < masked.find("np.exp("));
  CHECK(masked.find("scores / np.sqrt(d)") < masked.find("scores[future] = -np.inf"));

  AttentionOptions unscaled;
  unscaled.scale = false;
  const std::string raw = numpy_code(lesson_input(unscaled));
  CHECK_FALSE(has(raw, "sqrt(d)\n"));
  CHECK_FALSE(has(raw, "np.sqrt"));
  CHECK(has(raw, "no sqrt(d) scaling"));

  AttentionOptions hot;
  hot.temperature = 2.0f;
  CHECK(has(numpy_code(lesson_input(hot)), "temperature = 2\nscores = scores / temperature"));
  hot.temperature = 0.1f;  // the shortest literal that reads back as the same float
  CHECK(has(numpy_code(lesson_input(hot)), "temperature = 0.1\n"));
}

TEST_CASE("numpy code: cross-attention writes out the second sentence") {
  const EmbeddedSentence queries = embed_sentence("it was tired");
  const EmbeddedSentence keys = embed_sentence("The dog slept");
  const std::string code = numpy_code(worked_example_code_input(queries, keys, true, {}));
  CHECK(has(code, "Single-head cross-attention"));
  CHECK(has(code, "x_kv = np.array([\n"));
  CHECK(literal_row(code, "dog") == std::vector<float>{1, 0, 0, 0, 0, 0, 0, 0});
  CHECK(has(code, "# (3, 3): one row per query"));
}

TEST_CASE("numpy code: unknown words' pseudo-random vectors survive the literals exactly") {
  const EmbeddedSentence e = embed_sentence("the zebrafish sang");
  REQUIRE(e.unknown[1]);
  const std::string code = numpy_code(worked_example_code_input(e, e, false, {}));
  const std::vector<float> row = literal_row(code, "zebrafish");
  REQUIRE(row.size() == static_cast<std::size_t>(kFeatures));
  for (int j = 0; j < kFeatures; ++j) CHECK(row[j] == e.x(1, j));  // bit for bit, not approximately
}

TEST_CASE("code: tokens that are not valid UTF-8 do not break the Python source") {
  const EmbeddedSentence e = embed_sentence("caf\xe9 it");
  const std::string code = numpy_code(worked_example_code_input(e, e, false, {}));
  CHECK(has(code, "# caf?\n"));
  CHECK_FALSE(has(code, "\xe9"));
}

TEST_CASE("torch code: torch tensors, torch.softmax, and the built-in check when it applies") {
  AttentionOptions plain;
  const std::string code = torch_code(lesson_input(plain));
  CHECK(has(code, "import math\nimport torch\n"));
  CHECK_FALSE(has(code, "numpy"));
  CHECK(has(code, "x = torch.tensor([\n"));
  CHECK(has(code, "], dtype=torch.float32)\n"));
  CHECK(has(code, "scores = scores / math.sqrt(d)"));
  CHECK(has(code, "weights = torch.softmax(scores, dim=-1)"));
  CHECK(has(code, "scaled_dot_product_attention(\n        queries[None], keys[None], values[None], is_causal=False)"));
  CHECK(has(code, "assert gap < 1e-5"));

  AttentionOptions causal;
  causal.causal = true;
  const std::string masked = torch_code(lesson_input(causal));
  CHECK(has(masked, "scores = scores.masked_fill(future, float(\"-inf\"))"));
  CHECK(has(masked, "is_causal=True"));
  CHECK(masked.find("masked_fill") < masked.find("torch.softmax"));

  // The built-in always divides by √d and has no temperature: no check then.
  AttentionOptions hot;
  hot.temperature = 2.0f;
  CHECK_FALSE(has(torch_code(lesson_input(hot)), "scaled_dot_product_attention("));
  AttentionOptions unscaled;
  unscaled.scale = false;
  const std::string raw = torch_code(lesson_input(unscaled));
  CHECK_FALSE(has(raw, "scaled_dot_product_attention("));
  CHECK_FALSE(has(raw, "import math"));
}

TEST_CASE("compute_request: the same matrices and settings as the code") {
  AttentionOptions options;
  options.causal = true;
  options.temperature = 0.5f;
  const CodeInput in = lesson_input(options);
  const nlohmann::json request = compute_request(in);
  CHECK(request["X"].size() == 10);
  CHECK(request["X"][7][2] == 1.0);  // "it", pronoun column
  CHECK(request["X_kv"] == request["X"]);
  CHECK(request["Wq"][2][0] == 3.0);
  CHECK(request["causal"] == true);
  CHECK(request["scale"] == true);
  CHECK(request["temperature"] == 0.5);
}
