// AppState: the one model every panel reads. Inputs (what a learner or a URL or the JS API sets)
// and what the core computed from them. Not a panel: no ImGui here, so it is testable natively.
#pragma once
#include <nlohmann/json.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "../core/attention.h"
#include "../core/attribution.h"
#include "../core/break_experiment.h"
#include "../api/intervention_json.h"
#include "../api/model_files.h"
#include "../core/transformer.h"
#include "../core/model.h"
#include "build_state.h"
#include "check_answers.h"
#include "cost_state.h"
#include "family_views.h"
#include "views.h"
#include "view_numbers.h"
#include "model_run.h"
#include "../train/train_session.h"

namespace attn {

struct AppState;
struct AppInputs;

// The name of the hand-made worked-example model (always there, the default).
constexpr const char* kHandmadeModel = "handmade";
// The name of the model trained at build time (the default recipe, seed 1) that the app ships.
constexpr const char* kBuiltInTrainedModel = "trained (built in)";
// The lesson's other example, for a model that reads both ways: one word, two meanings, told apart only
// by words on either side of it (Compare's second ready pair; "bank" is the query).
constexpr const char* kBankSentence = "I sat on the bank of the river";
constexpr const char* kBankTwinSentence = "I put my money in the bank";

// What a learner can change. Plain values, so it can be copied, compared and serialised. Every
// member is a row of the table of inputs (input_table.cpp): its name, domain, URL use and Reset.
// The Weights view's reading of the chosen head (input weights_show): its weights α; what each key
// sends once its value's size is counted, α_ij · ‖v_j W_O‖ (Kobayashi et al., 2020; the hand-made
// model has no W_O: ‖v_j‖); or the attention rollout through the layers up to the chosen one (Abnar
// and Zuidema, 2020; a loaded model).
enum class WeightsShow { Weights, ValueWeighted, Rollout };
const char* weights_show_name(WeightsShow w);  // "weights" | "value_weighted" | "rollout"

struct AppInputs {
  std::string sentence = kLessonSentence;
  bool cross = false;                // cross-attention: keys and values come from kv_sentence
  std::string kv_sentence = "The tired animal slept under a tree";
  int token = 7;                     // selected query row ("it" in the lesson's sentence)
  bool causal = false;
  bool scale = true;
  float temperature = 1.0f;
  Mistake mistake = Mistake::None;
  bool library_best_only = false;    // library view: a real library reads only the best match
  View view = View::Flow;
  // which model computes the attention: "handmade" (the worked example) or a loaded model's name,
  // and which of its layers and heads every view shows (0-based)
  std::string model = kHandmadeModel;
  int layer = 0, head = 0;
  int step = 0;                      // steps view: which of the 7 steps (0-based)
  // derive view: 3 tokens, d = 2, the lesson's numbers by default
  Matrix derive_q = derive_default_qk(), derive_k = derive_default_qk(), derive_v = derive_default_v();
  int derive_revealed = kDeriveStages;  // how many of the derive stages are shown (predict, then reveal)
  // break view: the saturation experiment's sizes and seed
  int break_d = 512, break_T = 64;
  int break_seed = 0;
  unsigned checklist = 0;            // practice view: ticked "prove it" items, one bit each
  CheckAnswers checks;               // the learner's answers: Derive's predictions, each view's check
  // compare view: the sentence beside `sentence` (the lesson's twin by default), or with
  // compare_tokens a second query token of the same sentence
  std::string compare_sentence = kLessonTwinSentence;
  bool compare_tokens = false;
  int compare_token = 1;             // "animal" in the lesson's sentence
  // what computes the app's large problems (the cost view): "auto" or one of kBackendNames
  std::string backend = "auto";
  int cost_T = 2048;                 // cost view: T of the whole weight matrix it shows (d = 64)
  TrainForm train;                   // train view: the recipe and the probe sentence as typed
  // presentation (set by the embedding page or the learner's system settings)
  bool embed = false;                // no surrounding chrome: a compact control strip and the view(s)
  unsigned embed_views = 0;          // which views an embed offers, one bit per View (0: all)
  bool light_theme = false;
  bool reduced_motion = false;       // no animations (prefers-reduced-motion)
  int tour_step = -1;                // the guided tour's stop (index into tour_stops()), -1: no tour
  bool advanced = false;             // the controls show developer internals (backend, GPU, state JSON)
  bool present = false;              // presentation mode: large type, no controls column, explanations on screen
  bool heads_sweep = false;          // Heads view: switch every head off alone, a few per frame (false: stop)
  enum class PatchSweep { None, Heads, Positions } patch_sweep = PatchSweep::None;  // Compare: patch each from B alone
  // Asking the model why (0-based, as the layer and head inputs): heads switched off, links cut
  // (head −1: every head of the layer), a patch from a text of as many tokens. A loaded model takes
  // all of them; the hand-made model (one head, no W_O, no next-token head) takes cuts only.
  WeightsShow weights_show = WeightsShow::Weights;
  std::vector<HeadRef> ablate;
  AblateKind ablate_kind = AblateKind::Zero;
  std::vector<LinkCut> cuts;
  PatchSpec patch;

  static constexpr int kDeriveStages = 6;  // Q·Kᵀ, ÷√d, exp, row sums, weights, weighted sums
  static Matrix derive_default_qk();
  static Matrix derive_default_v();
  bool operator==(const AppInputs& o) const;
  bool operator!=(const AppInputs& o) const { return !(*this == o); }
};

// [SECTION] Backends: which one computes the app's large problems

// The names AppInputs::backend takes besides "auto": the CPU kernels and the WebGL2 passes.
constexpr const char* kBackendNames[] = {"scalar", "eigen", "simd", "webgl"};
// With "auto", from this many tokens a hardware GPU computes: below it the SIMD kernel is faster
// than uploading, five passes and reading back.
constexpr int kGpuFromT = 512;

// What the app knows of its GPU path (filled by the app, which owns the GL context).
struct GpuFacts {
  bool available = false;      // the WebGL2 / GL 3.3 passes and float render targets work
  bool software = false;       // the GL names a software rasteriser (SwiftShader, llvmpipe): slower than the CPU
  std::string renderer;        // e.g. "ANGLE (Google, Vulkan 1.3.0 (SwiftShader Device ...))"; may be masked
  std::string unavailable_reason;
  // One problem of speed_check_T tokens timed at start on the GPU and on the SIMD kernel (ms);
  // speed_checked false when it was not run or failed. Only a GPU measured faster is trusted.
  bool speed_checked = false;
  int speed_check_T = 0;
  double gpu_ms = 0, cpu_ms = 0;
};

struct BackendChoice {
  std::string name;    // what computes: "scalar", "eigen", "simd" or "webgl"
  std::string reason;  // one line for the learner: why this one
};

// The backend for a problem of T tokens: the requested one, or for "auto" the GPU from kGpuFromT
// tokens when it was measured faster than the CPU (never on its name alone), else the SIMD kernel. "webgl" without a GPU falls back to simd.
BackendChoice choose_backend(const std::string& requested, int T, const GpuFacts& gpu);

// What the core computed for the current inputs.
struct AppModel {
  // The sentence the queries come from. With a loaded model: its tokens as the learner reads them
  // ("·it"), and x = the chosen layer's normalised input (T, n_embd).
  EmbeddedSentence queries;
  EmbeddedSentence keys;     // the sentence the keys and values come from (= queries unless cross)
  std::vector<int> token_ids;  // a loaded model's token ids (empty for the hand-made model)
  // Every layer and head of the current model for the sentence (hand-made: 1 layer, 1 head, no
  // probabilities). Shared: recomputed only when the model or the text changes.
  std::shared_ptr<const ModelTrace> forward;
  std::shared_ptr<const Transformer> forward_model;  // which loaded model computed `forward` (null: hand-made)
  // A loaded model's answer for these inputs (api/model_views.h, computed here or in its worker): the runs,
  // the chosen layer, predictions, effect, attribution, readings and Compare's B below are its parts.
  std::shared_ptr<const ModelViews> answer;
  // With interventions, `forward` is the changed run and `base_forward` the model as it is (the same
  // pointer without); `patch_forward` the run of inputs.patch.from that a patch copies from.
  std::shared_ptr<const ModelTrace> base_forward, patch_forward;
  EditEffect effect;
  // inputs.weights_show's matrix for the chosen head ((Tq, Tk); null for the weights themselves), and
  // for the value-weighted reading the size of what each key sends.
  using Influence = attn::Influence;
  std::shared_ptr<const Influence> influence;
  // The Heads view's "what each head adds to the answer": the direct logit attribution of the shown
  // run at the selected token, for the unchanged run's likeliest next token (null elsewhere, and where
  // a patch replaced the stream at that position: its parts before the patch are not in the sum).
  std::shared_ptr<const LogitAttribution> attribution;
  std::string edit_note;  // interventions a new model or text no longer fits, dropped ("" when none)
  // The next tokens after the selected one of the model as it is (without the interventions).
  const std::vector<NextToken>& unchanged_next() const { return effect.shown ? effect.base_next : next; }
  unsigned forward_revision = 0;  // the state revision `forward` was computed for (its pictures' version)
  // The chosen layer (inputs.layer) of `forward` in full (q, k, v at every step): recomputed when the
  // layer or the forward changes; null for the hand-made model.
  std::shared_ptr<const LayerDetail> layer;
  // A loaded model's likeliest tokens at predict_position, best first: the LM head runs on that row
  // only, when the position or the forward changes. A decoder's: the next token after the selected one
  // (inputs.token); an encoder's (no causal mask): the words its masked-LM head fits at a mask token —
  // the selected token when it is one, else the text's first — and none when the text has no mask.
  std::vector<NextToken> next;
  int predict_position = -1;  // where `next` is about; −1: nowhere (no LM head, or an encoder's text without a mask)
  AttentionTrace trace;      // the chosen layer and head, as the lesson's full trace
  AttentionTrace without_mistake;  // the same with no mistake (the Mistakes view's "correct")
  AttentionTrace derive;      // the derive view's 3-token example
  BreakResult saturation;     // the break view's experiment for (break_d, break_T, break_seed)
  BreakRatioRange saturation_range;  // its gradient factor over seeds 0-7 at (break_d, break_T)
  // The compare view's second sentence through the same model, layer, head and switches (computed
  // only while that view is open and compares sentences; else empty).
  EmbeddedSentence compare_queries;
  AttentionTrace compare;
  std::shared_ptr<const ModelTrace> compare_forward;  // a loaded model's forward of compare_sentence
  // ... with the learner's switched-off heads and cut links (the same pointer without; a patch is the
  // first sentence's alone), and why they were left out of it when they do not fit it ("" when they do)
  std::shared_ptr<const ModelTrace> compare_edited;
  std::string compare_edit_note;
  TwinAsk compare_ask;  // what the model answers in both (twins of as many tokens; core/attribution.h)
  // What the views show of the loaded model's family (positions, K/V groups and cache, window, cap,
  // q/k norm) for the chosen layer, head and token; loaded == false for the hand-made model.
  std::shared_ptr<const FamilyViews> family = std::make_shared<const FamilyViews>();
  AroundHeadView around;  // the chosen head's layer around it at the selected token (loaded models)
};

// A model download or file read in progress, or offered (?hub=), as the model picker shows it.
// An access token for gated repositories is never here: the page keeps it (web/explainer.js).
struct KeptModel {               // a repository whose files the browser keeps (Cache Storage)
  std::string repo, revision;
  double bytes = 0;              // every file kept, in bytes
};
struct ModelLoadStatus {
  bool active = false;          // bytes are arriving
  std::string label;            // what is loading ("Qwen/Qwen3-0.6B · model-00001-of-00002.safetensors")
  double bytes_done = 0, bytes_total = 0;  // every weights file together; bytes_total 0: unknown yet
  std::string file;             // the weights file arriving now ("" before the weights)
  double file_bytes_done = 0, file_bytes_total = 0;  // that file alone (total 0: unknown)
  std::string error;            // why the last load failed ("" when it did not)
  std::string offered_hub;      // ?hub=owner/name: a repository offered, one click to load
  double offered_bytes = -1;    // its download size once known (-1: not yet)
  std::vector<KeptModel> kept;  // what the browser keeps, to load again without a download
  // Built-in models the page fetches when one is chosen (the trained model, on the web; natively it
  // is loaded at start). Listed in the picker until loaded.
  std::vector<std::string> on_request;
};

// The fallback fonts for scripts the UI font lacks (src/app/fonts.cpp fills it; getState().fonts
// shows it): which files were asked for and which arrived, and which code points of the text on
// screen are drawn as a "U+XXXX" box because no font has them (or not yet).
struct FontFallbackState {
  enum class Status { Idle, Requested, Loaded, Failed };
  std::vector<Status> groups;               // one per fallback file, in the table's order
  std::vector<std::uint32_t> wanted;        // shown code points the UI font lacks (sorted, only grows)
  std::vector<std::uint32_t> placeholders;  // of those, drawn as "U+XXXX" in the current atlas
  int in_atlas = 0;                         // of those, drawn with a fallback font's glyph
  unsigned scanned_revision = ~0u;          // the state revision whose text was read last
};

// A sweep over the current model, a few cells per frame (sweeps_frame) so the page keeps drawing;
// another model, text or position starts it again, and stopping keeps the cells done (turning it on
// again continues). The Heads view's (inputs.heads_sweep): every head switched off alone (zeroed),
// each cell Δ log p of the likeliest next token after the selected position. Compare's
// (inputs.patch_sweep): every head's output, or the stream entering every layer at every position,
// copied alone from the second sentence's run into the first's, each cell the share of the two
// sentences' difference in that log p it restores.
enum class SweepOver { Ablate, PatchHeads, PatchPositions };
struct SweepRun {
  SweepOver over = SweepOver::Ablate;
  std::shared_ptr<const Transformer> model;
  std::shared_ptr<const ModelTrace> base;    // the run it changes (no LM head rows kept)
  std::shared_ptr<const ModelTrace> source;  // patching: the run it copies from
  int position = -1, target = -1;
  Sweep sweep;                               // values (L, H) or (L, T), NaN until run; empty before the first cell
  std::string where;                         // where its cells are computed: "worker" | "page" ("" before the first)
  unsigned worker_seq = 0;                   // the request the model's worker runs it under (0: none)
  bool page_only = false;                    // the worker could not run it: the page sweeps it
  int total() const {
    if (!model) return 0;
    return model->config.n_layer * (over == SweepOver::PatchPositions ? static_cast<int>(base->token_ids.size()) : model->config.n_head);
  }
  bool finished() const { return model && sweep.done >= total(); }
};

struct AppState {
  AppInputs inputs;          // what is on screen now (always the last good inputs)
  AppModel model;            // computed from inputs
  std::vector<LoadedModel> models;  // every model loaded so far (not the hand-made one)
  ModelLoadStatus loading;
  std::string error;         // why the last change was refused ("" when it was fine)
  std::string error_key;     // which input it was about ("sentence", "temperature", ...)
  unsigned revision = 0;     // +1 for every accepted change (panels animate on it)
  double changed_at = -1e9;  // time of the last accepted change, seconds (for the flow animation)
  // The train view's run (a trainer and its curves): not an input, it grows between frames.
  // Shared so the state stays copyable; one session per app.
  std::shared_ptr<TrainSession> train = std::make_shared<TrainSession>();
  FontFallbackState fonts;
  SweepRun heads_sweep, patch_sweep;
  // The Cost and Build views' numbers, brought up to date while their view is open (update_build_state,
  // cost_measure_step, update_cost_matrix), read by the views and getState.
  CostState cost;
  BuildState build;
  ViewNumbers views;         // the numbers the views show beyond the core's traces (view_numbers.h), per revision
  ModelRun model_run;        // where the loaded model's forward runs, what it computes now and last took (model_run.h)
};

// Applies new inputs: recomputes the model; if the core refuses them (empty sentence, ...)
// the state keeps its last good inputs and model and records the error. Returns true if accepted.
// `may_post`: a loaded model's answer that is not at hand goes to its worker (model_run_post) and the
// change waits for it (apply_inputs_in_background's way); else it is computed here.
bool apply_inputs(AppState& state, const AppInputs& next, double now, bool may_post = false);

// Runs the Heads view's sweep on while `more()` says there is time left in this frame (at least one
// cell per call); nothing when inputs.heads_sweep is off or the sweep is done.
void sweeps_frame(AppState& state, const std::function<bool()>& more);
constexpr double kSweepSliceMs = 8.0;  // the sweep's share of a frame (the page's loop)

// Registers a loaded model (replacing one of the same name); it does not switch to it.
// Where a loaded model's predictions are asked for with the selected token: a decoder's after it, an
// encoder's at a mask token (the selected one, else the text's first); −1 where there is none.
int predict_position(const LoadedModel& loaded, const std::vector<int>& ids, int selected);
void add_model(AppState& state, LoadedModel model);
// The loaded model of that name, or nullptr (also for "handmade").
const LoadedModel* find_model(const AppState& state, const std::string& name);
// The loaded model that computes now, or nullptr for the hand-made worked example.
const LoadedModel* current_loaded_model(const AppState& state);
// True when a loaded model computes the views; texts about the hand-made model's lexicon
// and features must not show then.
bool real_model(const AppState& state);
// What the views show, whatever the switches say: a loaded decoder always masks and never reads a second
// sentence, so for it these are on and off respectively.
bool causal_shown(const AppState& state);
bool cross_shown(const AppState& state);
// "layer 3 · head 7 of distilgpt2" (1-based, as a learner counts), or "the hand-made model".
std::string head_caption(const AppState& state);
// The current model's shape for the pickers: {family, layers, heads, d_model, vocab_size, params}.
nlohmann::json current_model_info(const AppState& state);

// The initial state: the lesson's sentence, "it" selected, computed.
AppState make_initial_state();

// The public JSON of the state: inputs, and the computed results (tokens, weights, output, ...).
nlohmann::json state_to_json(const AppState& state);
// getState().model_run: {pending, where, last_where, last_ms, last_T, incremental_from, full_ms, full_T, views_ms, dropped,
// note, error[, pending_sentence, weights ("page" | "worker": where the shown model's weights are), full_because]} (model_run.h).
nlohmann::json model_run_json(const AppState& state);
// Its light part: the inputs, the token lists, the error and revision; no computed matrices.
nlohmann::json inputs_to_json(const AppState& state);

// Applies a partial JSON object of inputs (the keys of state_to_json's inputs). Unknown keys and
// invalid values throw std::invalid_argument naming the key; nothing is changed then.
// "token" may be a word of the sentence or an index.
void apply_state_json(AppState& state, const nlohmann::json& partial, double now);

// The weight matrix as CSV (a header row of key tokens, one row per query token) for export.
std::string weights_csv(const AppState& state);

// The query tokens `sentence` has under `model` (the hand-made lexicon or a loaded tokenizer);
// throws std::invalid_argument for text the model cannot read.
EmbeddedSentence query_tokens(const AppState& state, const std::string& model, const std::string& sentence);

// The token ids a loaded model reads for `sentence` (a BOS where it has one); throws std::invalid_argument
// for an empty text or one past what the model reads here.
std::vector<int> model_token_ids(const LoadedModel& m, const std::string& sentence);

// Index of the first token whose lowercased text is `word` (case-insensitive), or -1.
int find_token(const EmbeddedSentence& sentence, const std::string& word);

}  // namespace attn
