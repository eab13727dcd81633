// The training corpus of the Train experiment: the lesson's sentence in several frames, where the
// pronoun's referent is decided by the adjective after it. Generated, deterministic; not a file format.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace attn {

// Which corpus. Pronoun: the lesson's (a creature and a thing; the adjective's kind names the noun of
// that kind). Roles: two creatures, one chasing (hunting, attacking) the other in the active or the
// passive voice, "because it was <adjective> . it refers to the <adjective>" + the referent, where an
// actor adjective ("hungry") names the one that acts and a target adjective ("slow") the one acted on:
// the nouns are of one kind, and neither the adjective alone nor the voice alone tells which noun.
enum class CorpusKind { Pronoun, Roles };
const char* corpus_kind_name(CorpusKind kind);  // "pronoun" | "roles"

// One sentence, e.g. "the dog didn't cross the street because it was tired . it refers to the dog".
// In the roles corpus "creature" is the first noun and "thing" the second (both are creatures).
struct CorpusSentence {
  std::vector<int> ids;   // token ids (the corpus vocabulary), the answer last
  int creature = 0;       // indices into Corpus::creatures / things / adjectives / templates
  int thing = 0;
  int adjective = 0;
  int frame = 0;
  int twin = -1;              // sentences with the same twin id form a twin pair (the same sentence,
                              // the adjective swapped for its twin, the other noun the referent)
  int creature_pos = 0;   // token position of the creature noun
  int thing_pos = 0;      // token position of the thing noun
  int answer_id = 0;      // the referent's token id (ids.back())
  int wrong_id = 0;       // the other noun's token id
  bool refers_to_creature() const;
  int predict_pos() const { return static_cast<int>(ids.size()) - 2; }  // the position whose next token is the answer
};

struct Corpus {
  CorpusKind kind = CorpusKind::Pronoun;
  std::vector<std::string> vocab;       // id → word; id 0 is "<unk>"
  std::vector<std::string> creatures, things, adjectives, frames;
  int creature_adjectives = 0;          // adjectives[0 .. n) fit a creature, the rest a thing
                                        // (roles: [0 .. n) fit the one that acts, the rest the one acted on)
  std::vector<bool> frame_first_acts;   // roles: per frame, whether the first noun acts (active voice)
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
// Roles: 6 frames (3 verbs, active and passive) × ordered pairs of two different creatures (6) × 8
// adjectives (4 actor, 4 target; k and k + 4 twins) = 1 440 sentences, held out by
// corpus_heldout_triple(first noun, second noun, adjective) as the lesson's, so twins go together.
// Both voices put every word from the second noun on at the same position.
Corpus make_corpus(std::uint64_t seed, CorpusKind kind = CorpusKind::Pronoun);

// A fifth of the held-out set for a quicker check (the √d experiment's, at d_head 256): every
// held-out triple once, the frames taken in turn. Indices into c.heldout, in its order.
std::vector<std::size_t> heldout_one_per_triple(const Corpus& c);

}  // namespace attn
