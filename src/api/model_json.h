// The JSON face of a loaded model, shared by the CLI (`model`) and the page (loadModel, modelTrace):
// its shape, and the attention of every layer and head plus the next-token predictions for a text.
// Not the maths (src/core/gpt2.h) and not the loader (model_files.h).
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "model_files.h"

namespace attn {

// {name, family: "gpt2", layers, heads, d_model, vocab_size, params}
nlohmann::json model_info_json(const LoadedModel& model);

// {model, tokens (each token's text as decoded), token_ids, attention [layer][head][query][key]
// (entries above the diagonal exactly 0), next [position] → up to `top` of {token, id, p}}.
// Throws std::invalid_argument for empty text, too many tokens or top outside 1…100.
nlohmann::json model_trace_json(const LoadedModel& model, const std::string& text, int top);

}  // namespace attn
