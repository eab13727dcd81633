// Files of the Train experiment: the corpus vocabulary as a Hugging Face tokenizer.json (model type
// WordLevel) and the trained model saved as a model folder. Not the trainer (src/core/train.h).
#pragma once
#include <string>

#include "../core/corpus.h"
#include "../core/transformer.h"

namespace attn {

// tokenizer.json's text: WordLevel over corpus.vocab (id order), unk "<unk>", the Whitespace
// pre-tokenizer (words and runs of punctuation apart, as TextTokenizer::word_level splits them).
std::string corpus_tokenizer_json(const Corpus& corpus);

// dir/config.json, dir/model.safetensors (F32, GPT-2's names) and dir/tokenizer.json; the folder
// loads through load_model_dir. A model trained without 1/√d says so in config.json
// ("scale_attn_weights": false, Hugging Face's key, from model.config), and loads back unscaled.
// Throws std::runtime_error when a file cannot be written.
void save_trained_model(const Transformer& model, const Corpus& corpus, const std::string& dir);

}  // namespace attn
