// The tokenizer and the worked-example model: "it" attends to "animal" for a readable reason.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "../../src/core/attention.h"
#include "../../src/core/model.h"

using namespace attn;

namespace {
AttentionTrace run(const std::string& sentence, AttentionOptions o = {}) {
  const EmbeddedSentence e = embed_sentence(sentence);
  const WorkedModel& m = worked_model();
  return attend_projected(e.x, e.x, m.wq, m.wk, m.wv, o);
}
int index_of(const EmbeddedSentence& e, const std::string& word) {
  for (std::size_t i = 0; i < e.tokens.size(); ++i)
    if (e.tokens[i].lower == word) return static_cast<int>(i);
  return -1;
}
}  // namespace

TEST_CASE("tokenizer: words, contractions, punctuation, case") {
  const auto t = tokenize("  The animal didn't cross, because IT was tired!  ");
  REQUIRE(t.size() == 10);
  CHECK(t[0].text == "The");
  CHECK(t[0].lower == "the");
  CHECK(t[2].text == "didn't");
  CHECK(t[4].text == ",");
  CHECK(t[4].is_punct);
  CHECK(t[6].lower == "it");
  CHECK(t[9].text == "!");
}

TEST_CASE("tokenizer: multi-byte characters stay inside words") {
  const auto t = tokenize("café 🐱 naïve");
  REQUIRE(t.size() == 3);
  CHECK(t[0].text == "café");
  CHECK(t[1].text == "🐱");
}

TEST_CASE("tokenizer: empty, blank and too long input give clear errors") {
  CHECK_THROWS_WITH_AS(tokenize(""), "sentence is empty: type at least one word", std::invalid_argument);
  CHECK_THROWS_AS(tokenize(" \t\n "), std::invalid_argument);
  std::string many;
  for (int i = 0; i <= kMaxTokens; ++i) many += "a ";
  CHECK_THROWS_AS(tokenize(many), std::invalid_argument);
  CHECK_THROWS_AS(tokenize(std::string(kMaxSentenceBytes + 1, 'a')), std::invalid_argument);
  std::string exactly;
  for (int i = 0; i < kMaxTokens; ++i) exactly += "a ";
  CHECK(tokenize(exactly).size() == static_cast<std::size_t>(kMaxTokens));
}

TEST_CASE("worked example: 'it' puts its largest weight, above 0.5, on 'animal'") {
  const EmbeddedSentence e = embed_sentence(kLessonSentence);
  REQUIRE(e.tokens.size() == 10);
  const AttentionTrace t = run(kLessonSentence);
  const int it = index_of(e, "it"), animal = index_of(e, "animal"), street = index_of(e, "street");
  Eigen::Index best = -1;
  t.weights.row(it).maxCoeff(&best);
  CHECK(best == animal);
  CHECK(t.weights(it, animal) > 0.5f);
  // The arithmetic in model.cpp's comment: scores 6 (animal), 2 (street), 0 (others); /2.
  CHECK(t.raw_scores(it, animal) == doctest::Approx(6.0f));
  CHECK(t.raw_scores(it, street) == doctest::Approx(2.0f));
  const double expected = std::exp(3.0) / (std::exp(3.0) + std::exp(1.0) + 8.0);
  CHECK(t.weights(it, animal) == doctest::Approx(expected).epsilon(1e-5));
  // Its output carries mostly the creature feature.
  CHECK(t.output(it, 0) == doctest::Approx(expected).epsilon(1e-5));
  // "street" is read about 0.09 but hands on only 0.4 of its thing feature: matched, thin inside.
  const double street_weight = std::exp(1.0) / (std::exp(3.0) + std::exp(1.0) + 8.0);
  CHECK(t.weights(it, street) == doctest::Approx(street_weight).epsilon(1e-5));
  CHECK(t.output(it, 1) == doctest::Approx(0.4 * street_weight).epsilon(1e-5));
  // Still true with the causal mask ("animal" comes before "it").
  AttentionOptions causal;
  causal.causal = true;
  const AttentionTrace tc = run(kLessonSentence, causal);
  tc.weights.row(it).maxCoeff(&best);
  CHECK(best == animal);
  CHECK(tc.weights(it, animal) > 0.6f);
}

TEST_CASE("worked example: unknown words are flagged and embedded deterministically") {
  const EmbeddedSentence a = embed_sentence("The zorblax sat"), b = embed_sentence("zorblax ZORBLAX");
  CHECK_FALSE(a.unknown[0]);
  CHECK(a.unknown[1]);
  CHECK_FALSE(a.unknown[2]);
  CHECK(a.x.row(1) == b.x.row(0));
  CHECK(b.x.row(0) == b.x.row(1));  // case does not matter
  CHECK(a.x.row(1).cwiseAbs().maxCoeff() <= 0.5f);
  CHECK(a.x.row(1) != embed_sentence("florp").x.row(0));
}

TEST_CASE("worked example: values are not the keys again (a thing's key is loud, its value thin)") {
  const EmbeddedSentence e = embed_sentence("animal street");
  const Matrix k = e.x * worked_model().wk, v = e.x * worked_model().wv;
  // Key and value of a creature point the same way at ratio 2; a thing's ratio is 5.
  CHECK(k(0, 0) == doctest::Approx(2.0f));
  CHECK(v(0, 0) == doctest::Approx(1.0f));
  CHECK(k(1, 1) == doctest::Approx(2.0f));
  CHECK(v(1, 1) == doctest::Approx(0.4f));
  CHECK_FALSE(k.isApprox(2.0f * v));
}

TEST_CASE("worked example: names for every dimension") {
  for (const char* n : feature_names()) CHECK(std::string(n).size() > 0);
  CHECK(std::string(query_dim_names()[0]) == "seeks creature");
  CHECK(std::string(key_dim_names()[0]) == "is creature");
  CHECK(worked_model().wq.rows() == kFeatures);
  CHECK(worked_model().wq.cols() == kHeadDim);
}
