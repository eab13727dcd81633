// Code export: the current attention problem written out as a self-contained Python program
// (NumPy or PyTorch) with its matrices as literals. Not an interpreter: it only writes text.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../core/attention.h"
#include "../core/model.h"

namespace attn {

// Everything the generated program needs. Shapes: x (T, f), x_kv (T_kv, f), wq/wk/wv (f, d).
struct CodeInput {
  Matrix x;                               // query-side token vectors
  Matrix x_kv;                            // key/value-side token vectors (= x unless cross)
  Matrix wq, wk, wv;
  std::vector<std::string> query_tokens;  // one per row of x (written as comments)
  std::vector<std::string> key_tokens;    // one per row of x_kv
  std::vector<std::string> feature_names; // one per row of the W matrices (comments); may be empty
  std::string projections = "the hand-set projections (not trained)";  // what W_Q, W_K, W_V are (a comment)
  bool cross = false;                     // false: the program reuses x for keys and values
  bool causal = false;
  bool scale = true;
  float temperature = 1.0f;
};

// The worked example's input: the hand-set W_Q, W_K, W_V on these embedded sentences.
// `keys` is only read when cross is true. Mistakes are not exported: the code is correct attention.
CodeInput worked_example_code_input(const EmbeddedSentence& queries, const EmbeddedSentence& keys, bool cross,
                                    const AttentionOptions& options);

// Python 3 programs that compute Q, K, V, scores, (mask), softmax, weights and output and print
//   weights            output
//   <row of numbers>   <row of numbers>    (4 decimals, separated by single spaces)
// first the weights (T, T_kv), then the output (T, d). The PyTorch one then prints a line
// "check scaled_dot_product_attention max_abs_diff X" when its settings match that function.
std::string numpy_code(const CodeInput& input);
std::string torch_code(const CodeInput& input);
// Whether torch_code(input) checks itself against scaled_dot_product_attention: only where that
// function computes the same thing (÷√d on, temperature 1).
bool torch_checks_builtin(const CodeInput& input);

// The same problem as a compute request ({"X", "X_kv", "Wq", "Wk", "Wv", options}), see compute_json.h.
nlohmann::json compute_request(const CodeInput& input);

}  // namespace attn
