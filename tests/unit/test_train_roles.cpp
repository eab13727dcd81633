// The roles recipe's corpus and its attention-only training: two creatures of one kind, twins that
// differ in the adjective alone, the held-out split by whole (noun pair, adjective) combinations, the
// voice told by no position; MLP weights zero and frozen while the attention learns.
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "../../src/api/tokenizer_files.h"
#include "../../src/api/train_files.h"
#include "../../src/core/train.h"

TEST_CASE("roles corpus: two creatures of one kind, the referent by voice and adjective, twins, a whole held-out split") {
  const attn::Corpus c = attn::make_corpus(1, attn::CorpusKind::Roles);
  CHECK(c.kind == attn::CorpusKind::Roles);
  CHECK(std::string(attn::corpus_kind_name(c.kind)) == "roles");
  CHECK(c.creatures == c.things);  // both nouns from one list: the noun's kind cannot tell
  CHECK(c.frames.size() == c.frame_first_acts.size());
  int active = 0;
  for (bool a : c.frame_first_acts) active += a;
  CHECK(active * 2 == static_cast<int>(c.frames.size()));  // as many active frames as passive
  const std::size_t N = c.creatures.size();
  CHECK(c.train.size() + c.heldout.size() == c.frames.size() * N * (N - 1) * c.adjectives.size());

  std::set<int> second_positions, predict_positions;
  std::map<int, std::vector<const attn::CorpusSentence*>> twins;
  for (const auto* set : {&c.train, &c.heldout})
    for (const auto& s : *set) {
      CHECK(s.creature != s.thing);
      second_positions.insert(s.thing_pos);
      predict_positions.insert(s.predict_pos());
      // the rule: an actor adjective (the first creature_adjectives) names the noun that acts
      const bool actor = s.adjective < c.creature_adjectives;
      const bool first_acts = c.frame_first_acts[static_cast<std::size_t>(s.frame)];
      CHECK(s.refers_to_creature() == (actor == first_acts));
      CHECK(s.ids.back() == s.answer_id);
      CHECK(s.ids[static_cast<std::size_t>(s.predict_pos())] == c.id(c.adjectives[static_cast<std::size_t>(s.adjective)]));
      twins[s.twin].push_back(&s);
    }
  // the voice is in the words between the nouns, not in where they stand
  CHECK(second_positions.size() == 1);
  CHECK(predict_positions.size() == 1);

  // twins: two sentences, the same but for the adjective (both places it appears), the other referent,
  // on the same side of the split
  for (const auto& [id, pair] : twins) {
    REQUIRE(pair.size() == 2);
    const attn::CorpusSentence &a = *pair[0], &b = *pair[1];
    CHECK(a.frame == b.frame);
    CHECK(a.creature == b.creature);
    CHECK(a.thing == b.thing);
    CHECK(a.adjective % c.creature_adjectives == b.adjective % c.creature_adjectives);
    CHECK((a.adjective < c.creature_adjectives) != (b.adjective < c.creature_adjectives));
    CHECK(a.answer_id == b.wrong_id);
    REQUIRE(a.ids.size() == b.ids.size());
    int differ = 0;
    for (std::size_t i = 0; i + 1 < a.ids.size(); ++i) differ += a.ids[i] != b.ids[i];
    CHECK(differ == 2);  // "it was hungry . it refers to the hungry" / "... slow"
    const bool a_held = attn::corpus_heldout_triple(a.creature, a.thing, a.adjective, c.creature_adjectives);
    CHECK(a_held == attn::corpus_heldout_triple(b.creature, b.thing, b.adjective, c.creature_adjectives));
  }

  // held out: whole (first noun, second noun, twin adjectives) combinations, about a fifth, none in training
  std::set<std::tuple<int, int, int>> held;
  for (const auto& s : c.heldout) {
    CHECK(attn::corpus_heldout_triple(s.creature, s.thing, s.adjective, c.creature_adjectives));
    held.insert({s.creature, s.thing, s.adjective % c.creature_adjectives});
  }
  for (const auto& s : c.train) CHECK(held.count({s.creature, s.thing, s.adjective % c.creature_adjectives}) == 0);
  const double share = double(c.heldout.size()) / double(c.train.size() + c.heldout.size());
  CHECK(share == doctest::Approx(0.2).epsilon(0.1));
  std::set<int> seen;
  for (const auto& s : c.train) seen.insert(s.ids.begin(), s.ids.end());
  CHECK(seen.size() == c.vocab.size() - 1);  // every word but <unk> appears in training

  bool found = false;
  for (const auto& s : c.heldout)
    found |= c.text(s) == "the fox was chased by the wolf because it was hungry . it refers to the hungry wolf";
  CHECK(found);  // (fox, wolf, hungry): held out; the hungry one is the one that chased: the second noun

  // the tokenizer.json written for it encodes its sentences to the same ids
  const attn::TextTokenizer tok = attn::tokenizer_from_json(attn::corpus_tokenizer_json(c));
  for (std::size_t i = 0; i < c.heldout.size(); i += 17) CHECK(tok.encode(c.text(c.heldout[i])) == c.heldout[i].ids);
  // the default corpus is unchanged by the new kind
  CHECK(attn::make_corpus(1).kind == attn::CorpusKind::Pronoun);
  CHECK(attn::make_corpus(1).frame_first_acts.empty());
}

TEST_CASE("roles recipe: attention only keeps every MLP weight at zero while the rest trains") {
  attn::TrainSettings s = attn::roles_recipe_settings(3);
  CHECK(s.corpus == attn::CorpusKind::Roles);
  CHECK(s.attention_only);
  s.batch = 8;  // a few quick steps
  attn::Trainer t;
  t.init(s);
  const std::vector<float> before = t.parameters();
  for (int i = 0; i < 5; ++i) t.step();
  const std::vector<float>& after = t.parameters();
  bool attention_moved = false;
  for (const auto& tensor : [&] {
         attn::Gpt2TrainGraph<float> g(t.model_config(), 1, true);
         return g.tensors();
       }()) {
    const bool mlp = tensor.name.find(".up") != std::string::npos || tensor.name.find(".down") != std::string::npos;
    for (std::size_t i = tensor.offset; i < tensor.offset + tensor.size; ++i) {
      if (mlp) {
        CHECK(before[i] == 0.0f);
        CHECK(after[i] == 0.0f);
      } else if (tensor.name.find(".qkv") != std::string::npos && before[i] != after[i]) {
        attention_moved = true;
      }
    }
  }
  CHECK(attention_moved);
  // the saved model: the MLP matrices and biases are zero
  const attn::Transformer m = t.model();
  for (const auto& block : m.blocks) {
    for (const attn::Weights* w : {&block.up, &block.down})
      for (float x : w->f32) CHECK(x == 0.0f);
    CHECK(block.up_b.size() > 0);
    CHECK(block.up_b.cwiseAbs().maxCoeff() == 0.0f);
    CHECK(block.down_b.cwiseAbs().maxCoeff() == 0.0f);
  }
  // the evaluation's twin reading: one share per last-layer head, each pair counted once
  const attn::TrainEvaluation e = t.evaluate();
  CHECK(e.twin_pairs * 2 == e.sentences);
  REQUIRE(e.follow_share.size() == 1);
  CHECK(e.follow_share[0] >= 0.0);
  CHECK(e.follow_share[0] <= 1.0);
  REQUIRE(e.noun_weight.size() == 1);
  CHECK(e.noun_weight[0] >= 0.0);
  CHECK(e.noun_weight[0] <= 1.0 + 1e-6);
  // the inference path agrees with the trainer's forward on the held-out accuracy
  CHECK(attn::ablated_accuracy(m, t.corpus(), {}) == doctest::Approx(e.accuracy).epsilon(0.02));
}
