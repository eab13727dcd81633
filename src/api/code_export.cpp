// Writes the current attention problem as a NumPy or PyTorch program (see code_export.h).
// Not a template engine: one function writes both languages, switching only where they differ.
#include "code_export.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "compute_json.h"

namespace attn {

namespace {

enum class Lang { NumPy, Torch };

// The shortest of %.6g ... %.9g that reads back as the same float: 9 significant digits always
// round-trip a float32, but 0.1f then reads "0.100000001" where "0.1" gives the same float.
std::string float_literal(float v) {
  char buf[32];
  for (int digits = 6; digits <= 9; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, static_cast<double>(v));
    if (std::strtof(buf, nullptr) == v) break;
  }
  return buf;
}

// Python source must be valid UTF-8, even in comments; a token may hold any non-ASCII bytes.
std::string comment_safe(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    const std::size_t length = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    bool valid = length > 0 && i + length <= text.size();
    for (std::size_t k = 1; valid && k < length; ++k) valid = (static_cast<unsigned char>(text[i + k]) >> 6) == 0x2;
    if (valid && c >= 0x20 && c != 0x7f) {
      out.append(text, i, length);
      i += length;
    } else {
      out += '?';
      ++i;
    }
  }
  return out;
}

// Text built with <<, as a stream would, without the streams' locale machinery (kept out of the page's wasm).
struct Text {
  std::string s;
  Text& operator<<(const std::string& t) { return s += t, *this; }
  Text& operator<<(const char* t) { return s += t, *this; }
};

std::string shape(const Matrix& m) { return "(" + std::to_string(m.rows()) + ", " + std::to_string(m.cols()) + ")"; }

// name = np.array([ ... ], dtype=np.float32), one row per line, columns aligned, each row followed
// by its note (the token or feature it belongs to) as a comment.
void write_matrix(Text& out, Lang lang, const char* name, const Matrix& m,
                  const std::vector<std::string>& row_notes) {
  std::vector<std::string> cells;
  std::size_t width = 0;
  for (Eigen::Index i = 0; i < m.rows(); ++i)
    for (Eigen::Index j = 0; j < m.cols(); ++j) {
      cells.push_back(float_literal(m(i, j)));
      width = std::max(width, cells.back().size());
    }
  out << name << (lang == Lang::NumPy ? " = np.array([\n" : " = torch.tensor([\n");
  std::size_t cell = 0;
  for (Eigen::Index i = 0; i < m.rows(); ++i) {
    out << "    [";
    for (Eigen::Index j = 0; j < m.cols(); ++j, ++cell)
      out << (j ? ", " : "") << std::string(width - cells[cell].size(), ' ') << cells[cell];
    out << "],";
    if (static_cast<std::size_t>(i) < row_notes.size()) out << "  # " << comment_safe(row_notes[i]);
    out << "\n";
  }
  out << (lang == Lang::NumPy ? "], dtype=np.float32)\n" : "], dtype=torch.float32)\n");
}

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : ", ") + comment_safe(w);
  return out;
}

std::string python_code(const CodeInput& in, Lang lang) {
  const bool numpy = lang == Lang::NumPy;
  const std::string Tq = std::to_string(in.x.rows()), Tk = std::to_string(in.x_kv.rows());
  const std::string d = std::to_string(in.wk.cols()), dv = std::to_string(in.wv.cols());
  const std::string weights_shape = "(" + Tq + ", " + Tk + ")", output_shape = "(" + Tq + ", " + dv + ")";
  const std::string temperature = float_literal(in.temperature);
  // The built-in always divides by √d and knows no temperature: compare only when ours does the same.
  const bool builtin_comparable = !numpy && torch_checks_builtin(in);
  Text out;

  out << "# Single-head " << (in.cross ? "cross" : "self") << "-attention on the explainer's worked example, in "
      << (numpy ? "NumPy" : "PyTorch") << ".\n";
  out << "# Settings: " << (in.scale ? "scores divided by sqrt(d)" : "no sqrt(d) scaling") << ", temperature "
      << temperature << ", " << (in.causal ? "causal mask on" : "no causal mask") << ".\n";
  out << "# Run it with Python 3 and " << (numpy ? "NumPy" : "PyTorch") << ". It prints \"weights\" and the " << Tq
      << " rows of the weights " << weights_shape << ",\n# then \"output\" and the " << Tq << " rows of the output "
      << output_shape << ", 4 decimals.\n";
  out << (numpy ? "import numpy as np\n" : "") << (!numpy && in.scale ? "import math\n" : "")
      << (numpy ? "" : "import torch\n") << "\n";

  out << "# X: one row per token, one column per feature: " << shape(in.x) << ".\n";
  if (!in.feature_names.empty()) out << "# Columns: " << joined(in.feature_names) << ".\n";
  write_matrix(out, lang, "x", in.x, in.query_tokens);
  if (in.cross) {
    out << "# X_kv: the second sentence, which the keys and values come from: " << shape(in.x_kv) << ".\n";
    write_matrix(out, lang, "x_kv", in.x_kv, in.key_tokens);
  } else {
    out << "x_kv = x  # self-attention: keys and values come from the same tokens as the queries\n";
  }
  out << "\n# W_Q, W_K, W_V: " << in.projections << ", " << shape(in.wq)
      << " each, one row per feature of X.\n";
  write_matrix(out, lang, "w_query", in.wq, in.feature_names);
  write_matrix(out, lang, "w_key", in.wk, in.feature_names);
  write_matrix(out, lang, "w_value", in.wv, in.feature_names);

  out << "\nqueries = x @ w_query    # Q (" << Tq << ", " << d << "): what each token looks for\n"
      << "keys = x_kv @ w_key      # K (" << Tk << ", " << d << "): what each token offers to be matched on\n"
      << "values = x_kv @ w_value  # V (" << Tk << ", " << dv << "): what each token passes on\n\n";
  out << "scores = queries @ keys.T  # " << weights_shape << ": one row per query, one column per key\n";
  if (in.scale) {
    out << "d = keys.shape[1]\n"
        << "scores = scores / " << (numpy ? "np.sqrt(d)" : "math.sqrt(d)")
        << "  # keeps the spread of the scores near 1 whatever d is\n";
  } else {
    out << "# The division by the square root of d is switched off.\n";
  }
  out << "temperature = " << temperature << "\n"
      << "scores = scores / temperature  # above 1 flattens the weights, below 1 sharpens them\n";
  if (in.causal) {
    out << "\n# Causal mask: query i must not see any key j > i. Setting those scores to -inf before the\n"
        << "# softmax gives them a weight of exactly 0.\n";
    if (numpy)
      out << "future = np.triu(np.ones(scores.shape, dtype=bool), k=1)\n"
          << "scores[future] = -np.inf\n";
    else
      out << "future = torch.ones(scores.shape, dtype=torch.bool).triu(diagonal=1)\n"
          << "scores = scores.masked_fill(future, float(\"-inf\"))\n";
  }
  out << "\n";
  if (numpy) {
    out << "# Softmax along each row (over the keys). Subtracting the row's largest score first does not\n"
        << "# change the result (it cancels in the ratio) but keeps np.exp from overflowing.\n"
        << "exp_scores = np.exp(scores - scores.max(axis=1, keepdims=True))\n"
        << "weights = exp_scores / exp_scores.sum(axis=1, keepdims=True)  # " << weights_shape
        << ": each row sums to 1\n";
  } else {
    out << "# Softmax along each row (over the keys); torch subtracts the row's largest score itself.\n"
        << "weights = torch.softmax(scores, dim=-1)  # " << weights_shape << ": each row sums to 1\n";
  }
  out << "output = weights @ values  # " << output_shape << ": each token's weighted mix of the values\n\n\n";

  out << "def print_rows(title, matrix):\n"
      << "    print(title)\n"
      << "    for row in matrix.tolist():\n"
      << "        print(\" \".join(f\"{value:.4f}\" for value in row))\n\n\n"
      << "print_rows(\"weights\", weights)\n"
      << "print_rows(\"output\", output)\n";

  if (builtin_comparable) {
    out << "\n# Cross-check with PyTorch's own attention function (PyTorch 2.0 and newer), which divides\n"
        << "# by sqrt(d) itself" << (in.causal ? " and builds the same causal mask from is_causal" : "") << ".\n"
        << "if hasattr(torch.nn.functional, \"scaled_dot_product_attention\"):\n"
        << "    builtin = torch.nn.functional.scaled_dot_product_attention(\n"
        << "        queries[None], keys[None], values[None], is_causal=" << (in.causal ? "True" : "False") << ")[0]\n"
        << "    gap = (builtin - output).abs().max().item()\n"
        << "    print(f\"check scaled_dot_product_attention max_abs_diff {gap:.2e}\")\n"
        << "    assert gap < 1e-5, \"this attention and PyTorch's built-in one disagree\"\n"
        << "else:\n"
        << "    print(\"check skipped: scaled_dot_product_attention needs PyTorch 2.0 or newer\")\n";
  } else if (!numpy) {
    out << "\n# No cross-check with torch.nn.functional.scaled_dot_product_attention here: it always divides\n"
        << "# by sqrt(d) and has no temperature, so it computes something else with these settings.\n";
  }
  return out.s;
}

}  // namespace

CodeInput worked_example_code_input(const EmbeddedSentence& queries, const EmbeddedSentence& keys, bool cross,
                                    const AttentionOptions& options) {
  const WorkedModel& model = worked_model();
  const EmbeddedSentence& kv = cross ? keys : queries;
  CodeInput in;
  in.x = queries.x;
  in.x_kv = kv.x;
  in.wq = model.wq;
  in.wk = model.wk;
  in.wv = model.wv;
  for (const Token& t : queries.tokens) in.query_tokens.push_back(t.text);
  for (const Token& t : kv.tokens) in.key_tokens.push_back(t.text);
  in.feature_names.assign(feature_names().begin(), feature_names().end());
  in.cross = cross;
  in.causal = options.causal;
  in.scale = options.scale;
  in.temperature = options.temperature;
  return in;
}

bool torch_checks_builtin(const CodeInput& in) { return in.scale && in.temperature == 1.0f; }

std::string numpy_code(const CodeInput& input) { return python_code(input, Lang::NumPy); }
std::string torch_code(const CodeInput& input) { return python_code(input, Lang::Torch); }

nlohmann::json compute_request(const CodeInput& in) {
  return {{"X", matrix_to_json(in.x)},   {"X_kv", matrix_to_json(in.x_kv)}, {"Wq", matrix_to_json(in.wq)},
          {"Wk", matrix_to_json(in.wk)}, {"Wv", matrix_to_json(in.wv)},     {"causal", in.causal},
          {"scale", in.scale},           {"temperature", in.temperature}};
}

}  // namespace attn
