// One training run stepped in pieces within a time budget (TrainRun), the page's Web Worker side
// of the session's protocol (TrainWorker) and the trainer settings' JSON. Core and nlohmann only:
// the worker's wasm links this and the core; the session (train_session.h) drives it.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../core/train.h"

namespace attn {

double train_clock_ms();  // steady clock, ms

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

}  // namespace attn
