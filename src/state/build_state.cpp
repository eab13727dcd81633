// The Build view's numbers (see build_state.h): the current head as NumPy and PyTorch programs, and
// how far the project's backends are from the scalar reference on it. Not the view, and not the code
// writer (src/api/code_export).
#include "build_state.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "../api/code_export.h"
#include "../api/compute_json.h"
#include "../core/kernels/kernels.h"
#include "app_state.h"

namespace attn {

namespace {

double relative_to(const Matrix& got, const Matrix& reference, double* max_abs) {
  *max_abs = static_cast<double>((got - reference).cwiseAbs().maxCoeff());
  return *max_abs / std::max(static_cast<double>(reference.cwiseAbs().maxCoeff()), 1e-30);
}

AttentionOptions backend_options(const AppState& state) {
  // The head's own settings (for a loaded model its layer's scale, cap, window and causal mask; for
  // the hand-made one the switches), but never a mistake: the backends compute attention only.
  AttentionOptions options = state.model.trace.options;
  options.mistake = Mistake::None;
  return options;
}

// A loaded model's head is printed from X and its W_Q, W_K, W_V while they hold at most this many
// numbers; past it (GPT-2 small: 10 × 768 + 3 × 768 × 64) from the head's own Q, K, V.
constexpr long kPrintedNumbersMax = 40000;
// Past this many numbers even Q, K, V are not printed: the box says so and gives the shapes.
constexpr long kQkvNumbersMax = 60000;

std::string float_text(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.7g", static_cast<double>(v));
  return buf;
}

std::string matrix_literal(const Matrix& m, const char* open) {
  std::string out = std::string(open) + "[\n";
  for (Eigen::Index i = 0; i < m.rows(); ++i) {
    out += "    [";
    for (Eigen::Index j = 0; j < m.cols(); ++j) out += (j ? ", " : "") + float_text(m(i, j));
    out += "],\n";
  }
  return out + "]";
}

// The attention of one head of a loaded model from its Q, K, V (as the model computed them), as a
// NumPy or PyTorch program printing the weights and the output like numpy_code() does.
std::string head_qkv_program(const AppState& state, const AttentionOptions& o, bool torch, const std::string& why) {
  const AttentionTrace& t = state.model.trace;
  const long numbers = static_cast<long>(t.query.size() + t.key.size() + t.value.size());
  std::string code = "# Attention of " + head_caption(state) + ", from the head's own Q, K and V.\n# " + why + "\n";
  if (numbers > kQkvNumbersMax)
    return code + "# Q, K and V are " + std::to_string(t.query.rows()) + " x " + std::to_string(t.query.cols()) +
           " each (" + std::to_string(numbers) + " numbers): too many to print too. Shorten the text to get a program.\n";
  // A rotary model: the program starts from q and k before the rotation and turns them itself.
  const LoadedModel* m = current_loaded_model(state);
  const TransformerConfig* c = m ? &m->model->config : nullptr;
  const bool rope = c && c->positions == PositionKind::Rope && state.model.layer;
  Matrix q = t.query, k = t.key;
  std::vector<double> inv_freq;
  double gain = 1.0;
  if (rope) {
    const LayerDetail& layer = *state.model.layer;
    const Eigen::Index hd = c->head_dim, g = c->kv_head_of(state.inputs.head);
    const Matrix& q0 = c->qk_norm ? layer.query_normed : layer.query_projected;
    const Matrix& k0 = c->qk_norm ? layer.key_normed : layer.key_projected;
    q = q0.middleCols(state.inputs.head * hd, hd), k = k0.middleCols(g * hd, hd);
    const RopeConfig& r = c->layers[static_cast<std::size_t>(state.inputs.layer)].rope;
    inv_freq = rope_inv_freq(r, c->head_dim);
    if (r.scaling == RopeScaling::Yarn) gain = r.attention_factor;
  }
  if (c && c->kv_group() > 1)
    code += "# K and V are key/value head " + std::to_string(c->kv_head_of(state.inputs.head) + 1) + " of " +
            std::to_string(c->n_kv_head) + ", which " + std::to_string(c->kv_group()) +
            " query heads share (grouped-query attention).\n";
  std::string freq_list;
  for (std::size_t i = 0; i < inv_freq.size(); ++i) {
    char v[40];
    std::snprintf(v, sizeof v, "%.17g", inv_freq[i]);
    freq_list += (i ? ", " : "") + std::string(v);
  }
  const std::string temperature = float_text(o.temperature);
  char scale_text[40];
  std::snprintf(scale_text, sizeof scale_text, "%.9g", static_cast<double>(o.score_scale > 0 ? o.score_scale : 0));
  // The factor the scores are multiplied by: the model's own (1/√d, or Gemma's), or 1 with ÷√d off.
  const std::string factor = !o.scale ? "1 / " + temperature
                             : o.score_scale > 0 ? std::string(scale_text) + " / " + temperature
                                                 : std::string("1 / (") + (torch ? "math.sqrt(d)" : "np.sqrt(d)") + " * " + temperature + ")";
  // What NumPy and PyTorch spell differently; the program is otherwise the same for both.
  struct Dialect {
    const char *imports, *array, *f64, *arange, *cos, *sin, *concat, *axis, *tanh;
  };
  const Dialect py = torch ? Dialect{"import math\nimport torch\n\n", "torch.tensor(", "torch.float64",
                                     "torch.arange(Q0.shape[0], dtype=torch.float64)", "angle.cos()", "angle.sin()",
                                     "torch.cat", "dim", "torch.tanh("}
                           : Dialect{"import numpy as np\n\n", "np.array(", "np.float64", "np.arange(Q0.shape[0])",
                                     "np.cos(angle)", "np.sin(angle)", "np.concatenate", "axis", "np.tanh("};
  const std::string f64 = std::string(", dtype=") + py.f64 + ")\n";
  code += py.imports;
  code += std::string(rope ? "Q0" : "Q") + " = " + matrix_literal(q, py.array) + f64;
  code += std::string(rope ? "K0" : "K") + " = " + matrix_literal(k, py.array) + f64;
  code += "V = " + matrix_literal(t.value, py.array) + f64 + "\n";
  code += "d = V.shape[1]\n";
  if (rope) {
    code += "# RoPE: dimension i turns together with dimension i + d/2 by the angle position * inv_freq[i]\n";
    code += "inv_freq = " + std::string(py.array) + "[" + freq_list + "]" + f64;
    code += "angle = " + std::string(py.arange) + "[:, None] * inv_freq[None, :]\n";
    code += "cos, sin = " + std::string(py.cos) + " * " + float_text(static_cast<float>(gain)) + ", " + py.sin + " * " +
            float_text(static_cast<float>(gain)) + "\n";
    code += "def rotate(x):\n    a, b = x[:, :d // 2], x[:, d // 2:]\n    return " + std::string(py.concat) +
            "([a * cos - b * sin, b * cos + a * sin], " + py.axis + "=1)\n";
    code += "Q, K = rotate(Q0), rotate(K0)\n";
  }
  code += "scores = Q @ K.T * (" + factor + ")\n";
  if (o.softcap > 0) code += "scores = " + std::string(py.tanh) + "scores / " + float_text(o.softcap) + ") * " + float_text(o.softcap) + "  # the soft-cap\n";
  if (!torch) {
    if (o.causal) code += "scores[np.triu(np.ones(scores.shape, dtype=bool), k=1)] = -np.inf  # causal mask\n";
    if (o.window > 0)
      code += "scores[np.tril(np.ones(scores.shape, dtype=bool), k=-" + std::to_string(o.window) +
              ")] = -np.inf  # the sliding window: keys " + std::to_string(o.window) + " or more back\n";
    code += "scores -= scores.max(axis=1, keepdims=True)  # for exp: the largest becomes 0\n";
    code += "weights = np.exp(scores)\nweights /= weights.sum(axis=1, keepdims=True)\noutput = weights @ V\n";
  } else {
    if (o.causal)
      code += "scores = scores.masked_fill(torch.ones_like(scores, dtype=torch.bool).triu(1), float('-inf'))  # causal mask\n";
    if (o.window > 0)
      code += "scores = scores.masked_fill(torch.ones_like(scores, dtype=torch.bool).tril(-" + std::to_string(o.window) +
              "), float('-inf'))  # the sliding window\n";
    code += "weights = torch.softmax(scores, dim=1)\noutput = weights @ V\n";
  }
  code += "print('weights')\nfor row in weights:\n    print(' '.join(f'{float(v):.4f}' for v in row))\n";
  code += "print('output')\nfor row in output:\n    print(' '.join(f'{float(v):.4f}' for v in row))\n";
  return code;
}

BackendAgreement agreement_of(const std::string& name, const AttentionResult& r, const AttentionResult& reference) {
  BackendAgreement a;
  a.backend = name;
  a.relative = std::max(relative_to(r.weights, reference.weights, &a.max_abs_weights),
                        relative_to(r.output, reference.output, &a.max_abs_output));
  return a;
}

std::string build_key(const AppState& state) {
  const AppInputs& in = state.inputs;
  return in.model + '\n' + std::to_string(in.layer) + ':' + std::to_string(in.head) + '\n' + in.sentence + '\n' +
         (in.cross ? in.kv_sentence : std::string()) + '\n' + std::to_string(in.causal) + std::to_string(in.scale) +
         std::to_string(in.temperature);
}

}  // namespace

void update_build_state(AppState& state, double now) {
  BuildState& cache = state.build;
  if (cache.revision == state.revision && !cache.slow_pending) return;  // once per input revision
  cache.revision = state.revision;
  const AttentionTrace& t = state.model.trace;
  const AttentionOptions options = backend_options(state);
  const std::string key = build_key(state);
  if (cache.key != key) {
    if (const LoadedModel* m = current_loaded_model(state)) {
      // A loaded model's head: X of its layer and the head's slices of W_Q, W_K, W_V (its answer for this
      // view brings them: the page keeps no other weights), when they are few enough to print; else the
      // head's Q, K, V.
      const HeadProjections* head = state.model.answer->projections.get();
      if (!head) return;
      const TransformerConfig& c = m->model->config;
      const int hd = c.head_dim;
      // The projections may have biases (Q = X·W_Q + b_Q): X gets a last column of ones and each W
      // a last row holding its bias (zeros without one), so the program's X·W is exactly the model's.
      const Matrix& x = state.model.queries.x;
      const int C = static_cast<int>(x.cols());
      const bool unscaled = c.score_scale == 1.0f;  // a model trained without ÷√d
      CodeInput input;
      input.x = Matrix::Ones(x.rows(), C + 1);
      input.x.leftCols(C) = x;
      input.x_kv = input.x;
      Matrix* targets[3] = {&input.wq, &input.wk, &input.wv};
      for (int which = 0; which < 3; ++which) {
        Matrix& w = *targets[which];
        w.resize(C + 1, hd);
        w.topRows(C) = head->weights[which];
        w.row(C) = head->biases[which];
      }
      for (const Token& tok : state.model.queries.tokens) input.query_tokens.push_back(tok.text);
      input.key_tokens = input.query_tokens;
      input.causal = options.causal;
      input.scale = options.scale && !unscaled;
      input.temperature = options.temperature;
      input.projections = "this head's columns of the layer's W_Q, W_K, W_V, learned in training (a last row: "
                          "its biases)";
      const long numbers = static_cast<long>(input.x.size() + input.wq.size() * 3);
      // What happens to q and k between X·W and the scores (q/k norm, the rotation) and what the
      // scores go through (a cap, a window) is written out from the head's own q, k, v.
      const bool plain_head = !c.qk_norm && c.positions == PositionKind::Learned && c.attn_softcap == 0 &&
                              !c.any_window() && (unscaled || c.score_scale == 1.0f / std::sqrt(static_cast<float>(hd)));
      if (plain_head && numbers <= kPrintedNumbersMax) {
        // The writer's header names the worked example; here it is a loaded model's head.
        const auto for_head = [&](std::string code) {
          const std::string worked = "the explainer's worked example", feature = "one column per feature";
          if (const auto at = code.find(worked); at != std::string::npos) code.replace(at, worked.size(), head_caption(state));
          if (const auto at = code.find(feature); at != std::string::npos)
            code.replace(at, feature.size(),
                         "one column per number of the layer's input (after its LayerNorm), and a last column of 1s "
                         "that adds each W's last row, its bias");
          return code;
        };
        cache.numpy = for_head(numpy_code(input));
        cache.torch = for_head(torch_code(input));
        cache.code_note.clear();
        cache.builtin_check = torch_checks_builtin(input);
      } else {
        // what this model's head does beyond X·W and q·k/√d, each named only where the model has it
        std::vector<std::string> more;
        if (c.qk_norm) more.push_back("its q and k are normed per head");
        if (c.positions == PositionKind::Rope) more.push_back("its q and k are rotated by position (RoPE)");
        if (!unscaled && c.score_scale != 1.0f / std::sqrt(static_cast<float>(hd)))
          more.push_back("its scores are multiplied by its own factor, not 1/√d");
        if (c.attn_softcap > 0) more.push_back("its scores are soft-capped");
        if (c.any_window()) more.push_back("some layers see only a window of recent tokens");
        std::string beyond;
        for (std::size_t i = 0; i < more.size(); ++i)
          beyond += (i == 0 ? "" : i + 1 == more.size() ? " and " : ", ") + more[i];
        const std::string why =
            !plain_head ? "This model does more than X·W and q·k/√d: " + beyond +
                              ". The program starts from the q, k and v the model computed."
                        : "X is " + std::to_string(input.x.rows()) + " x " + std::to_string(input.x.cols()) +
                              " and W_Q, W_K, W_V are " + std::to_string(input.wq.rows()) + " x " + std::to_string(hd) +
                              " each: " + std::to_string(numbers) +
                              " numbers, too many to print; Q = X·W_Q, K = X·W_K, V = X·W_V were computed by the model.";
        cache.numpy = head_qkv_program(state, options, false, why);
        cache.torch = head_qkv_program(state, options, true, why);
        cache.code_note = why;
        cache.builtin_check = false;
      }
    } else {
      const CodeInput input =
          worked_example_code_input(state.model.queries, state.model.keys, cross_shown(state), options);
      cache.numpy = numpy_code(input);
      cache.torch = torch_code(input);
      cache.code_note.clear();
      cache.builtin_check = torch_checks_builtin(input);
    }
    cache.reference = attend_with(Backend::Scalar, t.query, t.key, t.value, options);
    cache.agreement.clear();
    for (Backend backend : {Backend::Eigen, Backend::Simd})
      cache.agreement.push_back(
          agreement_of(backend_name(backend), attend_with(backend, t.query, t.key, t.value, options), cache.reference));
    cache.slow_pending = !registered_backends().empty();
    cache.key = key;
    ++cache.computations;
  }
  if (cache.slow_pending && now - state.changed_at >= kBuildSlowCheckDelay) {
    // Float32 shaders: a looser tolerance.
    for (const auto& [name, compute] : registered_backends()) {
      BackendAgreement a;
      try {
        a = agreement_of(name, compute(t.query, t.key, t.value, options), cache.reference);
      } catch (const std::exception& e) {
        a.backend = name;
        a.unavailable = e.what();
      }
      a.tolerance = kBuildGpuRelativeTolerance;
      cache.agreement.push_back(a);
    }
    cache.slow_pending = false;
  }
}

std::string build_hint(CodeLanguage language, const BuildState& cache) {
  if (language == CodeLanguage::NumPy)
    return "Paste it into Python 3 with NumPy and run it. It prints the weights, one row per query token: the same "
           "numbers as the Weights view. Then it prints the outputs.";
  std::string text = "Paste it into Python 3 with PyTorch and run it. It prints the weights (the same numbers as the "
                     "Weights view) and the outputs.";
  if (cache.builtin_check) return text + " Then it checks itself against PyTorch's built-in attention (PyTorch 2.0 or newer).";
  return text + (cache.code_note.empty()
                     ? " It has no check against PyTorch's built-in attention: with √d scaling off or a temperature "
                       "other than 1 that function computes something else."
                     : " It has no check against PyTorch's built-in attention: it starts from this head's Q, K and V.");
}

}  // namespace attn
