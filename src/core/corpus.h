// The training corpus of the Train experiment: the lesson's sentence in several frames, where the
// pronoun's referent is decided by the adjective after it. Generated, deterministic; not a file format.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace attn {

// One sentence, e.g. "the dog didn't cross the street because it was tired . it refers to the dog".
struct CorpusSentence {
  std::vector<int> ids;   // token ids (the corpus vocabulary), the answer last
  int creature = 0;       // indices into Corpus::creatures / things / adjectives / templates
  int thing = 0;
  int adjective = 0;
  int frame = 0;
  int creature_pos = 0;   // token position of the creature noun
  int thing_pos = 0;      // token position of the thing noun
  int answer_id = 0;      // the referent's token id (ids.back())
  int wrong_id = 0;       // the other noun's token id
  bool refers_to_creature() const;
  int predict_pos() const { return static_cast<int>(ids.size()) - 2; }  // the position whose next token is the answer
};

struct Corpus {
  std::vector<std::string> vocab;       // id → word; id 0 is "<unk>"
  std::vector<std::string> creatures, things, adjectives, frames;
  int creature_adjectives = 0;          // adjectives[0 .. n) fit a creature, the rest a thing
  std::vector<CorpusSentence> train;    // in an order shuffled by the seed
  std::vector<CorpusSentence> heldout;  // the held-out triples in every frame, in a fixed order
  int max_length = 0;                   // longest sentence in tokens
  std::string text(const CorpusSentence& s) const;
  int id(const std::string& word) const;  // -1 when absent
};

// Held out: the triple (creature c, thing t, adjective a) when (c + t + a mod k) % 5 == 0, with k the
// number of creature adjectives, so an adjective and its twin ("tired" / "wide") go together and
// about a fifth of all triples is unseen in training. Every word still appears in training (in other
// combinations): held-out accuracy measures whether the model learned the rule, not the pairs.
bool corpus_heldout_triple(int creature, int thing, int adjective, int creature_adjectives);

// The corpus for a seed (the seed only orders the training sentences; the sets are fixed).
Corpus make_corpus(std::uint64_t seed);

// A fifth of the held-out set for a quicker check (the √d experiment's, at d_head 256): every
// held-out triple once, the frames taken in turn. Indices into c.heldout, in its order.
std::vector<std::size_t> heldout_one_per_triple(const Corpus& c);

}  // namespace attn
