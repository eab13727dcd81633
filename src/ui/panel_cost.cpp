// The cost view: why attention costs T², from time and memory measured live on this device (one
// sequence length per frame, so the UI never freezes). Not a benchmark program: see the CLI for that.
#include <imgui.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "../core/random.h"
#include "panels.h"
#include "widgets.h"

namespace attn::ui {

namespace {

constexpr int kWidth = 64;  // d of every measured problem
constexpr int kSizes[] = {16, 32, 64, 128, 256, 512, 1024, 2048};
constexpr int kSizeCount = static_cast<int>(sizeof kSizes / sizeof kSizes[0]);
constexpr int kRepsPerSize = 5;  // the median of these is the point
// A rep of a small T repeats the call until it lasts this long: the browser's clock is coarse
// (performance.now can be rounded to 0.1 ms), far coarser than one call at T = 16.
constexpr double kMinRepSeconds = 0.003;

// Bytes one call works on: the (T, T) weight matrix plus Q, K, V and the output, all (T, d) floats.
double bytes_for(int T) { return 4.0 * T * T + 4.0 * 4.0 * T * kWidth; }
double weight_bytes_for(int T) { return 4.0 * T * T; }
// Multiply-adds count as 2: Q·Kᵀ is 2·T²·d, the weights times V another 2·T²·d.
double flops_for(int T) { return 4.0 * T * T * kWidth; }

struct CostPoint {
  int T = 0;
  double ms = 0;  // median time of one call
};

// The measurements so far and the size being measured. They are measurements of this device,
// not inputs, so they live here and not in AppState ("Measure again" clears them).
struct CostRun {
  std::vector<CostPoint> points;  // in kSizes order
  int calls_per_rep = 0;          // for the size in progress; 0: not calibrated yet
  std::vector<double> rep_ms;     // per-call time of each rep so far
  std::vector<float> query, key, value, output, weights;
  bool done() const { return static_cast<int>(points.size()) == kSizeCount; }
};

CostRun& cost_run() {
  static CostRun run;
  return run;
}

void fill_normal(std::vector<float>& m, std::size_t n, Rng& rng) {
  m.resize(n);
  for (float& x : m) x = static_cast<float>(rng.normal());
}

// One step of the measurement: a warm-up call that also calibrates how many calls make a rep, or one
// rep. Called once per frame, so at most one rep (a few ms, or one call at large T) per frame.
void measure_step(CostRun& run) {
  if (run.done()) return;
  const int T = kSizes[run.points.size()];
  const std::size_t n = static_cast<std::size_t>(T) * kWidth;
  if (run.query.size() != n) {
    Rng rng(static_cast<std::uint64_t>(T));
    fill_normal(run.query, n, rng);
    fill_normal(run.key, n, rng);
    fill_normal(run.value, n, rng);
    run.output.assign(n, 0.0f);
    run.weights.assign(static_cast<std::size_t>(T) * T, 0.0f);
  }
  AttentionProblem problem;
  problem.query = run.query.data();
  problem.key = run.key.data();
  problem.value = run.value.data();
  problem.Tq = problem.Tk = T;
  problem.d = problem.dv = kWidth;
  problem.scale = 1.0f / std::sqrt(static_cast<float>(kWidth));

  using Clock = std::chrono::steady_clock;  // performance.now() in the browser
  const int calls = std::max(run.calls_per_rep, 1);
  const Clock::time_point start = Clock::now();
  for (int c = 0; c < calls; ++c) attention_forward(Backend::Simd, problem, run.output.data(), run.weights.data());
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();

  if (run.calls_per_rep == 0) {  // warm-up (first touch of the buffers): not kept
    run.calls_per_rep = static_cast<int>(std::clamp(std::ceil(kMinRepSeconds / std::max(seconds, 1e-7)), 1.0, 1e5));
    return;
  }
  run.rep_ms.push_back(seconds * 1000.0 / calls);
  if (static_cast<int>(run.rep_ms.size()) < kRepsPerSize) return;
  std::sort(run.rep_ms.begin(), run.rep_ms.end());
  run.points.push_back({T, run.rep_ms[run.rep_ms.size() / 2]});
  run.rep_ms.clear();
  run.calls_per_rep = 0;
  if (run.done()) {  // give the 18 MiB of the largest problem back
    for (std::vector<float>* v : {&run.query, &run.key, &run.value, &run.output, &run.weights})
      std::vector<float>().swap(*v);
  }
}

// [SECTION] Number texts

std::string ms_text(double ms) {
  char buf[32];
  const int decimals = ms >= 100 ? 0 : ms >= 10 ? 1 : ms >= 1 ? 2 : ms >= 0.01 ? 3 : 4;
  std::snprintf(buf, sizeof buf, "%.*f ms", decimals, ms);
  return buf;
}

std::string bytes_text(double bytes) {
  const bool mib = bytes >= 1024.0 * 1024.0;
  const double v = bytes / (mib ? 1024.0 * 1024.0 : 1024.0);
  char buf[32];
  std::snprintf(buf, sizeof buf, v >= 10 || v == std::floor(v) ? "%.0f %s" : "%.1f %s", v, mib ? "MiB" : "KiB");
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

const ImU32 kMeasuredColor = IM_COL32(255, 170, 60, 255);
const ImU32 kQuadraticColor = IM_COL32(120, 200, 255, 255);
const ImU32 kLinearColor = IM_COL32(170, 220, 120, 255);

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
              grid = IM_COL32(255, 255, 255, 28);
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
                ImVec2(x_at(t_hi), y_at(plot.quadratic * t_hi * t_hi)), kQuadraticColor, 2.0f, font * 0.5f,
                font * 0.3f);
  if (plot.linear > 0)
    dashed_line(dl, ImVec2(x_at(t_lo), y_at(plot.linear * t_lo)), ImVec2(x_at(t_hi), y_at(plot.linear * t_hi)),
                kLinearColor, 2.0f, font * 0.12f, font * 0.25f);
  dl->PopClipRect();
  for (std::size_t i = 0; i < plot.y.size(); ++i) {
    const ImVec2 p(x_at(plot.T[i]), y_at(plot.y[i]));
    if (i > 0) dl->AddLine(ImVec2(x_at(plot.T[i - 1]), y_at(plot.y[i - 1])), p, kMeasuredColor, 2.0f);
    dl->AddCircleFilled(p, font * 0.22f, kMeasuredColor);
  }
  if (hovered) {  // the nearest point along T
    const float mx = ImGui::GetIO().MousePos.x;
    std::size_t nearest = 0;
    for (std::size_t i = 1; i < plot.y.size(); ++i)
      if (std::fabs(x_at(plot.T[i]) - mx) < std::fabs(x_at(plot.T[nearest]) - mx)) nearest = i;
    ImGui::SetTooltip("T = %d: %s", static_cast<int>(plot.T[nearest]), plot.value_text(plot.y[nearest]).c_str());
  }
}

// [SECTION] Table and text

void draw_cost_table(const CostRun& run, float width) {
  const ImGuiTableFlags flags =
      ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchSame;
  if (!ImGui::BeginTable("##cost", 4, flags, ImVec2(width, 0))) return;
  ImGui::PushTextWrapPos(0.0f);  // in a cell: wrap at the column's edge, not the view's
  for (const char* heading : {"T (tokens)", "time per call", "GFLOP/s", "memory"}) ImGui::TableSetupColumn(heading);
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
  }
  ImGui::PopTextWrapPos();
  ImGui::EndTable();
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
                "Times are for this device: one CPU thread, the %s attention kernel, d = %d, weights kept. "
                "GFLOP/s counts 4·T²·d operations per call (2·T²·d for Q·Kᵀ, as many for the weights times V).",
                simd_flavour(), kWidth);
  hint(text);
}

}  // namespace

void draw_cost_panel(const AppState&, AppInputs&) {
  CostRun& run = cost_run();
  measure_step(run);  // the view is open: take the next step

  const float font = ImGui::GetFontSize();
  // Wrap at the visible edge: the view scrolls sideways, and ImGui's default wrap width there is
  // last frame's content width, which would keep a once-wide layout wide for good.
  const float view_width = ImGui::GetContentRegionAvail().x;
  ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + view_width);
  panel_intro("Attention's time and memory, measured live on this device as the sequence grows (d = 64).");
  if (ImGui::Button("Measure again")) run = CostRun{};
  publish_item_rect("cost:measure_again");
  ImGui::SameLine();
  if (run.done()) {
    hint("done: all 8 sizes measured");
  } else {
    ImGui::ProgressBar(static_cast<float>(run.points.size()) / kSizeCount, ImVec2(font * 6.0f, 0), "");
    ImGui::SameLine();
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
  memory_plot.linear = 4.0 * 4.0 * kWidth;
  memory_plot.linear_label = "Q, K, V and output alone (grow like T)";
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
    legend_entry(LineKind::Measured, kMeasuredColor,
                 plot == &time_plot ? "measured" : "all buffers: Q, K, V, output, weights");
    legend_entry(LineKind::Dashed, kQuadraticColor, "c·T², through the largest point");
    if (plot->linear > 0) legend_entry(LineKind::Dotted, kLinearColor, plot->linear_label);
    ImGui::PopTextWrapPos();
    ImGui::EndGroup();
    ++column;
    if (!side_by_side) ImGui::Spacing();
  }
  ImGui::Spacing();
  draw_cost_table(run, view_width);
  ImGui::Spacing();
  draw_cost_explanation(run);
  ImGui::PopTextWrapPos();
}

nlohmann::json cost_view_data(const AppState&) {
  const CostRun& run = cost_run();
  nlohmann::json points = nlohmann::json::array();
  for (const CostPoint& p : run.points) points.push_back({{"T", p.T}, {"ms", p.ms}, {"bytes", bytes_for(p.T)}});
  return {{"d", kWidth}, {"points", points}, {"done", run.done()}};
}

}  // namespace attn::ui
