// intervention_json (the CLI's `model --ablate …` and the page's attentionExplainer.intervene) on a
// random encoder: ablations, cuts, patches and the sweeps run and measure log p(target) at the first
// mask token, as the core's own reruns give it; attribution is null with the core's reason; padding
// leaves the numbers as they were; requests that cannot apply (against, a target or sweep with nothing
// to measure, an encoder read without its masked-LM head) are refused by name in one line. A decoder
// given the same tokenizer keeps its attribution.
#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "../../src/api/intervention_json.h"
#include "../../src/api/model_json.h"
#include "../../src/api/tokenizer_files.h"
#include "../../src/core/attribution.h"
#include "../../src/core/transformer.h"
#include "test_helpers.h"

namespace {

using nlohmann::json;

attn::LoadedModel loaded(const attn::TransformerConfig& c, std::uint64_t seed) {
  attn::LoadedModel m;
  m.name = "random " + c.family;
  m.model = std::make_shared<const attn::Transformer>(
      attn::random_transformer(c, seed, attn::Dtype::F32, attn::WeightLayout::OutIn, 0.6));
  m.tokenizer = std::make_shared<const attn::TextTokenizer>(attn::tokenizer_from_vocab_txt(attn::test::kBankVocab));
  return m;
}

attn::InterventionRequest request_for(const attn::LoadedModel& m, const std::string& text) {
  attn::InterventionRequest r;
  r.ids = attn::model_text_ids(m, text);
  return r;
}

// The intervention_refusal's message (one line), or "accepted".
std::string intervention_refusal(const attn::LoadedModel& m, const attn::InterventionRequest& r) {
  try {
    attn::intervention_json(m, r);
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    CHECK(what.find('\n') == std::string::npos);
    return what;
  }
  return "accepted";
}

double log_p(const attn::LoadedModel& m, const std::vector<int>& ids, int at, int target,
             const attn::Intervention* edit = nullptr, int padding = 0) {
  attn::ForwardOptions o;
  o.intervention = edit;
  o.padding = padding;
  return attn::token_log_prob(*m.model, attn::transformer_forward(*m.model, ids, o), at, target);
}

const char* const kText = "the cat sat on the [MASK]";  // [CLS] the cat sat on the [MASK] [SEP]: the mask at 6

}  // namespace

TEST_CASE("encoder interventions: ablation and cuts measured at the mask, attribution null with its reason") {
  const attn::LoadedModel m = loaded(attn::test::tiny_bert(true), 5);
  attn::InterventionRequest r = request_for(m, kText);
  REQUIRE(r.ids.size() == 8);
  REQUIRE(r.ids[6] == 4);
  r.edit.ablate = {{1, 0}};
  r.edit.cuts = {{0, 1, 6, 2}};
  const json out = attn::intervention_json(m, r);
  CHECK(out["at"] == 6);
  CHECK(out["attribution"].is_null());
  CHECK(out["attribution_note"] == attn::why_no_attribution(m.model->config));
  CHECK(out["attribution_note"].get<std::string>().find("post-norm") != std::string::npos);
  CHECK(!out.contains("next"));
  REQUIRE(out["masked"].size() == 1);
  CHECK(out["masked"][0]["position"] == 6);
  const int target = out["target"]["id"];
  CHECK(target == out["masked"][0]["top"][0]["id"]);  // the unchanged run's likeliest word there
  // log p before and after: the core's own forward with and without the edit
  const double before = log_p(m, r.ids, 6, target), after = log_p(m, r.ids, 6, target, &r.edit);
  CHECK(out["log_prob"].get<double>() == doctest::Approx(before).epsilon(1e-6));
  CHECK(out["intervened"]["log_prob"].get<double>() == doctest::Approx(after).epsilon(1e-6));
  CHECK(std::abs(after - before) > 1e-4);  // the edit changed something
  CHECK(out["intervened"]["delta_log_prob"].get<double>() == doctest::Approx(after - before).epsilon(1e-6));
  REQUIRE(out["intervened"]["masked"].size() == 1);
  CHECK(!out["intervened"].contains("next"));
  // the intervened attention: the cut link exactly 0, the rest as the edited forward has it
  const json& attention = out["intervened"]["attention"];
  CHECK(attention[0][1][6][2] == 0.0);
  CHECK(attention[0][0][6][2] != 0.0);
  attn::ForwardOptions o;
  o.intervention = &r.edit;
  const attn::ModelTrace edited = attn::transformer_forward(*m.model, r.ids, o);
  const attn::LayerDetail d1 = attn::layer_detail(*m.model, edited, 1);
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; ++j) CHECK(attention[1][1][i][j].get<double>() == doctest::Approx(d1.weights[1](i, j)).epsilon(1e-6));
  CHECK(out["value_weighted"].size() == 2);
  CHECK(out["rollout"].size() == 2);
}

TEST_CASE("encoder interventions: the ablation sweep, padding and patching") {
  const attn::LoadedModel m = loaded(attn::test::tiny_bert(true), 6);
  attn::InterventionRequest r = request_for(m, kText);
  r.sweep = attn::SweepKind::Heads;
  r.target = 12;  // "money"
  const json swept = attn::intervention_json(m, r);
  CHECK(swept["target"]["id"] == 12);
  const double base = log_p(m, r.ids, 6, 12);
  CHECK(swept["sweep"]["baseline"].get<double>() == doctest::Approx(base).epsilon(1e-6));
  for (int l = 0; l < 2; ++l)
    for (int h = 0; h < 2; ++h) {
      attn::Intervention one;
      one.ablate = {{l, h}};
      CHECK(swept["sweep"]["values"][l][h].get<double>() == doctest::Approx(log_p(m, r.ids, 6, 12, &one) - base).epsilon(1e-4));
    }

  // two padding tokens: the same numbers on the text, the padding hidden as keys
  attn::InterventionRequest p = request_for(m, kText);
  p.edit.ablate = {{0, 1}};
  p.edit.ablate_kind = attn::AblateKind::Mean;
  const json plain = attn::intervention_json(m, p);
  p.padding = 2;
  const json padded = attn::intervention_json(m, p);
  CHECK(padded["padding"] == 2);
  CHECK(padded["token_ids"].size() == 10);
  CHECK(padded["token_ids"][9] == 0);
  CHECK(padded["at"] == 6);
  CHECK(padded["intervened"]["log_prob"].get<double>() == doctest::Approx(plain["intervened"]["log_prob"].get<double>()).epsilon(1e-5));
  for (int i = 0; i < 10; ++i) CHECK(padded["intervened"]["attention"][1][0][i][8] == 0.0);
  p.at = 8;  // a padding position is not measured
  CHECK(intervention_refusal(m, p).rfind("at: position 8 is outside the text (0 to 7)", 0) == 0);

  // patching head 0.1 from another text of as many tokens
  attn::InterventionRequest q = request_for(m, "the bank sat on the [MASK]");
  q.source_ids = attn::model_text_ids(m, "the river sat on the [MASK]");
  q.patch_heads = {{0, 1}};
  const json patched = attn::intervention_json(m, q);
  CHECK(patched["patch"]["patched_log_prob"] == patched["intervened"]["log_prob"]);
  CHECK(patched["patch"]["source_log_prob"].get<double>() ==
        doctest::Approx(log_p(m, q.source_ids, 6, patched["target"]["id"])).epsilon(1e-6));
  CHECK(patched["attribution"].is_null());
  q.patch_heads.clear();
  q.sweep = attn::SweepKind::Positions;
  const json positions = attn::intervention_json(m, q);
  CHECK(positions["sweep"]["kind"] == "patch_positions");
  CHECK(positions["sweep"]["values"][0].size() == 8);
}

TEST_CASE("encoder interventions: what cannot apply is refused by name; with nothing to measure, nulls") {
  const attn::LoadedModel m = loaded(attn::test::tiny_bert(true), 7);
  attn::InterventionRequest r = request_for(m, kText);
  r.edit.ablate = {{0, 0}};
  r.against = 5;
  CHECK(intervention_refusal(m, r).rfind("against: ", 0) == 0);
  r.against = -1;

  // no mask token and no position: the run and its attention, nothing measured
  attn::InterventionRequest plain = request_for(m, "the cat sat on the mat");
  plain.edit.ablate = {{0, 0}};
  const json out = attn::intervention_json(m, plain);
  CHECK(out["at"].is_null());
  CHECK(out["target"].is_null());
  CHECK(out["log_prob"].is_null());
  CHECK(out["intervened"]["log_prob"].is_null());
  CHECK(out["masked"].empty());
  CHECK(out["intervened"]["attention"].size() == 2);
  CHECK(out["attribution"].is_null());
  plain.target = 6;
  CHECK(intervention_refusal(m, plain).find("put [MASK] in the text") != std::string::npos);
  plain.target = -1;
  plain.sweep = attn::SweepKind::Heads;
  CHECK(intervention_refusal(m, plain).rfind("sweep: ", 0) == 0);
  // ... or measured where asked
  plain.at = 2, plain.target = 6;
  const json at_cat = attn::intervention_json(m, plain);
  CHECK(at_cat["at"] == 2);
  CHECK(at_cat["sweep"]["baseline"].get<double>() == doctest::Approx(log_p(m, plain.ids, 2, 6)).epsilon(1e-6));

  // the page's form of a request reads pad, and the texts as the model reads them
  const attn::InterventionRequest page =
      attn::intervention_request(m, json{{"text", kText}, {"ablate", {{1, 1}}}, {"pad", 3}, {"at", 6}});
  CHECK(page.padding == 3);
  CHECK(attn::intervention_json(m, page)["token_ids"].size() == 11);

  // read without its masked-LM head: no predictions, so no mask, target, position or sweep
  const attn::LoadedModel headless = loaded(attn::test::tiny_bert(false), 8);
  attn::InterventionRequest h = request_for(headless, "the cat sat on the mat");
  h.edit.cuts = {{1, -1, 3, 1}};
  const json attention_only = attn::intervention_json(headless, h);
  CHECK(attention_only["log_prob"].is_null());
  CHECK(attention_only["attribution_note"].get<std::string>().find("no LM head") != std::string::npos);
  CHECK(attention_only["intervened"]["attention"][1][0][3][1] == 0.0);
  h.at = 2;
  CHECK(intervention_refusal(headless, h).rfind("at: this model has no LM head", 0) == 0);
  h.at = -1;
  h.ids = request_for(m, kText).ids;
  CHECK(intervention_refusal(headless, h).find("no masked-LM head") != std::string::npos);
}

TEST_CASE("intervention_json on a decoder with the same tokenizer: attribution as before") {
  attn::TransformerConfig c = attn::gpt2_config(2, 2, 8, 16, 16);
  const attn::LoadedModel m = loaded(c, 9);
  attn::InterventionRequest r = request_for(m, "the cat sat on the mat");
  r.edit.ablate = {{1, 1}};
  r.against = 12;
  const json out = attn::intervention_json(m, r);
  CHECK(out["at"] == 7);  // the last token
  CHECK(out.contains("next"));
  CHECK(!out.contains("masked"));
  CHECK(!out.contains("attribution_note"));
  REQUIRE(out["attribution"].is_object());
  CHECK(out["attribution"]["sum"].get<double>() == doctest::Approx(out["attribution"]["logit"].get<double>()).epsilon(1e-4));
}
