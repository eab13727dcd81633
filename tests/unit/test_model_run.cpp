// Where a loaded model's forward runs (src/state/model_run.h), with a stand-in for the worker (a hook that
// records the requests; the test answers them with the core's own forward): a new text is posted and the
// last complete one stays shown, the answer applied when it is the latest, an older or orphaned one
// dropped, a text past the model's positions refused at once, the worker's failure computed here (a layer a
// frame); without a worker the native app computes incrementally and times it.
#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "../../src/api/trained_model_bytes.h"
#include "../../src/core/corpus.h"
#include "../../src/state/app_state.h"
#include "../../src/state/view_data.h"

using namespace attn;

namespace {

struct Posted {
  std::vector<int> ids;
  unsigned seq = 0;
  ForwardExtrasAsk extras;
};

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

// What the worker answers for a request: the same forward as the page's (no LM head rows).
std::shared_ptr<const ModelTrace> answer(const AppState& s, const Posted& p) {
  ForwardOptions o;
  o.top_k = 0;
  return std::make_shared<const ModelTrace>(transformer_forward(*find_model(s, "toy")->model, p.ids, o));
}

}  // namespace

TEST_CASE("model run: a typed text goes to the worker; the last complete text stays until its answer comes") {
  AppState s = with_toy();
  std::vector<Posted> posted;
  s.model_run.post = [&](const LoadedModel&, const std::vector<int>& ids, const ForwardExtrasAsk& x, unsigned seq) {
    posted.push_back({ids, seq, x});
  };
  s.model_run.worker = true;
  const std::string before = s.inputs.sentence, typed = before + " because";
  const unsigned revision = s.revision;
  AppInputs next = s.inputs;
  next.sentence = typed;
  CHECK(apply_inputs_in_background(s, next, 1.0));
  REQUIRE(posted.size() == 1);
  CHECK(s.model_run.pending);
  CHECK(s.inputs.sentence == before);  // the views show the last complete text
  CHECK(shown_sentence(s) == typed);   // the text box shows what was typed
  CHECK(s.revision == revision);
  CHECK(model_run_json(s)["pending"] == true);
  // the answer: applied, the trace is the worker's
  const auto trace = answer(s, posted[0]);
  CHECK(model_run_arrived(s, posted[0].seq, trace, {}, 12.5, -1, 4, 2.0));
  CHECK_FALSE(s.model_run.pending);
  CHECK(s.inputs.sentence == typed);
  CHECK(s.model.base_forward == trace);
  CHECK(s.model_run.last_where == "worker");
  CHECK(s.model_run.last_ms == 12.5);
  CHECK(s.model_run.incremental_from == 4);
  CHECK(model_run_json(s)["incremental_from"] == 4);
}

TEST_CASE("model run: an older answer, or one for a model unloaded or replaced since, is dropped") {
  AppState s = with_toy();
  std::vector<Posted> posted;
  s.model_run.post = [&](const LoadedModel&, const std::vector<int>& ids, const ForwardExtrasAsk& x, unsigned seq) {
    posted.push_back({ids, seq, x});
  };
  const std::string base = s.inputs.sentence;
  AppInputs next = s.inputs;
  next.sentence = base + " because";
  apply_inputs_in_background(s, next, 1.0);
  next.sentence = base + " because it";
  apply_inputs_in_background(s, next, 1.0);
  REQUIRE(posted.size() == 2);
  CHECK_FALSE(model_run_arrived(s, posted[0].seq, answer(s, posted[0]), {}, 1, -1, 0, 2.0));  // for text changed since
  CHECK(s.model_run.dropped == 1);
  CHECK(s.inputs.sentence == base);
  CHECK(model_run_arrived(s, posted[1].seq, answer(s, posted[1]), {}, 1, -1, 0, 2.0));
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
  CHECK_FALSE(model_run_arrived(s, asked.seq, old_answer, {}, 1, -1, 0, 4.0));
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
  CHECK_FALSE(model_run_arrived(s, posted.back().seq, answer(s, posted.back()), {}, 1, -1, 0, 7.0));
  CHECK(s.inputs.model == kHandmadeModel);
}

TEST_CASE("model run: a text past the model's positions is refused at once; the worker's failure is computed here") {
  AppState s = with_toy();
  int posts = 0;
  s.model_run.post = [&](const LoadedModel&, const std::vector<int>&, const ForwardExtrasAsk&, unsigned) { ++posts; };
  const std::string good = s.inputs.sentence;
  std::string long_text = good;
  for (int i = 0; i < 6; ++i) long_text += " the animal didn't cross the street";
  AppInputs next = s.inputs;
  next.sentence = long_text;
  CHECK_FALSE(apply_inputs_in_background(s, next, 1.0));
  CHECK(posts == 0);
  CHECK(s.inputs.sentence == good);
  CHECK(s.error.find("reads at most 32") != std::string::npos);
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

TEST_CASE("model run: the worker's extras (the shown layer's detail, the predictions, the Heads view's attribution) are shown as the page would compute them") {
  AppState s = with_toy();
  apply_state_json(s, {{"view", "heads"}, {"layer", 1}}, 0.5);
  std::vector<Posted> posted;
  s.model_run.post = [&](const LoadedModel&, const std::vector<int>& ids, const ForwardExtrasAsk& x, unsigned seq) {
    posted.push_back({ids, seq, x});
  };
  const std::string typed = s.inputs.sentence + " because it";
  AppInputs next = s.inputs;
  next.sentence = typed;
  next.token = static_cast<int>(model_token_ids(*find_model(s, "toy"), typed).size()) - 1;  // the last token
  apply_inputs_in_background(s, next, 1.0);
  REQUIRE(posted.size() == 1);
  const Posted& p = posted[0];
  const int T = static_cast<int>(p.ids.size());
  CHECK(p.extras.layer == 1);
  CHECK(p.extras.position == T - 1);
  CHECK(p.extras.top == kShownNextTokens);
  CHECK(p.extras.attribution);
  // the worker's side: the forward and its extras, through the bytes the worker sends
  const Transformer& model = *find_model(s, "toy")->model;
  const auto trace = answer(s, p);
  const ForwardExtras computed = forward_extras(model, *trace, p.extras);
  const PackedTrace packed = pack_trace(*trace, &computed);
  ForwardExtras extras;
  const auto received = std::make_shared<const ModelTrace>(unpack_trace(packed.header, packed.numbers.data(), packed.numbers.size(), &extras));
  REQUIRE(extras.detail);
  REQUIRE(extras.attribution);
  const auto detail = extras.detail;
  const auto attribution = extras.attribution;
  CHECK(model_run_arrived(s, p.seq, received, std::move(extras), 20, 7, 0, 2.0));
  CHECK(s.model.layer == detail);  // taken, not computed again
  CHECK(s.model.attribution == attribution);
  CHECK(s.model_run.extras_ms == 7);
  // what the page computes itself for the same text: the same numbers
  AppState page = with_toy();
  apply_state_json(page, {{"view", "heads"}, {"layer", 1}, {"sentence", typed}, {"token", next.token}}, 0.5);
  REQUIRE(page.model.layer);
  CHECK((s.model.layer->query.array() == page.model.layer->query.array()).all());
  CHECK((s.model.layer->stream_in.array() == page.model.layer->stream_in.array()).all());
  REQUIRE(s.model.layer->weights.size() == page.model.layer->weights.size());
  for (std::size_t h = 0; h < page.model.layer->weights.size(); ++h)
    CHECK((s.model.layer->weights[h].array() == page.model.layer->weights[h].array()).all());
  REQUIRE(s.model.next.size() == page.model.next.size());
  for (std::size_t k = 0; k < page.model.next.size(); ++k) {
    CHECK(s.model.next[k].id == page.model.next[k].id);
    CHECK(s.model.next[k].p == page.model.next[k].p);
  }
  REQUIRE(page.model.attribution);
  CHECK((s.model.attribution->heads.array() == page.model.attribution->heads.array()).all());
  CHECK(s.model.attribution->logit == page.model.attribution->logit);
  CHECK((s.model.attribution->mlps.array() == page.model.attribution->mlps.array()).all());
  CHECK(s.model.trace.weights == page.model.trace.weights);

  SUBCASE("extras for another layer than the one shown by the time they come: the page computes that layer") {
    next = s.inputs;
    next.sentence = typed + " was";
    apply_inputs_in_background(s, next, 3.0);
    REQUIRE(posted.size() == 2);
    const auto t2 = answer(s, posted[1]);
    const ForwardExtras e2 = forward_extras(model, *t2, posted[1].extras);
    const auto shown_detail = e2.detail;
    apply_state_json(s, {{"layer", 0}}, 3.5);  // the learner picks layer 0 meanwhile
    CHECK(model_run_arrived(s, posted[1].seq, t2, e2, 20, 7, 0, 4.0));
    REQUIRE(s.model.layer);
    CHECK(s.model.layer != shown_detail);
    CHECK(s.inputs.layer == 0);
    const LayerDetail own = layer_detail(model, *t2, 0);
    CHECK((s.model.layer->query.array() == own.query.array()).all());
  }
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
