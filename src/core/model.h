// The worked-example model: a small hand-made lexicon of word features and hand-set W_Q, W_K,
// W_V. Not a trained model: every number was chosen by us so a learner can read off *why* a
// token attends where it does ("it" is a pronoun; its query asks for a creature; "animal"'s key
// says "I am a creature").
#pragma once
#include <array>
#include <string>
#include <vector>

#include "matrix.h"
#include "tokenizer.h"

namespace attn {

constexpr int kFeatures = 8;  // width of a token vector x (columns of X)
constexpr int kHeadDim = 4;   // d: width of queries, keys and values

// Names of the columns of X, of Q/K (what a query seeks = what a key offers) and of V.
const std::array<const char*, kFeatures>& feature_names();
const std::array<const char*, kHeadDim>& query_dim_names();
const std::array<const char*, kHeadDim>& key_dim_names();
const std::array<const char*, kHeadDim>& value_dim_names();

struct WorkedModel {
  Matrix wq, wk, wv;  // each (kFeatures, kHeadDim)
};
const WorkedModel& worked_model();

struct EmbeddedSentence {
  std::vector<Token> tokens;
  std::vector<bool> unknown;  // true where the word is not in the lexicon
  Matrix x;                   // (T, kFeatures)
};

// Tokenizes (throws std::invalid_argument on empty or too-long input) and looks every token up.
// Unknown words get a deterministic pseudo-random vector (from a hash of the lowercased word,
// entries in [-0.5, 0.5]) so the same word always gets the same vector.
EmbeddedSentence embed_sentence(const std::string& sentence);

// The lesson's sentence, the default of every view.
constexpr const char* kLessonSentence = "The animal didn't cross the street because it was tired";
// Its famous twin: one word changed, and a reader's "it" becomes the street (the toy's does not).
constexpr const char* kLessonTwinSentence = "The animal didn't cross the street because it was wide";

}  // namespace attn
