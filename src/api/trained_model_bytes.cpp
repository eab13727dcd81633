// The trained model's folder as bytes (see trained_model_bytes.h), through model_files.h's writers.
// Not a reader: ModelAssembler opens what this returns.
#include "trained_model_bytes.h"

#include <sstream>

#include "model_files.h"
#include "train_files.h"

namespace attn {

std::vector<ModelFileBytes> trained_model_files(const Gpt2Model& model, const Corpus& corpus) {
  std::ostringstream weights(std::ios::binary);
  write_gpt2_safetensors(weights, model);
  return {{"config.json", gpt2_config_json(model.config)}, {"model.safetensors", weights.str()},
          {"tokenizer.json", corpus_tokenizer_json(corpus)}};
}

}  // namespace attn
