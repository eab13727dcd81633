// The train view's session without a window: slices give the same run as the trainer stepped in
// one go, the chunked held-out accuracy equals Trainer::evaluate's, bad recipes name the setting,
// and the trained model's folder bytes load back through the one loader with the same predictions.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "../../src/api/model_files.h"
#include "../../src/api/trained_model_bytes.h"
#include "../../src/state/app_state.h"

using namespace attn;

namespace {
TrainForm small_form(int steps) {
  TrainForm f;
  f.seed = 3;
  f.steps = steps;
  return f;
}
// Runs the session to its step target in slices of `budget_ms`.
void run_to_end(TrainSession& s, const TrainForm& f, double budget_ms) {
  REQUIRE(train_start(s, f));
  for (int frame = 0; frame < 100000 && s.running; ++frame) train_frame(s, f, budget_ms);
  REQUIRE_FALSE(s.running);
}
}  // namespace

TEST_CASE("train session: slices reproduce the trainer stepped in one go, accuracy as Trainer::evaluate") {
  const int steps = 50;  // a multiple of kTrainEvalEvery: the last point is an evaluation
  const TrainForm form = small_form(steps);
  TrainSession s;
  run_to_end(s, form, 0.5);  // tiny slices: evaluation is spread over many frames
  Trainer reference;
  reference.init(train_settings(form));
  float last = 0;
  for (int i = 0; i < steps; ++i) last = reference.step();
  CHECK(s.run.steps() == steps);
  REQUIRE(s.run.losses().size() == static_cast<std::size_t>(steps));
  CHECK(s.run.losses().back() == last);  // same floats: the same code on the same batches
  REQUIRE(s.run.accuracy_steps().size() == 2);  // step 0 and step 50
  CHECK(s.run.accuracy_steps().front() == 0);
  CHECK(s.run.accuracy_steps().back() == steps);
  CHECK(s.run.accuracies().back() == static_cast<float>(reference.evaluate().accuracy));  // the same sentences right
  // Continue: a raised target goes on from step 50 instead of starting over.
  TrainForm more = form;
  more.steps = steps + 5;
  run_to_end(s, more, 1000);
  CHECK(s.run.steps() == steps + 5);
  CHECK(s.run.losses().size() == static_cast<std::size_t>(steps + 5));
}

TEST_CASE("train session: a run checked on each held-out triple once reads Trainer::heldout_accuracy of that sample") {
  const TrainForm form = small_form(20);
  TrainRun run;
  run.start(train_settings(form), 10, TrainRun::HeldOut::OnePerTriple);
  while (run.steps() < 20 || run.evaluating()) run.work(train_clock_ms() + 0.3, 20);  // small pieces
  Trainer reference;
  reference.init(train_settings(form));
  const std::vector<std::size_t> sample = heldout_one_per_triple(reference.corpus());
  std::vector<std::size_t> all(reference.corpus().heldout.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  CHECK(reference.heldout_accuracy(all) == reference.evaluate().accuracy);  // one rule for every accuracy
  std::vector<float> expected = {static_cast<float>(reference.heldout_accuracy(sample))};
  for (int i = 0; i < 20; ++i) {
    reference.step();
    if ((i + 1) % 10 == 0) expected.push_back(static_cast<float>(reference.heldout_accuracy(sample)));
  }
  CHECK(run.accuracy_steps() == std::vector<int>{0, 10, 20});
  CHECK(run.accuracies() == expected);
}

namespace {
// A session whose runs train in a TrainWorker (as the page's Web Worker does), the messages and
// reports carried by hand between the two, `turns` times or until the run stops.
struct WorkerLink {
  TrainWorker worker;
  std::vector<nlohmann::json> inbox;
  std::vector<float> params;
  int turn = 0;
  explicit WorkerLink(TrainSession& s) {
    s.worker = [this](const nlohmann::json& m) { inbox.push_back(m); };
  }
  void deliver() {
    for (const auto& m : inbox) worker.message(m);
    inbox.clear();
  }
  // As web/train_worker.js: turns while the worker has work (its last report brings the weights).
  void run(TrainSession& s, const TrainForm& f, int turns = 1000000) {
    int busy = 0;
    for (int i = 0; i < turns && (s.running || !inbox.empty() || busy > 0); ++i, ++turn) {
      deliver();
      busy = worker.work(train_clock_ms() + 0.3);
      for (const auto& r : worker.reports(turn % 7 == 0, &params))
        train_receive(s, r, params.data() + r.value("params_offset", std::size_t{0}), r.value("params_count", std::size_t{0}));
      train_frame(s, f, 1);
    }
  }
};
}  // namespace

TEST_CASE("train session: a run trained in a TrainWorker (the page's Web Worker) shows what the same run trained here shows") {
  TrainForm form = small_form(50);
  TrainSession local, s;
  WorkerLink link(s);
  run_to_end(local, form, 1000);
  REQUIRE(train_start(s, form));
  CHECK(s.run.mirror());
  link.run(s, form);
  REQUIRE_FALSE(s.running);
  CHECK(s.run.steps() == 50);
  CHECK(s.run.losses() == local.run.losses());  // the same code on the same batches: the same bits
  CHECK(s.run.accuracy_steps() == local.run.accuracy_steps());
  CHECK(s.run.accuracies() == local.run.accuracies());
  CHECK(s.run.trainer().steps_done() == 50);  // the last report brought the last step's weights
  CHECK(s.run.trainer().parameters() == local.run.trainer().parameters());
  CHECK(s.probe.at_step == 50);
  CHECK(s.probe.p_creature == local.probe.p_creature);
  CHECK_THROWS_AS(s.run.trainer().step(), std::logic_error);  // a mirror never steps itself

  // Paused mid-run, the worker ends the step under way and sends its weights; Continue goes on.
  form.steps = 80;
  REQUIRE(train_start(s, form));
  while (s.run.steps() < 55) link.run(s, form, 1);
  train_pause(s);
  link.run(s, form);  // until the worker has ended the step under way
  CHECK_FALSE(s.running);
  CHECK(s.run.steps() > 50);
  CHECK(s.run.steps() < 80);
  CHECK(s.run.trainer().steps_done() == s.run.steps());
  REQUIRE(train_start(s, form));
  link.run(s, form);
  run_to_end(local, form, 1000);
  CHECK(s.run.losses() == local.run.losses());
  CHECK(s.run.trainer().parameters() == local.run.trainer().parameters());

  // Another recipe starts afresh in the worker and stops the old run there.
  TrainForm other = form;
  other.seed = 4;
  other.steps = 10;
  REQUIRE(train_start(s, other));
  link.run(s, other);
  std::vector<float> weights;
  CHECK(link.worker.reports(false, &weights).size() == 1);  // the seed-3 run is gone
  CHECK(s.run.steps() == 10);

  // Reset stops the worker's run; a late report about it changes nothing.
  const int old_id = s.run.id;
  train_reset(s);
  link.deliver();
  std::vector<float> none;
  CHECK(link.worker.reports(true, &none).empty());
  train_receive(s, {{"id", old_id}, {"steps", 99}, {"losses", {1.0}}, {"accuracy_steps", nlohmann::json::array()},
                    {"accuracies", nlohmann::json::array()}, {"evaluating", false}, {"step_ms", 1.0}, {"params_step", -1}},
                nullptr, 0);
  CHECK_FALSE(s.run.started());
  CHECK_THROWS_AS(train_receive(s, {{"id", 1}}, nullptr, 0), std::invalid_argument);
}

TEST_CASE("train session: past its deadline a run does one piece per call; the pieces give whole steps") {
  TrainSettings settings;
  settings.seed = 2, settings.n_layer = 2, settings.n_head = 2, settings.n_embd = 32;
  TrainRun run;
  run.start(settings, 1000);
  int calls = 0;
  for (; run.evaluating() && calls < 100000; ++calls) CHECK(run.work(0, 3) == 0);  // the step-0 accuracy, a sentence a call
  CHECK(calls == static_cast<int>(run.trainer().corpus().heldout.size()));
  REQUIRE(run.accuracies().size() == 1);
  CHECK(run.work(0, 3) == 0);  // the first piece of step 1: one sequence's forward and backward
  CHECK(run.trainer().in_step());
  CHECK(run.steps() == 0);
  calls = 1;
  while (run.steps() < 3 && calls < 100000) run.work(0, 3), ++calls;
  CHECK(calls > 3 * settings.batch);  // a piece per sequence at least
  CHECK_FALSE(run.trainer().in_step());
  CHECK(run.work(0, 3) == 0);  // at the target: nothing more
  Trainer reference;
  reference.init(settings);
  std::vector<float> losses;
  for (int i = 0; i < 3; ++i) losses.push_back(reference.step());
  CHECK(run.losses() == losses);
  CHECK(run.trainer().parameters() == reference.parameters());
}

TEST_CASE("train session: bad recipes are refused naming the setting") {
  const auto refused = [](TrainForm f) {
    TrainSession s;
    CHECK_FALSE(train_start(s, f));
    CHECK_FALSE(s.running);
    return s.error;
  };
  TrainForm f = small_form(10);
  f.heads = 0;
  CHECK(refused(f).rfind("heads:", 0) == 0);
  f = small_form(10), f.d_model = 33, f.heads = 2;
  CHECK(refused(f).rfind("d_model:", 0) == 0);
  f = small_form(10), f.lr = 0;
  CHECK(refused(f).rfind("lr:", 0) == 0);
  f = small_form(10), f.lr = std::numeric_limits<float>::quiet_NaN();
  CHECK(refused(f).rfind("lr:", 0) == 0);
  f = small_form(0);
  CHECK(refused(f).rfind("steps:", 0) == 0);
  TrainForm json_form;
  CHECK_THROWS_WITH_AS(apply_train_form_json(json_form, {{"heads", "two"}}), "train.heads: must be a whole number",
                       std::invalid_argument);
  CHECK_THROWS_AS(apply_train_form_json(json_form, {{"width", 3}}), std::invalid_argument);
  apply_train_form_json(json_form, {{"heads", 0}, {"seed", 9}});
  CHECK(json_form.heads == 0);  // accepted as typed: the view shows why it cannot train
  CHECK(json_form.seed == 9);
}

TEST_CASE("train session: the probe shows every head at the predicting position; the folder bytes load back") {
  const TrainForm form = small_form(20);
  TrainSession s;
  run_to_end(s, form, 1000);
  const ProbeView& p = s.probe;
  REQUIRE(p.attention.size() == static_cast<std::size_t>(form.layers));
  REQUIRE(p.attention[0].size() == static_cast<std::size_t>(form.heads));
  CHECK(p.words.size() == static_cast<std::size_t>(p.predict_pos + 1));
  CHECK(p.words.front() == "the");
  CHECK(p.words[static_cast<std::size_t>(p.creature_pos)] == "animal");
  CHECK(p.words[static_cast<std::size_t>(p.thing_pos)] == "street");
  CHECK(p.answer == "animal");  // tired fits a creature
  for (const auto& layer : p.attention)
    for (const auto& row : layer) {
      double sum = 0;
      for (float w : row) sum += w;
      CHECK(sum == doctest::Approx(1.0).epsilon(1e-5));
    }
  // The folder through the loader: the same next-word probabilities at the predicting position.
  const Trainer& trainer = s.run.trainer();
  const LoadedModel loaded = load_model_files("trained", trained_model_files(trainer.model(), trainer.corpus()));
  std::vector<int> ids;
  for (const std::string& w : p.words) ids.push_back(trainer.corpus().id(w));
  ForwardOptions every;
  every.backend = Backend::Scalar, every.top_k = loaded.model->config.vocab_size;
  const ModelTrace trace = transformer_forward(*loaded.model, ids, every);
  const int creature_id = trainer.corpus().id(p.creature);
  float p_creature = -1;
  for (const NextToken& n : trace.next[static_cast<std::size_t>(p.predict_pos)])
    if (n.id == creature_id) p_creature = n.p;
  CHECK(p_creature == doctest::Approx(p.p_creature).epsilon(1e-4));
  CHECK(p.at_step == 20);  // the last frame of the run drew the last step's weights
  // Paused, the learner picks the twin sentence: the next frame shows it, on the same weights.
  TrainForm twin = form;
  twin.probe_adjective = trainer.corpus().creature_adjectives;  // "wide", the twin of "tired"
  train_frame(s, twin, 1000);
  CHECK(s.probe.answer == "street");
  CHECK(s.probe.at_step == 20);
}

TEST_CASE("train session: the probe asks the model about the probe and its twin: answers, shares, switched-off heads, ratios") {
  TrainForm form = small_form(300);
  form.layers = 2;
  TrainSession s;
  run_to_end(s, form, 1000);
  const ProbeView& p = s.probe;
  const Trainer& trainer = s.run.trainer();
  const Corpus& corpus = trainer.corpus();
  REQUIRE(p.asks.size() == 2);
  CHECK(p.adjective == "tired");
  CHECK(p.twin_adjective == "wide");
  CHECK(p.twin_answer == "street");
  const int creature = corpus.id(p.creature), thing = corpus.id(p.thing);
  // The measured difference is logit(thing) − logit(creature) = log p(thing) − log p(creature), by the trainer's own graph.
  CHECK(p.asks[0].difference_a == doctest::Approx(std::log(p.p_thing) - std::log(p.p_creature)).epsilon(1e-4));
  // The twin and the switched-off heads, by a forward of their own.
  const Transformer model = trainer.model();
  std::vector<int> ids, twin_ids;
  for (const std::string& w : p.words) ids.push_back(corpus.id(w)), twin_ids.push_back(corpus.id(w == "tired" ? "wide" : w));
  const int at = p.predict_pos;
  const ModelTrace twin = transformer_forward(model, twin_ids);
  CHECK(p.asks[0].answer_b == twin.next[static_cast<std::size_t>(at)][0].id);
  double logit_difference = 0;
  for (const NextToken& n : twin.next[static_cast<std::size_t>(at)]) {
    if (n.id == thing) logit_difference += std::log(n.p);
    if (n.id == creature) logit_difference -= std::log(n.p);
  }
  CHECK(p.asks[0].difference_b == doctest::Approx(logit_difference).epsilon(1e-4));
  for (int l = 0; l < 2; ++l) {
    const TwinAsk& ask = p.asks[static_cast<std::size_t>(l)];
    CHECK(ask.target == thing);
    CHECK(ask.against == creature);
    REQUIRE(ask.ablated);  // 2 layers × 2 heads: a few reruns
    for (int h = 0; h < form.heads; ++h) {
      const std::size_t lh = static_cast<std::size_t>(l), hh = static_cast<std::size_t>(h);
      const std::vector<float>& row = p.attention[lh][hh];
      CHECK(p.ratio[lh][hh] == doctest::Approx(row[static_cast<std::size_t>(p.creature_pos)] / row[static_cast<std::size_t>(p.thing_pos)]).epsilon(1e-4));
      Intervention off;
      off.ablate = {{l, h}};
      ForwardOptions with_off;
      with_off.intervention = &off;
      CHECK(ask.heads[hh].answer_a == transformer_forward(model, ids, with_off).next[static_cast<std::size_t>(at)][0].id);
      CHECK(ask.heads[hh].answer_b == transformer_forward(model, twin_ids, with_off).next[static_cast<std::size_t>(at)][0].id);
    }
  }
  // Layer 1: the ratio of the two nouns' weights cannot see the adjective; layer 2's can.
  for (int h = 0; h < form.heads; ++h)
    CHECK(p.ratio[0][static_cast<std::size_t>(h)] == doctest::Approx(p.twin_ratio[0][static_cast<std::size_t>(h)]).epsilon(1e-5));
  const std::vector<std::string> lines = probe_ask_lines(p);
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  CHECK(text.find("L2 H2: weight on \"animal\" ÷ weight on \"street\": with \"tired\" ") != std::string::npos);
  CHECK(text.find("In layer 1 every head's ratio is the same in both sentences") != std::string::npos);
  CHECK(text.find("From layer 2 on") != std::string::npos);
  CHECK(text.find("referent is \"street\"") != std::string::npos);
  MESSAGE(text);
  // In the view's JSON, the lines and the numbers.
  const nlohmann::json j = train_state_json(s, form)["probe"]["ask"];
  CHECK(j["lines"].size() == lines.size());
  CHECK(j["heads"].size() == 2);
  CHECK(j["answers"][1] == corpus.vocab[static_cast<std::size_t>(p.asks[0].answer_b)]);
}
