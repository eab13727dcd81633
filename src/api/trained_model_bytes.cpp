// The trained model's folder as bytes (see trained_model_bytes.h), through model_files.h's writers.
// Reading goes through ModelAssembler, the one loader.
#include "trained_model_bytes.h"

#include "model_files.h"
#include "train_files.h"

namespace attn {

std::vector<ModelFileBytes> trained_model_files(const Transformer& model, const Corpus& corpus) {
  return {{"config.json", model_config_json(model.config)}, {"model.safetensors", model_safetensors_bytes(model)},
          {"tokenizer.json", corpus_tokenizer_json(corpus)}};
}

LoadedModel load_model_files(const std::string& name, const std::vector<ModelFileBytes>& files) {
  ModelAssembler assembler(name);
  for (const ModelFileBytes& f : files) {
    if (model_file_role(f.name) == ModelFileRole::Weights) {
      assembler.begin_weights(f.name, f.bytes.size());
      assembler.feed_weights(reinterpret_cast<const std::uint8_t*>(f.bytes.data()), f.bytes.size());
    } else {
      assembler.add_text_file(f.name, f.bytes);
    }
  }
  return assembler.finish();
}

}  // namespace attn
