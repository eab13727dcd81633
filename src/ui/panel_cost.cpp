// The cost view: why attention costs T², from time and memory measured live on this device (one
// sequence length per frame, so the UI never freezes), and one whole (T, T) weight matrix of up to
// 2048 × 2048 computed by the live backend and drawn by the GPU. Not where they are computed
// (src/state/cost_state.cpp: AppState::cost) and not a benchmark program (./build_wasm.sh bench).
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "../api/compute_json.h"
#include "../gpu/gpu.h"
#include "family_panels.h"
#include "panels.h"
#include "widgets.h"

namespace attn::ui {

namespace {

// The sizes and byte counts of src/state/cost_state.h, by their short names here.
constexpr int kWidth = kCostWidth;  // d of every measured problem
constexpr const auto& kSizes = kCostSizes;  // the measured sequence lengths
constexpr int kSizeCount = kCostSizeCount;
double bytes_for(int T) { return cost_bytes_for(T); }
double weight_bytes_for(int T) { return cost_weight_bytes_for(T); }
double fused_bytes_for(int T) { return cost_fused_bytes_for(T); }
double flops_for(int T) { return cost_flops_for(T); }

// [SECTION] Number texts

std::string ms_text(double ms) {
  char buf[32];
  const int decimals = ms >= 100 ? 0 : ms >= 10 ? 1 : ms >= 1 ? 2 : ms >= 0.01 ? 3 : 4;
  std::snprintf(buf, sizeof buf, "%.*f ms", decimals, ms);
  return buf;
}

// Tick labels: a time tick is a power of 10 ms ("0.001", "1000"); a memory tick a power of 4 bytes.
std::string ms_tick_text(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", ms >= 1 ? 0 : static_cast<int>(std::lround(-std::log10(ms))), ms);
  return buf;
}
std::string bytes_tick_text(double bytes) {
  if (bytes < 1024) return std::to_string(static_cast<int>(bytes)) + " B";
  return bytes_text(bytes);
}

// [SECTION] Log-log plot

struct LogLogPlot {
  const char* id = "";
  const char* y_label = "";  // "time (ms)"
  std::vector<double> T, y;  // the points, joined by a line
  double quadratic = 0;      // c of the dashed c·T² curve (0: no curve yet)
  double linear = 0;         // c of a dotted c·T line (0: none)
  const char* linear_label = nullptr;
  double tick_base = 10;  // y ticks at powers of this
  std::string (*tick_text)(double) = nullptr;
  std::string (*value_text)(double) = nullptr;  // for the tooltip
};

ImU32 measured_color() { return color(palette().line_orange); }
ImU32 quadratic_color() { return color(palette().line_blue); }
ImU32 linear_color() { return color(palette().line_green); }

void dashed_line(ImDrawList* dl, ImVec2 a, ImVec2 b, ImU32 color, float thickness, float dash, float gap) {
  const float dx = b.x - a.x, dy = b.y - a.y, length = std::sqrt(dx * dx + dy * dy);
  if (length < 1.0f) return;
  for (float s = 0; s < length; s += dash + gap) {
    const float e = std::min(s + dash, length);
    dl->AddLine(ImVec2(a.x + dx * s / length, a.y + dy * s / length),
                ImVec2(a.x + dx * e / length, a.y + dy * e / length), color, thickness);
  }
}

// A line sample for the legend: solid (with a dot), dashed or dotted, then its caption.
enum class LineKind { Measured, Dashed, Dotted };
void legend_entry(LineKind kind, ImU32 color, const char* caption) {
  const float font = ImGui::GetFontSize(), w = font * 2.0f;
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const float y = p.y + ImGui::GetTextLineHeight() * 0.5f;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  if (kind == LineKind::Measured) {
    dl->AddLine(ImVec2(p.x, y), ImVec2(p.x + w, y), color, 2.0f);
    dl->AddCircleFilled(ImVec2(p.x + w * 0.5f, y), font * 0.22f, color);
  } else {
    const float dash = kind == LineKind::Dashed ? font * 0.4f : font * 0.12f;
    dashed_line(dl, ImVec2(p.x, y), ImVec2(p.x + w, y), color, 2.0f, dash, font * 0.25f);
  }
  ImGui::Dummy(ImVec2(w, ImGui::GetTextLineHeight()));
  ImGui::SameLine();
  ImGui::TextUnformatted(caption);  // wraps at the plot column's edge (pushed by the caller)
}

void draw_log_log_plot(const LogLogPlot& plot, float width, float height) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImGuiStyle& style = ImGui::GetStyle();
  const float font = ImGui::GetFontSize(), line = ImGui::GetTextLineHeight(), tick = font * 0.3f;
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text), axis = ImGui::GetColorU32(ImGuiCol_TextDisabled),
              grid = color(palette().text_dim, 0.15f);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton(plot.id, ImVec2(width, height));
  const bool hovered = ImGui::IsItemHovered();

  // y range: every point and both curves over the whole T axis, widened to whole powers of the base
  const double t_lo = kSizes[0], t_hi = kSizes[kSizeCount - 1];
  double y_lo = HUGE_VAL, y_hi = 0;
  const auto include = [&](double v) {
    if (v <= 0) return;
    y_lo = std::min(y_lo, v);
    y_hi = std::max(y_hi, v);
  };
  for (double v : plot.y) include(v);
  for (double t : {t_lo, t_hi}) {
    include(plot.quadratic * t * t);
    include(plot.linear * t);
  }
  const double log_base = std::log(plot.tick_base);
  const int k_lo = y_hi > 0 ? static_cast<int>(std::floor(std::log(y_lo) / log_base + 1e-9)) : -3;
  const int k_hi = y_hi > 0 ? std::max(k_lo + 1, static_cast<int>(std::ceil(std::log(y_hi) / log_base - 1e-9))) : 3;

  std::string widest;
  for (int k = k_lo; k <= k_hi; ++k) {
    const std::string s = plot.tick_text(std::pow(plot.tick_base, k));
    if (s.size() > widest.size()) widest = s;
  }
  const ImVec2 plot_min(origin.x + ImGui::CalcTextSize(widest.c_str()).x + tick + style.ItemSpacing.x * 0.5f,
                        origin.y + line + style.ItemSpacing.y);
  const ImVec2 plot_max(origin.x + width - ImGui::CalcTextSize("2048").x * 0.5f,
                        origin.y + height - 2.0f * line - tick);
  const float plot_w = plot_max.x - plot_min.x, plot_h = plot_max.y - plot_min.y;
  const auto x_at = [&](double T) {
    return plot_min.x + plot_w * static_cast<float>(std::log(T / t_lo) / std::log(t_hi / t_lo));
  };
  const auto y_at = [&](double v) {
    return plot_max.y - plot_h * static_cast<float>((std::log(v) / log_base - k_lo) / (k_hi - k_lo));
  };

  dl->AddText(origin, text, plot.y_label);
  // y ticks: every power, labelled as often as the height allows
  const int y_step = std::max(1, static_cast<int>(std::ceil(line * 1.6f * (k_hi - k_lo) / plot_h)));
  for (int k = k_lo; k <= k_hi; ++k) {
    const float y = y_at(std::pow(plot.tick_base, k));
    dl->AddLine(ImVec2(plot_min.x, y), ImVec2(plot_max.x, y), grid);
    dl->AddLine(ImVec2(plot_min.x - tick, y), ImVec2(plot_min.x, y), axis);
    if ((k - k_lo) % y_step) continue;
    const std::string s = plot.tick_text(std::pow(plot.tick_base, k));
    dl->AddText(
        ImVec2(plot_min.x - tick - style.ItemSpacing.x * 0.5f - ImGui::CalcTextSize(s.c_str()).x, y - line * 0.5f),
        text, s.c_str());
  }
  // x ticks at every measured size, every other one labelled when they would touch
  const int x_step = plot_w / (kSizeCount - 1) < ImGui::CalcTextSize("2048").x + style.ItemSpacing.x ? 2 : 1;
  for (int i = 0; i < kSizeCount; ++i) {
    const float x = x_at(kSizes[i]);
    dl->AddLine(ImVec2(x, plot_min.y), ImVec2(x, plot_max.y), grid);
    dl->AddLine(ImVec2(x, plot_max.y), ImVec2(x, plot_max.y + tick), axis);
    if ((kSizeCount - 1 - i) % x_step) continue;  // keep the last (2048) labelled
    const std::string s = std::to_string(kSizes[i]);
    dl->AddText(ImVec2(x - ImGui::CalcTextSize(s.c_str()).x * 0.5f, plot_max.y + tick), text, s.c_str());
  }
  const char* x_label = "T (tokens)";
  dl->AddText(ImVec2(plot_min.x + (plot_w - ImGui::CalcTextSize(x_label).x) * 0.5f, plot_max.y + tick + line), text,
              x_label);
  dl->AddLine(plot_min, ImVec2(plot_min.x, plot_max.y), axis);
  dl->AddLine(ImVec2(plot_min.x, plot_max.y), plot_max, axis);

  if (plot.y.empty()) {
    const char* waiting = "measuring…";
    const ImVec2 s = ImGui::CalcTextSize(waiting);
    dl->AddText(ImVec2(plot_min.x + (plot_w - s.x) * 0.5f, plot_min.y + (plot_h - s.y) * 0.5f), axis, waiting);
    return;
  }
  dl->PushClipRect(plot_min, plot_max, true);
  // On log-log axes c·T² and c·T are straight lines: slope 2 and slope 1.
  if (plot.quadratic > 0)
    dashed_line(dl, ImVec2(x_at(t_lo), y_at(plot.quadratic * t_lo * t_lo)),
                ImVec2(x_at(t_hi), y_at(plot.quadratic * t_hi * t_hi)), quadratic_color(), 2.0f, font * 0.5f,
                font * 0.3f);
  if (plot.linear > 0)
    dashed_line(dl, ImVec2(x_at(t_lo), y_at(plot.linear * t_lo)), ImVec2(x_at(t_hi), y_at(plot.linear * t_hi)),
                linear_color(), 2.0f, font * 0.12f, font * 0.25f);
  dl->PopClipRect();
  for (std::size_t i = 0; i < plot.y.size(); ++i) {
    const ImVec2 p(x_at(plot.T[i]), y_at(plot.y[i]));
    if (i > 0) dl->AddLine(ImVec2(x_at(plot.T[i - 1]), y_at(plot.y[i - 1])), p, measured_color(), 2.0f);
    dl->AddCircleFilled(p, font * 0.22f, measured_color());
  }
  int nearest = -1;  // the point nearest the mouse along T
  if (hovered && !plot.y.empty()) {
    const float mx = ImGui::GetIO().MousePos.x;
    nearest = 0;
    for (std::size_t i = 1; i < plot.y.size(); ++i)
      if (std::fabs(x_at(plot.T[i]) - mx) < std::fabs(x_at(plot.T[static_cast<std::size_t>(nearest)]) - mx))
        nearest = static_cast<int>(i);
  }
  explain_parts(plot.id, static_cast<int>(plot.y.size()), nearest, -1, [&](int i) {
    const std::size_t k = static_cast<std::size_t>(i);
    ImGui::Text("T = %d: %s", static_cast<int>(plot.T[k]), plot.value_text(plot.y[k]).c_str());
  });
}

// [SECTION] Table and text

void draw_cost_table(const CostRun& run, float width) {
  const char* const headings[] = {"T (tokens)", "time per call", "GFLOP/s", "memory, weights stored", "memory, fused", "computed by"};
  float headings_width = 0;
  for (const char* heading : headings)
    headings_width += ImGui::CalcTextSize(heading).x + ImGui::GetStyle().CellPadding.x * 2.0f + 1.0f;
  // Too narrow for the headings (a phone, a tablet beside the controls): the table keeps its
  // columns' natural widths in a box of its own that scrolls sideways.
  const bool boxed = headings_width > width;
  ImGuiTableFlags flags = ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_RowBg;
  flags |= boxed ? ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_NoHostExtendX : ImGuiTableFlags_SizingStretchSame;
  if (boxed) begin_sideways_box("cost_table");
  if (!ImGui::BeginTable("##cost", 6, flags, ImVec2(boxed ? 0.0f : width, 0))) {
    if (boxed) end_sideways_box();
    return;
  }
  ImGui::PushTextWrapPos(0.0f);  // in a cell: wrap at the column's edge, not the view's
  for (const char* heading : headings) ImGui::TableSetupColumn(heading);
  ImGui::TableHeadersRow();
  for (int i = 0; i < kSizeCount; ++i) {
    const int T = kSizes[i];
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::Text("%d", T);
    ImGui::TableNextColumn();
    if (i < static_cast<int>(run.points.size())) {
      const double ms = run.points[i].ms;
      ImGui::TextUnformatted(ms_text(ms).c_str());
      ImGui::TableNextColumn();
      ImGui::Text("%.1f", flops_for(T) / (ms * 1e-3) / 1e9);
    } else {
      hint(i == static_cast<int>(run.points.size()) ? "measuring…" : "waiting");
      ImGui::TableNextColumn();
    }
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(bytes_text(bytes_for(T)).c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(bytes_text(fused_bytes_for(T)).c_str());
    ImGui::TableNextColumn();
    if (i < static_cast<int>(run.points.size())) ImGui::TextUnformatted(run.points[i].backend.c_str());
  }
  ImGui::PopTextWrapPos();
  ImGui::EndTable();
  if (boxed) end_sideways_box("cost:table");
}

void draw_cost_explanation(const CostRun& run) {
  ImGui::TextUnformatted("Why T²");
  paragraph(
      "Every query is compared with every key: T queries × T keys make T² scores, each a dot product of "
      "length d, and each score becomes a weight kept in the (T, T) matrix. Double T and there are four "
      "times as many scores to compute and weights to store.");
  paragraph(
      "The other steps grow only like T: Q, K, V and the output are (T, d), so doubling T merely doubles "
      "them. For short sequences they and fixed overheads dominate; for long ones the T² part wins.");
  paragraph(
      "Time and memory are not the same story. Every score must be computed, so time grows like T² in any "
      "kernel. Memory grows like T² only where the (T, T) weights are stored, as here (the views draw them). "
      "A fused kernel never stores them: it works through the keys one block at a time, keeping a running "
      "maximum, sum and weighted sum per query (this app's SIMD kernel does so when it is asked for the "
      "output only; FlashAttention does the same on GPUs). Its memory grows like T: the dotted line.");
  char text[320];
  const int largest = kSizes[kSizeCount - 1];
  std::snprintf(text, sizeof text, "At T = %d the weight matrix alone is %s of the %s (%.0f %%).", largest,
                bytes_text(weight_bytes_for(largest)).c_str(), bytes_text(bytes_for(largest)).c_str(),
                100.0 * weight_bytes_for(largest) / bytes_for(largest));
  paragraph(text);
  const std::size_t n = run.points.size();
  if (n >= 2) {
    const CostPoint &a = run.points[n - 2], &b = run.points[n - 1];
    std::snprintf(text, sizeof text, "Measured: going from T = %d to T = %d took %.1f× as long (T² predicts 4×).", a.T,
                  b.T, b.ms / a.ms);
    paragraph(text);
  }
  std::snprintf(text, sizeof text,
                "Times are for this device, d = %d, weights kept, each size computed by the backend chosen "
                "for it (on the CPU: one thread, SIMD = %s; on the GPU: upload, passes and read-back "
                "included). GFLOP/s counts 4·T²·d operations per call (2·T²·d for Q·Kᵀ, as many for the "
                "weights times V).",
                kWidth, simd_flavour());
  hint(text);
}

// The (T, T) weights as one GPU image (a texture coloured by shaders/colour_map.frag), or where
// the GPU cannot draw it, as a coarse heatmap of block means drawn by ImGui.
void draw_whole_matrix_image(const CostMatrix& m, float side) {
  const ImTextureID image = gpu::matrix_image("cost:whole_matrix", m.weights.data(), m.T, m.T, 0.0f,
                                              std::max(m.colour_top, 1e-6f), gpu::ColourMap::Sequential, m.version);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  if (image) {
    ImGui::Image(image, ImVec2(side, side));
  } else {
    constexpr int kBlocks = 128;  // 16 384 ImGui rectangles at most
    const int blocks = std::min(kBlocks, m.T), per = (m.T + blocks - 1) / blocks;
    Matrix coarse = Matrix::Zero(blocks, blocks);
    for (int i = 0; i < m.T; ++i)
      for (int j = 0; j < m.T; ++j)
        if (std::isfinite(m.weights(i, j))) coarse(i / per, j / per) += m.weights(i, j) / static_cast<float>(per * per);
    HeatmapStyle style;
    style.cell = side / blocks;
    style.range = std::max(m.colour_top, 1e-6f);
    heatmap("##whole_coarse", coarse.data(), blocks, blocks, style);
    hint("(the GPU image is unavailable: block means drawn instead)");
  }
  int hovered = -1;  // query * T + key
  if (ImGui::IsItemHovered() && image) {
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    const int i = std::clamp(static_cast<int>((mouse.y - origin.y) / side * m.T), 0, m.T - 1);
    const int j = std::clamp(static_cast<int>((mouse.x - origin.x) / side * m.T), 0, m.T - 1);
    hovered = i * m.T + j;
  }
  explain_parts("cost:whole_matrix", image ? m.T * m.T : 0, hovered, -1, [&](int cell) {
    const int i = cell / m.T, j = cell % m.T;
    if (std::isfinite(m.weights(i, j)))
      ImGui::Text("query %d, key %d: weight %.5f\n(its row sums to 1 over %d keys)", i, j, m.weights(i, j),
                  m.causal ? i + 1 : m.T);
    else
      ImGui::Text("query %d, key %d: hidden by the causal mask (key after the query)", i, j);
  });
}

void draw_whole_matrix(const AppState& state, AppInputs& next, float view_width) {
  const CostMatrix& m = state.cost.matrix;  // brought up to date by draw_app (update_view_state)
  const float font = ImGui::GetFontSize();
  const float beside_side = std::clamp(view_width * 0.4f, font * 10.0f, font * 22.0f);
  const bool beside = view_width - beside_side >= font * 16.0f;
  // Above its text (a phone): as wide as the view, up to the same largest size.
  const float side = beside ? beside_side : std::min(view_width, font * 22.0f);
  ImGui::TextUnformatted("The whole weight matrix");
  ImGui::BeginGroup();
  draw_whole_matrix_image(m, side);
  ImGui::EndGroup();
  publish_picture_rect(View::Cost);
  if (beside) ImGui::SameLine(0, font);
  ImGui::BeginGroup();
  const float text_width = beside ? view_width - side - font : view_width;
  ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + text_width);
  ImGui::AlignTextToFramePadding();
  hint("T =");
  for (int T : {256, 512, 1024, 2048}) {
    char label[16];
    std::snprintf(label, sizeof label, "%d##cost_T", T);
    same_line_if_fits(radio_width(label));
    if (ImGui::RadioButton(label, state.inputs.cost_T == T)) next.cost_T = T;
    publish_item_rect((std::string("cost:T") + std::to_string(T)).c_str());
  }
  char text[400];
  std::snprintf(text, sizeof text,
                "(T, T) = (%d, %d): %s weights, %s as floats. A row per query, a column per key; each query here "
                "is a position pattern, so it looks mostly at nearby keys: the bright band on the diagonal.%s",
                m.T, m.T, grouped_digits(static_cast<long long>(m.T) * m.T).c_str(),
                bytes_text(weight_bytes_for(m.T)).c_str(),
                m.causal ? " The causal mask hides every key after its query: the grey upper triangle." : "");
  paragraph(text);
  std::snprintf(text, sizeof text, "Computed by %s in %s.", m.backend.c_str(), ms_text(m.ms).c_str());
  ImGui::TextUnformatted(text);
  hint(m.reason.c_str());
  HeatmapStyle style;
  style.range = m.colour_top;
  legend("weight", style, std::clamp(text_width - font * 8.0f, font * 3.0f, font * 12.0f));  // + labels: fits
  std::snprintf(text, sizeof text, "(the top colour is a typical row's largest weight, %.3f; larger ones up to %.2f share it)",
                m.colour_top, m.max_weight);
  hint(text);
  ImGui::PopTextWrapPos();
  ImGui::EndGroup();
}

}  // namespace

BackendChoice live_backend(const AppState& state) {
  return choose_backend(state.inputs.backend, state.inputs.cost_T, gpu_facts());
}

GpuFacts gpu_facts() {
  const gpu::GpuAttention& g = gpu::attention();
  GpuFacts facts;
  facts.available = g.available() && registered_backends().count(gpu::GpuAttention::kBackendName) > 0;
  facts.software = g.software();
  facts.renderer = g.renderer();
  const gpu::GpuAttention::SpeedCheck& speed = g.speed_check();
  facts.speed_checked = speed.measured;
  facts.speed_check_T = gpu::GpuAttention::kSpeedCheckTokens;
  facts.gpu_ms = speed.gpu_ms;
  facts.cpu_ms = speed.cpu_ms;
  facts.unavailable_reason = g.available() ? "the GPU backend is not registered" : g.unavailable_reason();
  return facts;
}

void draw_cost_panel(const AppState& state, Action& action, UiState&) {
  AppInputs& next = action.inputs;
  // The view is open: draw_app took the run's next step (cost_measure_step) before this frame.
  const CostRun& run = state.cost.run;

  const float font = ImGui::GetFontSize();
  // The view scrolls sideways, so ImGui counts the room under its vertical scrollbar as free.
  const float view_width = ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ScrollbarSize;
  panel_intro("Attention's time and memory, measured live on this device as the sequence grows (d = 64).");
  draw_kv_cache_section(state);
  ImGui::Separator();
  draw_whole_matrix(state, next, view_width);
  ImGui::Separator();
  ImGui::TextUnformatted("Time and memory as T grows");
  if (ImGui::Button("Measure again")) action.measure_again = true;  // apply starts a new run
  publish_item_rect("cost:measure_again");
  ImGui::SameLine();
  if (run.done()) {
    hint("done: all 8 sizes measured");
  } else {
    ImGui::ProgressBar(static_cast<float>(run.points.size()) / kSizeCount, ImVec2(font * 6.0f, 0), "");
    same_line_if_fits(font * 8.0f);  // the label wraps; it needs a few words' room
    char label[64];
    std::snprintf(label, sizeof label, "measuring T = %d…  (%d of %d)", kSizes[run.points.size()],
                  static_cast<int>(run.points.size()) + 1, kSizeCount);
    hint(label);
  }
  ImGui::Spacing();

  LogLogPlot time_plot, memory_plot;
  time_plot.id = "##time";
  time_plot.y_label = "time (ms)";
  for (const CostPoint& p : run.points) {
    time_plot.T.push_back(p.T);
    time_plot.y.push_back(p.ms);
  }
  if (!run.points.empty()) {
    const CostPoint& largest = run.points.back();
    time_plot.quadratic = largest.ms / (static_cast<double>(largest.T) * largest.T);
  }
  time_plot.tick_text = ms_tick_text;
  time_plot.value_text = ms_text;
  for (int T : kSizes) {  // memory is known before the run: it is the size of the buffers
    memory_plot.T.push_back(T);
    memory_plot.y.push_back(bytes_for(T));
  }
  memory_plot.id = "##memory";
  memory_plot.y_label = "memory";
  const double largest_T = kSizes[kSizeCount - 1];
  memory_plot.quadratic = bytes_for(kSizes[kSizeCount - 1]) / (largest_T * largest_T);
  memory_plot.linear = fused_bytes_for(1);
  memory_plot.linear_label = "fused kernel, weights never stored: Q, K, V, output (like T)";
  memory_plot.tick_base = 4;
  memory_plot.tick_text = bytes_tick_text;
  memory_plot.value_text = bytes_text;

  const float gap = font * 1.5f;
  const bool side_by_side = (view_width - gap) * 0.5f >= font * 18.0f;
  const float width = side_by_side ? (view_width - gap) * 0.5f : std::min(view_width, font * 30.0f);
  const float height = std::clamp(width * 0.65f, font * 12.0f, font * 18.0f);
  const ImVec2 top = ImGui::GetCursorPos();
  int column = 0;
  for (const LogLogPlot* plot : {&time_plot, &memory_plot}) {
    if (side_by_side) ImGui::SetCursorPos(ImVec2(top.x + column * (width + gap), top.y));
    ImGui::BeginGroup();
    ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + width);
    draw_log_log_plot(*plot, width, height);
    legend_entry(LineKind::Measured, measured_color(),
                 plot == &time_plot ? "measured (weights kept)" : "weights stored: Q, K, V, output + (T, T) weights");
    legend_entry(LineKind::Dashed, quadratic_color(), "c·T², through the largest point");
    if (plot->linear > 0) legend_entry(LineKind::Dotted, linear_color(), plot->linear_label);
    ImGui::PopTextWrapPos();
    ImGui::EndGroup();
    ++column;
    if (!side_by_side) ImGui::Spacing();
  }
  ImGui::Spacing();
  draw_cost_table(run, view_width);
  ImGui::Spacing();
  draw_cost_explanation(run);
}

}  // namespace attn::ui
