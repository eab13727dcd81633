// The app's state over an encoder (no causal mask, a masked-LM head): the strip's predictions are the
// words for a mask token (the selected one when it is a mask, else the text's first; none without a
// mask), equal to the core's next_tokens_at there; getState writes them as `masked`, as the CLI does;
// the Heads view asks no attribution of it; the Compare view's bank pair and the causal switch's text.
#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "../../src/api/tokenizer_files.h"
#include "../../src/core/attribution.h"
#include "../../src/state/app_state.h"
#include "test_helpers.h"

using namespace attn;

namespace {

AppState with_encoder() {
  LoadedModel m;
  m.name = "enc";
  m.model = std::make_shared<const Transformer>(random_transformer(test::tiny_bert(), 3, Dtype::F32, WeightLayout::OutIn, 0.6));
  m.tokenizer = std::make_shared<const TextTokenizer>(tokenizer_from_vocab_txt(test::kBankVocab));
  AppState s = make_initial_state();
  add_model(s, std::move(m));
  apply_state_json(s, {{"model", "enc"}}, 0.0);
  return s;
}

}  // namespace

TEST_CASE("app over an encoder: the strip fills the mask, from either side; none without a mask") {
  AppState s = with_encoder();
  const Transformer& m = *find_model(s, "enc")->model;
  // [CLS] the [MASK] sat on the mat [MASK] [SEP]: masks at 2 and 7
  apply_state_json(s, {{"sentence", "the [MASK] sat on the mat [MASK]"}, {"token", 5}}, 0.0);
  REQUIRE(s.model.token_ids.size() == 9);
  CHECK(s.model.token_ids[2] == 4);
  CHECK(s.model.predict_position == 2);  // the selected token is no mask: the first mask
  const std::vector<NextToken> want = next_tokens_at(m, transformer_forward(m, s.model.token_ids), 2, kShownNextTokens);
  REQUIRE(s.model.next.size() == want.size());
  for (std::size_t k = 0; k < want.size(); ++k) {
    CHECK(s.model.next[k].id == want[k].id);
    CHECK(s.model.next[k].p == doctest::Approx(want[k].p).epsilon(1e-6));
  }
  const nlohmann::json j = state_to_json(s);
  CHECK(j["next"].empty());
  REQUIRE(j["masked"].size() == 1);
  CHECK(j["masked"][0]["position"] == 2);
  CHECK(j["masked"][0]["top"][0]["id"] == want[0].id);

  apply_state_json(s, {{"token", 7}}, 0.0);  // the selected token is a mask: that one
  CHECK(s.model.predict_position == 7);
  CHECK(s.model.next.front().id == next_tokens_at(m, transformer_forward(m, s.model.token_ids), 7, 1).front().id);

  apply_state_json(s, {{"sentence", "the cat sat on the mat"}}, 0.0);  // no mask: nothing asked
  CHECK(s.model.predict_position == -1);
  CHECK(s.model.next.empty());
  CHECK(state_to_json(s)["masked"].empty());
}

TEST_CASE("app over an encoder: switching a head off is measured at the mask; no attribution is asked") {
  AppState s = with_encoder();
  apply_state_json(s, {{"sentence", "i put my money in the [MASK]"}, {"view", "heads"}, {"token", 1}}, 0.0);
  const int mask = s.model.predict_position;
  REQUIRE(mask > 1);
  CHECK_FALSE(why_no_attribution(find_model(s, "enc")->model->config).empty());
  CHECK(s.model.attribution == nullptr);
  apply_state_json(s, {{"ablate", {{1, 0}}}}, 0.0);
  REQUIRE(s.model.effect.shown);
  CHECK(s.model.effect.position == mask);
  Intervention edit;
  edit.ablate = {{1, 0}};
  const Transformer& m = *find_model(s, "enc")->model;
  ForwardOptions o;
  o.intervention = &edit;
  CHECK(s.model.effect.log_prob ==
        doctest::Approx(token_log_prob(m, transformer_forward(m, s.model.token_ids, o), mask, s.model.effect.target)).epsilon(1e-6));
}
