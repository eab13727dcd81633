// The app's frame: title, view tabs, the controls column and the open view (see panels.h).
// Not a panel itself: it only lays out the others and applies what they ask for.
#include <imgui.h>
#include <imgui_internal.h>  // FindWindowByName: whether a tooltip is open

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <cstdio>
#include <string>

#include "checks.h"
#include "family_panels.h"
#include "layout.h"
#include "model_ui.h"
#include "panels.h"
#include "widgets.h"

namespace attn::ui {

namespace {

// The Cost view's data with the K/V cache's numbers (drawn by the family panels, family_panels.h).
nlohmann::json cost_and_cache_view_data(const AppState& state) {
  nlohmann::json j = cost_view_data(state);
  j["kv_cache"] = kv_cache_view_data(state);
  return j;
}

// The table of views, the UI's half: one row per view, indexed by View, with its draw and data
// functions (the data ones are the state's, src/state/view_data.h), whether it shows the model's
// attention (banner) and its place among the tabs. The state's half (name, title, picture, check
// question) is kViews in src/state/views.h, indexed the same way; the two halves are apart because
// the state room must not know ImGui. Every row names its View, and the checks below fail to compile when row i is not View i,
// a view has no row, or two views claim one place among the tabs.
struct Panel {
  View view;
  PanelFn* draw;
  ViewDataFn* data;  // nullptr: the main state already carries everything the view shows
  bool banner;  // it shows the current model's attention, with head_banner (and the toy's notes)
  int tab;      // its place among the tabs, in teaching order: the lesson from the picture to the
                // exercises, then the views about the model (the enum's order is the public one and stays)
};

constexpr Panel kPanels[] = {
    {View::Flow, draw_flow_panel, flow_view_data, true, 2},
    {View::Weights, draw_weights_panel, weights_view_data, true, 3},
    {View::Heads, draw_heads_panel, heads_view_data, true, 10},
    {View::Library, draw_library_panel, library_view_data, true, 0},
    {View::Steps, draw_steps_panel, steps_view_data, true, 1},
    {View::Derive, draw_derive_panel, derive_view_data, false, 4},
    {View::Break, draw_break_panel, break_view_data, false, 6},
    {View::Mistakes, draw_mistakes_panel, mistakes_view_data, true, 5},
    {View::Build, draw_build_panel, build_view_data, true, 8},
    {View::Cost, draw_cost_panel, cost_and_cache_view_data, false, 7},
    {View::Practice, draw_practice_panel, practice_view_data, false, 9},
    {View::Train, draw_train_panel, train_view_data, false, 12},
    {View::Compare, draw_compare_panel, compare_view_data, true, 11},
};
static_assert(sizeof kPanels / sizeof kPanels[0] == kViewCount, "one row per view");

constexpr bool panels_in_view_order() {
  for (int i = 0; i < kViewCount; ++i)
    if (static_cast<int>(kPanels[i].view) != i) return false;
  return true;
}
static_assert(panels_in_view_order(), "row i of kPanels is View i");

// The tabs in teaching order, from the tab column; every place 0 … kViewCount−1 taken once.
struct TabOrder {
  View views[kViewCount] = {};
  bool valid = true;
};
constexpr TabOrder tab_order() {
  TabOrder order;
  bool taken[kViewCount] = {};
  for (const Panel& p : kPanels) {
    if (p.tab < 0 || p.tab >= kViewCount || taken[p.tab]) order.valid = false;
    else taken[p.tab] = true, order.views[p.tab] = p.view;
  }
  return order;
}
constexpr TabOrder kTabOrder = tab_order();
static_assert(kTabOrder.valid, "every view has its own place among the tabs");


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

void draw_view_tabs(const AppState& state, AppInputs& next, UiState::App& ui) {
  View& shown = ui.shown_tab;  // which tab ImGui shows; forced when the view changes elsewhere
  const bool external = ui.first_frame || shown != state.inputs.view;
  ui.first_frame = false;
  if (!ImGui::BeginTabBar("views", ImGuiTabBarFlags_FittingPolicyScroll)) return;
  for (const View v : kTabOrder.views) {
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

// Presentation mode's one control: a small menu (the views, leaving presentation mode) beside the
// open view's title, which the room reads as the slide's heading. Escape leaves too.
void draw_present_bar(const AppState& state, AppInputs& next) {
  if (ImGui::Button("≡")) ImGui::OpenPopup("present_menu");
  publish_item_rect("present:menu");
  explain_item("Views, and leaving presentation mode (or press Escape)", false);
  ImGui::SameLine();
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted(view_title(state.inputs.view));
  if (ImGui::BeginPopup("present_menu")) {
    const float row = layout().tall_controls ? ImGui::GetFrameHeight() : 0.0f;
    for (const View v : kTabOrder.views) {
      if (!view_offered(state.inputs, v)) continue;
      if (ImGui::Selectable(view_title(v), v == state.inputs.view, 0, ImVec2(0, row))) next.view = v;
      publish_item_rect((std::string("tab:") + view_name(v)).c_str());
    }
    ImGui::Separator();
    if (ImGui::Selectable("Leave presentation mode", false, 0, ImVec2(0, row))) next.present = false;
    publish_item_rect("present:leave");
    ImGui::EndPopup();
  } else if (!ImGui::GetIO().WantTextInput && ImGui::IsKeyPressed(ImGuiKey_Escape, false)) {
    next.present = false;
  }
}

// "tooltip": where the tooltip is this frame, or an empty rect (tests check that a long press
// shows what hovering shows). ImGui names its first tooltip window "##Tooltip_00".
void publish_tooltip_rect() {
  const ImGuiWindow* tip = ImGui::FindWindowByName("##Tooltip_00");
  if (tip && tip->Active) publish_rect("tooltip", tip->Pos, ImVec2(tip->Pos.x + tip->Size.x, tip->Pos.y + tip->Size.y));
  else publish_rect("tooltip", ImVec2(0, 0), ImVec2(0, 0));
}

// Whether every offered view's tab fits in `width` (else the tab strip would hide some behind
// arrows: a tablet, a narrow window, tall touch controls).
bool tabs_fit(const AppState& state, float width) {
  const ImGuiStyle& style = ImGui::GetStyle();
  float total = 0;
  for (const View v : kTabOrder.views)
    if (view_offered(state.inputs, v))
      total += ImGui::CalcTextSize(view_title(v)).x + style.FramePadding.x * 2.0f + style.ItemInnerSpacing.x;
  return total <= width;
}

// The view menu: every offered view one tap away once it is open (a strip of tabs would hide
// most of them behind arrows on a phone).
void draw_view_menu(const AppState& state, AppInputs& next, float width) {
  const std::string preview = std::string("View: ") + view_title(state.inputs.view);
  ImGui::SetNextItemWidth(width);
  if (ImGui::BeginCombo("##views", preview.c_str(), ImGuiComboFlags_HeightLargest)) {
    const float row = layout().tall_controls ? ImGui::GetFrameHeight() : 0.0f;
    ImGui::PushStyleVar(ImGuiStyleVar_SelectableTextAlign, ImVec2(0.0f, 0.5f));  // names centred in tall rows
    for (const View v : kTabOrder.views) {
      if (!view_offered(state.inputs, v)) continue;
      if (ImGui::Selectable(view_title(v), v == state.inputs.view, 0, ImVec2(0, row))) next.view = v;
      publish_item_rect((std::string("tab:") + view_name(v)).c_str());
    }
    ImGui::PopStyleVar();
    ImGui::EndCombo();
  }
  publish_item_rect("views");
}

// One column (layout().narrow): the view menu and a "More" button, then the few controls every
// view needs; "More" swaps the view for the whole controls column until it is closed.
void draw_narrow_bar(const AppState& state, AppInputs& next, bool& drawer_open, UiState::Controls& controls) {
  const char* more = drawer_open ? "Close" : "More…";
  const float more_width = ImGui::CalcTextSize(more).x + ImGui::GetStyle().FramePadding.x * 2.0f;
  draw_view_menu(state, next, ImGui::GetContentRegionAvail().x - more_width - ImGui::GetStyle().ItemSpacing.x);
  ImGui::SameLine();
  if (ImGui::Button(more)) drawer_open = !drawer_open;
  publish_item_rect("more");
  if (!drawer_open) draw_phone_bar(state, next, !layout().short_height, controls);
}

// The tour's bar above the tabs: where we are, the stop's prompt, Back / Next / End.
void draw_tour_bar(const AppState& state, AppInputs& next) {
  const std::vector<TourStop>& stops = tour_stops();
  const int step = std::clamp(state.inputs.tour_step, 0, static_cast<int>(stops.size()) - 1);
  const auto go = [&](int to) { go_to_tour_stop(state, next, to); };
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
  // A stop on a built-in model the page has not fetched yet asks for it (once: a failure is shown
  // in the loader and not retried); it becomes the current model when it arrives.
  const std::vector<std::string>& on_request = state.loading.on_request;
  if (state.inputs.view == stops[step].view && !find_model(state, stops[step].model) &&
      std::find(on_request.begin(), on_request.end(), stops[step].model) != on_request.end()) {
    if (!state.loading.active && state.loading.error.empty()) request_builtin_model(stops[step].model);
    hint(state.loading.error.empty() ? "Fetching this stop's model…" : state.loading.error.c_str());
  }
  if (state.inputs.view != stops[step].view) hint("You left the tour's view: Next or Back bring you back to the tour.");
  ImGui::Separator();
}
}  // namespace

void update_view_state(AppState& state, double now) {
  if (state.inputs.view == View::Build) update_build_state(state, now);
  if (state.inputs.view == View::Cost)
    update_cost_matrix(state.cost.matrix, state.inputs, live_backend(state), steady_clock_seconds());
}

nlohmann::json view_data(AppState& state) {
  update_view_state(state, -std::numeric_limits<double>::infinity());
  ViewDataFn* const data = kPanels[static_cast<int>(state.inputs.view)].data;
  nlohmann::json j = data ? data(state) : nlohmann::json(nullptr);
  if (nlohmann::json check = view_check_json(state); !check.is_null()) {
    if (j.is_null()) j = nlohmann::json::object();
    j["check"] = std::move(check);
  }
  if (j.is_null()) j = nlohmann::json::object();
  j["picture"] = view_row(state.inputs.view).picture;  // the itemRect name of its main picture
  j["controls"] = control_texts_json(state);  // what the controls column says of its switches
  if (const NextStripTexts strip = next_strip_texts(state); !strip.title.empty() || !strip.prompt.empty())
    j["next_strip"] = {{"title", strip.title}, {"note", strip.note}, {"trained_here", strip.trained_here},
                       {"prompt", strip.prompt}, {"write", strip.write}, {"writes", strip.writes}};
  // The learner's changes inside the model and what they did, as the strip (or the Weights view) says it.
  if (const InterventionTexts edits = intervention_texts(state); !edits.entries.empty() || !edits.note.empty()) {
    nlohmann::json entries = nlohmann::json::array();
    for (const InterventionEntry& e : edits.entries) entries.push_back(e.text);
    j["interventions"] = {{"entries", entries}, {"effect", edits.effect}, {"restored", edits.restored}, {"note", edits.note}};
  }
  // Where the toy fails on this sentence, the views that show its attention say so.
  const std::vector<ModelNote> notes = toy_model_notes(state);
  if (!notes.empty() && kPanels[static_cast<int>(state.inputs.view)].banner) {
    if (j.is_null()) j = nlohmann::json::object();
    for (const ModelNote& n : notes) j["model_notes"].push_back({{"id", n.id}, {"text", n.text}});
  }
  // What is explained on screen without hovering: a pinned explanation, presentation mode's column.
  const ShownExplanation& shown = shown_explanation();
  if (!shown.text.empty() || !shown.items.empty()) {
    if (j.is_null()) j = nlohmann::json::object();
    j["explanation"] = {{"text", shown.text}, {"pinned", shown.pinned}, {"items", shown.items}};
  }
  return j;
}

Matrix weights_for_display(const AttentionTrace& t) {
  Matrix shown = t.weights;
  for (Eigen::Index i = 0; i < shown.rows(); ++i)
    for (Eigen::Index j = 0; j < shown.cols(); ++j)
      if (key_hidden_by_mask(t, static_cast<int>(i), static_cast<int>(j)))
        shown(i, j) = -std::numeric_limits<float>::infinity();
  return shown;
}

bool panel_intro(const char* text) {
  // With little height the picture comes first: one line of the intro and a button for the rest.
  // A throwaway UI toggle shared by the views' intros, kept in ImGui's storage of the app's window
  // (as ImGui keeps a tree node's "open"): every panel calls this, and none is handed the UiState for it.
  bool& expanded = *ImGui::GetCurrentWindow()->RootWindow->StateStorage.GetBoolRef(ImHashStr("panel_intro:expanded"), false);
  if (layout().short_height) {
    const char* label = expanded ? "less" : "more";
    const float button = ImGui::CalcTextSize(label).x + ImGui::GetStyle().ItemSpacing.x * 2.0f;
    if (!expanded) {
      const float width = ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ScrollbarSize - button;
      const std::string line = fit_text(text, width);
      ImGui::TextDisabled("%s", line.c_str());
      if (line == text) return false;  // it fits: only the longer texts are behind "more" (none here)
      ImGui::SameLine();
    }
    if (expanded) hint(text);
    if (ImGui::SmallButton(label)) expanded = !expanded;
    publish_item_rect("intro:more");
    return expanded;
  }
  hint(text);
  ImGui::Spacing();
  return true;
}

void draw_app(AppState& state, UiState& ui, double now) {
  bool& drawer_open = ui.app.drawer_open;  // the narrow layout's "More": the controls instead of the view
  const Layout& screen = layout();
  const ImGuiStyle& style = ImGui::GetStyle();
  // Fingers need big targets: every framed control (boxes, buttons, switches) kTouchTarget tall.
  const float touch_padding = std::max(style.FramePadding.y, (screen.px(kTouchTarget) - ImGui::GetFontSize()) * 0.5f);
  ImGui::PushStyleVar(ImGuiStyleVar_FramePadding, ImVec2(style.FramePadding.x, screen.tall_controls ? touch_padding : style.FramePadding.y));
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(vp->WorkPos);
  ImGui::SetNextWindowSize(vp->WorkSize);
  ImGui::Begin("Self-attention explainer", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoSavedSettings |
                   ImGuiWindowFlags_NoBringToFrontOnFocus);
  // Training runs between frames in slices of a fixed budget, whichever view is open.
  train_frame(*state.train, state.inputs.train, kTrainSliceMs);
  // So do the Heads and Compare views' sweeps: cells until their slice of this frame is used.
  const auto sweep_start = std::chrono::steady_clock::now();
  sweeps_frame(state, [&] {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - sweep_start).count() < kSweepSliceMs;
  });
  // And a loaded model's forward where no worker runs it (model_run.h), a layer at a time.
  model_run_frame(state, kSweepSliceMs, now);
  const bool present = state.inputs.present;
  explanations_begin_frame(present);
  Action action{state.inputs};  // what this frame's panels ask for, applied after it (apply)
  AppInputs& next = action.inputs;
  keyboard_shortcuts(state, next);
  const bool embed = state.inputs.embed;
  unsigned offered = 0;
  for (int i = 0; i < kViewCount; ++i) offered += view_offered(state.inputs, static_cast<View>(i));

  const bool narrow = screen.narrow;
  if (present) {  // the view fills the canvas: no controls, no tabs
    draw_present_bar(state, next);
  } else if (embed) {
    draw_compact_controls(state, next);
  } else if (narrow) {
    draw_narrow_bar(state, next, drawer_open, ui.controls);
    if (drawer_open) {
      ImGui::BeginChild("controls", ImVec2(0, 0), true, ImGuiWindowFlags_NavFlattened);
      draw_controls(state, next, ui.controls);
      ImGui::EndChild();
    }
  } else {
    ImGui::TextUnformatted("Self-attention");
    ImGui::SameLine();
    hint("softmax(QKᵀ/√d)·V, live on a real sentence");
    const float font = ImGui::GetFontSize();
    const float avail = ImGui::GetContentRegionAvail().x;
    const float controls_width = std::clamp(avail * 0.3f, font * 13.0f, font * 18.0f);
    // NavFlattened: arrow-key navigation moves between the controls and the view as one surface.
    ImGui::BeginChild("controls", ImVec2(controls_width, 0), true, ImGuiWindowFlags_NavFlattened);
    draw_controls(state, next, ui.controls);
    ImGui::EndChild();
    ImGui::SameLine();
  }
  if (narrow && !embed && !present && drawer_open) {  // the controls fill the screen until "Close"
    ImGui::End();
    ImGui::PopStyleVar();
    explanations_end_frame();
    apply(state, action, now);
    return;
  }
  // Presentation mode: the view's explanations in a column beside it (under it when narrow), kept
  // while the view has any.
  ImVec2 view_size(0, 0);
  if (present && explanations_in_view()) {
    const ImVec2 at = ImGui::GetCursorScreenPos(), avail = ImGui::GetContentRegionAvail();
    const float gap = style.ItemSpacing.x, font = ImGui::GetFontSize();
    if (narrow) {
      const float height = std::floor(avail.y * 0.32f);
      view_size.y = avail.y - height - gap;
      explanations_column(ImVec2(at.x, at.y + avail.y - height), ImVec2(at.x + avail.x, at.y + avail.y));
    } else {
      const float width = std::floor(std::clamp(avail.x * 0.38f, font * 14.0f, font * 28.0f));
      view_size.x = avail.x - width - gap;
      explanations_column(ImVec2(at.x + avail.x - width, at.y), ImVec2(at.x + avail.x, at.y + avail.y));
    }
  }
  ImGui::BeginChild("view", view_size, false, ImGuiWindowFlags_NavFlattened);
  if (state.inputs.tour_step >= 0) draw_tour_bar(state, next);
  if (!present) {  // presentation mode's bar is its only control
    if (offered > 1 && narrow && embed) draw_view_menu(state, next, ImGui::GetContentRegionAvail().x);
    else if (offered > 1 && !narrow && tabs_fit(state, ImGui::GetContentRegionAvail().x)) draw_view_tabs(state, next, ui.app);
    else if (offered > 1 && !narrow) draw_view_menu(state, next, ImGui::GetContentRegionAvail().x);
  }
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
  // The open view's numbers in the state room, once per input revision (the Cost view also takes one
  // step of its measurement per frame while it is open, so the UI never freezes).
  update_view_state(state, now);
  if (state.inputs.view == View::Cost) cost_measure_step(state.cost.run, state.inputs.backend, gpu_facts(), steady_clock_seconds());
  kPanels[static_cast<int>(state.inputs.view)].draw(state, action, ui);
  draw_view_check(state, next, ui.typed_answer);
  ImGui::PopTextWrapPos();
  // "view:content": the view's whole content, as wide as it scrolls (tests check that a phone's
  // views fit its width).
  const ImVec2 content(ImGui::GetWindowPos().x - ImGui::GetScrollX(), ImGui::GetWindowPos().y - ImGui::GetScrollY());
  publish_rect("view:content", content,
               ImVec2(content.x + ImGui::GetWindowWidth() + ImGui::GetScrollMaxX(), content.y + ImGui::GetWindowHeight() + ImGui::GetScrollMaxY()));
  ImGui::EndChild();
  ImGui::EndChild();
  ImGui::End();
  ImGui::PopStyleVar();
  explanations_end_frame();
  publish_tooltip_rect();

  apply(state, action, now);
}

void apply(AppState& state, const Action& action, double now) {
  if (action.measure_again) state.cost.run = CostRun(state.inputs.backend);  // "Measure again"
  if (action.inputs != state.inputs) apply_inputs_in_background(state, action.inputs, now);  // a new text: the model's worker computes it
  // The train view's wishes (they act on state.train).
  const TrainWish& wish = action.train;
  TrainSession& s = *state.train;
  const bool acts = wish.start || wish.pause || wish.reset || wish.use_model || wish.download || wish.experiment;
  if ((wish.shown || acts) && s.worker_state == TrainSession::Worker::None && start_train_worker())
    s.worker_state = TrainSession::Worker::Loading;
  if (wish.pause) train_pause(s);
  if (wish.start) train_start(s, state.inputs.train);
  if (wish.reset) train_reset(s);
  if (wish.experiment) experiment_start(s, state.inputs.train);
  if (wish.use_model) {
    const std::string why = use_trained_model(state, now);
    s.message = why.empty() ? "Every view now shows " + s.used_model + "." : "";
    s.error = why.empty() ? "" : "Use this model: " + why;
  }
  if (wish.download && s.run.started()) save_trained_model_zip(state);
}

}  // namespace attn::ui
