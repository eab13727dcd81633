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

#include "../core/attribution.h"
#include "../core/train.h"
#include "train_run.h"

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
  // The model asked, not its weights (once a run has started; while it trains only where that takes a
  // few layer runs, kAskReruns): the probe and its twin, the same sentence with the adjective's twin (whose
  // referent is the other noun), at the predicting position. asks[layer]: A the probe, B the twin,
  // measured logit(thing) − logit(creature) (TwinAsk); ratio[layer][head]: the head's weight on the
  // creature over its weight on the thing, in the probe and in the twin.
  std::string adjective, twin_adjective, twin_answer;  // the probe's adjective, its twin's, the twin's referent
  std::vector<TwinAsk> asks;
  std::vector<std::vector<float>> ratio, twin_ratio;
  std::vector<std::string> vocab_words;  // the corpus's words by id (the asks' token ids), with the asks
  int pick_frame = -1, pick_creature = -1, pick_thing = -1, pick_adjective = -1;  // the form's picks it shows
  bool shows(const TrainForm& form) const;             // computed for the form's picks
};

struct TrainSession {
  // Where the runs train: here, in slices between frames (natively; in the page until its Web
  // Worker is ready), or in the page's Web Worker (web/train_worker.js) when the platform sets
  // `worker`: the session then posts it {type: start | until | stop, id, ...} and mirrors the runs
  // from its reports (train_receive). A run keeps the place it was started in.
  std::function<void(const nlohmann::json&)> worker;
  // The Web Worker's state, set by the platform (getState().train.worker: "none" | "loading" |
  // "ready" | "failed: <why>").
  enum class Worker { None, Loading, Ready, Failed };
  Worker worker_state = Worker::None;
  std::string worker_failure;    // why, when Failed
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
// What the probe's asks say, line by line (the train view draws them; getState's probe.ask.lines):
// each sentence's answer, the measured logit difference and its parts, per head its ratio of weights,
// its direct share and its answer switched off, which head's switch flips an answer, and why in
// layer 1 no head can change which noun it prefers. Empty when nothing was asked.
std::vector<std::string> probe_ask_lines(const ProbeView& probe);
// The corpus whose lists the probe picker offers (its sets are the same for every seed).
const Corpus& train_picker_corpus();
// Whether the form's probe indices name a sentence of the corpus (else: why not).
std::string probe_problem(const Corpus& corpus, const TrainForm& form);

// getState().train: the form, running, steps, loss, accuracy, rates, the probe and the experiment's
// summary (no curves: trainCurves() has them).
nlohmann::json train_state_json(const TrainSession& session, const TrainForm& form);
nlohmann::json train_curves_json(const TrainSession& session);

}  // namespace attn
