// The Train experiment's model folder: tokenizer.json written with nlohmann JSON, the rest by
// save_model_dir. Not a reader: load_model_dir opens what this writes.
#include "train_files.h"

#include <map>
#include <nlohmann/json.hpp>

#include "model_files.h"

namespace attn {

std::string corpus_tokenizer_json(const Corpus& corpus) {
  nlohmann::ordered_json vocab = nlohmann::ordered_json::object();
  for (std::size_t id = 0; id < corpus.vocab.size(); ++id) vocab[corpus.vocab[id]] = id;
  nlohmann::ordered_json root = {
      {"version", "1.0"},
      {"truncation", nullptr},
      {"padding", nullptr},
      {"added_tokens",
       {{{"id", 0}, {"content", corpus.vocab.at(0)}, {"single_word", false}, {"lstrip", false}, {"rstrip", false},
         {"normalized", false}, {"special", true}}}},
      {"normalizer", {{"type", "Lowercase"}}},  // "The animal ..." reads as "the animal ..."
      {"pre_tokenizer", {{"type", "Whitespace"}}},
      {"post_processor", nullptr},
      {"decoder", nullptr},
      {"model", {{"type", "WordLevel"}, {"vocab", vocab}, {"unk_token", corpus.vocab.at(0)}}},
  };
  return root.dump(2) + "\n";
}

void save_trained_model(const Transformer& model, const Corpus& corpus, const std::string& dir) {
  save_model_dir(model, {{"tokenizer.json", corpus_tokenizer_json(corpus)}}, dir);
}

}  // namespace attn
