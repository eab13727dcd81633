// One training run stepped in pieces within a time budget (see train_run.h), the worker's side of
// the session's protocol, and the trainer settings' JSON. Core and nlohmann only: the page's Web
// Worker links this and the core, nothing of the app.
#include "train_run.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace attn {

using nlohmann::json;

double train_clock_ms() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

// ---- one run ------------------------------------------------------------------------------------

void TrainRun::start(const TrainSettings& settings, int eval_every, HeldOut held_out) {
  auto trainer = std::make_unique<Trainer>();
  trainer->init(settings);  // throws for a bad recipe: the old run stays
  trainer_ = std::move(trainer);
  const Corpus& corpus = trainer_->corpus();
  eval_sentences_.clear();
  if (held_out == HeldOut::OnePerTriple) eval_sentences_ = heldout_one_per_triple(corpus);
  else for (std::size_t i = 0; i < corpus.heldout.size(); ++i) eval_sentences_.push_back(i);
  eval_graph_ = std::make_unique<Gpt2TrainGraph<float>>(trainer_->model_config(), settings.batch, settings.scale);
  losses_.clear(), accuracies_.clear(), accuracy_steps_.clear();
  eval_every_ = eval_every;
  step_ms_ = this_step_ms_ = pooled_ms_ = pooled_work_ = 0;
  ms_per_work_ = kGuessMsPerWork;
  mirror_ = mirror_evaluating_ = false, mirror_steps_ = 0;
  reported_losses_ = reported_accuracies_ = 0, reported_params_step_ = -1;
  begin_evaluation();  // step 0: the untrained model's accuracy
}

void TrainRun::begin_evaluation() {
  eval_graph_->params() = trainer_->parameters();  // the same layout: a copy, no allocation
  eval_pending_ = true;
  eval_next_ = 0;
  eval_correct_ = 0;
}

// Held-out sentences: is the top next word at the predicting position the referent? (Trainer::
// heldout_accuracy's, in pieces: each sentence's forward is its own, so the numbers are the same.)
double TrainRun::evaluate_chunk(double work) {
  const Corpus& corpus = trainer_->corpus();
  const auto sentence = [&](std::size_t k) -> const CorpusSentence& { return corpus.heldout[eval_sentences_[k]]; };
  const std::size_t total = eval_sentences_.size();
  const std::size_t most = std::min(total, eval_next_ + static_cast<std::size_t>(trainer_->settings().batch));
  std::size_t end = eval_next_;
  double done = 0;
  while (end < most) {
    const double cost = eval_graph_->forward_work(static_cast<int>(sentence(end).ids.size()));
    if (end > eval_next_ && done + cost > work) break;
    done += cost, ++end;
  }
  chunk_.clear();
  for (std::size_t k = eval_next_; k < end; ++k) chunk_.push_back(sentence(k).ids);
  if (!chunk_.empty()) eval_graph_->forward(chunk_);
  const int V = static_cast<int>(corpus.vocab.size());
  for (std::size_t k = eval_next_; k < end; ++k)
    eval_correct_ += predicts_referent(eval_graph_->probs(static_cast<int>(k - eval_next_), sentence(k).predict_pos()), V, sentence(k));
  eval_next_ = end;
  if (eval_next_ >= total) {
    eval_pending_ = false;
    accuracy_steps_.push_back(trainer_->steps_done());
    accuracies_.push_back(total == 0 ? 0.0f : static_cast<float>(eval_correct_) / static_cast<float>(total));
  }
  return done;
}

// The rate in ms per multiply-add: a running mean over pools of pieces of at least 0.5 ms together
// (a browser's clock may tick in 0.1 ms: one small piece alone can read as 0 ms).
void TrainRun::measured(double ms, double work) {
  pooled_ms_ += ms, pooled_work_ += work;
  if (pooled_ms_ < 0.5 || pooled_work_ <= 0) return;
  ms_per_work_ = 0.7 * ms_per_work_ + 0.3 * pooled_ms_ / pooled_work_;
  pooled_ms_ = pooled_work_ = 0;
}

bool TrainRun::finished(int until_step, double stop_at) const {
  return !evaluating() && !in_step() && (steps() >= until_step || (!accuracies_.empty() && accuracies_.back() >= stop_at));
}

int TrainRun::work(double deadline_ms, int until_step, double stop_at) {
  if (!trainer_ || mirror_) return 0;
  int taken = 0;
  for (bool first = true;; first = false) {
    if (finished(until_step, stop_at)) break;
    const double smallest =
        !eval_pending_ ? trainer_->next_part_work()
        : eval_next_ < eval_sentences_.size()
            ? eval_graph_->forward_work(static_cast<int>(trainer_->corpus().heldout[eval_sentences_[eval_next_]].ids.size()))
            : 0;
    const double fits = (deadline_ms - train_clock_ms()) / ms_per_work_;  // the work that ends by the deadline
    if (!first && fits < smallest) break;
    const double budget = std::max(fits, smallest), t0 = train_clock_ms();
    if (eval_pending_) {
      const double done = evaluate_chunk(budget);
      measured(train_clock_ms() - t0, done);
      continue;
    }
    const Trainer::StepPart part = trainer_->step_part(budget);
    const double ms = train_clock_ms() - t0;
    measured(ms, part.work);
    this_step_ms_ += ms;
    if (!part.done) continue;
    step_ms_ = step_ms_ == 0 ? this_step_ms_ : 0.8 * step_ms_ + 0.2 * this_step_ms_;
    this_step_ms_ = 0;
    losses_.push_back(part.loss);
    ++taken;
    if (trainer_->steps_done() % eval_every_ == 0 || trainer_->steps_done() == until_step) begin_evaluation();
  }
  return taken;
}

void TrainRun::start_mirror(const TrainSettings& settings, int eval_every, HeldOut held_out) {
  start(settings, eval_every, held_out);  // the same corpus and first weights (and the same refusals)
  eval_graph_.reset();
  mirror_ = true, mirror_evaluating_ = true, mirror_steps_ = 0;  // the worker's first report has step 0's check
}

void TrainRun::receive(const Progress& p) {
  if (!mirror_) throw std::logic_error("train: receive() on a run trained here");
  if (p.params && p.params_step >= 0) trainer_->adopt(p.params_step, p.params, p.param_count);
  losses_.insert(losses_.end(), p.losses.begin(), p.losses.end());
  accuracy_steps_.insert(accuracy_steps_.end(), p.accuracy_steps.begin(), p.accuracy_steps.end());
  accuracies_.insert(accuracies_.end(), p.accuracies.begin(), p.accuracies.end());
  mirror_steps_ = p.steps, mirror_evaluating_ = p.evaluating, step_ms_ = p.step_ms;
}

json TrainRun::report(bool with_params, std::vector<float>* params) {
  json j = {{"id", id}, {"steps", steps()}, {"evaluating", evaluating()}, {"step_ms", step_ms_},
            {"losses", std::vector<float>(losses_.begin() + static_cast<std::ptrdiff_t>(reported_losses_), losses_.end())},
            {"accuracy_steps", std::vector<int>(accuracy_steps_.begin() + static_cast<std::ptrdiff_t>(reported_accuracies_), accuracy_steps_.end())},
            {"accuracies", std::vector<float>(accuracies_.begin() + static_cast<std::ptrdiff_t>(reported_accuracies_), accuracies_.end())},
            {"params_step", -1}};
  reported_losses_ = losses_.size(), reported_accuracies_ = accuracies_.size();
  if (with_params && trainer_ && trainer_->steps_done() != reported_params_step_) {
    *params = trainer_->parameters();  // the last whole step's (a step under way changes them only at its end)
    reported_params_step_ = trainer_->steps_done();
    j["params_step"] = reported_params_step_;
  }
  return j;
}

json train_settings_to_json(const TrainSettings& s) {
  return {{"seed", s.seed}, {"n_layer", s.n_layer}, {"n_head", s.n_head}, {"n_embd", s.n_embd}, {"batch", s.batch},
          {"lr", s.lr}, {"weight_decay", s.weight_decay}, {"beta1", s.beta1}, {"beta2", s.beta2}, {"adam_eps", s.adam_eps},
          {"grad_clip", s.grad_clip}, {"scale", s.scale}, {"answer_only", s.answer_only}};
}

TrainSettings train_settings_from_json(const json& j) {
  TrainSettings s;
  try {
    s.seed = j.at("seed").get<std::uint64_t>();
    s.n_layer = j.at("n_layer").get<int>(), s.n_head = j.at("n_head").get<int>(), s.n_embd = j.at("n_embd").get<int>();
    s.batch = j.at("batch").get<int>();
    s.lr = j.at("lr").get<float>(), s.weight_decay = j.at("weight_decay").get<float>();
    s.beta1 = j.at("beta1").get<float>(), s.beta2 = j.at("beta2").get<float>(), s.adam_eps = j.at("adam_eps").get<float>();
    s.grad_clip = j.at("grad_clip").get<float>();
    s.scale = j.at("scale").get<bool>(), s.answer_only = j.at("answer_only").get<bool>();
  } catch (const json::exception& e) {
    throw std::invalid_argument(std::string("train settings: ") + e.what());
  }
  validate_train_settings(s);
  return s;
}

void TrainWorker::message(const json& m) {
  const std::string type = m.at("type").get<std::string>();
  const int id = m.at("id").get<int>();
  if (type == "start") {
    Job job;
    job.run.start(train_settings_from_json(m.at("settings")), m.at("eval_every").get<int>(),
                  m.at("held_out").get<std::string>() == "triple" ? TrainRun::HeldOut::OnePerTriple : TrainRun::HeldOut::All);
    job.run.id = id;
    job.until = m.at("until").get<int>();
    job.stop_at = m.value("stop_at", 2.0);
    job.params = m.at("params").get<bool>();
    jobs_[id] = std::move(job);
  } else if (type == "until") {
    const auto it = jobs_.find(id);
    if (it != jobs_.end()) it->second.until = m.at("until").get<int>();
  } else if (type == "stop") {
    jobs_.erase(id);
  } else {
    throw std::invalid_argument("train worker: unknown message type \"" + type + "\"");
  }
}

int TrainWorker::work(double deadline_ms) {
  std::vector<Job*> busy;
  for (auto& entry : jobs_)
    if (!entry.second.run.finished(entry.second.until, entry.second.stop_at)) busy.push_back(&entry.second);
  for (std::size_t i = 0; i < busy.size(); ++i) {
    const double left = deadline_ms - train_clock_ms();
    busy[i]->run.work(train_clock_ms() + std::max(0.0, left / static_cast<double>(busy.size() - i)), busy[i]->until, busy[i]->stop_at);
  }
  int still = 0;
  for (const Job* job : busy) still += !job->run.finished(job->until, job->stop_at);
  return still;
}

json TrainWorker::reports(bool with_params, std::vector<float>* params) {
  json out = json::array();
  params->clear();
  std::vector<float> weights;
  for (auto& entry : jobs_) {
    Job& job = entry.second;
    const bool finished = job.run.finished(job.until, job.stop_at);
    json r = job.run.report(job.params && (with_params || finished), &weights);
    if (r.at("params_step").get<int>() >= 0) {
      r["params_offset"] = params->size();
      r["params_count"] = weights.size();
      params->insert(params->end(), weights.begin(), weights.end());
    }
    out.push_back(std::move(r));
  }
  return out;
}

int TrainRun::first_step_at(double bar) const {
  for (std::size_t i = 0; i < accuracies_.size(); ++i)
    if (accuracies_[i] >= bar) return accuracy_steps_[i];
  return -1;
}

// ---- the session --------------------------------------------------------------------------------

}  // namespace attn
