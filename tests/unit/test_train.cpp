// The trainer: every layer's backward against central finite differences in double, the whole tiny
// model too, the float graph against the double one, AdamW's first step by hand, determinism, the
// corpus and its held-out rule, refused settings. (One step against PyTorch: tests/cli/train.test.mjs.)
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "../../src/api/tokenizer_files.h"
#include "../../src/api/train_files.h"
#include "../../src/core/random.h"
#include "../../src/core/train.h"

namespace L = attn::layers;

namespace {

std::vector<double> randoms(attn::Rng& rng, std::size_t n, double spread = 1.0) {
  std::vector<double> v(n);
  for (double& x : v) x = rng.normal() * spread;
  return v;
}

// Central differences of objective() in every element of x against the analytical gradient dx:
// |numeric − analytic| ≤ tol · max(1, |numeric|). With h = 1e-5 in double the truncation error is
// ~h² ≈ 1e-10 and the rounding ~1e-16/h ≈ 1e-11, so tol = 1e-6 fails on any real mistake.
void check_gradient(const char* what, std::vector<double>& x, const std::vector<double>& dx,
                    const std::function<double()>& objective, double tol = 1e-6) {
  REQUIRE(x.size() == dx.size());
  const double h = 1e-5;
  double worst = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double keep = x[i];
    x[i] = keep + h;
    const double up = objective();
    x[i] = keep - h;
    const double down = objective();
    x[i] = keep;
    const double numeric = (up - down) / (2 * h);
    worst = std::max(worst, std::abs(numeric - dx[i]) / std::max(1.0, std::abs(numeric)));
  }
  INFO(what << ": worst error " << worst);
  CHECK(worst <= tol);
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

attn::Gpt2Config tiny_config() {
  attn::Gpt2Config c;
  c.n_layer = 2, c.n_head = 2, c.n_embd = 8, c.n_positions = 6, c.vocab_size = 11;
  return c;
}

}  // namespace

TEST_CASE("train layers: encoder backward (a token used twice collects both rows)") {
  attn::Rng rng(1);
  const int N = 4, C = 5, V = 4, P = 4;
  const int ids[] = {1, 3, 1, 0}, pos[] = {0, 1, 2, 3};
  auto wte = randoms(rng, V * C), wpe = randoms(rng, P * C), R = randoms(rng, N * C);
  std::vector<double> out(N * C), dwte(V * C, 0), dwpe(P * C, 0);
  const auto objective = [&] {
    L::encoder_forward(out.data(), ids, pos, wte.data(), wpe.data(), N, C);
    return dot(out, R);
  };
  L::encoder_backward(dwte.data(), dwpe.data(), R.data(), ids, pos, N, C);
  check_gradient("wte", wte, dwte, objective);
  check_gradient("wpe", wpe, dwpe, objective);
  CHECK(dwte[1 * C] == doctest::Approx(R[0] + R[2 * C]));  // token 1 at positions 0 and 2
  CHECK(dwte[2 * C] == 0.0);                                // token 2 unused
}

TEST_CASE("train layers: layernorm backward (input, gain, bias)") {
  attn::Rng rng(2);
  const int N = 3, C = 7;
  auto inp = randoms(rng, N * C, 2.0), w = randoms(rng, C), b = randoms(rng, C), R = randoms(rng, N * C);
  std::vector<double> out(N * C), mean(N), rstd(N), dinp(N * C, 0), dw(C, 0), db(C, 0);
  const auto objective = [&] {
    L::layernorm_forward(out.data(), mean.data(), rstd.data(), inp.data(), w.data(), b.data(), N, C, 1e-5);
    return dot(out, R);
  };
  objective();
  L::layernorm_backward(dinp.data(), dw.data(), db.data(), R.data(), inp.data(), w.data(), mean.data(), rstd.data(), N, C);
  check_gradient("inp", inp, dinp, objective);
  check_gradient("w", w, dw, objective);
  check_gradient("b", b, db, objective);
  // by hand: the row (1, 2, 3) with unit gain → (−1.2247, 0, 1.2247)
  const double x3[] = {1, 2, 3}, ones[] = {1, 1, 1}, zeros[] = {0, 0, 0};
  double o3[3], m1, r1;
  L::layernorm_forward(o3, &m1, &r1, x3, ones, zeros, 1, 3, 0.0);
  CHECK(o3[0] == doctest::Approx(-std::sqrt(1.5)).epsilon(1e-12));
  CHECK(o3[1] == doctest::Approx(0.0));
}

TEST_CASE("train layers: matmul + bias backward (Conv1D layout x·W)") {
  attn::Rng rng(3);
  const int N = 3, C = 5, OC = 7;
  auto inp = randoms(rng, N * C), w = randoms(rng, C * OC), bias = randoms(rng, OC), R = randoms(rng, N * OC);
  std::vector<double> out(N * OC), dinp(N * C, 0), dw(C * OC, 0), dbias(OC, 0);
  const auto objective = [&] {
    L::matmul_forward(out.data(), inp.data(), w.data(), bias.data(), N, C, OC);
    return dot(out, R);
  };
  L::matmul_backward_input(dinp.data(), R.data(), w.data(), N, C, OC);
  L::matmul_backward_weights(dw.data(), dbias.data(), R.data(), inp.data(), N, C, OC);
  check_gradient("inp", inp, dinp, objective);
  check_gradient("w", w, dw, objective);
  check_gradient("bias", bias, dbias, objective);
  // the float path (the matmul kernels) agrees with the double loops
  std::vector<float> fi(inp.begin(), inp.end()), fw(w.begin(), w.end()), fb(bias.begin(), bias.end()), fo(N * OC);
  L::matmul_forward(fo.data(), fi.data(), fw.data(), fb.data(), N, C, OC);
  objective();
  for (int i = 0; i < N * OC; ++i) CHECK(fo[i] == doctest::Approx(out[i]).epsilon(1e-5));
}

TEST_CASE("train layers: attention backward, softmax VJP and causal mask, with and without 1/sqrt(d)") {
  for (bool scale : {true, false}) {
    attn::Rng rng(scale ? 4 : 5);
    const int T = 5, C = 6, H = 2;
    auto qkv = randoms(rng, T * 3 * C), R = randoms(rng, T * C);
    std::vector<double> out(T * C), preatt(H * T * T), att(H * T * T), dqkv(T * 3 * C, 0), dpre(H * T * T), datt(H * T * T);
    const auto objective = [&] {
      L::attention_forward(out.data(), preatt.data(), att.data(), qkv.data(), T, C, H, scale);
      return dot(out, R);
    };
    objective();
    for (int h = 0; h < H; ++h)
      for (int t = 0; t < T; ++t) {
        double sum = 0;
        for (int t2 = 0; t2 < T; ++t2) {
          const double a = att[(h * T + t) * T + t2];
          if (t2 > t) CHECK(a == 0.0);  // the causal mask: exactly zero on the future
          sum += a;
        }
        CHECK(sum == doctest::Approx(1.0).epsilon(1e-12));
      }
    CHECK(att[0] == 1.0);  // the first query sees only itself
    L::attention_backward(dqkv.data(), dpre.data(), datt.data(), R.data(), qkv.data(), att.data(), T, C, H, scale);
    check_gradient(scale ? "qkv (scaled)" : "qkv (unscaled)", qkv, dqkv, objective);
    // the last key and value are seen only by the last query: with the last row of R zero, no gradient
    std::fill(R.end() - C, R.end(), 0.0);
    std::fill(dqkv.begin(), dqkv.end(), 0.0);
    objective();
    L::attention_backward(dqkv.data(), dpre.data(), datt.data(), R.data(), qkv.data(), att.data(), T, C, H, scale);
    for (int i = C; i < 3 * C; ++i) CHECK(dqkv[(T - 1) * 3 * C + i] == 0.0);
  }
  // by hand: one head, hd = 4, two tokens with q1·k0 = 4, q1·k1 = 0 → scaled by 1/2: weights softmax(2, 0)
  std::vector<double> qkv(2 * 12, 0.0), out(8), pre(4), att(4);
  qkv[12 + 0] = 2, qkv[4 + 0] = 2;  // q1 = (2,0,0,0), k0 = (2,0,0,0), k1 = 0
  L::attention_forward(out.data(), pre.data(), att.data(), qkv.data(), 2, 4, 1, true);
  CHECK(pre[2] == doctest::Approx(2.0));
  CHECK(att[2] == doctest::Approx(std::exp(2.0) / (std::exp(2.0) + 1)).epsilon(1e-12));
  L::attention_forward(out.data(), pre.data(), att.data(), qkv.data(), 2, 4, 1, false);
  CHECK(pre[2] == doctest::Approx(4.0));
}

TEST_CASE("train layers: gelu and residual backward") {
  attn::Rng rng(6);
  const int n = 11;
  std::vector<double> inp(n), out(n), dinp(n, 0);
  for (int i = 0; i < n; ++i) inp[i] = -3.0 + 0.6 * i;
  auto R = randoms(rng, n);
  const auto objective = [&] {
    L::gelu_forward(out.data(), inp.data(), n);
    return dot(out, R);
  };
  objective();
  CHECK(out[5] == doctest::Approx(0.0));                    // gelu(0) = 0
  L::gelu_forward(out.data(), std::vector<double>{1.0}.data(), 1);
  CHECK(out[0] == doctest::Approx(0.8411919906082768).epsilon(1e-12));  // GPT-2's tanh form at 1
  L::gelu_backward(dinp.data(), inp.data(), R.data(), n);
  check_gradient("gelu", inp, dinp, objective);

  auto a = randoms(rng, n), b = randoms(rng, n);
  std::vector<double> da(n, 0), db(n, 0), sum(n);
  const auto res = [&] {
    L::residual_forward(sum.data(), a.data(), b.data(), n);
    return dot(sum, R);
  };
  L::residual_backward(da.data(), db.data(), R.data(), n);
  check_gradient("residual a", a, da, res);
  check_gradient("residual b", b, db, res);
}

TEST_CASE("train layers: tied LM head + cross-entropy backward") {
  attn::Rng rng(7);
  const int N = 4, C = 5, V = 7;
  const int targets[] = {2, -1, 0, 6};
  auto x = randoms(rng, N * C), wte = randoms(rng, V * C);
  std::vector<double> probs(N * V), losses(N), dx(N * C, 0), dwte(V * C, 0), dlogits(N * V);
  const auto objective = [&] { return L::lm_head_forward(probs.data(), losses.data(), x.data(), wte.data(), targets, N, C, V); };
  objective();
  L::lm_head_backward_input(dx.data(), dlogits.data(), probs.data(), wte.data(), targets, 3, N, C, V);  // 3 rows have a target
  L::matmul_backward_weights(dwte.data(), static_cast<double*>(nullptr), x.data(), dlogits.data(), N, V, C);  // the tied wte
  check_gradient("x", x, dx, objective);
  check_gradient("wte", wte, dwte, objective);
  CHECK(losses[1] == 0.0);  // no target: no loss
  // by hand: logits all equal (x = 0) → loss ln V for every row with a target
  std::vector<double> zero(N * C, 0.0);
  CHECK(L::lm_head_forward(probs.data(), losses.data(), zero.data(), wte.data(), targets, N, C, V) == doctest::Approx(std::log(7.0)));
}

TEST_CASE("train graph: the whole tiny model's gradient against finite differences, and float against double") {
  const attn::Gpt2Config config = tiny_config();
  attn::Transformer model = attn::random_transformer(config.transformer(), 11);
  // larger weights than GPT-2's 0.02 so every path carries a visible gradient
  attn::Rng rng(12);
  const auto scale_weights = [](attn::Weights& w, float factor) {
    for (float& x : w.f32) x *= factor;
  };
  scale_weights(model.embed, 20.0f), scale_weights(model.position_table, 20.0f);
  for (auto& b : model.blocks) {
    for (auto* w : {&b.qkv, &b.o, &b.up, &b.down}) scale_weights(*w, 15.0f);
    for (auto* v : {&b.attn_norm_w, &b.mlp_norm_w, &b.qkv_b, &b.up_b})
      for (Eigen::Index i = 0; i < v->size(); ++i) (*v)(i) += static_cast<float>(0.3 * rng.normal());
  }
  const std::vector<std::vector<int>> batch = {{1, 4, 2, 9, 4, 10}, {3, 3, 7, 0}};
  for (bool scale : {true, false}) {
    attn::Gpt2TrainGraph<double> g(config, 2, scale);
    g.set_parameters(model);
    g.forward(batch);
    g.zero_grad();
    g.backward();
    std::vector<double> analytic = g.grads();
    check_gradient(scale ? "all parameters (scaled)" : "all parameters (unscaled)", g.params(), analytic,
                   [&] { return g.forward(batch); }, 1e-6);
    // every tensor gets some gradient (wpe row 5 only from the first sequence)
    for (const auto& t : g.tensors()) {
      double norm = 0;
      for (std::size_t i = t.offset; i < t.offset + t.size; ++i) norm += analytic[i] * analytic[i];
      INFO(t.name);
      CHECK(norm > 0);
    }
    attn::Gpt2TrainGraph<float> f(config, 2, scale);
    f.set_parameters(model);
    CHECK(f.forward(batch) == doctest::Approx(g.forward(batch)).epsilon(1e-5));
    f.zero_grad();
    f.backward();
    double worst = 0, largest = 0;
    for (std::size_t i = 0; i < analytic.size(); ++i)
      worst = std::max(worst, std::abs(f.grads()[i] - analytic[i])), largest = std::max(largest, std::abs(analytic[i]));
    INFO("float vs double: worst " << worst << " of largest " << largest);
    CHECK(worst <= 1e-4 * largest);
  }
}

TEST_CASE("trainer: AdamW's first step by hand, clipping, weight decay only on matrices") {
  attn::TrainSettings s;
  s.seed = 3, s.n_layer = 1, s.n_head = 2, s.n_embd = 8, s.batch = 4, s.lr = 0.01f, s.weight_decay = 0.1f;
  s.grad_clip = 0.5f;
  attn::Trainer trainer;
  trainer.init(s);
  const attn::Transformer before = trainer.model();
  const float loss = trainer.step();
  // the gradient of the same batch from the same weights
  attn::Gpt2TrainGraph<float> g(trainer.model_config(), s.batch, true);
  g.set_parameters(before);
  CHECK(g.forward(trainer.last_batch(), s.answer_only) == loss);
  g.zero_grad();
  g.backward();
  double norm = 0;
  for (float x : g.grads()) norm += double(x) * x;
  norm = std::sqrt(norm);
  REQUIRE(norm > s.grad_clip);  // the clip is active in this step
  const double coef = s.grad_clip / (norm + 1e-6);
  attn::Gpt2TrainGraph<float> after(trainer.model_config(), 1, true);
  after.set_parameters(trainer.model());
  int checked = 0;
  for (const auto& t : g.tensors())
    for (std::size_t i = t.offset; i < t.offset + t.size; i += 7) {
      // step 1: m̂ = g, v̂ = g², so p1 = p0·(1 − lr·wd) − lr · g / (|g| + eps)
      const double grad = g.grads()[i] * coef, p0 = g.params()[i];
      const double expected = p0 * (t.decay ? 1 - 0.01 * 0.1 : 1.0) - 0.01 * grad / (std::abs(grad) + 1e-8);
      INFO(t.name << "[" << i - t.offset << "]");
      CHECK(after.params()[i] == doctest::Approx(expected).epsilon(1e-5));
      ++checked;
    }
  CHECK(checked > 100);
}

TEST_CASE("trainer: the same seed gives identical bits; another seed does not") {
  attn::TrainSettings s;
  s.n_layer = 1, s.n_head = 2, s.n_embd = 16, s.batch = 4, s.seed = 9;
  attn::Trainer a, b, c;
  a.init(s), b.init(s);
  s.seed = 10;
  c.init(s);
  std::vector<float> la, lb, lc;
  for (int i = 0; i < 5; ++i) la.push_back(a.step()), lb.push_back(b.step()), lc.push_back(c.step());
  CHECK(la == lb);
  CHECK(la != lc);
  const attn::Transformer ma = a.model(), mb = b.model();
  CHECK(ma.embed.f32 == mb.embed.f32);
  CHECK(ma.blocks[0].qkv.f32 == mb.blocks[0].qkv.f32);
  CHECK(a.heldout_accuracy() == b.heldout_accuracy());
}

namespace {

std::vector<float> weights_of(const attn::Trainer& t) {
  attn::Gpt2TrainGraph<float> g(t.model_config(), 1, t.settings().scale);
  g.set_parameters(t.model());
  return g.params();
}

}  // namespace

TEST_CASE("trainer: a step in pieces (the page's slices) gives the whole step's bits") {
  attn::TrainSettings clipped;  // 2 layers, the clip active (a small bound), the loss on the referent
  clipped.seed = 4, clipped.n_layer = 2, clipped.n_head = 2, clipped.n_embd = 16, clipped.batch = 5, clipped.grad_clip = 0.05f;
  attn::TrainSettings plain = clipped;  // every token's loss, no clip, no √d, one head
  plain.seed = 7, plain.n_layer = 1, plain.n_head = 1, plain.n_embd = 8, plain.grad_clip = 0, plain.scale = false, plain.answer_only = false;
  for (const attn::TrainSettings& s : {clipped, plain}) {
    attn::Trainer whole, smallest, mixed;
    whole.init(s), smallest.init(s), mixed.init(s);
    const std::vector<float> start = weights_of(whole);
    // work 1: every piece the smallest (one sequence, one row of a weight's gradient, 4 096 elements
    // of the norm or AdamW); 5 000 multiply-adds: pieces of several rows or sequences, cut anywhere
    for (int step = 0; step < 6; ++step) {
      const float loss = whole.step();
      int calls = 0;
      attn::Trainer::StepPart part;
      do {
        part = smallest.step_part(1.0);
        ++calls;
        CHECK(part.work > 0);
        if (!part.done) {
          REQUIRE(smallest.in_step());
          if (calls == 3 && step == 0) {
            CHECK(weights_of(smallest) == start);  // the weights change only when the step completes
            CHECK_THROWS_AS(smallest.evaluate(), std::logic_error);
          }
        }
      } while (!part.done);
      CHECK(!smallest.in_step());
      // at least a piece per sequence and per row of every weight product (c_fc's 4 · d_model rows)
      CHECK(calls > s.batch + 4 * s.n_embd * s.n_layer);
      CHECK(part.loss == loss);
      do part = mixed.step_part(5000.0);
      while (!part.done);
      CHECK(part.loss == loss);
    }
    const std::vector<float> a = weights_of(whole), b = weights_of(smallest), c = weights_of(mixed);
    REQUIRE(a.size() == b.size());
    CHECK(a != start);
    CHECK(std::memcmp(a.data(), b.data(), sizeof(float) * a.size()) == 0);
    CHECK(std::memcmp(a.data(), c.data(), sizeof(float) * a.size()) == 0);
    CHECK(whole.steps_done() == 6);
    CHECK(smallest.steps_done() == 6);
  }
}

TEST_CASE("corpus: the lesson's sentence, the held-out rule, every word seen in training") {
  const attn::Corpus c = attn::make_corpus(1);
  CHECK(c.frames.size() >= 4);
  CHECK(c.train.size() + c.heldout.size() == c.frames.size() * c.creatures.size() * c.things.size() * c.adjectives.size());
  const double share = double(c.heldout.size()) / double(c.train.size() + c.heldout.size());
  CHECK(share == doctest::Approx(0.2).epsilon(0.05));  // (c + t + a mod 6) % 5 == 0: 152 of 768 triples
  bool found_tired = false, found_wide = false;
  for (const auto& s : c.heldout) {
    CHECK(attn::corpus_heldout_triple(s.creature, s.thing, s.adjective, c.creature_adjectives));
    if (c.text(s) == "the animal didn't cross the street because it was tired . it refers to the animal") found_tired = true;
    if (c.text(s) == "the animal didn't cross the street because it was wide . it refers to the street") found_wide = true;
  }
  CHECK(found_tired);  // (0, 0, 0): held out, so the lesson's own pair is a test sentence
  CHECK(found_wide);
  std::set<int> seen;
  for (const auto& s : c.train) seen.insert(s.ids.begin(), s.ids.end());
  CHECK(seen.size() == c.vocab.size() - 1);  // every word but <unk>
  // the seed orders the training sentences only
  const attn::Corpus d = attn::make_corpus(2);
  CHECK(d.train.size() == c.train.size());
  CHECK(d.train[0].ids != c.train[0].ids);
  // the tokenizer.json written for it encodes every sentence to the same ids
  const attn::TextTokenizer tok = attn::tokenizer_from_json(attn::corpus_tokenizer_json(c));
  CHECK(tok.kind() == attn::TextTokenizer::Kind::WordLevel);
  for (std::size_t i = 0; i < c.heldout.size(); i += 13) CHECK(tok.encode(c.text(c.heldout[i])) == c.heldout[i].ids);
  // the √d experiment's quicker check: every held-out triple exactly once, every frame used
  const std::vector<std::size_t> sample = attn::heldout_one_per_triple(c);
  CHECK(sample.size() == c.heldout.size() / c.frames.size());
  std::set<std::tuple<int, int, int>> triples;
  std::set<int> frames;
  for (std::size_t i : sample) {
    const auto& s = c.heldout.at(i);
    triples.insert({s.creature, s.thing, s.adjective});
    frames.insert(s.frame);
  }
  CHECK(triples.size() == sample.size());
  CHECK(frames.size() == c.frames.size());
}

TEST_CASE("trainer: bad settings are refused by name") {
  const auto refused = [](const std::function<void(attn::TrainSettings&)>& change, const std::string& name) {
    attn::TrainSettings s;
    change(s);
    try {
      attn::validate_train_settings(s);
      return std::string("accepted");
    } catch (const std::invalid_argument& e) {
      return std::string(e.what()).substr(0, name.size());
    }
  };
  CHECK(refused([](auto& s) { s.n_head = 0; }, "heads") == "heads");
  CHECK(refused([](auto& s) { s.n_embd = 30, s.n_head = 4; }, "d_model") == "d_model");
  CHECK(refused([](auto& s) { s.lr = 0; }, "lr") == "lr");
  CHECK(refused([](auto& s) { s.lr = -1e-3f; }, "lr") == "lr");
  CHECK(refused([](auto& s) { s.lr = std::nanf(""); }, "lr") == "lr");
  CHECK(refused([](auto& s) { s.n_layer = 0; }, "layers") == "layers");
  CHECK(refused([](auto& s) { s.batch = 0; }, "batch") == "batch");
  CHECK(refused([](auto& s) { s.n_head = -3; }, "heads") == "heads");
  CHECK(refused([](auto& s) { s.n_embd = 0; }, "d_model") == "d_model");
  CHECK(refused([](auto& s) { s.lr = std::numeric_limits<float>::infinity(); }, "lr") == "lr");
  CHECK(refused([](auto& s) { s.lr = 2; }, "lr") == "lr");
  CHECK(refused([](auto& s) { s.weight_decay = -0.1f; }, "weight_decay") == "weight_decay");
  CHECK(refused([](auto& s) { s.weight_decay = std::nanf(""); }, "weight_decay") == "weight_decay");
  CHECK(refused([](auto& s) { s.beta1 = 1; }, "beta1") == "beta1");
  CHECK(refused([](auto& s) { s.beta2 = -0.5f; }, "beta2") == "beta2");
  CHECK(refused([](auto& s) { s.adam_eps = 0; }, "adam_eps") == "adam_eps");
  CHECK(refused([](auto& s) { s.grad_clip = std::nanf(""); }, "grad_clip") == "grad_clip");
  CHECK(refused([](auto& s) { s.grad_clip = -1; }, "grad_clip") == "grad_clip");
  CHECK(refused([](auto&) {}, "accepted") == "accepted");
  // both arms of the √d experiment are valid, differ only in the switch, and have d_head = 256
  for (const bool scale : {true, false}) {
    const attn::TrainSettings arm = attn::scale_experiment_settings(scale);
    CHECK(refused([&](auto& s) { s = arm; }, "accepted") == "accepted");
    CHECK(arm.scale == scale);
    CHECK(arm.n_embd / arm.n_head == 256);
  }
  // valid one by one, too large together: refused before anything is allocated
  attn::TrainSettings huge;
  huge.n_layer = 12, huge.n_head = 16, huge.n_embd = 2048, huge.batch = 1024;
  attn::Trainer t;
  CHECK_THROWS_WITH_AS(t.init(huge), doctest::Contains("MB, over the limit"), std::invalid_argument);
}
