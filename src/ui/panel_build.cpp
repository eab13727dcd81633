// The build view: the current attention as a runnable NumPy or PyTorch program to copy, and how
// far the project's own CPU backends are from each other on it. Not the code writer (src/api/code_export).
#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "../api/code_export.h"
#include "../api/compute_json.h"
#include "model_ui.h"
#include "panels.h"
#include "widgets.h"

namespace attn::ui {

namespace {

constexpr double kRelativeTolerance = 1e-5;  // a backend passes when max|Δ| / max|reference| is below it
constexpr double kGpuRelativeTolerance = 1e-4;  // the GPU path's stated tolerance

enum class Language { NumPy, PyTorch };

Language& chosen_language() {  // throwaway UI toggle: not part of the state a URL restores
  static Language language = Language::NumPy;
  return language;
}

// One backend against the scalar reference, on the same Q, K, V and settings.
struct BackendAgreement {
  std::string backend;
  double max_abs_weights = 0, max_abs_output = 0;
  double relative = 0;   // the larger of max|Δ| / max|reference| over weights and over output
  double tolerance = kRelativeTolerance;
  std::string unavailable;  // why a registered backend (the GPU) could not run just now
};

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

// Everything this view computes, redone only when what it depends on changes (not every frame,
// not for a new selected token or view). Not const: ImGui's text box takes a char*, which it
// leaves alone when read-only.
struct BuildCache {
  std::string key;  // the inputs the code and the table depend on
  std::string numpy, torch;
  std::string code_note;  // why the code starts from Q, K, V (a large model), "" otherwise
  bool builtin_check = false;  // the PyTorch program checks itself against scaled_dot_product_attention
  AttentionResult reference;
  std::vector<BackendAgreement> agreement;
  // Backends added at run time (the GPU) run once the inputs rest for kSlowCheckDelay seconds, so
  // dragging a slider does not wait on GPU read-backs every frame (~50 ms each in a software GPU).
  bool slow_pending = false;
};
constexpr double kSlowCheckDelay = 0.3;

std::string build_key(const AppState& state) {
  const AppInputs& in = state.inputs;
  return in.model + '\n' + std::to_string(in.layer) + ':' + std::to_string(in.head) + '\n' + in.sentence + '\n' +
         (in.cross ? in.kv_sentence : std::string()) + '\n' + std::to_string(in.causal) + std::to_string(in.scale) +
         std::to_string(in.temperature);
}

BuildCache& cached(const AppState& state, double now) {
  static BuildCache cache;
  const AttentionTrace& t = state.model.trace;
  const AttentionOptions options = backend_options(state);
  const std::string key = build_key(state);
  if (cache.key != key) {
    if (const LoadedModel* m = current_loaded_model(state)) {
      // A loaded model's head: X of its layer and the head's slices of W_Q, W_K, W_V, when they
      // are few enough to print; else the head's Q, K, V.
      const TransformerConfig& c = m->model->config;
      const TransformerBlock& block = m->model->blocks[static_cast<std::size_t>(state.inputs.layer)];
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
        w.topRows(C) = head_weights(c, block, state.inputs.head, static_cast<Projection>(which));
        w.row(C) = head_bias(c, block, state.inputs.head, static_cast<Projection>(which));
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
  }
  if (cache.slow_pending && now - state.changed_at >= kSlowCheckDelay) {
    // Float32 shaders: a looser tolerance.
    for (const auto& [name, compute] : registered_backends()) {
      BackendAgreement a;
      try {
        a = agreement_of(name, compute(t.query, t.key, t.value, options), cache.reference);
      } catch (const std::exception& e) {
        a.backend = name;
        a.unavailable = e.what();
      }
      a.tolerance = kGpuRelativeTolerance;
      cache.agreement.push_back(a);
    }
    cache.slow_pending = false;
  }
  return cache;
}

// What to do with the program and what it checks, as this program does.
std::string build_hint(Language language, const BuildCache& cache) {
  if (language == Language::NumPy)
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

// Green for "agrees" / "copied", red for "does not": darker on the light theme to stay readable.
ImU32 good_color(bool light) { return light ? IM_COL32(20, 125, 55, 255) : IM_COL32(120, 220, 140, 255); }
ImU32 bad_color(bool light) { return light ? IM_COL32(190, 40, 30, 255) : IM_COL32(255, 120, 110, 255); }

std::string error_text(double v) {
  if (v == 0) return "0 (identical)";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1e", v);
  return buf;
}

// The program in a read-only text box that can be selected from, scrolling both ways: code lines
// are long and must not wrap, and ImGui's multiline box has no horizontal scrollbar of its own.
void code_box(const char* id, std::string& code, float height, bool light) {
  const ImGuiStyle& style = ImGui::GetStyle();
  // A plain page colour instead of the input-field tint: this is something to read, not to type in.
  ImGui::PushStyleColor(ImGuiCol_FrameBg, light ? IM_COL32(255, 255, 255, 255) : IM_COL32(14, 16, 21, 255));
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(0, 0));
  ImGui::BeginChild(id, ImVec2(0, height), true, ImGuiWindowFlags_HorizontalScrollbar);
  ImGui::PopStyleVar();
  const ImVec2 text = ImGui::CalcTextSize(code.c_str());
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const ImVec2 size(std::max(text.x + style.FramePadding.x * 2 + ImGui::GetFontSize(), avail.x),
                    std::max(text.y + style.FramePadding.y * 2 + ImGui::GetTextLineHeight(), avail.y));
  ImGui::InputTextMultiline("##code", code.data(), code.size() + 1, size, ImGuiInputTextFlags_ReadOnly);
  ImGui::EndChild();
  ImGui::PopStyleColor();
}

void agreement_table(const std::vector<BackendAgreement>& rows, bool light) {
  const ImGuiTableFlags flags =
      ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_NoHostExtendX;
  if (!ImGui::BeginTable("##agreement", 5, flags)) return;
  ImGui::TableSetupColumn("Backend");
  ImGui::TableSetupColumn("max |Δ weights|");
  ImGui::TableSetupColumn("max |Δ output|");
  ImGui::TableSetupColumn("relative");
  ImGui::TableSetupColumn("within tolerance?");
  ImGui::TableHeadersRow();
  ImGui::TableNextRow();
  ImGui::TableNextColumn();
  ImGui::TextUnformatted("scalar");
  for (int column = 1; column < 5; ++column) {
    ImGui::TableNextColumn();
    hint(column == 1 ? "the reference" : "—");
  }
  for (const BackendAgreement& a : rows) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    // SIMD code differs per machine (SSE2, AVX2, WebAssembly SIMD): say which one ran.
    const bool simd = a.backend == backend_name(Backend::Simd);
    ImGui::TextUnformatted((simd ? a.backend + " (" + simd_flavour() + ")" : a.backend).c_str());
    if (!a.unavailable.empty()) {  // e.g. the GPU path without float render targets, or a lost context
      ImGui::TableNextColumn();
      hint(("not available: " + a.unavailable).c_str());
      for (int column = 2; column < 5; ++column) ImGui::TableNextColumn();
      continue;
    }
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(error_text(a.max_abs_weights).c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(error_text(a.max_abs_output).c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(error_text(a.relative).c_str());
    ImGui::TableNextColumn();
    const bool pass = a.relative <= a.tolerance;
    ImGui::PushStyleColor(ImGuiCol_Text, pass ? good_color(light) : bad_color(light));
    ImGui::TextUnformatted((std::string(pass ? "✓ yes" : "✗ no") + (a.tolerance == kRelativeTolerance ? " (1e-5)" : " (1e-4)")).c_str());
    ImGui::PopStyleColor();
  }
  for (const auto& entry : registered_backends()) {
    if (std::any_of(rows.begin(), rows.end(), [&](const BackendAgreement& a) { return a.backend == entry.first; }))
      continue;
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(entry.first.c_str());
    ImGui::TableNextColumn();
    hint("checking once the inputs rest…");
    for (int column = 2; column < 5; ++column) ImGui::TableNextColumn();
  }
  ImGui::EndTable();
}

}  // namespace

void draw_build_panel(const AppState& state, AppInputs&) {
  BuildCache& cache = cached(state, ImGui::GetTime());
  static double copied_at = -1e9;
  Language& language = chosen_language();
  const float font = ImGui::GetFontSize();

  panel_intro("The attention on screen now, as a short Python program: the sentence's token vectors, "
              "the weight matrices and the settings are written into it as numbers.");
  head_banner(state);
  if (!cache.code_note.empty()) hint(("Too large to print whole: " + cache.code_note + " The program starts from the head's Q, K and V.").c_str());

  if (ImGui::RadioButton("NumPy", language == Language::NumPy)) language = Language::NumPy;
  ImGui::SameLine();
  if (ImGui::RadioButton("PyTorch", language == Language::PyTorch)) language = Language::PyTorch;
  same_line_if_fits(button_width("Copy to clipboard"), font * 1.5f);
  std::string& code = language == Language::NumPy ? cache.numpy : cache.torch;
  if (ImGui::Button("Copy to clipboard")) {
    ImGui::SetClipboardText(code.c_str());
    copied_at = ImGui::GetTime();
  }
  publish_item_rect("build:copy");
  if (ImGui::GetTime() - copied_at < 2.0) {
    ImGui::SameLine();
    ImGui::PushStyleColor(ImGuiCol_Text, good_color(state.inputs.light_theme));
    ImGui::TextUnformatted("Copied");
    ImGui::PopStyleColor();
  }

  hint(build_hint(language, cache).c_str());
  if (state.inputs.mistake != Mistake::None)
    hint("The mistake chosen in the Mistakes view is not in the code: it computes attention the right way, "
         "so its weights differ from the Weights view until you switch the mistake off.");

  // The code takes what the backend section below leaves (about 12 lines), but never under 10
  // lines: in a small window the view scrolls instead.
  const float line = ImGui::GetTextLineHeightWithSpacing();
  const float code_height = std::max(ImGui::GetContentRegionAvail().y - line * 12.0f, line * 10.0f);
  code_box(language == Language::NumPy ? "numpy_code" : "torch_code", code, code_height,
           state.inputs.light_theme);
  publish_item_rect("build:picture");

  ImGui::Spacing();
  ImGui::TextUnformatted("Do the project's backends agree?");
  paragraph("The app can compute attention three ways on your CPU: scalar (plain loops, one number at a "
            "time: the reference), Eigen (a matrix library) and SIMD (several numbers per instruction), and "
            "with WebGL2 a fourth on the GPU (webgl: shaders in 32-bit floats, so a looser tolerance). They "
            "add the same numbers in a different order, so the last digits may differ; a bug would show as a "
            "large difference. Here each runs on the current Q, K and V, mask, scaling and temperature.");
  begin_sideways_box("agreement");  // five columns of numbers: wider than a phone
  agreement_table(cache.agreement, state.inputs.light_theme);
  end_sideways_box("build:agreement");
  hint("Δ: the largest difference from the scalar result over all weights or all outputs. Relative: that "
       "difference divided by the largest reference value.");
}

nlohmann::json build_view_data(const AppState& state) {
  // getState reads what the view shows: the code and the CPU rows are made once per change of the
  // inputs, the GPU rows only by the view once they rest (never here: no read-backs per getState).
  const BuildCache& cache = cached(state, -std::numeric_limits<double>::infinity());
  nlohmann::json agreement = nlohmann::json::array();
  for (const BackendAgreement& a : cache.agreement)
    agreement.push_back({{"backend", a.backend},
                         {"max_abs_weights", a.max_abs_weights},
                         {"max_abs_output", a.max_abs_output},
                         {"relative", a.relative},
                         {"tolerance", a.tolerance},
                         {"available", a.unavailable.empty()}});
  return {{"lang", chosen_language() == Language::NumPy ? "numpy" : "torch"},
          {"from_qkv", !cache.code_note.empty()},
          {"builtin_check", cache.builtin_check},
          {"hint", build_hint(chosen_language(), cache)},
          {"torch_hint", build_hint(Language::PyTorch, cache)},
          {"numpy", cache.numpy},
          {"torch", cache.torch},
          {"agreement", agreement},
          {"tolerance", kRelativeTolerance},
          {"gpu_check_pending", cache.slow_pending},
          {"simd_flavour", simd_flavour()}};
}

}  // namespace attn::ui
