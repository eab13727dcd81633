// The Train experiment's model folder in memory: config.json, model.safetensors and tokenizer.json
// as bytes (for the page's Download zip and for loading a trained model through the one loader).
// Not a writer of folders (train_files.h) and not a zip maker (the page zips with fflate).
// (LoadedModel: model_files.h.)
#pragma once
#include <string>
#include <vector>

#include "../core/corpus.h"
#include "../core/transformer.h"

namespace attn {

struct ModelFileBytes {
  std::string name;   // "config.json", "model.safetensors", "tokenizer.json"
  std::string bytes;
};

// The same three files save_trained_model writes (F32 weights under GPT-2's names; a model trained
// without 1/√d says "scale_attn_weights": false in config.json, from its config).
std::vector<ModelFileBytes> trained_model_files(const Transformer& model, const Corpus& corpus);
// Those files opened through the one loader (ModelAssembler), as the downloaded folder would open.
struct LoadedModel;
LoadedModel load_model_files(const std::string& name, const std::vector<ModelFileBytes>& files);

}  // namespace attn
