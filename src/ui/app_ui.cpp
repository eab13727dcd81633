// The app's frame: title, view tabs, the controls column and the open view (see panels.h).
// Not a panel itself: it only lays out the others and applies what they ask for.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstdio>
#include <string>

#include "model_ui.h"
#include "panels.h"
#include "widgets.h"

namespace attn::ui {

namespace {
using PanelFn = void (*)(const AppState&, AppInputs&);
using DataFn = nlohmann::json (*)(const AppState&);

struct Panel {
  PanelFn draw;
  DataFn data;  // nullptr: the main state already carries everything the view shows
  bool banner;  // it shows the current model's attention, with head_banner (and the toy's notes)
};

// In View order (app_state.h).
constexpr Panel kPanels[kViewCount] = {
    {draw_flow_panel, flow_view_data, true},          {draw_weights_panel, nullptr, true},
    {draw_heads_panel, heads_view_data, true},        {draw_library_panel, library_view_data, true},
    {draw_steps_panel, steps_view_data, true},        {draw_derive_panel, derive_view_data, false},
    {draw_break_panel, break_view_data, false},       {draw_mistakes_panel, mistakes_view_data, true},
    {draw_build_panel, build_view_data, true},        {draw_cost_panel, cost_view_data, false},
    {draw_practice_panel, practice_view_data, false}, {draw_compare_panel, compare_view_data, true},
};

// The tabs in teaching order (the enum's order is the public one and stays): the lesson from the
// picture to the exercises, then the views that are about the model.
constexpr View kTabOrder[] = {View::Library, View::Steps,   View::Flow,  View::Weights,  View::Derive,
                              View::Mistakes, View::Break,  View::Cost,  View::Build,    View::Practice,
                              View::Heads,   View::Compare};
static_assert(sizeof kTabOrder / sizeof kTabOrder[0] == kViewCount, "every view has its place among the tabs");

PanelFn panel_for(View v) { return kPanels[static_cast<int>(v)].draw; }

// In an embed, only the views the page chose (all when it chose none).
bool view_offered(const AppInputs& in, View v) {
  return !in.embed || in.embed_views == 0 || (in.embed_views & (1u << static_cast<int>(v)));
}

// Keys that work anywhere but in a text box: [ and ] step through the tokens.
void keyboard_shortcuts(const AppState& state, AppInputs& next) {
  if (ImGui::GetIO().WantTextInput) return;
  const int T = static_cast<int>(state.model.queries.tokens.size());
  for (ImWchar c : ImGui::GetIO().InputQueueCharacters) {
    if (c == '[') next.token = std::max(0, next.token - 1);
    if (c == ']') next.token = std::min(T - 1, next.token + 1);
  }
}

void draw_view_tabs(const AppState& state, AppInputs& next) {
  static View shown = View::Flow;  // which tab ImGui shows; forced when the view changes elsewhere
  static bool first = true;
  const bool external = first || shown != state.inputs.view;
  first = false;
  if (!ImGui::BeginTabBar("views", ImGuiTabBarFlags_FittingPolicyScroll)) return;
  for (const View v : kTabOrder) {
    if (!view_offered(state.inputs, v)) continue;
    const ImGuiTabItemFlags flags = external && v == state.inputs.view ? ImGuiTabItemFlags_SetSelected : 0;
    const bool open = ImGui::BeginTabItem(view_title(v), nullptr, flags);
    publish_item_rect((std::string("tab:") + view_name(v)).c_str());
    if (open) {
      if (!external && v != state.inputs.view) next.view = v;
      shown = external ? state.inputs.view : v;
      ImGui::EndTabItem();
    }
  }
  ImGui::EndTabBar();
}
// The tour's bar above the tabs: where we are, the stop's prompt, Back / Next / End.
void draw_tour_bar(const AppState& state, AppInputs& next) {
  const std::vector<TourStop>& stops = tour_stops();
  const int step = std::clamp(state.inputs.tour_step, 0, static_cast<int>(stops.size()) - 1);
  const auto go = [&](int to) {
    next.tour_step = to;
    if (to >= 0) next.view = stops[static_cast<std::size_t>(to)].view;
  };
  ImGui::Text("Tour %d of %d · %s", step + 1, static_cast<int>(stops.size()), view_title(stops[step].view));
  ImGui::SameLine();
  ImGui::BeginDisabled(step == 0);
  if (ImGui::SmallButton("Back")) go(step - 1);
  ImGui::EndDisabled();
  publish_item_rect("tour:back");
  ImGui::SameLine();
  const bool last = step + 1 == static_cast<int>(stops.size());
  if (ImGui::SmallButton(last ? "Finish" : "Next")) go(last ? -1 : step + 1);
  publish_item_rect("tour:next");
  ImGui::SameLine();
  if (ImGui::SmallButton("End tour")) go(-1);
  publish_item_rect("tour:end");
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_PlotLinesHovered));
  ImGui::TextWrapped("%s", stops[step].prompt);
  ImGui::PopStyleColor();
  if (state.inputs.view != stops[step].view) hint("You left the tour's view: Next or Back bring you back to the tour.");
  ImGui::Separator();
}
}  // namespace

std::vector<std::string> query_labels(const AppState& state) {
  std::vector<std::string> out;
  for (const Token& t : state.model.queries.tokens) out.push_back(t.text);
  return out;
}

std::vector<std::string> key_labels(const AppState& state) {
  std::vector<std::string> out;
  for (const Token& t : state.model.keys.tokens) out.push_back(t.text);
  return out;
}

nlohmann::json view_data(const AppState& state) {
  const DataFn data = kPanels[static_cast<int>(state.inputs.view)].data;
  nlohmann::json j = data ? data(state) : nlohmann::json(nullptr);
  // Where the toy fails on this sentence, the views that show its attention say so.
  const std::vector<ModelNote> notes = toy_model_notes(state);
  if (!notes.empty() && kPanels[static_cast<int>(state.inputs.view)].banner) {
    if (j.is_null()) j = nlohmann::json::object();
    for (const ModelNote& n : notes) j["model_notes"].push_back({{"id", n.id}, {"text", n.text}});
  }
  return j;
}

bool key_hidden_by_mask(const AttentionTrace& trace, int row, int col) {
  if (!std::isfinite(trace.masked_scores(row, col))) return true;
  return trace.options.causal && trace.options.mistake == Mistake::MaskAfterSoftmax && col > row;
}

Matrix weights_for_display(const AttentionTrace& t) {
  Matrix shown = t.weights;
  for (Eigen::Index i = 0; i < shown.rows(); ++i)
    for (Eigen::Index j = 0; j < shown.cols(); ++j)
      if (key_hidden_by_mask(t, static_cast<int>(i), static_cast<int>(j)))
        shown(i, j) = -std::numeric_limits<float>::infinity();
  return shown;
}

void panel_intro(const char* text) {
  hint(text);
  ImGui::Spacing();
}

void draw_app(AppState& state, double now) {
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(vp->WorkPos);
  ImGui::SetNextWindowSize(vp->WorkSize);
  ImGui::Begin("Self-attention explainer", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoSavedSettings |
                   ImGuiWindowFlags_NoBringToFrontOnFocus);
  AppInputs next = state.inputs;
  keyboard_shortcuts(state, next);
  const bool embed = state.inputs.embed;
  unsigned offered = 0;
  for (int i = 0; i < kViewCount; ++i) offered += view_offered(state.inputs, static_cast<View>(i));

  if (embed) {
    draw_compact_controls(state, next);
  } else {
    ImGui::TextUnformatted("Self-attention");
    ImGui::SameLine();
    hint("softmax(QKᵀ/√d)·V, live on a real sentence");
    const float font = ImGui::GetFontSize();
    const float avail = ImGui::GetContentRegionAvail().x;
    const float controls_width = std::clamp(avail * 0.3f, font * 13.0f, font * 18.0f);
    // NavFlattened: arrow-key navigation moves between the controls and the view as one surface.
    ImGui::BeginChild("controls", ImVec2(controls_width, 0), true, ImGuiWindowFlags_NavFlattened);
    draw_controls(state, next);
    ImGui::EndChild();
    ImGui::SameLine();
  }
  ImGui::BeginChild("view", ImVec2(0, 0), false, ImGuiWindowFlags_NavFlattened);
  if (state.inputs.tour_step >= 0) draw_tour_bar(state, next);
  if (offered > 1) draw_view_tabs(state, next);
  // An embed that offers one view shows it even if the state names another.
  if (!view_offered(state.inputs, state.inputs.view))
    for (int i = 0; i < kViewCount; ++i)
      if (view_offered(state.inputs, static_cast<View>(i))) {
        next.view = static_cast<View>(i);
        break;
      }
  ImGui::BeginChild("view_body", ImVec2(0, 0), false, ImGuiWindowFlags_HorizontalScrollbar);
  // Wrap text at the visible edge, leaving room for the vertical scrollbar: in a window that can
  // scroll sideways, ImGui's own wrap width is last frame's content width.
  ImGui::PushTextWrapPos(ImGui::GetWindowWidth() - ImGui::GetStyle().ScrollbarSize - ImGui::GetStyle().WindowPadding.x);
  if (PanelFn panel = panel_for(state.inputs.view)) panel(state, next);
  ImGui::PopTextWrapPos();
  ImGui::EndChild();
  ImGui::EndChild();
  ImGui::End();

  if (next != state.inputs) apply_inputs(state, next, now);
}

}  // namespace attn::ui
