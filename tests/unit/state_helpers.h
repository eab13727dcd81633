// States the unit tests of the state room start from: the page's, with a small random GPT-2 model
// loaded as the page loads one. Not a test framework: doctest is.
#pragma once
#include "../../src/api/trained_model_bytes.h"
#include "../../src/core/corpus.h"
#include "../../src/state/app_state.h"

namespace attn::test {

// A random GPT-2 model "toy" of 2 layers × 2 heads on the Train view's corpus, chosen, on the lesson's
// sentence in lower case.
inline AppState with_toy_model() {
  const Corpus corpus = make_corpus(1);
  const Transformer model = random_transformer(gpt2_config(2, 2, 16, 32, static_cast<int>(corpus.vocab.size())), 5,
                                               Dtype::F32, WeightLayout::InOut, 0.3);
  AppState s = make_initial_state();
  add_model(s, load_model_files("toy", trained_model_files(model, corpus)));
  apply_state_json(s, {{"model", "toy"}, {"sentence", "the animal didn't cross the street because it was tired"}}, 0.0);
  return s;
}

}  // namespace attn::test
