// Interventions and attribution on small random models (GPT-2's layout, a Llama block, a Gemma-style
// block with sandwich norms, caps and windows): each change does exactly what it says and nothing
// else, reruns match full runs bit for bit, attributions add up to the logit.
// (Against PyTorch forward hooks: tests/cli/interventions.test.mjs.)
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include "../../src/core/attribution.h"
#include "../../src/core/transformer.h"
#include "test_helpers.h"

namespace {

using attn::AblateKind;
using attn::Intervention;
using attn::Matrix;
using attn::ModelTrace;
using attn::Transformer;

std::vector<int> ids_of(int n, int vocab, int salt = 0) {
  std::vector<int> ids;
  for (int i = 0; i < n; ++i) ids.push_back((i * 7 + 3 + salt * (i == n / 2 ? 5 : 0)) % vocab);
  return ids;
}

attn::TransformerConfig gpt2_shape() { return attn::gpt2_config(3, 3, 24, 32, 29); }

attn::TransformerConfig gemma_shape() {
  attn::TransformerConfig c = attn::test::tiny_llama(3, 4, 2, 6, 20, 31);
  c.norm_plus_one = true, c.sandwich_norms = true, c.embed_scale = 2.0f;
  c.gated_mlp = true, c.activation = attn::Activation::GeluTanh;
  c.attn_softcap = 3.0f, c.final_softcap = 5.0f, c.qk_norm = true;
  c.layers[1].window = 3;
  return c;
}

// A model whose norm weights are random too, so frozen scales are not all 1.
Transformer model_with_norm_jitter(const attn::TransformerConfig& c, std::uint64_t seed) {
  Transformer m = attn::random_transformer(c, seed, attn::Dtype::F32, attn::WeightLayout::InOut, 0.3);
  attn::Rng rng(seed + 1);
  const auto jitter = [&](attn::Vector& v) {
    for (Eigen::Index i = 0; i < v.size(); ++i) v[i] += static_cast<float>(0.3 * rng.normal());
  };
  for (attn::TransformerBlock& b : m.blocks) {
    for (attn::Vector* v : {&b.attn_norm_w, &b.mlp_norm_w, &b.post_attn_norm_w, &b.post_mlp_norm_w, &b.attn_norm_b,
                            &b.mlp_norm_b, &b.o_b, &b.qkv_b})
      jitter(*v);
  }
  jitter(m.final_norm_w), jitter(m.final_norm_b);
  return m;
}

float max_diff(const Matrix& a, const Matrix& b) { return (a - b).cwiseAbs().maxCoeff(); }

// Every number a run keeps: thumbnails, streams, the final normed rows, the next tokens.
bool same_run(const ModelTrace& a, const ModelTrace& b) {
  if (a.streams.size() != b.streams.size() || a.layers.size() != b.layers.size()) return false;
  for (std::size_t i = 0; i < a.streams.size(); ++i)
    if (a.streams[i] != b.streams[i]) return false;
  for (std::size_t l = 0; l < a.layers.size(); ++l)
    for (std::size_t h = 0; h < a.layers[l].thumbnails.size(); ++h)
      if (a.layers[l].thumbnails[h] != b.layers[l].thumbnails[h]) return false;
  if (a.final_normed != b.final_normed || a.next.size() != b.next.size()) return false;
  for (std::size_t t = 0; t < a.next.size(); ++t) {
    if (a.next[t].size() != b.next[t].size()) return false;
    for (std::size_t k = 0; k < a.next[t].size(); ++k)
      if (a.next[t][k].id != b.next[t][k].id || a.next[t][k].p != b.next[t][k].p) return false;
  }
  return true;
}

ModelTrace run(const Transformer& m, const std::vector<int>& ids, const Intervention* edit = nullptr,
               std::int64_t stream_bytes = 4 << 20) {
  attn::ForwardOptions o;
  o.intervention = edit;
  o.stream_bytes = stream_bytes;
  return attn::transformer_forward(m, ids, o);
}

}  // namespace

TEST_CASE("an empty intervention is the plain forward, bit for bit") {
  for (const attn::TransformerConfig& c : {gpt2_shape(), gemma_shape()}) {
    const Transformer m = model_with_norm_jitter(c, 5);
    const std::vector<int> ids = ids_of(9, c.vocab_size);
    const Intervention none;
    CHECK(same_run(run(m, ids), run(m, ids, &none)));
    CHECK(same_run(run(m, ids), attn::rerun_forward(m, run(m, ids), none)));
  }
}

TEST_CASE("a rerun from the first changed layer equals the whole forward with the change, bit for bit") {
  for (const attn::TransformerConfig& c : {gpt2_shape(), gemma_shape()}) {
    const Transformer m = model_with_norm_jitter(c, 6);
    const std::vector<int> ids = ids_of(10, c.vocab_size);
    for (std::int64_t stream_bytes : {std::int64_t{4} << 20, std::int64_t{1}}) {  // every layer's stream kept, or layer 0's only
      Intervention edit;
      edit.ablate = {{2, 1}};
      edit.ablate_kind = AblateKind::Mean;
      edit.cuts.push_back({1, -1, 5, 4});
      const ModelTrace base = run(m, ids, nullptr, stream_bytes);
      const ModelTrace full = run(m, ids, &edit, stream_bytes);
      const ModelTrace again = attn::rerun_forward(m, base, edit);
      CHECK(same_run(full, again));
      // the layer before the first change is the unchanged run's; a layer after it is not
      CHECK(attn::layer_detail(m, full, 0).head_outputs == attn::layer_detail(m, base, 0).head_outputs);
      CHECK(attn::layer_detail(m, full, 2).head_outputs != attn::layer_detail(m, base, 2).head_outputs);
    }
  }
}

TEST_CASE("ablation: zero and mean replace only that head's output, and mean never looks ahead") {
  const attn::TransformerConfig c = gpt2_shape();
  const Transformer m = model_with_norm_jitter(c, 7);
  const std::vector<int> ids = ids_of(8, c.vocab_size);
  const ModelTrace base = run(m, ids);
  const int hd = c.head_dim;
  const Matrix own = attn::layer_detail(m, base, 1).head_outputs;
  for (AblateKind kind : {AblateKind::Zero, AblateKind::Mean}) {
    Intervention edit;
    edit.ablate = {{1, 2}};
    edit.ablate_kind = kind;
    const ModelTrace t = attn::rerun_forward(m, base, edit);
    const attn::LayerDetail d = attn::layer_detail(m, t, 1);
    // the other heads and this head's weights are untouched
    CHECK(d.head_outputs.leftCols(2 * hd) == own.leftCols(2 * hd));
    CHECK(d.weights[2] == attn::layer_detail(m, base, 1).weights[2]);
    const Matrix out = d.head_outputs.middleCols(2 * hd, hd);
    if (kind == AblateKind::Zero) {
      CHECK(out.isZero(0));
    } else {
      for (int i = 0; i < 8; ++i)
        CHECK(max_diff(out.row(i), own.middleCols(2 * hd, hd).topRows(i + 1).colwise().mean()) < 1e-6f);
    }
    CHECK(t.final_normed != base.final_normed);
  }
  // a causal model stays causal: a different last token changes nothing before it
  std::vector<int> other = ids;
  other.back() = (other.back() + 1) % c.vocab_size;
  Intervention mean;
  mean.ablate = {{0, 0}, {1, 1}};
  mean.ablate_kind = AblateKind::Mean;
  const ModelTrace a = run(m, ids, &mean), b = run(m, other, &mean);
  CHECK(a.final_normed.topRows(7) == b.final_normed.topRows(7));
}

TEST_CASE("a cut link gets weight 0 and the rest of its row is renormalised by the softmax") {
  for (const attn::TransformerConfig& c : {gpt2_shape(), gemma_shape()}) {
    const Transformer m = model_with_norm_jitter(c, 8);
    const std::vector<int> ids = ids_of(7, c.vocab_size);
    const ModelTrace base = run(m, ids);
    Intervention edit;
    edit.cuts = {{0, 1, 5, 4}, {0, -1, 6, 6}};
    const ModelTrace t = attn::rerun_forward(m, base, edit);
    const attn::LayerDetail was = attn::layer_detail(m, base, 0), now = attn::layer_detail(m, t, 0);
    for (int h = 0; h < c.n_head; ++h) {
      const Matrix& w = was.weights[static_cast<std::size_t>(h)];
      const Matrix& v = now.weights[static_cast<std::size_t>(h)];
      CHECK(v(6, 6) == 0.0f);
      for (int j = 0; j < 6; ++j)
        if (w(6, j) > 0) CHECK(std::fabs(v(6, j) - w(6, j) / (1 - w(6, 6))) < 1e-5f);
      CHECK((v(5, 4) == 0.0f) == (h == 1));
      CHECK(max_diff(v.topRows(5), w.topRows(5)) < 1e-6f);  // a head with cuts takes the Eigen kernel: the last bit may differ
      // the views' recomputed head sees the same cuts
      attn::AttentionOptions o = attn::model_attention_options(c, 0);
      o.cuts = attn::head_cuts(t.intervention, 0, h);
      CHECK(max_diff(attn::head_trace(c, now, h, o).weights, v) < 1e-5f);
    }
  }
}

TEST_CASE("interventions that cannot be run are refused by name") {
  const attn::TransformerConfig c = gemma_shape();  // layer 1 has a window of 3
  const Transformer m = model_with_norm_jitter(c, 9);
  const ModelTrace base = run(m, ids_of(6, c.vocab_size));
  const auto refused = [&](const Intervention& e, const char* words) {
    bool thrown = false;
    try {
      attn::rerun_forward(m, base, e);
    } catch (const std::invalid_argument& x) {
      thrown = true;
      CHECK_MESSAGE(std::string(x.what()).find(words) != std::string::npos, x.what());
    }
    CHECK_MESSAGE(thrown, words);
  };
  Intervention e;
  e.ablate = {{3, 0}};
  refused(e, "ablate 3.0: layer 3 is outside the model");
  e.ablate = {{0, 4}};
  refused(e, "head 4 is outside the layer");
  e = {};
  e.cuts = {{0, 0, 0, 0}};
  refused(e, "leaves query 0 no key");
  e.cuts = {{0, -1, 2, 3}};
  refused(e, "hidden by the mask already");
  e.cuts = {{1, 2, 5, 1}};  // the window of 3 hides key 1 from query 5
  refused(e, "outside the window");
  e.cuts = {{1, 2, 5, 5}, {1, -1, 5, 4}, {1, 2, 5, 3}};  // every key the window leaves query 5
  refused(e, "leaves query 5 no key");
  e.cuts = {{0, 0, 6, 0}};
  refused(e, "outside the text");
  e = {};
  e.head_patches.push_back({0, 1, Matrix::Zero(5, c.head_dim)});
  refused(e, "the two texts must have the same number of tokens");
  e.head_patches[0].output = Matrix::Zero(6, c.head_dim);
  e.ablate = {{0, 1}};
  refused(e, "ablated and patched at once");
  e = {};
  e.stream_patches.push_back({0, 6, attn::Vector::Zero(c.d_model)});
  refused(e, "position 6 is outside the text");
}

TEST_CASE("patching copies exactly what it names from the other run") {
  const attn::TransformerConfig c = gpt2_shape();
  const Transformer m = model_with_norm_jitter(c, 10);
  const std::vector<int> a_ids = ids_of(8, c.vocab_size), b_ids = ids_of(8, c.vocab_size, 1);
  REQUIRE(a_ids != b_ids);
  const ModelTrace a = run(m, a_ids), b = run(m, b_ids);
  // head 2.1 of B takes A's output; the other heads keep B's
  Intervention one;
  one.head_patches.push_back(attn::head_patch_from(m, a, 2, 1));
  const attn::LayerDetail d = attn::layer_detail(m, attn::rerun_forward(m, b, one), 2);
  const int hd = c.head_dim;
  CHECK(d.head_outputs.middleCols(hd, hd) == attn::layer_detail(m, a, 2).head_outputs.middleCols(hd, hd));
  CHECK(d.head_outputs.leftCols(hd) == attn::layer_detail(m, b, 2).head_outputs.leftCols(hd));
  // A's stream at the one position where the texts differ, entering layer 0: B's run becomes A's
  const int differs = 4;
  REQUIRE(a_ids[differs] != b_ids[differs]);
  Intervention row;
  row.stream_patches.push_back(attn::stream_patch_from(m, a, 0, differs));
  const ModelTrace patched = attn::rerun_forward(m, b, row);
  CHECK(patched.final_normed == a.final_normed);
  const attn::Sweep s = attn::stream_patch_sweep(m, a, b, 7, 5);
  CHECK(s.values(0, differs) == doctest::Approx(1.0));
  CHECK(s.values(0, 0) == doctest::Approx(0.0));  // positions that agree already restore nothing
}

TEST_CASE("direct logit attribution adds up to the logit, in every kind of block") {
  attn::TransformerConfig llama = attn::test::tiny_llama(2, 4, 1, 6, 18, 27);
  for (const attn::TransformerConfig& c : {gpt2_shape(), llama, gemma_shape()}) {
    const Transformer m = model_with_norm_jitter(c, 11);
    const ModelTrace t = run(m, ids_of(9, c.vocab_size));
    for (int position : {0, 4, 8}) {
      const attn::LogitAttribution a = attn::attribute_logit(m, t, position, 3);
      CHECK(a.sum() == doctest::Approx(a.logit).epsilon(1e-4));
      CHECK(a.post_norms_frozen == c.sandwich_norms);
      CHECK((a.offset != 0) == (c.norm == attn::NormKind::LayerNorm));
      // the logit is the one before the final soft-cap
      CHECK(a.logit == doctest::Approx(attn::logits_at(m, t, position, false)[3]).epsilon(1e-5));
      // against: the difference of the two attributions, part by part
      const attn::LogitAttribution b = attn::attribute_logit(m, t, position, 7), d = attn::attribute_logit(m, t, position, 3, 7);
      CHECK(max_diff(d.heads, a.heads - b.heads) < 1e-4f);
      CHECK(d.logit == doctest::Approx(a.logit - b.logit).epsilon(1e-5));
    }
    CHECK_THROWS_WITH_AS(attn::attribute_logit(m, t, 9, 3), doctest::Contains("outside the text"), std::invalid_argument);
    CHECK_THROWS_WITH_AS(attn::attribute_logit(m, t, 0, c.vocab_size), doctest::Contains("outside the vocabulary"),
                         std::invalid_argument);
  }
}

TEST_CASE("value-weighted attention and rollout") {
  const attn::TransformerConfig c = attn::test::tiny_llama(2, 4, 2, 6, 18, 27);
  const Transformer m = model_with_norm_jitter(c, 12);
  const ModelTrace t = run(m, ids_of(6, c.vocab_size));
  const attn::LayerDetail d = attn::layer_detail(m, t, 1);
  const int head = 3, g = c.kv_head_of(head), hd = c.head_dim;
  const attn::ValueWeighted v = attn::value_weighted(c, m.blocks[1], d, head);
  // by hand: head 3's rows of W_O (x·W layout: (H·hd, C)) applied to its K/V head's values
  const Matrix wo = m.blocks[1].o.output_columns(0, c.d_model).middleRows(head * hd, hd);
  for (int j = 0; j < 6; ++j) {
    const float norm = (d.value.block(j, g * hd, 1, hd) * wo).norm();
    CHECK(v.value_norms[j] == doctest::Approx(norm).epsilon(1e-5));
    for (int i = 0; i < 6; ++i) CHECK(v.weighted(i, j) == doctest::Approx(d.weights[head](i, j) * norm).epsilon(1e-5));
  }
  const Matrix a0 = attn::head_mean_weights(attn::layer_detail(m, t, 0)), a1 = attn::head_mean_weights(d);
  const std::vector<Matrix> r = attn::attention_rollout({a0, a1});
  const Matrix i6 = Matrix::Identity(6, 6);
  CHECK(max_diff(r[0], 0.5f * a0 + 0.5f * i6) < 1e-6f);
  CHECK(max_diff(r[1], (0.5f * a1 + 0.5f * i6) * r[0]) < 1e-6f);
  for (int i = 0; i < 6; ++i) CHECK(r[1].row(i).sum() == doctest::Approx(1.0f));
  for (int i = 0; i < 6; ++i)
    for (int j = i + 1; j < 6; ++j) CHECK(r[1](i, j) == 0.0f);  // causal stays causal
}

TEST_CASE("sweeps: each cell is its own rerun, and Cancel stops them") {
  const attn::TransformerConfig c = gpt2_shape();
  const Transformer m = model_with_norm_jitter(c, 13);
  const std::vector<int> ids = ids_of(7, c.vocab_size);
  const ModelTrace base = run(m, ids);
  const attn::Sweep s = attn::ablation_sweep(m, base, 6, 4, AblateKind::Zero);
  CHECK(s.done == 9);
  CHECK(s.baseline == doctest::Approx(attn::token_log_prob(m, base, 6, 4)));
  Intervention one;
  one.ablate = {{1, 2}};
  CHECK(s.values(1, 2) == doctest::Approx(attn::token_log_prob(m, run(m, ids, &one), 6, 4) - s.baseline).epsilon(1e-6));
  const attn::Sweep stopped = attn::ablation_sweep(m, base, 6, 4, AblateKind::Mean, [](int done, int total) {
    CHECK(total == 9);
    return done < 3;
  });
  CHECK(stopped.cancelled);
  CHECK(stopped.done == 3);
  CHECK(std::isfinite(stopped.values(0, 2)));
  CHECK(std::isnan(stopped.values(1, 0)));
  // A stopped sweep continues where it stopped, one cell per call here: the same numbers, bit for bit.
  const attn::Sweep whole = attn::ablation_sweep(m, base, 6, 4, AblateKind::Mean);
  attn::Sweep resumed = stopped;
  for (int calls = 0; resumed.done < 9 && calls < 20; ++calls)
    resumed = attn::ablation_sweep(m, base, 6, 4, AblateKind::Mean, [](int, int) { return false; }, attn::Backend::Simd, &resumed);
  CHECK(resumed.done == 9);
  CHECK(resumed.baseline == whole.baseline);
  CHECK((resumed.values.array() == whole.values.array()).all());
  const attn::Sweep patched_part = attn::head_patch_sweep(m, run(m, ids_of(7, c.vocab_size, 5)), base, 6, 4,
                                                          [](int done, int) { return done < 4; });
  const attn::Sweep patched_rest = attn::head_patch_sweep(m, run(m, ids_of(7, c.vocab_size, 5)), base, 6, 4, {},
                                                          attn::Backend::Simd, &patched_part);
  const attn::Sweep patched_whole = attn::head_patch_sweep(m, run(m, ids_of(7, c.vocab_size, 5)), base, 6, 4);
  CHECK(patched_rest.done == 9);
  CHECK((patched_rest.values.array() == patched_whole.values.array() || patched_whole.values.array().isNaN()).all());
  // nothing to restore between a run and itself
  const attn::Sweep same = attn::head_patch_sweep(m, base, base, 6, 4);
  CHECK(std::isnan(same.values(2, 2)));
  CHECK(std::isnan(attn::restored_fraction(1.0, 0.5, 0.495)));
  CHECK(attn::restored_fraction(0.75, 1.0, 0.5) == doctest::Approx(0.5));
}
