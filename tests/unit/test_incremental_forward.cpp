// The incremental forward (transformer_forward_cached) against the whole forward on random models of
// each family at odd sizes: appending one token and three, a changed middle token, the same text, a
// shorter one and another one, every layer's summaries and thumbnails, streams, next tokens and
// final_normed compared. Bit for bit where the kernels sum in the same order (scalar; the SIMD
// backend's blocked kernel), to float rounding where the Eigen form's order follows T.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "../../src/core/attribution.h"
#include "../../src/core/transformer.h"
#include "test_helpers.h"

namespace {

using attn::test::tiny_llama;

// exact: every number equal (tol 0); else |a − b| ≤ tol · max(1, |b|) for each.
void check_close(float got, float want, double tol, const std::string& what) {
  INFO(what);
  if (tol == 0) CHECK(got == want);
  else CHECK(std::abs(static_cast<double>(got) - want) <= tol * std::max(1.0, std::abs(static_cast<double>(want))));
}

void check_matrix(const attn::Matrix& got, const attn::Matrix& want, double tol, const std::string& what) {
  INFO(what);
  REQUIRE(got.rows() == want.rows());
  REQUIRE(got.cols() == want.cols());
  if (tol == 0) {
    CHECK((got.array() == want.array()).all());
  } else {
    const double scale = std::max(1.0, static_cast<double>(want.cwiseAbs().maxCoeff()));
    CHECK(static_cast<double>((got - want).cwiseAbs().maxCoeff()) <= tol * scale);
  }
}

// Everything the views read from a trace. p_tol (when ≥ 0): the next tokens' probabilities' own
// tolerance (the kept rows' p where the LM head slices the vocabulary by T; see below).
void check_same_trace(const attn::ModelTrace& got, const attn::ModelTrace& want, double tol, double p_tol = -1) {
  REQUIRE(got.token_ids == want.token_ids);
  REQUIRE(got.stream_every == want.stream_every);
  REQUIRE(got.streams.size() == want.streams.size());
  for (std::size_t s = 0; s < want.streams.size(); ++s) check_matrix(got.streams[s], want.streams[s], tol, "stream " + std::to_string(s));
  check_matrix(got.final_normed, want.final_normed, tol, "final_normed");
  REQUIRE(got.layers.size() == want.layers.size());
  for (std::size_t l = 0; l < want.layers.size(); ++l) {
    const attn::LayerTrace &g = got.layers[l], &w = want.layers[l];
    REQUIRE(g.summaries.size() == w.summaries.size());
    REQUIRE(g.thumbnails.size() == w.thumbnails.size());
    for (std::size_t h = 0; h < w.summaries.size(); ++h) {
      const std::string where = "layer " + std::to_string(l) + " head " + std::to_string(h);
      const attn::HeadSummary &a = g.summaries[h], &b = w.summaries[h];
      INFO(where);
      CHECK(a.pattern == b.pattern);
      CHECK(a.top_key == b.top_key);
      CHECK(a.rows_used == b.rows_used);
      CHECK(a.sink == b.sink);
      check_close(a.previous, b.previous, tol, "previous");
      check_close(a.first, b.first, tol, "first");
      check_close(a.self, b.self, tol, "self");
      check_close(a.next, b.next, tol, "next");
      check_close(a.ahead, b.ahead, tol, "ahead");
      check_close(a.spread, b.spread, tol, "spread");
      check_close(a.top_key_share, b.top_key_share, tol, "top_key_share");
      check_close(a.first_value_ratio, b.first_value_ratio, tol, "first_value_ratio");
      check_matrix(g.thumbnails[h], w.thumbnails[h], tol, where + " thumbnail");
    }
  }
  REQUIRE(got.next.size() == want.next.size());
  for (std::size_t t = 0; t < want.next.size(); ++t) {
    REQUIRE(got.next[t].size() == want.next[t].size());
    for (std::size_t k = 0; k < want.next[t].size(); ++k) {
      INFO("next after " << t << ", rank " << k);
      CHECK(got.next[t][k].id == want.next[t][k].id);
      check_close(got.next[t][k].p, want.next[t][k].p, p_tol >= 0 ? p_tol : tol, "p");
    }
  }
}

std::vector<int> text(int n, int vocab, int seed) {
  std::vector<int> ids;
  for (int i = 0; i < n; ++i) ids.push_back((i * 7 + seed * 5 + 3) % vocab);
  return ids;
}

// Rows the kernel groups for this model's layers (what the incremental forward aligns its first
// row to): 1 where every row is alone or the Eigen form recomputes from the change itself.
int alignment(const attn::TransformerConfig& c, attn::Backend backend) {
  int align = 1;
  for (const attn::LayerSpec& spec : c.layers) {
    attn::AttentionProblem p;
    p.causal = c.causal, p.window = spec.window, p.softcap = c.attn_softcap;
    const int block = attn::attention_row_block(backend, p);
    if (block > align) align = block;  // one kernel: every blocked layer has the same
  }
  return align;
}

// One cache through a story of edits, each step against the whole forward.
void run_story(const attn::Transformer& model, attn::Backend backend, double tol, int top_k = 5) {
  const int V = model.config.vocab_size, align = alignment(model.config, backend);
  attn::ForwardOptions options;
  options.backend = backend;
  options.top_k = top_k;
  attn::ForwardCache cache;
  const auto step = [&](const std::vector<int>& ids, int expected_from, const char* what) {
    INFO(std::string(what) << " (T = " << ids.size() << ", rows aligned to " << align << ")");
    int from = -1;
    const attn::ModelTrace got = attn::transformer_forward_cached(model, ids, cache, options, &from);
    CHECK(from == expected_from);
    check_same_trace(got, attn::transformer_forward(model, ids, options), tol);
    CHECK(cache.token_ids == ids);
  };
  std::vector<int> ids = text(10, V, 1);
  step(ids, 0, "first text: all");
  ids.push_back(4 % V);
  step(ids, 10 / align * align, "append 1");
  for (int i = 0; i < 3; ++i) ids.push_back((i * 3 + 2) % V);
  step(ids, 11 / align * align, "append 3");
  ids[6] = (ids[6] + 1) % V;
  step(ids, 6 / align * align, "change position 6");
  step(ids, 14, "the same text: nothing");
  ids.resize(9);
  step(ids, 8 / align * align, "a prefix of 9: its last row again");
  ids = text(9, V, 2);
  step(ids, 0, "another text");
  // grown from one token to 17, one at a time
  ids.clear();
  cache.clear();
  for (int T = 1; T <= 17; ++T) {
    ids.push_back((T * 5 + 1) % V);
    step(ids, T == 1 ? 0 : (T - 1) / align * align, "growing");
  }
}

attn::TransformerConfig gpt2_odd() { return attn::gpt2_config(3, 3, 15, 32, 37); }  // head_dim 5

attn::TransformerConfig llama_odd() { return tiny_llama(3, 4, 2, 6, 14, 41); }  // GQA: 2 K/V heads for 4

attn::TransformerConfig mistral_odd() {
  attn::TransformerConfig c = tiny_llama(2, 3, 1, 4, 10, 29);
  c.family = "mistral";
  for (attn::LayerSpec& l : c.layers) l.window = 4;  // smaller than T
  return c;
}

attn::TransformerConfig gemma_odd() {
  attn::TransformerConfig c = tiny_llama(3, 3, 1, 6, 10, 31);
  c.family = "gemma2";
  c.norm_plus_one = c.sandwich_norms = c.qk_norm = true;
  c.embed_scale = std::sqrt(10.0f), c.score_scale = 1.0f / std::sqrt(7.0f);
  c.activation = attn::Activation::GeluTanh, c.attn_softcap = 2.5f, c.final_softcap = 3.0f;
  c.layers[0].window = 5, c.layers[2].window = 3;
  c.layers[0].rope.theta = 100;
  return c;
}

attn::TransformerConfig qwen_odd() {
  attn::TransformerConfig c = tiny_llama(2, 3, 3, 4, 12, 43);
  c.family = "qwen3";
  c.qkv_bias = c.qk_norm = true;
  return c;
}

attn::Transformer model_with_biases(const attn::TransformerConfig& c, std::uint64_t seed) {
  attn::Transformer m = attn::random_transformer(c, seed, attn::Dtype::F32, attn::WeightLayout::OutIn, 0.3);
  // biases too, so a missing one would show
  for (attn::TransformerBlock& b : m.blocks)
    for (attn::Vector* v : {&b.qkv_b, &b.o_b, &b.up_b, &b.down_b, &b.attn_norm_b, &b.mlp_norm_b})
      for (Eigen::Index i = 0; i < v->size(); ++i) (*v)[i] = 0.05f * static_cast<float>((i * 13 + seed) % 7) - 0.15f;
  return m;
}

}  // namespace

TEST_CASE("incremental forward: GPT-2 at head_dim 5, bit-identical on every kernel flavour and the scalar backend") {
  const attn::Transformer m = attn::random_transformer(gpt2_odd(), 11, attn::Dtype::F32, attn::WeightLayout::InOut, 0.3);
  run_story(m, attn::Backend::Scalar, 0);
  for (const std::string& flavour : attn::simd_flavours()) {
    CAPTURE(flavour);
    REQUIRE(attn::select_simd_flavour(flavour));
    run_story(m, attn::Backend::Simd, 0);
  }
  attn::select_simd_flavour("");
}

TEST_CASE("incremental forward: Llama-like (RMSNorm, RoPE, 4 query heads on 2 K/V heads), bit-identical") {
  const attn::Transformer m = model_with_biases(llama_odd(), 12);
  run_story(m, attn::Backend::Scalar, 0);
  run_story(m, attn::Backend::Simd, 0);
}

TEST_CASE("incremental forward: Qwen-like (q/k norm, q/k/v biases), bit-identical") {
  const attn::Transformer m = model_with_biases(qwen_odd(), 13);
  run_story(m, attn::Backend::Scalar, 0);
  run_story(m, attn::Backend::Simd, 0);
}

TEST_CASE("incremental forward: past the thumbnail's side (pooled thumbnails; the summaries' kept sums), bit-identical") {
  const attn::Transformer m = model_with_biases(llama_odd(), 19);
  for (const attn::Backend backend : {attn::Backend::Scalar, attn::Backend::Simd}) {
    const int align = alignment(m.config, backend);
    attn::ForwardOptions options;
    options.backend = backend;
    attn::ForwardCache cache;
    std::vector<int> ids = text(attn::kThumbnailSide + 3, m.config.vocab_size, 4);
    attn::transformer_forward_cached(m, ids, cache, options);
    for (int k = 0; k < 3; ++k) {  // one token at a time: each from the kept sums on
      const int old_T = static_cast<int>(ids.size());
      ids.push_back((k * 11 + 1) % m.config.vocab_size);
      INFO("T = " << ids.size() << ", backend " << static_cast<int>(backend));
      int from = -1;
      const attn::ModelTrace got = attn::transformer_forward_cached(m, ids, cache, options, &from);
      CHECK(from == old_T / align * align);
      CHECK(cache.layers[0].sums_row == static_cast<int>(ids.size()) / align * align);
      REQUIRE(got.layers[0].thumbnails[0].rows() == attn::kThumbnailSide);
      check_same_trace(got, attn::transformer_forward(m, ids, options), 0);
    }
  }
}

// The Eigen matrix form's layers sum in an order that depends on T (transformer.h): agreement to float
// rounding, a few units in the last place after the norms (wasm SIMD: Gemma's final norm 1.07e-6).
constexpr double kEigenFormTolerance = 2e-6;

TEST_CASE("incremental forward: Mistral-like window of 4 < T: bit-identical on scalar, to 2e-6 in the Eigen form") {
  const attn::Transformer m = model_with_biases(mistral_odd(), 14);
  run_story(m, attn::Backend::Scalar, 0);
  run_story(m, attn::Backend::Simd, kEigenFormTolerance);
}

TEST_CASE("incremental forward: Gemma-like (soft-caps, sandwich and q/k norms, (1 + w), windows): scalar exact, Eigen form to 2e-6") {
  const attn::Transformer m = model_with_biases(gemma_odd(), 15);
  run_story(m, attn::Backend::Scalar, 0);
  run_story(m, attn::Backend::Simd, kEigenFormTolerance);
}

// A layer's row from the cache (what the worker's attribution reads) against layer_detail's whole layer,
// and the attribution built from those rows against the one from the trace: to float rounding (a row
// alone sums as the kernels sum one row), at the first, a middle and the last position, on every family,
// with every layer's stream kept and with layer 0's only (the rows carried on from it).
TEST_CASE("incremental forward: a layer's row from the cache; the attribution from it") {
  const struct {
    const char* name;
    attn::TransformerConfig config;
  } cases[] = {{"gpt2", gpt2_odd()}, {"llama", llama_odd()}, {"mistral (window 4)", mistral_odd()},
               {"gemma", gemma_odd()}, {"qwen3", qwen_odd()}};
  for (const auto& k : cases)
    for (attn::Backend backend : {attn::Backend::Scalar, attn::Backend::Simd})
      for (std::int64_t stream_bytes : {std::int64_t{4} << 20, std::int64_t{1}}) {
      INFO(k.name << " on " << attn::backend_name(backend) << ", stream_bytes " << stream_bytes);
      const attn::Transformer m = model_with_biases(k.config, 23);
      attn::ForwardOptions options;
      options.backend = backend, options.top_k = 0, options.stream_bytes = stream_bytes;
      attn::ForwardCache cache;
      std::vector<int> ids = text(12, m.config.vocab_size, 4);
      attn::transformer_forward_cached(m, ids, cache, options);
      ids.push_back(5);  // the rows of an appended token too
      const attn::ModelTrace trace = attn::transformer_forward_cached(m, ids, cache, options);
      CHECK(trace.stream_every == (stream_bytes == 1 ? m.config.n_layer : 1));
      for (int position : {0, 6, 12}) {
        INFO("position " << position);
        const std::vector<attn::LayerDetail> rows = attn::cached_layer_rows(m, cache, position, backend);
        REQUIRE(static_cast<int>(rows.size()) == m.config.n_layer);
        for (int l = 0; l < m.config.n_layer; ++l) {
          const attn::LayerDetail whole = attn::layer_detail(m, trace, l, backend);
          check_matrix(rows[static_cast<std::size_t>(l)].stream_in, whole.stream_in.middleRows(position, 1), 1e-5,
                       "stream_in of layer " + std::to_string(l));
          check_matrix(rows[static_cast<std::size_t>(l)].head_outputs, whole.head_outputs.middleRows(position, 1), 1e-5,
                       "head_outputs of layer " + std::to_string(l));
        }
        const attn::LogitAttribution want = attn::attribute_logit(m, trace, position, 3, 7, backend),
                                     got = attn::attribute_logit(m, cache, position, 3, 7, backend);
        check_close(static_cast<float>(got.logit), static_cast<float>(want.logit), 0, "logit (the trace's own)");
        check_close(static_cast<float>(got.embeddings), static_cast<float>(want.embeddings), 1e-5, "embeddings");
        check_matrix(got.heads, want.heads, 1e-5, "heads");
        check_matrix(got.biases, want.biases, 1e-5, "biases");
        check_matrix(got.mlps, want.mlps, 1e-5, "mlps");
        CHECK(std::abs(got.sum() - want.sum()) <= 1e-4 * std::max(1.0, std::abs(want.sum())));
      }
    }
  const attn::Transformer a = model_with_biases(gpt2_odd(), 1), b = model_with_biases(gpt2_odd(), 2);
  attn::ForwardCache cache;
  CHECK_THROWS_WITH_AS(attn::cached_layer_rows(a, cache, 0), doctest::Contains("not made by this model"), std::invalid_argument);
  attn::transformer_forward_cached(a, text(5, a.config.vocab_size, 1), cache);
  CHECK_THROWS_WITH_AS(attn::cached_layer_rows(b, cache, 0), doctest::Contains("not made by this model"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(attn::cached_layer_rows(a, cache, 5), doctest::Contains("outside the text"), std::invalid_argument);
}

TEST_CASE("incremental forward: an encoder, an intervention or other options compute in full") {
  attn::ForwardCache cache;
  int from = -1;
  SUBCASE("an encoder: every query sees every key") {
    attn::TransformerConfig c = tiny_llama(2, 2, 2, 4, 8, 19);
    c.causal = false;
    const attn::Transformer m = model_with_biases(c, 16);
    std::vector<int> ids = text(6, 19, 1);
    attn::transformer_forward_cached(m, ids, cache, {}, &from);
    CHECK(from == 0);
    ids.push_back(3);
    const attn::ModelTrace got = attn::transformer_forward_cached(m, ids, cache, {}, &from);
    CHECK(from == 0);
    CHECK(cache.token_ids.empty());
    check_same_trace(got, attn::transformer_forward(m, ids), 0);
  }
  const attn::Transformer m = attn::random_transformer(gpt2_odd(), 17);
  std::vector<int> ids = text(12, 37, 3);
  attn::transformer_forward_cached(m, ids, cache, {}, &from);
  ids.push_back(5);
  SUBCASE("an intervention") {
    attn::Intervention edit;
    edit.ablate.push_back({1, 2});
    attn::ForwardOptions o;
    o.intervention = &edit;
    const attn::ModelTrace got = attn::transformer_forward_cached(m, ids, cache, o, &from);
    CHECK(from == 0);
    check_same_trace(got, attn::transformer_forward(m, ids, o), 0);
  }
  SUBCASE("other options, another backend, another model") {
    attn::ForwardOptions o;
    o.top_k = 3;
    check_same_trace(attn::transformer_forward_cached(m, ids, cache, o, &from), attn::transformer_forward(m, ids, o), 0);
    CHECK(from == 0);
    o.backend = attn::Backend::Scalar;
    ids.push_back(6);
    check_same_trace(attn::transformer_forward_cached(m, ids, cache, o, &from), attn::transformer_forward(m, ids, o), 0);
    CHECK(from == 0);
    attn::Transformer other = attn::random_transformer(gpt2_odd(), 18);
    ids.push_back(7);
    check_same_trace(attn::transformer_forward_cached(other, ids, cache, o, &from), attn::transformer_forward(other, ids, o), 0);
    CHECK(from == 0);
    ids.push_back(8);
    check_same_trace(attn::transformer_forward_cached(other, ids, cache, o, &from), attn::transformer_forward(other, ids, o), 0);
    CHECK(from == static_cast<int>(ids.size()) - 1);  // scalar: every row alone
    other.blocks[1].qkv.f32[0] += 0.5f;  // the same object, changed in place (as a trainer would)
    ids.push_back(9);
    check_same_trace(attn::transformer_forward_cached(other, ids, cache, o, &from), attn::transformer_forward(other, ids, o), 0);
    CHECK(from == 0);
  }
}

TEST_CASE("incremental forward: the kept streams change every (T grows past the budget) and predict_from") {
  const attn::Transformer m = attn::random_transformer(attn::gpt2_config(4, 2, 8, 64, 23), 19);
  attn::ForwardOptions o;
  o.stream_bytes = 4 * 8 * 4 * 10;  // all 4 layers' streams up to T = 10, every 2nd up to 20, ...
  o.predict_from = 7;
  attn::ForwardCache cache;
  std::vector<int> ids;
  for (int T = 1; T <= 45; ++T) {
    ids.push_back((T * 3) % 23);
    INFO("T = " << T);
    check_same_trace(attn::transformer_forward_cached(m, ids, cache, o), attn::transformer_forward(m, ids, o), 0);
  }
}

// The LM head reads the vocabulary in slices of 2^18 / T logits (at least 256): past 2^18 / T tokens
// the whole forward's running softmax sum, and so the last bits of every p, follow T. The kept rows'
// p are the earlier run's: equal to float rounding (1e-6 relative), the ids and their order exact.
TEST_CASE("incremental forward: a vocabulary sliced by T keeps the earlier rows' p to float rounding") {
  const attn::Transformer m = attn::random_transformer(attn::gpt2_config(2, 3, 15, 32, 20011), 21, attn::Dtype::F32,
                                                       attn::WeightLayout::InOut, 0.3);
  attn::ForwardOptions o;
  o.top_k = 40;
  attn::ForwardCache cache;
  std::vector<int> ids;
  for (int T = 1; T <= 20; ++T) {
    ids.push_back((T * 977) % 20011);
    INFO("T = " << T);
    check_same_trace(attn::transformer_forward_cached(m, ids, cache, o), attn::transformer_forward(m, ids, o), 0, 1e-6);
  }
}

// A timing print, not an assertion (run with -tc='*timing*' --no-skip): appending one token to a
// GPT-2-small-shaped random model against the whole forward.
TEST_CASE("incremental forward: timing" * doctest::skip()) {
  const attn::TransformerConfig c = attn::gpt2_config(12, 12, 768, 1024, 50257);
  const attn::Transformer m = attn::random_transformer(c, 20);
  using clock = std::chrono::steady_clock;
  const auto ms = [](clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); };
  std::printf("GPT-2 small shape (12 layers, 12 heads, d 768, vocab 50257), %s, SIMD %s\n", "float", attn::simd_flavour());
  std::printf("%6s %14s %16s %10s %12s\n", "T", "full (ms)", "append 1 (ms)", "from", "cache (MB)");
  std::printf("(p of the kept rows compared to 1e-6: the vocabulary's slices follow T)\n");
  for (int T : {64, 256}) {
    std::vector<int> ids = text(T, c.vocab_size, 4);
    attn::ForwardCache cache;
    attn::transformer_forward_cached(m, ids, cache);
    ids.push_back(123);
    auto t0 = clock::now();
    const attn::ModelTrace full = attn::transformer_forward(m, ids);
    const double full_ms = ms(clock::now() - t0);
    int from = -1;
    t0 = clock::now();
    const attn::ModelTrace got = attn::transformer_forward_cached(m, ids, cache, {}, &from);
    const double cached_ms = ms(clock::now() - t0);
    // of which: the heads' summaries and thumbnails over every row (what the cache cannot shorten)
    t0 = clock::now();
    for (const attn::ForwardCache::Layer& l : cache.layers)
      for (std::size_t h = 0; h < l.weight_rows.size(); ++h) {
        attn::Matrix w = attn::Matrix::Zero(T + 1, T + 1);
        for (int i = 0; i <= T; ++i)
          std::copy(l.weight_rows[h].begin() + static_cast<std::ptrdiff_t>(l.row_start[static_cast<std::size_t>(i)]),
                    l.weight_rows[h].begin() + static_cast<std::ptrdiff_t>(l.row_start[static_cast<std::size_t>(i) + 1]),
                    w.row(i).data());
        const attn::Matrix v = l.value.middleCols(static_cast<Eigen::Index>(h / c.kv_group()) * c.head_dim, c.head_dim);
        volatile float sink = attn::summarize_head(w, true, &v).spread + attn::max_pooled(w, attn::kThumbnailSide)(0, 0);
        (void)sink;
      }
    const double summary_ms = ms(clock::now() - t0);
    std::printf("%6d %14.1f %16.1f %10d %12.1f   (summaries and thumbnails: %.1f ms)\n", T + 1, full_ms, cached_ms, from,
                cache.bytes() / 1048576.0, summary_ms);
    check_same_trace(got, full, 0, 1e-6);
  }
}

// The kernels' first_query: rows P … T − 1 alone against all T keys give the rows the whole problem
// gives, bit for bit where P is a multiple of attention_row_block (the scalar kernel: any P), to
// float rounding in the Eigen form; with a window the mask reads first_query + i too.
TEST_CASE("incremental forward: the attention kernels' first_query at odd sizes") {
  attn::Rng rng(22);
  for (int window : {0, 3})
    for (int T : {1, 5, 17, 40})
      for (attn::Backend backend : {attn::Backend::Scalar, attn::Backend::Eigen, attn::Backend::Simd}) {
        const int d = 5;
        const attn::Matrix q = attn::test::random_matrix(rng, T, d), k = attn::test::random_matrix(rng, T, d),
                           v = attn::test::random_matrix(rng, T, d);
        attn::AttentionProblem p;
        p.query = q.data(), p.key = k.data(), p.value = v.data();
        p.Tq = p.Tk = T, p.d = p.dv = d, p.scale = 0.7f, p.causal = true, p.window = window;
        attn::Matrix out(T, d), w(T, T);
        attn::attention_forward(backend, p, out.data(), w.data());
        const int block = attn::attention_row_block(backend, p);
        for (int first = 0; first < T; ++first) {
          if (block > 1 && first % block != 0) continue;
          attn::AttentionProblem rows = p;
          rows.query = q.data() + static_cast<std::ptrdiff_t>(first) * d, rows.Tq = T - first, rows.first_query = first;
          attn::Matrix out_rows(T - first, d), w_rows(T - first, T);
          attn::attention_forward(backend, rows, out_rows.data(), w_rows.data());
          INFO(attn::backend_name(backend) << " window " << window << " T " << T << " first " << first);
          check_matrix(out_rows, out.bottomRows(T - first), block == 0 ? 1e-6 : 0, "output");
          check_matrix(w_rows, w.bottomRows(T - first), block == 0 ? 1e-6 : 0, "weights");
        }
      }
}
