// The Train experiment's corpus: frames × creatures × things × adjectives, the held-out rule and a
// seeded order. Not a tokenizer: the words are split here exactly as the WordLevel tokenizer splits.
#include "corpus.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "random.h"

namespace attn {

namespace {

// {C} the creature, {T} the thing, {A} the adjective; words and punctuation separated by spaces
// (the apostrophe is its own token, as the WordLevel tokenizer splits "didn't").
const char* const kFrames[] = {
    "the {C} didn ' t cross the {T} because it was {A} .",
    "the {C} did not walk over the {T} because it was too {A} .",
    "the {T} was too much for the {C} because it was so {A} .",
    "the {C} stayed off the {T} since it was {A} .",
    "the {T} stopped the {C} because it was very {A} .",
};
const char* const kSuffix = "it refers to the";
const char* const kCreatures[] = {"animal", "dog", "cat", "horse", "cow", "fox", "goat", "sheep"};
const char* const kThings[] = {"street", "road", "river", "bridge", "path", "lane", "trail", "canal"};
// The first half fits a creature, the second a thing; adjective k and k + half are twins.
const char* const kCreatureAdjectives[] = {"tired", "hungry", "scared", "sleepy", "lazy", "weak"};
const char* const kThingAdjectives[] = {"wide", "busy", "wet", "narrow", "icy", "steep"};

// The roles corpus: two creatures, the first chasing (hunting, attacking) the second or chased by it,
// and the question repeats the adjective: "... because it was hungry . it refers to the hungry" +
// the referent. Both voices put the second noun at position 6 and everything after it at the same
// places, so no position tells which noun acts: only "had just" / "was ... by" does.
const char* const kRoleFrames[] = {
    "the {C} had just chased the {T} because it was {A} .",
    "the {C} had just hunted the {T} because it was {A} .",
    "the {C} had just attacked the {T} because it was {A} .",
    "the {C} was chased by the {T} because it was {A} .",
    "the {C} was hunted by the {T} because it was {A} .",
    "the {C} was attacked by the {T} because it was {A} .",
};
constexpr int kRoleActiveFrames = 3;  // the first three are active: the first noun acts
const char* const kRoleSuffix = "it refers to the {A}";
const char* const kRoleCreatures[] = {"dog", "cat", "fox", "wolf", "goat", "horse"};
// The first four fit the one that acts (a hungry one chases), the rest the one acted on (a slow one is
// chased); adjective k and k + 4 are twins.
const char* const kRoleAdjectives[] = {"hungry", "angry", "fierce", "bored", "slow", "small", "weak", "timid"};
constexpr int kRoleActorAdjectives = 4;

std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while ((at = text.find_first_not_of(' ', at)) != std::string::npos) {
    const std::size_t end = std::min(text.find(' ', at), text.size());
    out.push_back(text.substr(at, end - at));
    at = end;
  }
  return out;
}

}  // namespace

const char* corpus_kind_name(CorpusKind kind) { return kind == CorpusKind::Roles ? "roles" : "pronoun"; }

bool CorpusSentence::refers_to_creature() const { return answer_id != wrong_id && ids.size() > 1 && creature_pos >= 0 &&
                                                         ids[static_cast<std::size_t>(creature_pos)] == answer_id; }

bool corpus_heldout_triple(int creature, int thing, int adjective, int creature_adjectives) {
  return (creature + thing + adjective % creature_adjectives) % 5 == 0;
}

int Corpus::id(const std::string& word) const {
  const auto it = std::find(vocab.begin(), vocab.end(), word);
  return it == vocab.end() ? -1 : static_cast<int>(it - vocab.begin());
}

std::string Corpus::text(const CorpusSentence& s) const {
  std::string out;
  for (std::size_t i = 0; i < s.ids.size(); ++i) {
    const std::string& w = vocab[static_cast<std::size_t>(s.ids[i])];
    const bool glue = w == "'" || (i > 0 && vocab[static_cast<std::size_t>(s.ids[i - 1])] == "'");
    if (i > 0 && !glue) out += ' ';
    out += w;
  }
  return out;
}

namespace {

Corpus make_roles_corpus(std::uint64_t seed) {
  Corpus c;
  c.kind = CorpusKind::Roles;
  for (int f = 0; f < static_cast<int>(std::size(kRoleFrames)); ++f)
    c.frames.emplace_back(kRoleFrames[f]), c.frame_first_acts.push_back(f < kRoleActiveFrames);
  for (const char* w : kRoleCreatures) c.creatures.emplace_back(w), c.things.emplace_back(w);
  for (const char* w : kRoleAdjectives) c.adjectives.emplace_back(w);
  c.creature_adjectives = kRoleActorAdjectives;
  c.vocab.push_back("<unk>");
  const auto add = [&](const std::string& w) {
    if (c.id(w) < 0) c.vocab.push_back(w);
  };
  for (const auto& f : c.frames)
    for (const auto& w : words(f + " " + kRoleSuffix))
      if (w[0] != '{') add(w);
  for (const auto* list : {&c.creatures, &c.adjectives})
    for (const auto& w : *list) add(w);
  const int F = static_cast<int>(c.frames.size()), N = static_cast<int>(c.creatures.size()), A = static_cast<int>(c.adjectives.size());
  const int k = c.creature_adjectives;
  for (int f = 0; f < F; ++f) {
    const std::vector<std::string> frame = words(c.frames[static_cast<std::size_t>(f)] + " " + kRoleSuffix);
    for (int n1 = 0; n1 < N; ++n1)
      for (int n2 = 0; n2 < N; ++n2)
        for (int a = 0; a < A; ++a) {
          if (n1 == n2) continue;  // two different creatures
          CorpusSentence s;
          s.frame = f, s.creature = n1, s.thing = n2, s.adjective = a;
          s.twin = ((f * N + n1) * N + n2) * k + a % k;
          for (const auto& w : frame) {
            const int pos = static_cast<int>(s.ids.size());
            if (w == "{C}") s.creature_pos = pos, s.ids.push_back(c.id(c.creatures[n1]));
            else if (w == "{T}") s.thing_pos = pos, s.ids.push_back(c.id(c.things[n2]));
            else if (w == "{A}") s.ids.push_back(c.id(c.adjectives[a]));
            else s.ids.push_back(c.id(w));
          }
          // an actor adjective names the noun that acts: the first in the active voice, the second in the passive
          const bool first = (a < k) == c.frame_first_acts[static_cast<std::size_t>(f)];
          const int first_id = c.id(c.creatures[n1]), second_id = c.id(c.things[n2]);
          s.answer_id = first ? first_id : second_id;
          s.wrong_id = first ? second_id : first_id;
          s.ids.push_back(s.answer_id);
          c.max_length = std::max(c.max_length, static_cast<int>(s.ids.size()));
          (corpus_heldout_triple(n1, n2, a, k) ? c.heldout : c.train).push_back(std::move(s));
        }
  }
  Rng rng(seed);
  for (std::size_t i = c.train.size(); i > 1; --i) std::swap(c.train[i - 1], c.train[rng.next() % i]);
  return c;
}

}  // namespace

Corpus make_corpus(std::uint64_t seed, CorpusKind kind) {
  if (kind == CorpusKind::Roles) return make_roles_corpus(seed);
  Corpus c;
  for (const char* f : kFrames) c.frames.emplace_back(f);
  for (const char* w : kCreatures) c.creatures.emplace_back(w);
  for (const char* w : kThings) c.things.emplace_back(w);
  for (const char* w : kCreatureAdjectives) c.adjectives.emplace_back(w);
  for (const char* w : kThingAdjectives) c.adjectives.emplace_back(w);
  c.creature_adjectives = static_cast<int>(std::size(kCreatureAdjectives));

  // The vocabulary: <unk>, then every word in order of first appearance (frames, then the slots).
  c.vocab.push_back("<unk>");
  const auto add = [&](const std::string& w) {
    if (c.id(w) < 0) c.vocab.push_back(w);
  };
  for (const auto& f : c.frames)
    for (const auto& w : words(f + " " + kSuffix))
      if (w[0] != '{') add(w);
  for (const auto* list : {&c.creatures, &c.things, &c.adjectives})
    for (const auto& w : *list) add(w);

  for (int f = 0; f < static_cast<int>(c.frames.size()); ++f) {
    const std::vector<std::string> frame = words(c.frames[static_cast<std::size_t>(f)] + " " + kSuffix);
    for (int cr = 0; cr < static_cast<int>(c.creatures.size()); ++cr)
      for (int th = 0; th < static_cast<int>(c.things.size()); ++th)
        for (int a = 0; a < static_cast<int>(c.adjectives.size()); ++a) {
          CorpusSentence s;
          s.frame = f, s.creature = cr, s.thing = th, s.adjective = a;
          s.twin = ((f * static_cast<int>(c.creatures.size()) + cr) * static_cast<int>(c.things.size()) + th) * c.creature_adjectives +
                   a % c.creature_adjectives;
          for (const auto& w : frame) {
            const int pos = static_cast<int>(s.ids.size());
            if (w == "{C}") s.creature_pos = pos, s.ids.push_back(c.id(c.creatures[cr]));
            else if (w == "{T}") s.thing_pos = pos, s.ids.push_back(c.id(c.things[th]));
            else if (w == "{A}") s.ids.push_back(c.id(c.adjectives[a]));
            else s.ids.push_back(c.id(w));
          }
          const int creature_id = c.id(c.creatures[cr]), thing_id = c.id(c.things[th]);
          const bool creature_referent = a < c.creature_adjectives;
          s.answer_id = creature_referent ? creature_id : thing_id;
          s.wrong_id = creature_referent ? thing_id : creature_id;
          s.ids.push_back(s.answer_id);
          c.max_length = std::max(c.max_length, static_cast<int>(s.ids.size()));
          (corpus_heldout_triple(cr, th, a, c.creature_adjectives) ? c.heldout : c.train).push_back(std::move(s));
        }
  }
  // Fisher-Yates with the project's Rng (the same order natively and in wasm).
  Rng rng(seed);
  for (std::size_t i = c.train.size(); i > 1; --i) std::swap(c.train[i - 1], c.train[rng.next() % i]);
  return c;
}

std::vector<std::size_t> heldout_one_per_triple(const Corpus& c) {
  // the k-th held-out triple (in order of first appearance) in frame k mod frames: every frame gets
  // a share (a frame picked from the triple's indices would not: the held-out rule ties them)
  std::map<std::tuple<int, int, int>, std::size_t> ordinal;
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < c.heldout.size(); ++i) {
    const CorpusSentence& s = c.heldout[i];
    const std::size_t k = ordinal.emplace(std::make_tuple(s.creature, s.thing, s.adjective), ordinal.size()).first->second;
    if (k % c.frames.size() == static_cast<std::size_t>(s.frame)) out.push_back(i);
  }
  return out;
}

}  // namespace attn
