// The train view's session (see train_session.h): slices of training between frames, chunked
// held-out evaluation, the probe, the √d experiment, and their JSON. Not drawn here.
#include "train_session.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <numeric>
#include <stdexcept>

namespace attn {

using nlohmann::json;

bool TrainForm::operator==(const TrainForm& o) const {
  return seed == o.seed && lr == o.lr && layers == o.layers && heads == o.heads && d_model == o.d_model &&
         scale == o.scale && steps == o.steps && probe_frame == o.probe_frame && probe_creature == o.probe_creature &&
         probe_thing == o.probe_thing && probe_adjective == o.probe_adjective;
}

TrainSettings train_settings(const TrainForm& form) {
  TrainSettings s;
  s.seed = form.seed;
  s.lr = form.lr;
  s.n_layer = form.layers, s.n_head = form.heads, s.n_embd = form.d_model;
  s.scale = form.scale;
  validate_train_settings(s);  // names layers, heads, d_model, lr
  if (form.steps < 1 || form.steps > kMaxTrainSteps)
    throw std::invalid_argument("steps: must be 1 to " + std::to_string(kMaxTrainSteps) + ", got " + std::to_string(form.steps));
  return s;
}

json train_form_to_json(const TrainForm& f) {
  return {{"seed", f.seed},     {"lr", exact_float(f.lr)},       {"layers", f.layers},           {"heads", f.heads},
          {"d_model", f.d_model}, {"scale", f.scale}, {"steps", f.steps},           {"probe_frame", f.probe_frame},
          {"probe_creature", f.probe_creature},     {"probe_thing", f.probe_thing}, {"probe_adjective", f.probe_adjective}};
}

void apply_train_form_json(TrainForm& form, const json& partial) {
  if (!partial.is_object()) throw std::invalid_argument("train: must be an object, e.g. {\"seed\": 2}");
  TrainForm next = form;
  for (const auto& item : partial.items()) {
    const std::string& key = item.key();
    const json& v = item.value();
    const auto bad = [&](const std::string& why) { throw std::invalid_argument("train." + key + ": " + why); };
    const auto whole = [&](int* target) {
      // whole numbers within int range; the recipe's own range is checked by train_settings
      if (!v.is_number_integer() || v.get<long long>() < -1000000000LL || v.get<long long>() > 1000000000LL)
        bad("must be a whole number");
      *target = static_cast<int>(v.get<long long>());
    };
    if (key == "seed") {
      if (!v.is_number_integer() || v.get<long long>() < 0 || v.get<long long>() > (1LL << 53))
        bad("must be a whole number from 0 to 2^53");
      next.seed = static_cast<std::uint64_t>(v.get<long long>());
    } else if (key == "lr") {
      if (!v.is_number()) bad("must be a number");  // NaN cannot arrive as JSON; ≤ 0 is refused at start
      next.lr = v.get<float>();
    } else if (key == "scale") {
      if (!v.is_boolean()) bad("must be true or false");
      next.scale = v.get<bool>();
    } else if (key == "layers") whole(&next.layers);
    else if (key == "heads") whole(&next.heads);
    else if (key == "d_model") whole(&next.d_model);
    else if (key == "steps") whole(&next.steps);
    else if (key == "probe_frame") whole(&next.probe_frame);
    else if (key == "probe_creature") whole(&next.probe_creature);
    else if (key == "probe_thing") whole(&next.probe_thing);
    else if (key == "probe_adjective") whole(&next.probe_adjective);
    else bad("is not a setting of the train view (seed, lr, layers, heads, d_model, scale, steps, probe_frame, "
             "probe_creature, probe_thing, probe_adjective)");
  }
  form = next;
}

TrainSettings sqrt_d_experiment_settings(std::uint64_t seed, bool scale) {
  TrainSettings s = scale_experiment_settings(scale);
  s.seed = seed;
  return s;
}

const Corpus& train_picker_corpus() {
  static const Corpus corpus = make_corpus(1);
  return corpus;
}

namespace {

const CorpusSentence* find_sentence(const Corpus& c, const TrainForm& f, bool* heldout) {
  for (const auto* list : {&c.train, &c.heldout})
    for (const CorpusSentence& s : *list)
      if (s.frame == f.probe_frame && s.creature == f.probe_creature && s.thing == f.probe_thing &&
          s.adjective == f.probe_adjective) {
        *heldout = list == &c.heldout;
        return &s;
      }
  return nullptr;
}

}  // namespace

std::string probe_problem(const Corpus& c, const TrainForm& f) {
  const auto check = [](const char* what, int v, std::size_t n) {
    return v < 0 || v >= static_cast<int>(n)
               ? std::string("train.") + what + ": must be 0 to " + std::to_string(n - 1) + ", got " + std::to_string(v)
               : std::string();
  };
  for (const std::string& why : {check("probe_frame", f.probe_frame, c.frames.size()),
                                 check("probe_creature", f.probe_creature, c.creatures.size()),
                                 check("probe_thing", f.probe_thing, c.things.size()),
                                 check("probe_adjective", f.probe_adjective, c.adjectives.size())})
    if (!why.empty()) return why;
  return "";
}

bool ProbeView::shows(const TrainForm& form) const {
  return pick_frame == form.probe_frame && pick_creature == form.probe_creature && pick_thing == form.probe_thing &&
         pick_adjective == form.probe_adjective;
}

namespace {
// The probe's asks (ProbeView::asks): the probe and its twin through the trained weights as a model.
void ask_probe(const Trainer& trainer, const Corpus& corpus, const CorpusSentence& s, const TrainForm& form, ProbeView& p) {
  const int n = corpus.creature_adjectives;
  TrainForm twin_form = form;
  twin_form.probe_adjective = form.probe_adjective < n ? form.probe_adjective + n : form.probe_adjective - n;
  bool heldout = false;
  const CorpusSentence* twin = find_sentence(corpus, twin_form, &heldout);
  const int position = s.predict_pos();
  if (!twin || twin->predict_pos() != position) return;
  const Transformer model = trainer.model();
  ForwardOptions options;
  options.predict_from = position + 1;  // no LM head rows: the asks read the one they need
  const auto run = [&](const CorpusSentence& c) {
    return transformer_forward(model, std::vector<int>(c.ids.begin(), c.ids.begin() + position + 1), options);
  };
  const ModelTrace a = run(s), b = run(*twin);
  const int creature = s.ids[static_cast<std::size_t>(s.creature_pos)], thing = s.ids[static_cast<std::size_t>(s.thing_pos)];
  p.adjective = corpus.adjectives[static_cast<std::size_t>(form.probe_adjective)];
  p.twin_adjective = corpus.adjectives[static_cast<std::size_t>(twin_form.probe_adjective)];
  p.twin_answer = corpus.vocab[static_cast<std::size_t>(twin->answer_id)];
  p.vocab_words = corpus.vocab;
  for (int l = 0; l < model.config.n_layer; ++l) {
    p.asks.push_back(ask_twins(model, a, b, position, l, thing, creature));
    for (auto [trace, ratios] : {std::pair{&a, &p.ratio}, std::pair{&b, &p.twin_ratio}}) {
      const LayerDetail detail = layer_detail(model, *trace, l);
      ratios->emplace_back();
      for (const Matrix& w : detail.weights)
        ratios->back().push_back(w(position, s.creature_pos) / w(position, s.thing_pos));
    }
  }
}
}  // namespace

void refresh_probe(TrainSession& session, const TrainForm& form) {
  const bool trained = session.run.started();
  const Corpus& corpus = trained ? session.run.trainer().corpus() : train_picker_corpus();
  ProbeView p;
  p.pick_frame = form.probe_frame, p.pick_creature = form.probe_creature, p.pick_thing = form.probe_thing;
  p.pick_adjective = form.probe_adjective;
  bool heldout = false;
  const CorpusSentence* s = probe_problem(corpus, form).empty() ? find_sentence(corpus, form, &heldout) : nullptr;
  if (!s) {
    session.probe = p;
    return;
  }
  p.predict_pos = s->predict_pos();
  for (int i = 0; i <= p.predict_pos; ++i) p.words.push_back(corpus.vocab[static_cast<std::size_t>(s->ids[static_cast<std::size_t>(i)])]);
  p.creature_pos = s->creature_pos, p.thing_pos = s->thing_pos;
  p.creature = corpus.creatures[static_cast<std::size_t>(s->creature)];
  p.thing = corpus.things[static_cast<std::size_t>(s->thing)];
  p.answer = corpus.vocab[static_cast<std::size_t>(s->answer_id)];
  p.heldout = heldout;
  if (trained) {
    const Trainer& trainer = session.run.trainer();
    const Gpt2Config config = trainer.model_config();
    Gpt2TrainGraph<float> graph(config, 1, trainer.settings().scale);
    graph.set_parameters(trainer.model());
    graph.forward({s->ids});
    const int t = p.predict_pos;
    p.attention.assign(static_cast<std::size_t>(config.n_layer), {});
    for (int l = 0; l < config.n_layer; ++l)
      for (int h = 0; h < config.n_head; ++h) {
        const float* row = graph.attention_row(l, 0, h, t);
        p.attention[static_cast<std::size_t>(l)].emplace_back(row, row + t + 1);
      }
    const float* probs = graph.probs(0, t);
    std::vector<int> order(static_cast<std::size_t>(config.vocab_size));
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + std::min<std::size_t>(5, order.size()), order.end(),
                      [&](int a, int b) { return probs[a] > probs[b] || (probs[a] == probs[b] && a < b); });
    for (std::size_t i = 0; i < std::min<std::size_t>(5, order.size()); ++i)
      p.top.push_back({corpus.vocab[static_cast<std::size_t>(order[i])], probs[order[i]]});
    p.p_creature = probs[s->ids[static_cast<std::size_t>(s->creature_pos)]];
    p.p_thing = probs[s->ids[static_cast<std::size_t>(s->thing_pos)]];
    p.at_step = trainer.steps_done();
    // The model asked about the probe and its twin: at every refresh where that is a few layer runs,
    // else once training pauses.
    const TrainSettings& set = trainer.settings();
    if (!session.running || 2 * set.n_layer * set.n_head <= kAskReruns) ask_probe(trainer, corpus, *s, form, p);
  }
  session.probe = std::move(p);
}

namespace {
// printf into a string (the lines below: one format each keeps the page's code small)
std::string format(const char* pattern, ...) {
  char buf[1024];
  va_list args;
  va_start(args, pattern);
  std::vsnprintf(buf, sizeof buf, pattern, args);
  va_end(args);
  return buf;
}
}  // namespace

std::vector<std::string> probe_ask_lines(const ProbeView& p) {
  if (p.asks.empty()) return {};
  const TwinAsk& first = p.asks.front();
  const char *tired = p.adjective.c_str(), *wide = p.twin_adjective.c_str();
  const auto word = [&](int id) { return p.vocab_words[static_cast<std::size_t>(id)].c_str(); };
  const std::string with_a = format(" with \"%s\"", tired), with_b = format(" with \"%s\"", wide);
  std::vector<std::string> lines;
  lines.push_back(format("The model answers \"%s\" (p %.2f) with \"%s\" and \"%s\" (p %.2f) with \"%s\" (the twin "
                         "sentence, whose referent is \"%s\").", word(first.answer_a), first.p_a, tired,
                         word(first.answer_b), first.p_b, wide, p.twin_answer.c_str()));
  double rest_a = first.difference_a, rest_b = first.difference_b;
  for (const TwinAsk& ask : p.asks)
    for (const AskedHead& h : ask.heads) rest_a -= h.share_a, rest_b -= h.share_b;
  lines.push_back(format("Measured: the logit of \"%s\" minus that of \"%s\", %+.2f with \"%s\" and %+.2f with \"%s\". "
                         "Each head adds its direct share (its output through W_O, this run's final norm and the "
                         "unembedding); the embeddings, the output biases and the MLPs add the rest, %+.2f and %+.2f.",
                         p.thing.c_str(), p.creature.c_str(), first.difference_a, tired, first.difference_b, wide, rest_a, rest_b));
  std::string flips;
  int flipping = 0;
  bool same_ratio_layer1 = true;
  for (std::size_t l = 0; l < p.asks.size(); ++l) {
    const TwinAsk& ask = p.asks[l];
    for (std::size_t h = 0; h < ask.heads.size(); ++h) {
      const AskedHead& a = ask.heads[h];
      const float ra = p.ratio[l][h], rb = p.twin_ratio[l][h];
      if (l == 0 && std::fabs(ra - rb) > 1e-3f * std::max(1.0f, std::fabs(ra))) same_ratio_layer1 = false;
      std::string line = format("L%d H%d: weight on \"%s\" ÷ weight on \"%s\": with \"%s\" %.2f, with \"%s\" %.2f. Adds: "
                                "with \"%s\" %+.2f, with \"%s\" %+.2f.", static_cast<int>(l + 1), static_cast<int>(h + 1),
                                p.creature.c_str(), p.thing.c_str(), tired, ra, wide, rb, tired, a.share_a, wide, a.share_b);
      if (ask.ablated) {
        const bool flips_a = a.answer_a != ask.answer_a, flips_b = a.answer_b != ask.answer_b;
        line += format(" Switched off: \"%s\" %s \"%s\"%s, \"%s\" %s \"%s\"%s.", tired, flips_a ? "answers" : "still answers",
                       word(a.answer_a), flips_a ? " instead" : "", wide, flips_b ? "answers" : "still answers",
                       word(a.answer_b), flips_b ? " instead" : "");
        if (flips_a || flips_b)
          flips += format("%sL%d H%d flips the answer%s%s%s", flipping++ ? "; " : "", static_cast<int>(l + 1),
                          static_cast<int>(h + 1), flips_a ? with_a.c_str() : "", flips_a && flips_b ? " and" : "",
                          flips_b ? with_b.c_str() : "");
      }
      lines.push_back(line);
    }
  }
  if (!first.ablated)
    lines.push_back("Switching each head off is computed here for small models only: Use this model, then the Heads "
                    "view's sweep does it.");
  else if (!flipping)
    lines.push_back("No head switched off alone flips either answer: each answer rests on more than one part.");
  else
    lines.push_back(format("Switched off alone, %s: the answer needs %s.", flips.c_str(), flipping > 1 ? "each of these heads" : "that head"));
  if (same_ratio_layer1)
    lines.push_back(format("In layer 1 every head's ratio is the same in both sentences: the ratio of two softmax weights is e "
                           "to the difference of their scores, and each noun's score there comes from the query of \"the\" "
                           "and that noun at its place alone, not from the adjective. The adjective changes its own weight "
                           "and what its value adds, so the answer can flip while no head of layer 1 changes which noun it "
                           "prefers.%s", p.asks.size() > 1 ? " From layer 2 on queries and keys have read the sentence, so "
                                                             "there the ratio can change." : ""));
  return lines;
}

namespace {
// A message to the training worker (none: the runs it had are gone, e.g. after it failed).
void post(TrainSession& session, const json& message) {
  if (session.worker) session.worker(message);
}
}  // namespace

bool train_start(TrainSession& session, const TrainForm& form) {
  session.message.clear();
  TrainSettings settings;
  try {
    settings = train_settings(form);
  } catch (const std::invalid_argument& e) {
    session.error = e.what();
    session.running = false;
    return false;
  }
  session.error.clear();
  // The same recipe continues (a raised step target, a new probe); another one starts afresh.
  TrainForm recipe = form, before = session.form_started;
  recipe.steps = before.steps = 0;
  recipe.probe_frame = recipe.probe_creature = recipe.probe_thing = recipe.probe_adjective = 0;
  before.probe_frame = before.probe_creature = before.probe_thing = before.probe_adjective = 0;
  const bool fresh = !session.run.started() || recipe != before;
  if (fresh) {
    const bool was_mirror = session.run.mirror();
    const int old_id = session.run.id;
    try {
      if (session.worker) session.run.start_mirror(settings, kTrainEvalEvery);
      else session.run.start(settings, kTrainEvalEvery);
    } catch (const std::invalid_argument& e) {  // over the trainer's memory bound
      session.error = e.what();
      session.running = false;
      return false;
    }
    if (was_mirror) post(session, {{"type", "stop"}, {"id", old_id}});  // the old recipe's run
    session.used_model.clear();
  }
  session.form_started = form;
  if (session.run.steps() >= form.steps && !session.run.evaluating()) {
    session.message = "The run is at " + std::to_string(session.run.steps()) + " steps already: raise Steps to go on.";
    session.running = false;
    return true;
  }
  if (session.run.mirror()) {
    if (fresh) {
      session.run.id = ++session.next_id;
      post(session, {{"type", "start"}, {"id", session.run.id}, {"settings", train_settings_to_json(settings)},
                      {"eval_every", kTrainEvalEvery}, {"held_out", "all"}, {"until", form.steps}, {"params", true}});
    } else {
      post(session, {{"type", "until"}, {"id", session.run.id}, {"until", form.steps}});
    }
  }
  session.running = true;
  session.rate_mark_ms = -1;
  refresh_probe(session, form);
  return true;
}

void train_pause(TrainSession& session) {
  // the worker finishes the step under way and stops there; its report brings that step's weights
  if (session.running && session.run.mirror()) post(session, {{"type", "until"}, {"id", session.run.id}, {"until", session.run.steps()}});
  session.running = false;
}

void train_reset(TrainSession& session) {
  if (session.run.mirror()) post(session, {{"type", "stop"}, {"id", session.run.id}});
  session.run = TrainRun{};
  session.running = false;
  session.error.clear();
  session.message.clear();
  session.used_model.clear();
  session.steps_per_second = 0;
  session.probe = ProbeView{};
}

void experiment_start(TrainSession& session, const TrainForm& form) {
  for (int i = 0; i < 2; ++i) {
    TrainRun& r = session.experiment[i];
    if (r.mirror()) post(session, {{"type", "stop"}, {"id", r.id}});
    const TrainSettings settings = sqrt_d_experiment_settings(form.seed, i == 0);
    if (!session.worker) {
      r.start(settings, kExperimentEvalEvery, TrainRun::HeldOut::OnePerTriple);
      continue;
    }
    // the two arms take turns in the worker as they do here
    r.start_mirror(settings, kExperimentEvalEvery, TrainRun::HeldOut::OnePerTriple);
    r.id = ++session.next_id;
    post(session, {{"type", "start"}, {"id", r.id}, {"settings", train_settings_to_json(settings)},
                    {"eval_every", kExperimentEvalEvery}, {"held_out", "triple"}, {"until", kExperimentSteps},
                    {"stop_at", kExperimentBar}, {"params", false}});
  }
  session.experiment_running = true;
}

void train_receive(TrainSession& session, const json& report, const float* params, std::size_t count) {
  TrainRun::Progress p;
  int id = -1;
  try {
    id = report.at("id").get<int>();
    p.steps = report.at("steps").get<int>();
    p.losses = report.at("losses").get<std::vector<float>>();
    p.accuracy_steps = report.at("accuracy_steps").get<std::vector<int>>();
    p.accuracies = report.at("accuracies").get<std::vector<float>>();
    p.evaluating = report.at("evaluating").get<bool>();
    p.step_ms = report.at("step_ms").get<double>();
    p.params_step = report.at("params_step").get<int>();
  } catch (const json::exception& e) {
    throw std::invalid_argument(std::string("train worker report: ") + e.what());
  }
  if (p.params_step >= 0) p.params = params, p.param_count = count;
  for (TrainRun* r : {&session.run, &session.experiment[0], &session.experiment[1]}) {
    if (!r->mirror() || r->id != id) continue;
    r->receive(p);
    if (r == &session.run) session.probe_stale = session.probe_stale || p.params_step >= 0;
  }
}

void train_frame(TrainSession& session, const TrainForm& form, double budget_ms, bool refresh) {
  const double start = train_clock_ms();
  const double deadline = start + budget_ms;
  bool changed = false;
  if (session.running && session.run.started()) {
    const int goal = session.form_started.steps;
    changed = session.run.work(deadline, goal) > 0 || changed;
    if (session.run.steps() >= goal && !session.run.evaluating()) session.running = false;
    const double now = train_clock_ms();
    if (session.rate_mark_ms < 0) {
      session.rate_mark_ms = now, session.rate_mark_steps = session.run.steps();
    } else if (now - session.rate_mark_ms >= 500) {
      session.steps_per_second = 1000.0 * (session.run.steps() - session.rate_mark_steps) / (now - session.rate_mark_ms);
      session.rate_mark_ms = now, session.rate_mark_steps = session.run.steps();
    }
    changed = true;
  }
  if (session.experiment_running) {
    // the two runs take turns, each a share of what is left of the budget
    for (int i = 0; i < 2; ++i) {
      TrainRun& r = session.experiment[i];
      const double left = deadline - train_clock_ms();
      r.work(train_clock_ms() + std::max(0.0, left / (2 - i)), kExperimentSteps, kExperimentBar);  // nothing when done
    }
    if (session.experiment[0].finished(kExperimentSteps, kExperimentBar) && session.experiment[1].finished(kExperimentSteps, kExperimentBar))
      session.experiment_running = false;
  }
  session.probe_stale = session.probe_stale || changed;
  const double now = train_clock_ms();
  const bool due = session.probe_stale && (!session.running || now - session.probe_ms >= kProbeRefreshMs);
  if (refresh && (due || !session.probe.shows(form) || (session.probe.at_step < 0 && session.run.started()))) {
    refresh_probe(session, form);
    session.probe_stale = false;
    session.probe_ms = now;
  }
  if (session.running || session.experiment_running) session.slice_ms = train_clock_ms() - start;
}

// ---- JSON ---------------------------------------------------------------------------------------

namespace {
// probe.ask: null, or {adjective, twin_adjective, twin_answer, answers: [probe's, twin's] (words), p: [...],
// difference: [...] (logit(thing) − logit(creature)), heads: [layer][head] {ratio: [probe, twin], share:
// [...], answer_off: [...] (words; null where not computed)}, lines (what the view draws)}.
json probe_ask_json(const ProbeView& p) {
  if (p.asks.empty()) return nullptr;
  const auto word = [&](int id) { return id < 0 ? json(nullptr) : json(p.vocab_words[static_cast<std::size_t>(id)]); };
  const auto pair = [](const json& a, const json& b) {
    json j = json::array();
    j.push_back(a);
    j.push_back(b);
    return j;
  };
  const TwinAsk& first = p.asks.front();
  json heads = json::array();
  for (std::size_t l = 0; l < p.asks.size(); ++l) {
    json& layer = heads.emplace_back(json::array());
    for (std::size_t h = 0; h < p.asks[l].heads.size(); ++h) {
      const AskedHead& a = p.asks[l].heads[h];
      json& head = layer.emplace_back(json::object());
      head["ratio"] = pair(p.ratio[l][h], p.twin_ratio[l][h]);
      head["share"] = pair(a.share_a, a.share_b);
      head["answer_off"] = pair(word(a.answer_a), word(a.answer_b));
    }
  }
  json j = json::object();
  j["adjective"] = p.adjective;
  j["twin_adjective"] = p.twin_adjective;
  j["twin_answer"] = p.twin_answer;
  j["answers"] = pair(word(first.answer_a), word(first.answer_b));
  j["p"] = pair(first.p_a, first.p_b);
  j["difference"] = pair(first.difference_a, first.difference_b);
  j["heads"] = std::move(heads);
  j["lines"] = probe_ask_lines(p);
  return j;
}
}  // namespace

json train_state_json(const TrainSession& s, const TrainForm& form) {
  const TrainRun& r = s.run;
  json j = train_form_to_json(form);
  j["running"] = s.running;
  j["started"] = r.started();
  j["steps_done"] = r.steps();
  j["loss"] = r.losses().empty() ? json(nullptr) : json(r.losses().back());
  j["accuracy"] = r.accuracies().empty() ? json(nullptr) : json(r.accuracies().back());
  j["accuracy_step"] = r.accuracy_steps().empty() ? json(nullptr) : json(r.accuracy_steps().back());
  j["evaluating"] = r.evaluating();
  j["steps_per_second"] = s.steps_per_second;
  j["slice_ms"] = s.slice_ms;
  j["step_ms"] = r.step_ms();
  // where new runs train: "ready" (a Web Worker) or here between frames
  switch (s.worker_state) {
    case TrainSession::Worker::None: j["worker"] = "none"; break;
    case TrainSession::Worker::Loading: j["worker"] = "loading"; break;
    case TrainSession::Worker::Ready: j["worker"] = "ready"; break;
    case TrainSession::Worker::Failed: j["worker"] = "failed: " + s.worker_failure; break;
  }
  j["in_worker"] = r.mirror();   // where this run trains
  std::string problem;
  try {
    train_settings(form);
  } catch (const std::invalid_argument& e) {
    problem = e.what();
  }
  j["form_error"] = problem;  // what is wrong with the form as typed ("" when it can train)
  j["error"] = s.error;       // why the last Start was refused
  j["message"] = s.message;
  j["used_model"] = s.used_model;
  const ProbeView& p = s.probe;
  json top = json::array();
  for (const ProbeView::Guess& g : p.top) top.push_back({{"word", g.word}, {"p", g.p}});
  j["probe"] = {{"words", p.words}, {"answer", p.answer}, {"creature", p.creature}, {"thing", p.thing},
                {"heldout", p.heldout}, {"p_creature", p.p_creature}, {"p_thing", p.p_thing}, {"top", top},
                {"attention", p.attention}, {"at_step", p.at_step}, {"ask", probe_ask_json(p)}};
  json runs = json::array();
  for (const TrainRun& e : s.experiment)
    runs.push_back({{"steps_done", e.steps()},
                    {"loss", e.losses().empty() ? json(nullptr) : json(e.losses().back())},
                    {"accuracy", e.accuracies().empty() ? json(nullptr) : json(e.accuracies().back())},
                    {"reached_at", e.first_step_at(kExperimentBar) < 0 ? json(nullptr) : json(e.first_step_at(kExperimentBar))}});
  j["experiment"] = {{"running", s.experiment_running}, {"in_worker", s.experiment[0].mirror()}, {"scaled", runs[0]}, {"unscaled", runs[1]},
                     {"max_steps", kExperimentSteps}, {"bar", kExperimentBar}};
  return j;
}

json train_curves_json(const TrainSession& s) {
  const auto curves = [](const TrainRun& r) {
    return json{{"loss", r.losses()}, {"accuracy_steps", r.accuracy_steps()}, {"accuracy", r.accuracies()}};
  };
  return {{"run", curves(s.run)}, {"scaled", curves(s.experiment[0])}, {"unscaled", curves(s.experiment[1])}};
}

}  // namespace attn
