// The train view: a small GPT-2 learns the lesson's pronoun sentence while the learner watches —
// the recipe, Start / Pause / Reset, the loss and held-out accuracy curves, every head's attention
// on a probe sentence, the "it refers to the ___" guess, the model asked about the probe and its twin
// (each head switched off, each head's share of the answer), and the √d experiment. Not the trainer
// (core/train.h) and not the session that steps it (src/train/train_session.h): this draws them.
//
// [SECTION] Line plot
// [SECTION] Recipe and buttons
// [SECTION] Probe: every head's attention and the guess
// [SECTION] The √d experiment
// [SECTION] Use this model, view data
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "../api/model_files.h"
#include "../api/trained_model_bytes.h"
#include "layout.h"
#include "panels.h"
#include "widgets.h"

namespace attn::ui {

namespace {

ImU32 loss_color() { return color(palette().line_blue); }
ImU32 accuracy_color() { return color(palette().line_orange); }
ImU32 unscaled_color() { return color(palette().line_red); }
ImVec4 error_color() { return ImGui::ColorConvertU32ToFloat4(color(palette().warning)); }

void section_title(const char* text) {
  ImGui::Spacing();
  ImGui::Separator();
  ImGui::TextUnformatted(text);
}

// [SECTION] Line plot

struct Series {
  const char* label;
  ImU32 color;
  std::vector<float> x, y;
};

// A linear plot with axes, ticks, axis labels and a legend; y from y_lo to y_hi (y_hi ≤ y_lo: from
// the data), x from 0 to x_max.
void line_plot(const char* id, const std::vector<Series>& series, float x_max, float y_lo, float y_hi,
               const char* x_label, const char* y_label, float width, float height, bool percent) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton(id, ImVec2(width, height));
  const float line = ImGui::GetTextLineHeight();
  const ImU32 axis = ImGui::GetColorU32(ImGuiCol_TextDisabled), text = ImGui::GetColorU32(ImGuiCol_Text);
  if (y_hi <= y_lo) {
    y_lo = 0, y_hi = 0;
    for (const Series& s : series)
      for (float v : s.y)
        if (std::isfinite(v)) y_hi = std::max(y_hi, v);
    y_hi = y_hi > 0 ? y_hi * 1.05f : 1.0f;
  }
  x_max = std::max(x_max, 1.0f);
  const auto tick_text = [&](float v) {
    char buf[32];
    if (percent) std::snprintf(buf, sizeof buf, "%.0f%%", v * 100);
    else std::snprintf(buf, sizeof buf, v >= 10 ? "%.0f" : "%.1f", v);
    return std::string(buf);
  };
  const float left = ImGui::CalcTextSize(tick_text(y_hi).c_str()).x + line * 0.6f;
  const ImVec2 a(origin.x + left, origin.y + line * 1.4f);                          // top-left of the plot area
  const ImVec2 b(origin.x + width - line * 0.8f, origin.y + height - line * 2.4f);  // bottom-right
  dl->AddText(origin, text, y_label);
  dl->AddRect(a, b, axis);
  const auto px = [&](float x) { return a.x + (b.x - a.x) * std::clamp(x / x_max, 0.0f, 1.0f); };
  const auto py = [&](float y) { return b.y - (b.y - a.y) * std::clamp((y - y_lo) / (y_hi - y_lo), 0.0f, 1.0f); };
  for (int k = 0; k <= 4; ++k) {  // five ticks on each axis
    const float yv = y_lo + (y_hi - y_lo) * k / 4.0f, y = py(yv);
    dl->AddLine(ImVec2(a.x - 4, y), ImVec2(a.x, y), axis);
    const std::string t = tick_text(yv);
    dl->AddText(ImVec2(a.x - 6 - ImGui::CalcTextSize(t.c_str()).x, y - line * 0.5f), axis, t.c_str());
    const float xv = x_max * k / 4.0f, x = px(xv);
    dl->AddLine(ImVec2(x, b.y), ImVec2(x, b.y + 4), axis);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f", xv);
    const float w = ImGui::CalcTextSize(buf).x;
    dl->AddText(ImVec2(std::clamp(x - w * 0.5f, a.x, b.x - w), b.y + 4), axis, buf);
  }
  const float xw = ImGui::CalcTextSize(x_label).x;
  dl->AddText(ImVec2((a.x + b.x - xw) * 0.5f, b.y + line * 1.2f), axis, x_label);
  dl->PushClipRect(a, ImVec2(b.x + 1, b.y + 1), true);
  for (const Series& s : series) {
    const std::size_t n = std::min(s.x.size(), s.y.size());
    // at most ~2 points per pixel: a long run draws its shape, not every step
    const std::size_t stride = std::max<std::size_t>(1, n / static_cast<std::size_t>(std::max(1.0f, (b.x - a.x) * 2)));
    std::vector<ImVec2> points;
    for (std::size_t i = 0; i < n; i += stride)
      if (std::isfinite(s.y[i])) points.emplace_back(px(s.x[i]), py(s.y[i]));
    if (n && (n - 1) % stride && std::isfinite(s.y[n - 1])) points.emplace_back(px(s.x[n - 1]), py(s.y[n - 1]));
    if (points.size() == 1) dl->AddCircleFilled(points[0], 3, s.color);
    else if (points.size() > 1) dl->AddPolyline(points.data(), static_cast<int>(points.size()), s.color, 0, 2.0f);
  }
  dl->PopClipRect();
  float lx = b.x;  // legend, right-aligned above the plot, when there is more than one line to tell apart
  for (auto it = series.rbegin(); series.size() > 1 && it != series.rend(); ++it) {
    lx -= ImGui::CalcTextSize(it->label).x + line * 1.6f;
    dl->AddRectFilled(ImVec2(lx, origin.y + line * 0.3f), ImVec2(lx + line * 0.8f, origin.y + line * 0.9f), it->color);
    dl->AddText(ImVec2(lx + line, origin.y), text, it->label);
  }
}

std::vector<float> step_axis(std::size_t n) {  // the loss of step k (1-based) is the k-th value
  std::vector<float> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<float>(i + 1);
  return x;
}

std::vector<float> as_floats(const std::vector<int>& v) { return std::vector<float>(v.begin(), v.end()); }

// The width of each of `columns` plots side by side, or the whole width when they do not fit side by
// side at a readable size (a phone: they stack, see same_line_if_fits).
float plot_width(int columns) {
  const float avail = ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ScrollbarSize;
  const float each = (avail - ImGui::GetStyle().ItemSpacing.x * (columns - 1)) / columns;
  return each >= ImGui::GetFontSize() * 14 ? each : std::max(avail, ImGui::GetFontSize() * 10);
}

// [SECTION] Recipe and buttons

// An int field that writes into the form as typed (the session checks it at Start).
void int_field(const char* label, const char* rect, int* value, float width) {
  ImGui::SetNextItemWidth(width);
  ImGui::InputInt(label, value, 0, 0);
  publish_item_rect(rect);
}

void draw_recipe(const AppState& state, AppInputs& next, TrainWish& wish) {
  const TrainSession& session = *state.train;
  TrainForm& f = next.train;
  const float font = ImGui::GetFontSize(), field = font * 4.5f;
  const auto next_field = [&](const char* label) {  // on this line if the field and its label fit
    same_line_if_fits(field + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize(label).x);
  };
  int seed = static_cast<int>(std::min<std::uint64_t>(f.seed, 1000000000));
  int_field("seed", "train:seed", &seed, field);
  if (seed != static_cast<int>(std::min<std::uint64_t>(f.seed, 1000000000))) f.seed = static_cast<std::uint64_t>(std::max(0, seed));
  next_field("learning rate");
  ImGui::SetNextItemWidth(field);
  ImGui::InputFloat("learning rate", &f.lr, 0, 0, "%.4g");
  publish_item_rect("train:lr");
  next_field("steps");
  int_field("steps", "train:steps", &f.steps, field);
  int_field("layers", "train:layers", &f.layers, field);
  next_field("heads");
  int_field("heads", "train:heads", &f.heads, field);
  next_field("d_model");
  int_field("d_model", "train:d_model", &f.d_model, field);
  same_line_if_fits(ImGui::GetFrameHeight() + ImGui::GetStyle().ItemInnerSpacing.x +
                    ImGui::CalcTextSize("divide the scores by √d_head").x);
  ImGui::Checkbox("divide the scores by √d_head", &f.scale);
  publish_item_rect("train:scale");

  std::string problem;
  try {
    train_settings(f);
  } catch (const std::invalid_argument& e) {
    problem = e.what();
  }
  if (!problem.empty()) {
    ImGui::TextColored(error_color(), "Cannot train this recipe: %s", problem.c_str());
    publish_item_rect("train:form_error");
  }
  if (!session.error.empty() && session.error != problem) ImGui::TextColored(error_color(), "%s", session.error.c_str());

  const bool running = session.running;
  if (ImGui::Button(running ? "Pause" : session.run.started() ? "Continue" : "Start")) {
    if (running) wish.pause = true;
    else wish.start = true;
  }
  publish_item_rect("train:start");
  const auto next_button = [](const char* label) {
    same_line_if_fits(ImGui::CalcTextSize(label).x + ImGui::GetStyle().FramePadding.x * 2);
  };
  next_button("Reset");
  if (ImGui::Button("Reset")) wish.reset = true;
  publish_item_rect("train:reset");
  next_button("Use this model");
  ImGui::BeginDisabled(!session.run.started());
  if (ImGui::Button("Use this model")) wish.use_model = true;
  publish_item_rect("train:use");
  next_button("Download");
  if (ImGui::Button("Download")) wish.download = true;
  publish_item_rect("train:download");
  ImGui::EndDisabled();
  if (!session.message.empty()) {
    same_line_if_fits(ImGui::GetFontSize() * 10);
    hint(session.message.c_str());
  }
}

void draw_progress(const TrainSession& s) {
  const TrainRun& r = s.run;
  char buf[256];
  const int goal = s.form_started.steps;
  if (!r.started()) {
    ImGui::TextUnformatted("Not started: step 0.");
    return;
  }
  if (r.evaluating())
    std::snprintf(buf, sizeof buf, "step %d of %d  ·  measuring the held-out accuracy  ·  %.1f ms of the last frame", r.steps(),
                  goal, s.slice_ms);
  else if (s.running)
    std::snprintf(buf, sizeof buf, "step %d of %d  ·  %.0f steps/s  ·  training took %.1f ms of the last frame", r.steps(), goal,
                  s.steps_per_second, s.slice_ms);
  else
    std::snprintf(buf, sizeof buf, "step %d of %d  ·  paused", r.steps(), goal);
  ImGui::TextUnformatted(buf);
  publish_item_rect("train:progress");
  if (!r.losses().empty()) ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(loss_color()), "loss %.3f", r.losses().back());
  if (!r.accuracies().empty()) {
    if (!r.losses().empty()) same_line_if_fits(ImGui::GetFontSize() * 16);
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(accuracy_color()), "held-out accuracy %.1f%% (step %d)",
                       100.0 * r.accuracies().back(), r.accuracy_steps().back());
  }
}

void draw_curves(const TrainSession& s) {
  const TrainRun& r = s.run;
  const float x_max = static_cast<float>(std::max(s.form_started.steps, r.steps()));
  const float w = plot_width(2), h = ImGui::GetFontSize() * 11;
  line_plot("##loss", {{"loss", loss_color(), step_axis(r.losses().size()), r.losses()}}, x_max, 0, 0, "training step",
            "loss (cross-entropy, nats)", w, h, false);
  same_line_if_fits(w);
  line_plot("##accuracy", {{"held-out", accuracy_color(), as_floats(r.accuracy_steps()), r.accuracies()}}, x_max, 0, 1,
            "training step", "held-out accuracy (unseen sentences)", w, h, true);
}

// [SECTION] Probe: every head's attention and the guess

void draw_probe_picker(AppInputs& next) {
  const Corpus& corpus = train_picker_corpus();
  const float w = ImGui::GetFontSize() * 7;
  const auto combo = [&](const char* name, int* value, const std::vector<std::string>& items) {
    ImGui::SetNextItemWidth(w);
    const int shown = std::clamp(*value, 0, static_cast<int>(items.size()) - 1);
    if (ImGui::BeginCombo((std::string("##") + name).c_str(), items[static_cast<std::size_t>(shown)].c_str())) {
      for (int i = 0; i < static_cast<int>(items.size()); ++i)
        if (ImGui::Selectable(items[static_cast<std::size_t>(i)].c_str(), i == *value)) *value = i;
      ImGui::EndCombo();
    }
    publish_item_rect((std::string("train:") + name).c_str());
  };
  std::vector<std::string> frames;
  for (std::size_t i = 0; i < corpus.frames.size(); ++i) frames.push_back("frame " + std::to_string(i + 1));
  TrainForm& f = next.train;
  ImGui::TextUnformatted("Probe sentence:");
  same_line_if_fits(w);
  combo("probe_frame", &f.probe_frame, frames);
  same_line_if_fits(w);
  combo("probe_creature", &f.probe_creature, corpus.creatures);
  same_line_if_fits(w);
  combo("probe_thing", &f.probe_thing, corpus.things);
  same_line_if_fits(w);
  combo("probe_adjective", &f.probe_adjective, corpus.adjectives);
}

void draw_probe(const AppState& state, AppInputs& next) {
  const TrainSession& s = *state.train;
  const ProbeView& p = s.probe;
  section_title("Where every head looks while it learns");
  draw_probe_picker(next);
  if (p.words.empty()) {
    hint("Pick a frame, a creature, a thing and an adjective from the corpus.");
    return;
  }
  std::string text;
  for (const std::string& w : p.words) text += (text.empty() || w == "'" || text.back() == '\'' ? "" : " ") + w;
  ImGui::TextWrapped("\"%s ___\"  (the answer: %s; %s)", text.c_str(), p.answer.c_str(),
                     p.heldout ? "a combination held out from training" : "a combination seen in training");
  if (p.attention.empty()) {
    hint("Press Start: the heads begin nearly uniform and the guess is a coin toss over the whole vocabulary.");
    return;
  }
  const int L = static_cast<int>(p.attention.size()), H = static_cast<int>(p.attention[0].size());
  const int T = p.predict_pos + 1;
  // rows = the words (keys), columns = the heads: each column is one head's weights from the last
  // "the" (the position that must name the referent), so it sums to 1
  std::vector<float> cells(static_cast<std::size_t>(T * L * H));
  std::vector<std::string> heads, words;
  for (int l = 0; l < L; ++l)
    for (int h = 0; h < H; ++h) {
      heads.push_back("L" + std::to_string(l + 1) + " H" + std::to_string(h + 1));
      for (int t = 0; t < T; ++t) cells[static_cast<std::size_t>(t * L * H + l * H + h)] = p.attention[static_cast<std::size_t>(l)][static_cast<std::size_t>(h)][static_cast<std::size_t>(t)];
    }
  for (int t = 0; t < T; ++t) {
    std::string w = p.words[static_cast<std::size_t>(t)];
    if (t == p.creature_pos) w += "  (creature)";
    if (t == p.thing_pos) w += "  (thing)";
    words.push_back(w);
  }
  ImGui::BeginGroup();
  hint("Attention from the last \"the\", one column per head (L = layer, H = head). Where a head looks is not why "
       "the model answers: below, the model itself is asked, with each head switched off and each head's share of the "
       "answer (the Compare view asks it about any two sentences: Use this model, or \"trained (built in)\").");
  HeatmapStyle style;
  style.show_values = true;
  style.cell_width = ImGui::GetFontSize() * 3.2f;
  style.row_labels = &words;
  style.col_labels = &heads;
  heatmap("train_probe", cells.data(), T, L * H, style);
  legend("weight", style, ImGui::GetFontSize() * 10);
  ImGui::EndGroup();
  same_line_if_fits(ImGui::GetFontSize() * 19, ImGui::GetFontSize() * 2);
  ImGui::BeginGroup();
  ImGui::Text("\"... it refers to the ___\" at step %d", p.at_step);
  const float bar_w = ImGui::GetFontSize() * 9;
  for (const ProbeView::Guess& g : p.top) {
    const bool right = g.word == p.answer;
    ImGui::TextUnformatted(fit_text(g.word, ImGui::GetFontSize() * 5).c_str());
    ImGui::SameLine(ImGui::GetFontSize() * 5.5f + ImGui::GetCursorStartPos().x);
    const ImVec2 at = ImGui::GetCursorScreenPos();
    const float line = ImGui::GetTextLineHeight();
    ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(at.x, at.y + line * 0.15f), ImVec2(at.x + bar_w * g.p, at.y + line * 0.85f),
                                              right ? accuracy_color() : ImGui::GetColorU32(ImGuiCol_PlotHistogram));
    ImGui::Dummy(ImVec2(bar_w, line));
    ImGui::SameLine();
    ImGui::Text("%.1f%%%s", 100.0 * g.p, right ? "  ✓" : "");
  }
  ImGui::Text("p(%s) = %.1f%%   p(%s) = %.1f%%", p.creature.c_str(), 100.0 * p.p_creature, p.thing.c_str(), 100.0 * p.p_thing);
  publish_item_rect("train:guess");
  ImGui::EndGroup();
}

// The model asked about the probe and its twin (the session's lines): each head's share of the answer
// as two bars (the probe's, the twin's) beside its line, and which switch flips an answer.
void draw_probe_ask(const TrainSession& s) {
  const ProbeView& p = s.probe;
  const std::vector<std::string> lines = probe_ask_lines(p);
  if (lines.empty()) return;
  section_title("Ask the model, not its weights");
  ImGui::BeginGroup();
  const float wrap = std::max(ImGui::GetContentRegionAvail().x, ImGui::GetFontSize() * 12);
  ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + wrap);
  // lines: the answers, the measure, one per head (layer by layer), the verdict, then why (layer 1)
  float largest = 1e-6f;
  for (const TwinAsk& ask : p.asks)
    for (const AskedHead& h : ask.heads) largest = std::max({largest, std::fabs(h.share_a), std::fabs(h.share_b)});
  const float line = ImGui::GetTextLineHeight(), bar_w = ImGui::GetFontSize() * 4;
  std::size_t i = 0;
  ImGui::TextUnformatted(lines[i++].c_str());
  ImGui::TextUnformatted(lines[i++].c_str());
  for (const TwinAsk& ask : p.asks)
    for (const AskedHead& h : ask.heads) {
      // two bars about a centre line: the head's direct share with the probe's adjective (top) and its twin's
      ImDrawList* dl = ImGui::GetWindowDrawList();
      const ImVec2 at = ImGui::GetCursorScreenPos();
      const float mid = at.x + bar_w * 0.5f;
      const auto bar = [&](float share, float y, ImU32 colour) {
        const float len = share / largest * bar_w * 0.5f;
        dl->AddRectFilled(ImVec2(std::min(mid, mid + len), y), ImVec2(std::max(mid, mid + len), y + line * 0.4f), colour);
      };
      bar(h.share_a, at.y + line * 0.05f, loss_color());
      bar(h.share_b, at.y + line * 0.5f, accuracy_color());
      dl->AddLine(ImVec2(mid, at.y), ImVec2(mid, at.y + line), ImGui::GetColorU32(ImGuiCol_TextDisabled));
      ImGui::Dummy(ImVec2(bar_w, line));
      ImGui::SameLine();
      ImGui::TextUnformatted(lines[i++].c_str());
    }
  for (; i < lines.size(); ++i) ImGui::TextUnformatted(lines[i].c_str());
  ImGui::PopTextWrapPos();
  hint(("Bars: each head's share of the measured difference, with \"" + p.adjective + "\" (top) and \"" + p.twin_adjective +
        "\" (below); right of the line pushes towards \"" + p.thing + "\".").c_str());
  ImGui::EndGroup();
  publish_item_rect("train:ask");
}

// [SECTION] The √d experiment

std::string reached_text(const TrainRun& r) {
  if (!r.started()) return "not run yet";
  const int at = r.first_step_at(kExperimentBar);
  char buf[128];
  if (at >= 0) std::snprintf(buf, sizeof buf, "reached %.0f%% held-out accuracy at step %d", 100 * kExperimentBar, at);
  else if (r.steps() >= kExperimentSteps && !r.evaluating())
    std::snprintf(buf, sizeof buf, "did not reach %.0f%% in %d steps (best %.0f%%)", 100 * kExperimentBar, kExperimentSteps,
                  r.accuracies().empty() ? 0.0 : 100.0 * *std::max_element(r.accuracies().begin(), r.accuracies().end()));
  else std::snprintf(buf, sizeof buf, "step %d, %.0f%% so far", r.steps(), r.accuracies().empty() ? 0.0 : 100.0 * r.accuracies().back());
  return buf;
}

void draw_experiment(const AppState& state, TrainWish& wish) {
  const TrainSession& s = *state.train;
  section_title("The √d experiment: one head of size 256, with and without the division");
  ImGui::BeginDisabled(s.experiment_running);
  if (ImGui::Button(s.experiment_running ? "Running…" : "Run the experiment")) wish.experiment = true;
  publish_item_rect("train:experiment");
  ImGui::EndDisabled();
  same_line_if_fits(ImGui::GetFontSize() * 14);
  const TrainSettings recipe = sqrt_d_experiment_settings(state.inputs.train.seed, true);
  char recipe_text[200];
  std::snprintf(recipe_text, sizeof recipe_text,
                "seed %llu, %d layer%s, %d head of %d, lr %g, up to %d steps each; checked every %d steps on each held-out triple once; "
                "the two runs take turns",
                static_cast<unsigned long long>(recipe.seed), recipe.n_layer, recipe.n_layer == 1 ? "" : "s", recipe.n_head,
                recipe.n_embd / recipe.n_head, recipe.lr, kExperimentSteps, kExperimentEvalEvery);
  hint(recipe_text);
  const TrainRun& scaled = s.experiment[0];
  const TrainRun& unscaled = s.experiment[1];
  const float w = plot_width(2), h = ImGui::GetFontSize() * 11;
  ImGui::BeginGroup();
  line_plot("##sqrtd_loss",
            {{"÷√256", loss_color(), step_axis(scaled.losses().size()), scaled.losses()},
             {"no division", unscaled_color(), step_axis(unscaled.losses().size()), unscaled.losses()}},
            static_cast<float>(kExperimentSteps), 0, 0, "training step", "loss (nats)", w, h, false);
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(loss_color()), "÷√256: %s", reached_text(scaled).c_str());
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(unscaled_color()), "no division: %s", reached_text(unscaled).c_str());
  publish_item_rect("train:experiment_result");
  ImGui::EndGroup();
  same_line_if_fits(w);
  ImGui::BeginGroup();
  ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + w);
  paragraph(
      "What to look for: both runs start from the same weights and see the same sentences; only the scores differ. "
      "A query and a key hold 256 numbers each, so their dot product adds 256 products: for independent entries "
      "with mean zero its spread is √256 = 16 times one product's. At the start the weights are small and so are "
      "both runs' scores, but every update then moves an undivided score 16 times as far, so without the division "
      "the scores soon lie far apart and each softmax row comes out one-hot: all the weight on one word. Such a row "
      "passes almost no gradient back to the queries and keys (the Break view measures it), so the head never looks "
      "anywhere else. Measured with this recipe natively, seeds 1 to 3: with the division, 90% of the held-out "
      "triples right by step 150; without it, the head's row is one-hot by step 5 and stays so; after 300 steps 6% "
      "to 47% right. When the frozen row sits on a noun the model always names that noun (right about half the "
      "time); when it sits on the last \"the\" it sees no noun at all and guesses among the 16. Its loss stays near "
      "2 to 2.8 while the other run's keeps falling.");
  hint("This is the lesson's step 6: a model trained with and without ÷√d. The √d switch in the controls is another "
       "thing: over a trained head it only changes that head's softmax afterwards (Mistakes → Forget √d shows it).");
  hint("The curves are measured live in this page; read them rather than this text if they disagree.");
  ImGui::PopTextWrapPos();
  ImGui::EndGroup();
}

}  // namespace

// [SECTION] Use this model, view data

void draw_train_panel(const AppState& state, Action& action, UiState&) {
  AppInputs& next = action.inputs;
  TrainWish& wish = action.train;
  wish.shown = true;  // the view is on screen: time to start the page's training worker
  panel_intro("A small GPT-2-style model (the architecture of the GPT-2 models you can load) learns from scratch, in "
              "this page, to finish 3 840 sentences built on the lesson's frame (\"... because it was tired. it refers "
              "to the\" + the noun). Nobody sets W_Q, W_K and W_V here: training does. Watch the loss fall, the "
              "held-out accuracy rise, and where the heads look from the last \"the\". Switch the probe's adjective "
              "from a creature's (tired) to a thing's (wide): the answer changes, but with one layer (the default) no "
              "head can change which noun it weights more. Its query at \"the\" and the nouns' keys depend only on "
              "their tokens and places; what changes is the adjective's own share and value in the mix.");
  // With little height (a small embed, a phone on its side) the curves come before the recipe's form.
  const bool curves_first = layout().short_height;
  if (!curves_first) draw_recipe(state, next, wish);
  draw_progress(*state.train);
  ImGui::BeginGroup();
  draw_curves(*state.train);
  ImGui::EndGroup();
  publish_picture_rect(View::Train);
  if (curves_first) draw_recipe(state, next, wish);
  draw_probe(state, next);
  draw_probe_ask(*state.train);
  draw_experiment(state, wish);
}

std::string use_trained_model(AppState& state, double now) {
  TrainSession& s = *state.train;
  if (!s.run.started()) return "train a model first";
  const Trainer& trainer = s.run.trainer();
  const TrainSettings& settings = trainer.settings();
  // Through the one loader, exactly as a downloaded folder would open.
  const std::string name = "trained (seed " + std::to_string(settings.seed) + ")";
  try {
    add_model(state, load_model_files(name, trained_model_files(trainer.model(), trainer.corpus())));
    // The probe sentence in the views, its last "the" selected (where the referent is predicted).
    std::string sentence;
    for (const std::string& w : s.probe.words) sentence += (sentence.empty() || w == "'" || sentence.back() == '\'' ? "" : " ") + w;
    nlohmann::json change = {{"model", name}};
    if (!sentence.empty()) change.update({{"sentence", sentence}, {"token", static_cast<int>(s.probe.words.size()) - 1}});
    apply_state_json(state, change, now);
  } catch (const std::exception& e) {
    return e.what();
  }
  s.used_model = name;
  return "";
}

}  // namespace attn::ui
