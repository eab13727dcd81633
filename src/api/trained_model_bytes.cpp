// The trained model's folder as bytes (see trained_model_bytes.h), through model_files.h's writers.
// Not a reader: ModelAssembler opens what this returns.
#include "trained_model_bytes.h"

#include <nlohmann/json.hpp>
#include <sstream>

#include "model_files.h"
#include "train_files.h"

namespace attn {

std::vector<ModelFileBytes> trained_model_files(const Gpt2Model& model, const Corpus& corpus, bool scaled) {
  nlohmann::ordered_json config = nlohmann::ordered_json::parse(gpt2_config_json(model.config));
  if (!scaled) config["scale_attn_weights"] = false;  // Hugging Face's key, as save_trained_model writes it
  std::ostringstream weights(std::ios::binary);
  write_gpt2_safetensors(weights, model);
  return {{"config.json", config.dump(2) + "\n"}, {"model.safetensors", weights.str()},
          {"tokenizer.json", corpus_tokenizer_json(corpus)}};
}

}  // namespace attn
