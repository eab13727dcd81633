// The panels of the explainer. Each is a function of the current AppState: it draws it and, when
// the learner changes something, writes the wish into `next` (applied by draw_app after the frame).
// Not state owners: nothing here keeps a value that belongs in AppState.
#pragma once
#include "../state/app_state.h"
#include "../state/view_data.h"
#include "ui_state.h"

namespace attn::ui {

// The whole window: title bar with the view tabs, the controls column and the open view. `ui` holds
// the panels' UI leftovers (ui_state.h); the caller owns it, as it owns the state.
void draw_app(AppState& state, UiState& ui, double now);

// Style and colours for a scale (sizes in device pixels, as the canvas is: see ui_scale).
void apply_theme(float scale, bool light);
// The scale the font and the style are drawn at: the device-pixel ratio, times presentation mode's
// larger type (kPresentScale; less in the narrow layout, whose width is precious).
float ui_scale(float dpr, bool present, bool narrow);
constexpr float kPresentScale = 1.6f, kPresentScaleNarrow = 1.25f;

// The train view's wishes that are not inputs (they act on state.train).
struct TrainWish {
  bool start = false, pause = false, reset = false, use_model = false, download = false, experiment = false;
  bool shown = false;  // the view is on screen: time to start the page's training worker
};
// What one frame of the panels (or a call of the JS API) asks of the state: the inputs as they should
// be, and the actions that are not inputs. The panels only read the state and write this; apply is the
// one way their wishes change it.
struct Action {
  explicit Action(const AppInputs& now) : inputs(now) {}  // nothing asked yet: the inputs as they are
  AppInputs inputs;
  TrainWish train;             // Start, Pause, Reset, Use this model, Download, the experiment
  bool measure_again = false;  // the Cost view's "Measure again": a new measured run
};
// Applies an action after the frame: a new measured run, the inputs (a new text for a loaded model goes to
// its worker: apply_inputs_in_background), then the train view's wishes (Use this model loads through the
// one loader; Download hands the platform the folder).
void apply(AppState& state, const Action& action, double now);

void draw_controls(const AppState& state, AppInputs& next, UiState::Controls& ui);
// What the controls column says of its switches for this model (drawn there, in getState's view_data).
struct ControlTexts {
  std::string causal, scale, temperature;
};
ControlTexts control_texts(const AppState& state);
nlohmann::json control_texts_json(const AppState& state);
// The narrow layout's bar under the view menu: the sentence (unless `with_sentence` is false:
// too little height), the token picker with its arrows, and the causal mask.
void draw_phone_bar(const AppState& state, AppInputs& next, bool with_sentence, UiState::Controls& ui);
// The embed's one-line strip: token picker, causal mask, √d scaling.
void draw_compact_controls(const AppState& state, AppInputs& next);

// One draw function per view, all alike (app_ui.cpp's table of views calls them): each reads the state,
// writes its wishes into `action` (action.inputs: the inputs it changes) and keeps its UI leftovers in
// `ui`. The numbers each view shows, for getState().view_data, are the state's (src/state/view_data.h).
using PanelFn = void(const AppState& state, Action& action, UiState& ui);
PanelFn draw_flow_panel, draw_weights_panel, draw_heads_panel, draw_library_panel, draw_steps_panel, draw_derive_panel,
    draw_break_panel, draw_mistakes_panel, draw_build_panel, draw_cost_panel, draw_practice_panel, draw_compare_panel,
    draw_train_panel;
// Makes the trained model the current model of every view (through the one loader, as its
// downloaded folder would open); returns "" or why not.
std::string use_trained_model(AppState& state, double now);

// Brings the open view's numbers in the state room up to date (state.build for the Build view,
// state.cost.matrix for the Cost view): once per input revision, as draw_app does before drawing.
// now: ImGui's clock; −∞ for getState (never the GPU's read-backs of the Build view).
void update_view_state(AppState& state, double now);
// The numbers the open view shows (null for views whose numbers are all in the main state), after
// update_view_state(state, −∞): the view data functions themselves only read.
nlohmann::json view_data(AppState& state);

// Defined at the platform edge (src/app): links, downloads and the permalink.
// Opens a link in a new browser tab (natively: prints it).
void open_url(const char* url);
// Offers `text` as a file download (natively: writes the file into the current directory).
void save_text_file(const char* name, const char* mime, const std::string& text);
// The weight matrix as a PNG image download (web only; returns false where not available).
bool export_weights_png();
// Offers the trained model's folder (config.json, model.safetensors, tokenizer.json) as one zip
// download (web: the page zips with fflate; natively: writes the folder trained-model/).
void save_trained_model_zip(const AppState& state);
// Starts loading the page's training Web Worker (web/train_worker.js; it reports back through
// attn_train_worker_ready / _failed). Returns false where there is none (natively: runs train here).
bool start_train_worker();
// Copies a link that reopens the current state (web only; returns false where not available).
bool copy_permalink();
// Opens the printable handout of the current state in a new tab (web only; false where not available).
bool open_handout();

// Loading models, at the platform edge (src/app): the page reads the chosen files or downloads a
// repository and feeds the bytes to the loader (ModelAssembler); natively these print how to open
// a folder with --model DIR instead.
void request_model_files();  // the browser's file chooser for a model folder
// token: the learner's access token for a gated repository ("" none); the page keeps it in memory
// and sends it to the hub only.
void request_hub_model(const std::string& repo, const std::string& revision, const std::string& token = "");
void request_builtin_model(const std::string& name);  // one of ModelLoadStatus::on_request
void cancel_model_load();
void unload_model(const std::string& name);                               // frees a loaded model
void forget_kept_model(const std::string& repo, const std::string& revision);  // removes the browser's copy

// Which backend computes the app's large problems now (the cost view's measurements and its
// whole weight matrix, T = inputs.cost_T), and why: inputs.backend resolved with the GPU's facts.
BackendChoice live_backend(const AppState& state);
// What the app knows of its GPU path right now (it can change: a lost WebGL context).
GpuFacts gpu_facts();

// (query_labels, key_labels, key_hidden_by_mask, link_cut: src/state/view_numbers.h)
// The weights as a heatmap should show them: hidden keys become −∞ (hatched), never a 0 that looks
// like a tiny weight.
Matrix weights_for_display(const AttentionTrace& trace);
// A mistake's short name for buttons and banners ("Forgot √d", ...).
const char* mistake_label(Mistake m);
// A short line under a panel title that says what the view shows. With little height
// (layout().short_height) it shrinks to one line and a "more" button; it returns whether the
// view's longer explanations should be drawn too (false there until "more" is pressed).
bool panel_intro(const char* text);

}  // namespace attn::ui
