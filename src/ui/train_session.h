// The train view's session: a Trainer stepped in slices between frames (a time budget per frame)
// or in the page's Web Worker (TrainWorker there; the session mirrors its reports),
// its loss and held-out accuracy curves, the probe sentence's attention and prediction, and the √d
// experiment's two runs. Not a panel (no ImGui: panel_train.cpp draws it) and not the trainer.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../core/train.h"

namespace attn {

// What the learner typed in the train view (part of AppInputs: the URL and setState({train}) set
// it). It may be a bad recipe: train_settings() then says which setting and why.
struct TrainForm {
  std::uint64_t seed = 1;
  float lr = TrainSettings{}.lr;  // the default recipe's (train.h)
  int layers = TrainSettings{}.n_layer, heads = TrainSettings{}.n_head, d_model = TrainSettings{}.n_embd;
  bool scale = true;
  int steps = kDefaultTrainSteps;  // the run pauses when it gets here
  // the probe sentence, picked from the corpus: frame, creature, thing, adjective (indices); the
  // default is the lesson's "the animal didn ' t cross the street because it was tired"
  int probe_frame = 0, probe_creature = 0, probe_thing = 0, probe_adjective = 0;
  bool operator==(const TrainForm& o) const;
  bool operator!=(const TrainForm& o) const { return !(*this == o); }
};
constexpr int kMaxTrainSteps = 100000;
// The trainer's settings for the form; throws std::invalid_argument("<setting>: ...") naming the
// form's field (layers, heads, d_model, lr, steps, ...).
TrainSettings train_settings(const TrainForm& form);
nlohmann::json train_form_to_json(const TrainForm& form);
// Applies the keys of a partial {seed, lr, layers, heads, d_model, scale, steps, probe_*} object;
// a value of the wrong type throws std::invalid_argument("train.<key>: ..."). Numbers out of the
// recipe's range are accepted here (the view shows why they cannot train).
void apply_train_form_json(TrainForm& form, const nlohmann::json& partial);

// The √d experiment's arm (train.h's scale_experiment_settings) with the form's seed.
TrainSettings sqrt_d_experiment_settings(std::uint64_t seed, bool scale);

// One training run: a Trainer, the loss of every step and the held-out accuracy every
// eval_every steps. Work is done in pieces sized to the time left: a step's pieces
// (Trainer::step_part: sequences, rows of a weight's gradient, ranges of AdamW) and the accuracy's
// (held-out sentences, on a copy of the weights), at the rate in ms per multiply-add measured so far.
// Training waits for a due evaluation, so each point is the model exactly at that step.
class TrainRun {
 public:
  // The held-out sentences each evaluation reads: all of them (the run's) or each triple once
  // (heldout_one_per_triple: the √d experiment's, where one sentence costs as much as a step of the
  // default recipe).
  enum class HeldOut { All, OnePerTriple };
  void start(const TrainSettings& settings, int eval_every, HeldOut held_out = HeldOut::All);  // throws std::invalid_argument
  bool started() const { return trainer_ != nullptr; }
  // Does work until `deadline_ms` (steady clock, ms) or `until_step`: a due evaluation first, then
  // steps; a piece that would not end by the deadline waits for the next call, but each call does
  // at least one piece. Returns the steps completed.
  // stop_at: also stop once an evaluation reaches this accuracy (the √d experiment's bar; > 1: never).
  int work(double deadline_ms, int until_step, double stop_at = 2);
  // Nothing left to do for that target: no evaluation due, no step under way, and at until_step or
  // past stop_at.
  bool finished(int until_step, double stop_at = 2) const;
  int steps() const { return mirror_ ? mirror_steps_ : trainer_ ? trainer_->steps_done() : 0; }
  bool evaluating() const { return mirror_ ? mirror_evaluating_ : eval_pending_; }
  bool in_step() const { return !mirror_ && trainer_ && trainer_->in_step(); }

  // The same run trained elsewhere (the page's Web Worker runs start() and work() on its side): the
  // same first weights and corpus here, then receive() appends what that side reports and adopts
  // its weights; work() does nothing. trainer().steps_done() is the step of the weights shown,
  // steps() the other side's count (its weights may come less often than its steps).
  void start_mirror(const TrainSettings& settings, int eval_every, HeldOut held_out = HeldOut::All);  // throws
  struct Progress {
    int steps = 0;
    std::vector<float> losses, accuracies;  // since the last report
    std::vector<int> accuracy_steps;
    bool evaluating = false;
    double step_ms = 0;
    int params_step = -1;                   // the step of `params` (none: -1)
    const float* params = nullptr;
    std::size_t param_count = 0;
  };
  void receive(const Progress& progress);   // throws std::invalid_argument for weights of another size
  bool mirror() const { return mirror_; }
  // The worker's report of a run started with start(): what it did since the last report.
  // with_params: the weights too, when they are newer than the last ones sent.
  nlohmann::json report(bool with_params, std::vector<float>* params);
  int id = -1;                               // which run a worker's report is about (set by the session)
  const std::vector<float>& losses() const { return losses_; }
  const std::vector<int>& accuracy_steps() const { return accuracy_steps_; }
  const std::vector<float>& accuracies() const { return accuracies_; }
  // The first evaluated step with accuracy ≥ bar, or -1.
  int first_step_at(double bar) const;
  Trainer& trainer() { return *trainer_; }
  const Trainer& trainer() const { return *trainer_; }
  double step_ms() const { return step_ms_; }  // running mean of one step's time (its pieces summed)

 private:
  void begin_evaluation();
  double evaluate_chunk(double work);  // held-out sentences worth up to `work` (at least one) → the work done
  std::unique_ptr<Trainer> trainer_;
  std::unique_ptr<Gpt2TrainGraph<float>> eval_graph_;  // the weights of the step being evaluated
  std::vector<float> losses_, accuracies_;
  std::vector<int> accuracy_steps_;
  std::vector<std::vector<int>> chunk_;
  std::vector<std::size_t> eval_sentences_;  // indices into the corpus's held-out sentences
  int eval_every_ = 50;
  bool eval_pending_ = false;
  std::size_t eval_next_ = 0;
  int eval_correct_ = 0;
  double step_ms_ = 0, this_step_ms_ = 0;  // running mean of one step; the step under way so far
  // ms per multiply-add: a guess (wasm's SIMD products do ~15 per ns) until measured
  static constexpr double kGuessMsPerWork = 1e-7;
  double ms_per_work_ = kGuessMsPerWork, pooled_ms_ = 0, pooled_work_ = 0;
  void measured(double ms, double work);
  bool mirror_ = false, mirror_evaluating_ = false;
  int mirror_steps_ = 0;
  std::size_t reported_losses_ = 0, reported_accuracies_ = 0;  // report(): what was sent already
  int reported_params_step_ = -1;
};
// The other side of TrainSession::worker: the runs the session started, trained here by the same
// TrainRun (src/worker/train_worker.cpp wraps this for the page's Web Worker; the unit tests wire
// it to a session directly).
class TrainWorker {
 public:
  // One message of the session: {"type": "start", "id", "settings", "eval_every", "held_out": "all"
  // | "triple", "until", "stop_at"?, "params"} | {"type": "until", "id", "until"} | {"type":
  // "stop", "id"}. Throws std::invalid_argument (or nlohmann's exceptions) for a bad one.
  void message(const nlohmann::json& m);
  // Trains until deadline_ms (train_clock_ms), the runs with work left taking turns, each a share
  // of what is left → how many still have work.
  int work(double deadline_ms);
  // Every run's report since the last call (TrainRun::report); the weights of the
  // runs that show their model when `with_params` or they have just finished, one after another
  // in *params (each report's "params_offset", "params_count").
  nlohmann::json reports(bool with_params, std::vector<float>* params);

 private:
  struct Job {
    TrainRun run;
    int until = 0;
    double stop_at = 2;   // > 1: no accuracy bar
    bool params = false;  // the session shows this run's model: its weights go with the reports
  };
  std::map<int, Job> jobs_;
};

nlohmann::json train_settings_to_json(const TrainSettings& s);
TrainSettings train_settings_from_json(const nlohmann::json& j);  // throws std::invalid_argument (validate_train_settings)

// The probe sentence as the view shows it: every head's attention from the position that predicts
// the referent, and the model's next words there.
struct ProbeView {
  std::vector<std::string> words;                      // the sentence up to the predicting position
  int predict_pos = 0;                                 // the last of words
  int creature_pos = 0, thing_pos = 0;                 // where the two nouns are
  std::string creature, thing, answer;                 // the two nouns and the right one
  bool heldout = false;                                // a triple the model never trained on
  std::vector<std::vector<std::vector<float>>> attention;  // [layer][head][key ≤ predict_pos]
  struct Guess {
    std::string word;
    float p = 0;
  };
  std::vector<Guess> top;                              // the 5 likeliest next words
  float p_creature = 0, p_thing = 0;
  int at_step = -1;                                    // the step it was computed at (-1: none)
  int pick_frame = -1, pick_creature = -1, pick_thing = -1, pick_adjective = -1;  // the form's picks it shows
  bool shows(const TrainForm& form) const;             // computed for the form's picks
};

struct TrainSession {
  // Where the runs train: here, in slices between frames (natively; in the page until its Web
  // Worker is ready), or in the page's Web Worker (web/train_worker.js) when the platform sets
  // `worker`: the session then posts it {type: start | until | stop, id, ...} and mirrors the runs
  // from its reports (train_receive). A run keeps the place it was started in.
  std::function<void(const nlohmann::json&)> worker;
  std::string worker_state = "none";  // none | loading | ready | failed: <why> (getState().train.worker)
  int next_id = 0;
  TrainForm form_started;        // the form the current run was started with
  TrainRun run;
  bool running = false;
  std::string error;             // why the last start was refused ("" when it was not)
  std::string message;           // the last action's outcome for the learner ("Now the current model ...")
  ProbeView probe;
  bool probe_stale = false;      // steps were taken since the probe was computed
  double probe_ms = -1;          // when (train_clock_ms) it was computed: while training, 10 times a second
  double steps_per_second = 0;
  double slice_ms = 0;           // training time of the last frame's slice
  double rate_mark_ms = -1;      // steps per second: measured over ≥ 0.5 s windows
  int rate_mark_steps = 0;
  std::string used_model;        // the name the trained model got among the loaded models
  // the √d experiment: runs[0] with the division, runs[1] without
  TrainRun experiment[2];
  bool experiment_running = false;
};

// The slice budget: how much of a frame training may take (frames stay under 16 ms).
constexpr double kTrainSliceMs = 8.0;
constexpr int kTrainEvalEvery = 50;
constexpr double kProbeRefreshMs = 100;  // one forward of the probe sentence: 10 a second is live enough

double train_clock_ms();  // steady clock, ms

// Runs the session for one slice: the run while running (pausing at form.steps), then the
// experiment, within budget_ms together; refreshes the probe when the learner picks another
// sentence, and while training every kProbeRefreshMs (a frame's slice; the page's slices between
// frames leave that to the next frame). Cheap when nothing runs.
void train_frame(TrainSession& session, const TrainForm& form, double budget_ms, bool refresh = true);
// Start (or continue) the run with the form; a bad form sets session.error and returns false.
bool train_start(TrainSession& session, const TrainForm& form);
void train_pause(TrainSession& session);
void train_reset(TrainSession& session);
// A report of the worker about run `id` (TrainRun::report's JSON, its weights apart); reports about
// a run no longer shown (reset, restarted) are dropped. Throws std::invalid_argument for a bad one.
void train_receive(TrainSession& session, const nlohmann::json& report, const float* params, std::size_t count);
void experiment_start(TrainSession& session, const TrainForm& form);
// The probe for the form's picked sentence on the run's current weights.
void refresh_probe(TrainSession& session, const TrainForm& form);
// The corpus whose lists the probe picker offers (its sets are the same for every seed).
const Corpus& train_picker_corpus();
// Whether the form's probe indices name a sentence of the corpus (else: why not).
std::string probe_problem(const Corpus& corpus, const TrainForm& form);

// getState().train: the form, running, steps, loss, accuracy, rates, the probe and the experiment's
// summary (no curves: trainCurves() has them).
nlohmann::json train_state_json(const TrainSession& session, const TrainForm& form);
nlohmann::json train_curves_json(const TrainSession& session);

}  // namespace attn
