// Where a loaded model's answers run (src/state/model_run.h), with a stand-in for the worker (a hook that
// records the requests; the test answers them as the worker does: model_views, packed and unpacked): a
// change is posted and the last complete answer stays shown, the answer applied when it is the latest, an
// older or orphaned one dropped, a text past the model's positions refused at once, the worker's failure
// computed here (a layer a frame); without a worker the native app computes incrementally and times it.
#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "../../src/api/trained_model_bytes.h"
#include "../../src/core/corpus.h"
#include "../../src/state/app_state.h"
#include "../../src/state/input_table.h"
#include "../../src/state/view_data.h"

using namespace attn;

namespace {

struct Posted {
  ModelViewsAsk ask;
  std::shared_ptr<const ModelViewsAsk> held;
  unsigned seq = 0;
};
// The worker's hook: records what is posted.
std::function<void(const LoadedModel&, const ModelViewsAsk&, const ModelViewsAsk*, unsigned)> recorder(std::vector<Posted>& posted) {
  return [&posted](const LoadedModel&, const ModelViewsAsk& ask, const ModelViewsAsk* held, unsigned seq) {
    posted.push_back({ask, held ? std::make_shared<const ModelViewsAsk>(*held) : nullptr, seq});
  };
}

// The app with a random GPT-2 "toy" (2 layers, 32 positions) on the Train view's corpus, shown.
AppState with_toy(std::uint64_t seed = 3) {
  const Corpus corpus = make_corpus(1);
  const Transformer model = random_transformer(gpt2_config(2, 2, 16, 32, static_cast<int>(corpus.vocab.size())), seed,
                                               Dtype::F32, WeightLayout::InOut, 0.3);
  AppState s = make_initial_state();
  add_model(s, load_model_files("toy", trained_model_files(model, corpus)));
  apply_state_json(s, {{"model", "toy"}, {"sentence", "the animal didn't cross the street"}}, 0.0);
  return s;
}

// What the worker answers for a request (src/worker/model_worker.cpp): model_views with the forward as the page's
// (no LM head rows), through the bytes it sends (the runs the page holds left out: `held`, the page's answer).
// `weights`: the worker's copy (null: the page's own, where it keeps them).
std::shared_ptr<const ModelViews> answer(const AppState& s, const Posted& p, std::size_t* floats = nullptr,
                                         const Transformer* weights = nullptr) {
  const Transformer& model = weights ? *weights : *find_model(s, "toy")->model;
  const BaseForward base = [&](const std::vector<int>& ids) {
    ForwardOptions o;
    o.top_k = 0;
    return std::make_shared<const ModelTrace>(transformer_forward(model, ids, o));
  };
  const PackedTrace packed = pack_model_views(model_views(model, p.ask, base), p.held.get());
  if (floats) *floats = packed.numbers.size();
  return std::make_shared<const ModelViews>(
      unpack_model_views(packed.header, packed.numbers.data(), packed.numbers.size(), s.model.answer.get()));
}

}  // namespace

TEST_CASE("model run: a typed text goes to the worker; the last complete text stays until its answer comes") {
  AppState s = with_toy();
  std::vector<Posted> posted;
  s.model_run.post = recorder(posted);
  s.model_run.worker = true;
  const std::string before = s.inputs.sentence, typed = before + " because";
  const unsigned revision = s.revision;
  AppInputs next = s.inputs;
  next.sentence = typed;
  CHECK(apply_inputs_in_background(s, next, 1.0));
  REQUIRE(posted.size() == 1);
  CHECK(s.model_run.pending);
  CHECK(s.inputs.sentence == before);  // the views show the last complete text
  CHECK(shown_inputs(s).sentence == typed);  // the text box shows what was typed
  CHECK(s.revision == revision);
  CHECK(model_run_json(s)["pending"] == true);
  // the answer: applied, the trace is the worker's
  const auto views = answer(s, posted[0]);
  CHECK(model_run_arrived(s, posted[0].seq, views, 12.5, 3, 4, 2.0));
  CHECK_FALSE(s.model_run.pending);
  CHECK(s.inputs.sentence == typed);
  CHECK(s.model.answer == views);
  CHECK(s.model.base_forward == views->base);
  CHECK(s.model_run.last_where == "worker");
  CHECK(s.model_run.last_ms == 12.5);
  CHECK(s.model_run.incremental_from == 4);
  CHECK(model_run_json(s)["incremental_from"] == 4);
  CHECK(model_run_json(s)["views_ms"] == 3);
}

TEST_CASE("model run: an older answer, or one for a model unloaded or replaced since, is dropped") {
  AppState s = with_toy();
  std::vector<Posted> posted;
  s.model_run.post = recorder(posted);
  const std::string base = s.inputs.sentence;
  AppInputs next = s.inputs;
  next.sentence = base + " because";
  apply_inputs_in_background(s, next, 1.0);
  next.sentence = base + " because it";
  apply_inputs_in_background(s, next, 1.0);
  REQUIRE(posted.size() == 2);
  CHECK_FALSE(model_run_arrived(s, posted[0].seq, answer(s, posted[0]), 1, -1, 0, 2.0));  // for text changed since
  CHECK(s.model_run.dropped == 1);
  CHECK(s.inputs.sentence == base);
  CHECK(model_run_arrived(s, posted[1].seq, answer(s, posted[1]), 1, -1, 0, 2.0));
  CHECK(s.inputs.sentence == base + " because it");
  // replaced while it computes: a model of the same name with other weights
  next = s.inputs;
  next.sentence = base;
  apply_inputs_in_background(s, next, 3.0);
  const Posted asked = posted.back();
  const auto old_answer = answer(s, asked);
  const Corpus corpus = make_corpus(1);
  add_model(s, load_model_files("toy", trained_model_files(random_transformer(gpt2_config(2, 2, 16, 32, static_cast<int>(corpus.vocab.size())), 9,
                                                                                               Dtype::F32, WeightLayout::InOut, 0.3),
                                                            corpus)));
  CHECK_FALSE(model_run_arrived(s, asked.seq, old_answer, 1, -1, 0, 4.0));
  CHECK_FALSE(s.model_run.pending);
  CHECK(s.model_run.dropped == 2);
  // unloaded: setState's model (as the page's unload does) forgets the text asked
  apply_state_json(s, {{"model", "toy"}}, 5.0);
  next = s.inputs;
  next.sentence = base + " because";
  apply_inputs_in_background(s, next, 5.0);
  REQUIRE(s.model_run.pending);
  apply_state_json(s, {{"model", kHandmadeModel}}, 6.0);
  CHECK_FALSE(s.model_run.pending);
  CHECK_FALSE(model_run_arrived(s, posted.back().seq, answer(s, posted.back()), 1, -1, 0, 7.0));
  CHECK(s.inputs.model == kHandmadeModel);
}

TEST_CASE("model run: a text past the model's positions is refused at once; the worker's failure is computed here") {
  AppState s = with_toy();
  int posts = 0;
  s.model_run.post = [&](const LoadedModel&, const ModelViewsAsk&, const ModelViewsAsk*, unsigned) { ++posts; };
  const std::string good = s.inputs.sentence;
  std::string long_text = good;
  for (int i = 0; i < 6; ++i) long_text += " the animal didn't cross the street";
  AppInputs next = s.inputs;
  next.sentence = long_text;
  CHECK_FALSE(apply_inputs_in_background(s, next, 1.0));
  CHECK(posts == 0);
  CHECK(s.inputs.sentence == good);
  CHECK(s.error.find("reads at most 32") != std::string::npos);
  // typed past the limit while a shorter text is computed: refused, and the shorter one is dropped too
  next.sentence = good + " because";
  CHECK(apply_inputs_in_background(s, next, 1.5));
  REQUIRE(s.model_run.pending);
  next.sentence = long_text;
  CHECK_FALSE(apply_inputs_in_background(s, next, 1.6));
  CHECK_FALSE(s.model_run.pending);
  CHECK(s.inputs.sentence == good);
  // the worker stops while it computes a text: the page computes it, and says so from now on
  next.sentence = good + " because";
  apply_inputs_in_background(s, next, 2.0);
  REQUIRE(s.model_run.pending);
  model_run_worker_failed(s, "a test", 3.0);
  REQUIRE(s.model_run.slicing);  // computed here, a layer a frame
  for (int frame = 0; frame < 3; ++frame) model_run_frame(s, 0, 3.0);
  CHECK_FALSE(s.model_run.pending);
  CHECK(s.inputs.sentence == good + " because");
  CHECK(s.model_run.last_where == "page");
  CHECK(s.model_run.note.find("worker stopped (a test)") != std::string::npos);
  CHECK_FALSE(s.model_run.post);
}

TEST_CASE("model run: without a worker the native app computes incrementally, the same numbers as the whole forward") {
  AppState s = with_toy();
  s.model_run.page_forward = transformer_forward_cached;  // as the native app sets it
  const std::string base = "the animal didn't cross the street because it was tired";
  apply_state_json(s, {{"sentence", base}}, 1.0);
  const int T0 = static_cast<int>(s.model.token_ids.size());
  apply_state_json(s, {{"sentence", base + " . it refers to the"}}, 1.0);
  CHECK(s.model_run.last_where == "page");
  CHECK(s.model_run.incremental_from > 0);
  CHECK(s.model_run.incremental_from <= T0);
  CHECK(s.model_run.last_ms >= 0);
  ForwardOptions o;
  o.top_k = 0;
  const ModelTrace whole = transformer_forward(*find_model(s, "toy")->model, s.model.token_ids, o);
  CHECK((s.model.base_forward->final_normed.array() == whole.final_normed.array()).all());
  REQUIRE(s.model.base_forward->streams.size() == whole.streams.size());
  for (std::size_t i = 0; i < whole.streams.size(); ++i)
    CHECK((s.model.base_forward->streams[i].array() == whole.streams[i].array()).all());
}

namespace {
// Every number of two answers the views read, equal (the worker's, through its bytes, and the page's own).
void check_same_answer(const AppState& worker, const AppState& page) {
  const AppModel &w = worker.model, &p = page.model;
  REQUIRE(w.layer);
  REQUIRE(p.layer);
  CHECK((w.layer->query.array() == p.layer->query.array()).all());
  CHECK((w.layer->stream_in.array() == p.layer->stream_in.array()).all());
  REQUIRE(w.layer->weights.size() == p.layer->weights.size());
  for (std::size_t h = 0; h < p.layer->weights.size(); ++h) CHECK((w.layer->weights[h].array() == p.layer->weights[h].array()).all());
  CHECK(w.trace.weights == p.trace.weights);
  REQUIRE(w.next.size() == p.next.size());
  for (std::size_t k = 0; k < p.next.size(); ++k) {
    CHECK(w.next[k].id == p.next[k].id);
    CHECK(w.next[k].p == p.next[k].p);
  }
  CHECK(w.effect.shown == p.effect.shown);
  CHECK(w.effect.log_prob == p.effect.log_prob);
  CHECK(w.effect.base_log_prob == p.effect.base_log_prob);
  CHECK(std::isnan(w.effect.restored) == std::isnan(p.effect.restored));
  if (!std::isnan(p.effect.restored)) CHECK(w.effect.restored == p.effect.restored);
  REQUIRE(static_cast<bool>(w.attribution) == static_cast<bool>(p.attribution));
  if (p.attribution) {
    CHECK((w.attribution->heads.array() == p.attribution->heads.array()).all());
    CHECK(w.attribution->logit == p.attribution->logit);
    CHECK((w.attribution->mlps.array() == p.attribution->mlps.array()).all());
  }
  REQUIRE(static_cast<bool>(w.influence) == static_cast<bool>(p.influence));
  if (p.influence) {
    CHECK((w.influence->values.array() == p.influence->values.array()).all());
    CHECK((w.influence->value_norms.array() == p.influence->value_norms.array()).all());
  }
  CHECK(w.around.head_shares == p.around.head_shares);
  CHECK(w.around.mlp_update == p.around.mlp_update);
  CHECK(w.compare.weights == p.compare.weights);
  CHECK(w.compare_ask.shown == p.compare_ask.shown);
  CHECK(w.compare_ask.difference_b == p.compare_ask.difference_b);
  REQUIRE(w.forward);
  for (std::size_t l = 0; l < p.forward->layers.size(); ++l)
    CHECK((w.forward->layers[l].thumbnails[0].array() == p.forward->layers[l].thumbnails[0].array()).all());
}
}  // namespace

TEST_CASE("model run: every change the views need the model for goes to the worker; its answer is what the page computes") {
  AppState s = with_toy();
  apply_state_json(s, {{"view", "heads"}, {"layer", 1}}, 0.5);
  std::vector<Posted> posted;
  s.model_run.post = recorder(posted);
  s.model_run.worker = true;
  int step = 0;
  // Each change as the learner makes it (on the inputs shown), then the same change by setState on a page that
  // computes itself: the same answer, number for number.
  const auto change = [&](const nlohmann::json& partial, bool posts) {
    CAPTURE(partial.dump());
    AppState page = with_toy();
    nlohmann::json shown = nlohmann::json::object();
    for (const InputField& f : input_fields()) shown[f.name] = f.get(s.inputs);
    apply_state_json(page, shown, 0.5);
    const std::size_t before = posted.size();
    AppState probe = s;  // (the change as setState reads it, for the learner's inputs)
    probe.model_run.post = nullptr;
    apply_state_json(probe, partial, 1.0);
    CHECK(apply_inputs_in_background(s, probe.inputs, 1.0 + ++step));
    REQUIRE(posted.size() == before + (posts ? 1 : 0));
    if (posts) {
      CHECK(s.model_run.pending);
      CHECK(model_run_arrived(s, posted.back().seq, answer(s, posted.back()), 3, 2, 0, 2.0 + step));
    }
    CHECK_FALSE(s.model_run.pending);
    apply_state_json(page, partial, 1.0);
    CHECK(s.inputs == page.inputs);
    check_same_answer(s, page);
  };
  const std::string typed = s.inputs.sentence + " because it";
  change({{"sentence", typed}, {"token", 8}}, true);
  CHECK(posted.back().ask.attribution);  // the Heads view's
  CHECK(posted.back().ask.layer == 1);
  change({{"layer", 0}}, true);
  change({{"head", 1}}, true);
  change({{"token", 3}}, true);
  change({{"temperature", 2.0}}, false);  // the model's answer does not change: applied at once
  change({{"view", "steps"}}, false);      // a view that draws fewer parts: the answer shown serves it
  CHECK_FALSE(s.model.attribution);
  change({{"view", "heads"}}, false);      // and back: it still has the attribution
  CHECK(s.model.attribution);
  change({{"ablate", {{0, 1}}}}, true);
  change({{"cut", {{{"layer", 1}, {"head", 0}, {"query", 3}, {"key", 1}}}}}, true);
  change({{"view", "weights"}, {"weights_show", "value_weighted"}}, true);
  change({{"weights_show", "rollout"}, {"layer", 1}}, true);
  change({{"ablate", nlohmann::json::array()}, {"cut", nlohmann::json::array()}, {"view", "heads"}}, true);
  change({{"patch", {{"from", "the animal didn't cross the river because it"}, {"heads", {{1, 0}}}}}}, true);
  CHECK(s.model.effect.patched);
  change({{"view", "compare"}, {"compare_sentence", "the animal didn't cross the river because it"}}, true);
  CHECK(s.model.compare_ask.shown);

  SUBCASE("the runs the page holds are not sent again") {
    AppInputs next = s.inputs;
    next.layer = 1 - next.layer;
    apply_inputs_in_background(s, next, 20.0);
    REQUIRE(posted.back().held);
    std::size_t floats = 0;
    const auto views = answer(s, posted.back(), &floats);
    CHECK(views->base == s.model.answer->base);  // the page's own, kept
    CHECK(views->compare_base == s.model.answer->compare_base);
    Posted unheld = posted.back();
    unheld.held.reset();
    std::size_t all = 0;
    answer(s, unheld, &all);
    // (the layer's details alone, A's and B's; the runs held are over 3 000 numbers)
    MESSAGE("numbers sent: " << floats << " of " << all);
    CHECK(all > floats + 3000);
  }
  SUBCASE("a change made while another is computed adds to it; the answer shows both") {
    AppInputs next = s.inputs;
    next.layer = 0;
    apply_inputs_in_background(s, next, 20.0);
    next = s.inputs;  // the learner's next change is made on what the views show
    next.head = 0;
    apply_inputs_in_background(s, next, 20.5);
    REQUIRE(s.model_run.pending);
    CHECK(shown_inputs(s).layer == 0);
    CHECK(shown_inputs(s).head == 0);
    CHECK_FALSE(model_run_arrived(s, posted[posted.size() - 2].seq, answer(s, posted[posted.size() - 2]), 1, 1, 0, 21.0));
    CHECK(model_run_arrived(s, posted.back().seq, answer(s, posted.back()), 1, 1, 0, 21.0));
    CHECK(s.inputs.layer == 0);
    CHECK(s.inputs.head == 0);
  }
  SUBCASE("setState while a change is computed: applied now with it, the worker's answer dropped") {
    AppInputs next = s.inputs;
    next.layer = 0;
    apply_inputs_in_background(s, next, 20.0);
    apply_state_json(s, {{"head", 0}}, 20.5);
    CHECK_FALSE(s.model_run.pending);
    CHECK(s.inputs.layer == 0);
    CHECK(s.inputs.head == 0);
    CHECK_FALSE(model_run_arrived(s, posted.back().seq, answer(s, posted.back()), 1, 1, 0, 21.0));
  }
  SUBCASE("the worker cannot compute it: the page does, and says so") {
    AppInputs next = s.inputs;
    next.layer = 0;
    apply_inputs_in_background(s, next, 20.0);
    model_run_request_failed(s, posted.back().seq, "out of memory", 21.0);
    CHECK_FALSE(s.model_run.pending);
    CHECK(s.inputs.layer == 0);
    CHECK(s.model_run.error.find("out of memory") != std::string::npos);
  }
}

TEST_CASE("model run: once the worker holds the weights the page frees its copy; every change is the worker's, setState's too") {
  AppState s = with_toy();
  std::vector<Posted> posted;
  s.model_run.post = recorder(posted);
  s.model_run.worker = true;
  const std::shared_ptr<const Transformer> weights = find_model(s, "toy")->model;
  const Transformer worker = *weights;  // the worker's copy
  const std::int64_t parameters = weights->parameter_count();
  const std::string before = s.inputs.sentence;
  model_run_weights_moved(s, weights);
  CHECK(weights->weights_released);
  CHECK(weights->embed.f32.empty());
  CHECK(weights->blocks[1].up.f32.empty());
  CHECK(weights->blocks[0].attn_norm_w.size() == 0);  // the vectors too (norms, biases)
  CHECK(weights->weight_bytes() == worker.weight_bytes());
  CHECK(weights->embed.rows == worker.embed.rows);  // the shapes and the config stay
  CHECK(weights->parameter_count() == parameters);
  CHECK(model_run_json(s)["weights"] == "worker");
  // setState: posted, not computed here; its answer applies it
  REQUIRE(s.inputs.layer == 0);
  apply_state_json(s, {{"layer", 1}, {"view", "flow"}}, 1.0);
  REQUIRE(posted.size() == 1);
  CHECK(s.model_run.pending);
  CHECK(s.inputs.layer == 0);
  CHECK(posted.back().ask.projections);  // the Flow view draws the head's W_Q, W_K, W_V: the page keeps those
  CHECK(model_run_arrived(s, posted.back().seq, answer(s, posted.back(), nullptr, &worker), 1, 1, 0, 2.0));
  CHECK(s.inputs.layer == 1);
  REQUIRE(s.model.answer->projections);
  CHECK(s.model.answer->projections->weights[1] == head_weights(worker.config, worker.blocks[1], s.inputs.head, Projection::Key));
  // a sweep the worker could not run stops here: the page has nothing to sweep with
  apply_state_json(s, {{"view", "heads"}, {"heads_sweep", true}}, 3.0);
  CHECK(model_run_arrived(s, posted.back().seq, answer(s, posted.back(), nullptr, &worker), 1, 1, 0, 3.0));
  s.heads_sweep.page_only = true;
  sweeps_frame(s, [] { return true; });
  CHECK(s.heads_sweep.sweep.done == 0);
  // the worker stops: the last answer stays, a change that needs the model says why
  model_run_worker_failed(s, "a test", 4.0);
  CHECK_THROWS_WITH_AS(apply_state_json(s, {{"sentence", before + " because"}}, 5.0), doctest::Contains("load toy again"),
                       std::invalid_argument);
  CHECK(s.inputs.sentence == before);
  CHECK_NOTHROW(apply_state_json(s, {{"temperature", 2.0}}, 5.0));  // what needs no model still changes
  CHECK(s.inputs.temperature == 2.0f);
}

TEST_CASE("model views: a malformed answer or ask is refused, never read past its numbers") {
  AppState s = with_toy();
  const Transformer& model = *find_model(s, "toy")->model;
  const ModelViews& v = *s.model.answer;
  const PackedTrace packed = pack_model_views(v);
  CHECK_NOTHROW(unpack_model_views(packed.header, packed.numbers.data(), packed.numbers.size()));
  CHECK_THROWS_AS(unpack_model_views(packed.header, packed.numbers.data(), packed.numbers.size() - 1), std::invalid_argument);
  CHECK_THROWS_AS(unpack_model_views("{", packed.numbers.data(), packed.numbers.size()), std::invalid_argument);
  const PackedTrace held = pack_model_views(v, &v.ask);  // every run held: the page must have them
  CHECK_THROWS_WITH_AS(unpack_model_views(held.header, held.numbers.data(), held.numbers.size()), doctest::Contains("not held"),
                       std::invalid_argument);
  nlohmann::json ask = model_views_ask_json(v.ask);
  CHECK(model_views_ask_from_json(ask) == v.ask);
  ask["influence"] = 7;
  CHECK_THROWS_AS(model_views_ask_from_json(ask), std::invalid_argument);
  ask.erase("influence");
  CHECK_THROWS_AS(model_views_ask_from_json(ask), std::invalid_argument);
  ModelViewsAsk outside = v.ask;
  outside.layer = model.config.n_layer;
  const BaseForward base = [&](const std::vector<int>& ids) { return std::make_shared<const ModelTrace>(transformer_forward(model, ids)); };
  CHECK_THROWS_AS(model_views(model, outside, base), std::invalid_argument);
}

TEST_CASE("model run: where no worker runs (the page), a new text's forward runs a layer at a time between frames") {
  AppState s = with_toy();
  model_run_worker_failed(s, "its script answered 404", 0.5);
  CHECK(s.model_run.slices);
  const std::string before = s.inputs.sentence, typed = before + " because it";
  AppInputs next = s.inputs;
  next.sentence = typed;
  CHECK(apply_inputs_in_background(s, next, 1.0));
  REQUIRE(s.model_run.slicing);
  CHECK(s.model_run.pending);
  CHECK(s.inputs.sentence == before);  // the last complete text stays shown
  CHECK(model_run_json(s)["slices"]["of"] == 3);  // 2 layers, then the final norm
  model_run_frame(s, 0, 2.0);  // one layer a frame at least
  CHECK(model_run_json(s)["slices"]["done"] == 1);
  CHECK(s.model_run.pending);
  // another text meanwhile: the slices start again on it
  next.sentence = typed + " was";
  apply_inputs_in_background(s, next, 2.5);
  CHECK(s.model_run.slicing->steps_done() == 0);
  for (int frame = 0; frame < 3; ++frame) model_run_frame(s, 0, 3.0 + frame);
  CHECK_FALSE(s.model_run.pending);
  CHECK_FALSE(s.model_run.slicing);
  CHECK(s.inputs.sentence == typed + " was");
  CHECK(s.model_run.last_where == "page");
  ForwardOptions o;
  o.top_k = 0;
  const ModelTrace whole = transformer_forward(*find_model(s, "toy")->model, s.model.token_ids, o);
  CHECK((s.model.base_forward->final_normed.array() == whole.final_normed.array()).all());
  for (std::size_t i = 0; i < whole.streams.size(); ++i)
    CHECK((s.model.base_forward->streams[i].array() == whole.streams[i].array()).all());
  // a model replaced while it slices: dropped, the page works on
  next.sentence = typed;
  apply_inputs_in_background(s, next, 6.0);
  REQUIRE(s.model_run.slicing);
  apply_state_json(s, {{"model", kHandmadeModel}}, 6.5);
  CHECK_FALSE(s.model_run.slicing);
  model_run_frame(s, 0, 7.0);
  CHECK(s.inputs.model == kHandmadeModel);
}

TEST_CASE("forward in slices: the same numbers as the whole forward, a layer a step") {
  const Transformer model = random_transformer(gpt2_config(3, 2, 8, 16, 29), 4, Dtype::F32, WeightLayout::InOut, 0.3);
  const std::vector<int> ids = {1, 5, 9, 2, 7, 7, 3};
  ForwardOptions o;
  o.top_k = 3;
  ForwardInSlices slices(std::make_shared<const Transformer>(model), ids, o);
  int steps = 0;
  while (!slices.step()) ++steps;
  CHECK(steps + 1 == 4);
  CHECK(slices.done());
  const ModelTrace got = slices.take(), want = transformer_forward(model, ids, o);
  CHECK((got.final_normed.array() == want.final_normed.array()).all());
  REQUIRE(got.next.size() == want.next.size());
  CHECK(got.next.back().front().id == want.next.back().front().id);
  CHECK(got.next.back().front().p == want.next.back().front().p);
  for (std::size_t l = 0; l < want.layers.size(); ++l)
    CHECK((got.layers[l].thumbnails[1].array() == want.layers[l].thumbnails[1].array()).all());
  CHECK_THROWS_AS(ForwardInSlices(std::make_shared<const Transformer>(model), std::vector<int>{40}, o), std::invalid_argument);
}

TEST_CASE("model run: a sweep runs in the worker: posted once, its slices applied, stopped and continued there, a replaced one's dropped") {
  AppState s = with_toy();
  std::vector<std::pair<bool, nlohmann::json>> posted;  // (with a model, the request)
  s.model_run.post_sweep = [&](const LoadedModel* m, const nlohmann::json& r) { posted.push_back({m != nullptr, r}); };
  const Transformer& model = *find_model(s, "toy")->model;
  // The page's own sweep, for the numbers (no worker).
  AppState page = with_toy();
  apply_state_json(page, {{"view", "heads"}, {"heads_sweep", true}}, 1.0);
  for (int frame = 0; frame < 10 && !page.heads_sweep.finished(); ++frame) sweeps_frame(page, [] { return true; });
  REQUIRE(page.heads_sweep.finished());
  CHECK(page.heads_sweep.where == "page");

  apply_state_json(s, {{"view", "heads"}, {"heads_sweep", true}}, 1.0);
  sweeps_frame(s, [] { return true; });
  sweeps_frame(s, [] { return true; });  // posted once, not every frame
  REQUIRE(posted.size() == 1);
  nlohmann::json request = posted[0].second;
  CHECK(posted[0].first);
  CHECK(request["slot"] == "heads");
  CHECK(request["over"] == "ablate");
  CHECK(request["ids"].get<std::vector<int>>() == s.model.token_ids);
  CHECK_FALSE(request.contains("resume"));
  CHECK(s.heads_sweep.where == "worker");
  CHECK(s.heads_sweep.sweep.done == 0);  // nothing computed here
  // The worker's slices, as model_worker.cpp computes them: its own base run, cells until told to stop.
  ForwardOptions no_rows;
  no_rows.predict_from = static_cast<int>(s.model.token_ids.size());
  const ModelTrace base = transformer_forward(model, s.model.token_ids, no_rows);
  const auto slice = [&](const nlohmann::json& r, int cells, const Sweep* resume) {
    int left = cells;
    const Sweep sw = ablation_sweep(model, base, r["position"], r["target"], AblateKind::Zero, [&](int, int) { return --left > 0; },
                                    Backend::Simd, resume);
    nlohmann::json values = nlohmann::json::array();
    for (Eigen::Index i = 0; i < sw.values.size(); ++i)
      values.push_back(std::isnan(sw.values.data()[i]) ? nlohmann::json(nullptr) : nlohmann::json(sw.values.data()[i]));
    return std::pair{sw, nlohmann::json{{"slot", r["slot"]}, {"seq", r["seq"]}, {"done", sw.done}, {"total", sw.values.size()},
                                        {"values", values}, {"baseline", sw.baseline}, {"source", sw.source}}};
  };
  auto [first, report] = slice(request, 2, nullptr);
  CHECK(model_run_sweep_arrived(s, report));
  CHECK(s.heads_sweep.sweep.done == 2);
  CHECK(heads_view_data(s)["sweep"]["where"] == "worker");
  // Turned off: the worker is told to stop; the cells stay. On again: it continues there from them.
  apply_state_json(s, {{"heads_sweep", false}}, 2.0);
  sweeps_frame(s, [] { return true; });
  REQUIRE(posted.size() == 2);
  CHECK_FALSE(posted[1].first);
  CHECK(posted[1].second["slot"] == "heads");
  CHECK_FALSE(model_run_sweep_arrived(s, report));  // a slice still on its way: dropped
  apply_state_json(s, {{"heads_sweep", true}}, 3.0);
  sweeps_frame(s, [] { return true; });
  REQUIRE(posted.size() == 3);
  request = posted[2].second;
  REQUIRE(request.contains("resume"));
  CHECK(request["resume"]["done"] == 2);
  CHECK(request["resume"]["values"][5].is_null());
  auto [rest, last] = slice(request, 1000, &first);
  CHECK(model_run_sweep_arrived(s, last));
  REQUIRE(s.heads_sweep.finished());
  for (Eigen::Index i = 0; i < s.heads_sweep.sweep.values.size(); ++i)
    CHECK(s.heads_sweep.sweep.values.data()[i] == doctest::Approx(page.heads_sweep.sweep.values.data()[i]).epsilon(1e-5));
  sweeps_frame(s, [] { return true; });  // done: the slot is free, nothing more posted
  CHECK(posted.size() == 3);
  CHECK(s.model_run.sweeps_posted.empty());
  // A new text starts it again (the old request is replaced there); the worker's error leaves it to the page.
  apply_state_json(s, {{"sentence", "the animal didn't cross"}}, 4.0);
  sweeps_frame(s, [] { return true; });
  REQUIRE(posted.size() == 4);
  CHECK(posted[3].second["seq"].get<unsigned>() > request["seq"].get<unsigned>());
  CHECK_FALSE(model_run_sweep_arrived(s, {{"slot", "heads"}, {"seq", request["seq"]}, {"error", "late"}}));  // replaced: dropped
  CHECK(s.model_run.error.empty());
  CHECK_FALSE(model_run_sweep_arrived(s, {{"slot", "heads"}, {"seq", posted[3].second["seq"]}, {"error", "out of memory"}}));
  CHECK(s.model_run.error.find("out of memory") != std::string::npos);
  sweeps_frame(s, [] { return true; });
  CHECK(s.heads_sweep.where == "page");
  CHECK(s.heads_sweep.sweep.done > 0);  // the page sweeps it now
}
