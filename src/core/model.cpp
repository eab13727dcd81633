// The worked-example lexicon and projection matrices (see model.h for what this is not).
//
// How the numbers were chosen. Each word is a vector of 8 readable features (creature, thing,
// pronoun, action, quality, grammar, negation, punctuation). The projections read them:
//   W_K says what a token *offers* for matching: creature → key dim "is a creature" (2.0),
//       thing → "is a thing", action → "is an action", quality → "is a quality".
//   W_Q says what a token *looks for*: a pronoun looks hard for a creature (3.0) and a little for
//       a thing (1.0); an adjective looks for a noun, a creature (1.5) above a thing (1.0), whichever
//       adjective it is (this toy cannot tell "wide" from "tired"); a negation looks for its verb;
//       a creature looks for its verb and for how it is described.
//   W_V passes on content, which need not be what the key advertises: a creature, an action or a
//       quality hands on its feature whole (1.0), but a thing hands on only a little of it (0.4)
//       although its key advertises it as strongly as a creature's (2.0). So a well-matched thing
//       is read and still adds little: the key decides how much, the value decides what.
// So for "it" (pronoun) the query is [3, 1, 0, 0]; "animal"'s key is [2, 0, 0, 0] (score 6),
// "street"'s is [0, 2, 0, 0] (score 2), every other key scores 0. Divided by √4 = 2 that is
// 3 vs 1 vs 0, and softmax gives "animal" about 0.65 of the weight. "it"'s output is then
// 0.65 × animal's value [1, 0, 0, 0] + 0.09 × street's [0, 0.4, 0, 0] + the actions' and the
// quality's. Grammar words have empty
// keys and queries: they attend evenly and are attended to by nobody in particular. There is no
// position information, as in attention itself: the same word gets the same row anywhere.
#include "model.h"

#include <cstdint>
#include <unordered_map>

namespace attn {

namespace {

enum Feature { kCreature, kThing, kPronoun, kAction, kQuality, kGrammar, kNegation, kPunct };
using Features = std::array<float, kFeatures>;

Features make(std::initializer_list<std::pair<Feature, float>> entries) {
  Features f{};
  for (const auto& [feature, value] : entries) f[feature] = value;
  return f;
}

const std::unordered_map<std::string, Features>& lexicon() {
  static const std::unordered_map<std::string, Features> words = [] {
    std::unordered_map<std::string, Features> w;
    auto add = [&](std::initializer_list<const char*> list, Features f) {
      for (const char* word : list) w[word] = f;
    };
    add({"animal", "dog", "cat", "bird", "horse", "fox", "cow", "man", "woman", "child", "boy", "girl", "teacher",
         "student", "person", "people", "friend", "mother", "father", "doctor", "robot"},
        make({{kCreature, 1.0f}}));
    add({"street", "road", "river", "bank", "house", "car", "ball", "tree", "book", "library", "table", "money",
         "water", "city", "bridge", "box", "food", "door", "school", "park", "fence", "hill"},
        make({{kThing, 1.0f}}));
    add({"it", "he", "she", "they", "him", "her", "them", "its", "his", "their", "this", "that"},
        make({{kPronoun, 1.0f}}));
    add({"cross", "crossed", "was", "is", "were", "are", "ran", "run", "runs", "sat", "ate", "eat", "saw", "see",
         "went", "go", "walk", "walked", "jumped", "jump", "read", "found", "gave", "like", "liked", "slept",
         "stopped", "wanted", "fell", "opened", "flowed"},
        make({{kAction, 1.0f}}));
    add({"tired", "wide", "big", "small", "happy", "hungry", "quick", "brown", "lazy", "red", "old", "new", "long",
         "slow", "fast", "busy", "sleepy", "deep", "closed", "full", "empty", "heavy", "scared", "wet"},
        make({{kQuality, 1.0f}}));
    add({"the", "a", "an", "because", "and", "but", "of", "to", "in", "on", "at", "over", "with", "so", "too",
         "very", "for", "from", "by", "when", "while", "then", "as", "into"},
        make({{kGrammar, 1.0f}}));
    add({"didn't", "not", "no", "never", "doesn't", "don't", "wasn't", "couldn't", "won't", "isn't", "can't"},
        make({{kNegation, 1.0f}, {kAction, 0.5f}}));
    return w;
  }();
  return words;
}

// FNV-1a: a fixed hash, the same on every platform, so unknown words embed the same everywhere.
std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

Features unknown_word(const std::string& lower) {
  Features f{};
  std::uint64_t h = fnv1a(lower);
  for (int i = 0; i < kFeatures; ++i) {
    h = h * 6364136223846793005ull + 1442695040888963407ull;  // one LCG step per feature
    f[i] = static_cast<float>((h >> 40) & 0xffff) / 65535.0f - 0.5f;
  }
  return f;
}

}  // namespace

const std::array<const char*, kFeatures>& feature_names() {
  static const std::array<const char*, kFeatures> n = {"creature", "thing",    "pronoun",  "action",
                                                       "quality",  "grammar",  "negation", "punctuation"};
  return n;
}
const std::array<const char*, kHeadDim>& query_dim_names() {
  static const std::array<const char*, kHeadDim> n = {"seeks creature", "seeks thing", "seeks action",
                                                      "seeks quality"};
  return n;
}
const std::array<const char*, kHeadDim>& key_dim_names() {
  static const std::array<const char*, kHeadDim> n = {"is creature", "is thing", "is action", "is quality"};
  return n;
}
const std::array<const char*, kHeadDim>& value_dim_names() {
  static const std::array<const char*, kHeadDim> n = {"creature", "thing", "action", "quality"};
  return n;
}

const WorkedModel& worked_model() {
  static const WorkedModel m = [] {
    WorkedModel w;
    w.wq = Matrix::Zero(kFeatures, kHeadDim);
    w.wk = Matrix::Zero(kFeatures, kHeadDim);
    w.wv = Matrix::Zero(kFeatures, kHeadDim);
    enum Dim { kCreatureDim, kThingDim, kActionDim, kQualityDim };
    // Queries: what each kind of word looks for.
    w.wq(kPronoun, kCreatureDim) = 3.0f;  // "it" asks: which creature do I stand for?
    w.wq(kPronoun, kThingDim) = 1.0f;     // ... or, less likely, which thing?
    w.wq(kQuality, kCreatureDim) = 1.5f;  // "tired" asks: who is tired?
    w.wq(kQuality, kThingDim) = 1.0f;
    w.wq(kNegation, kActionDim) = 2.5f;   // "didn't" asks: which action is negated?
    w.wq(kCreature, kActionDim) = 1.0f;   // a creature looks for what it does
    w.wq(kCreature, kQualityDim) = 1.5f;  // ... and how it is described
    w.wq(kThing, kQualityDim) = 1.0f;
    w.wq(kAction, kCreatureDim) = 1.0f;   // an action looks for who does it
    w.wq(kAction, kThingDim) = 1.0f;      // ... and to what
    // Keys: what each kind of word offers for matching.
    w.wk(kCreature, kCreatureDim) = 2.0f;
    w.wk(kThing, kThingDim) = 2.0f;
    w.wk(kAction, kActionDim) = 2.0f;
    w.wk(kQuality, kQualityDim) = 2.0f;
    // Values: the content passed on. Not the key again: a thing's key is as loud as a creature's,
    // but what a thing hands on is thin (a title that matches well over little inside).
    w.wv(kCreature, kCreatureDim) = 1.0f;
    w.wv(kThing, kThingDim) = 0.4f;
    w.wv(kAction, kActionDim) = 1.0f;
    w.wv(kQuality, kQualityDim) = 1.0f;
    return w;
  }();
  return m;
}

EmbeddedSentence embed_sentence(const std::string& sentence) {
  EmbeddedSentence e;
  e.tokens = tokenize(sentence);
  const int T = static_cast<int>(e.tokens.size());
  e.x = Matrix::Zero(T, kFeatures);
  e.unknown.assign(e.tokens.size(), false);
  for (int i = 0; i < T; ++i) {
    const Token& tok = e.tokens[i];
    Features f{};
    if (tok.is_punct) {
      f[kPunct] = 1.0f;
    } else if (auto it = lexicon().find(tok.lower); it != lexicon().end()) {
      f = it->second;
    } else {
      f = unknown_word(tok.lower);
      e.unknown[i] = true;
    }
    for (int c = 0; c < kFeatures; ++c) e.x(i, c) = f[c];
  }
  return e;
}

}  // namespace attn
