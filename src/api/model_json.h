// The JSON face of a loaded model, shared by the CLI (`model`) and the page (loadModel, modelTrace):
// its shape, and the attention of every layer and head plus the next-token predictions for a text.
// Not the maths (src/core/transformer.h) and not the loader (model_files.h).
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model_files.h"

namespace attn {

// {name, family (config.json's model_type), layers, heads, kv_heads, d_model, d_head, d_ff,
// vocab_size, positions ("learned" | "rope"), causal, windows (per layer: null for full attention,
// else w: query i sees keys i − w + 1 … i), norm, activation, gated_mlp, qk_norm, attn_softcap,
// final_softcap, score_scale, dtype, weight_bytes, params; n_positions (learned) or rope (per layer)}
nlohmann::json model_info_json(const LoadedModel& model);

// {model, tokens (each token's text as decoded), token_ids, attention [layer][head][query][key]
// (entries above the diagonal exactly 0), next [position] → up to `top` of {token, id, p}}.
// Throws std::invalid_argument for empty text, too many tokens or top outside 1…100.
nlohmann::json model_trace_json(const LoadedModel& model, const std::string& text, int top);
// The same for token ids given directly (ids outside the vocabulary are refused by the forward).
nlohmann::json model_trace_json(const LoadedModel& model, const std::vector<int>& ids, int top);

// The parts both traces and interventions print: a refusal when layers × heads × T × T numbers would
// be too many for JSON; a matrix as rows (non-finite entries null); every layer's and head's weights
// [L][H][T][T] (recomputed per layer from the trace, with its intervention); next [position] → up to
// `top` of {token, id, p}.
void check_attention_size(const TransformerConfig& config, long long T);
nlohmann::json matrix_json(const Matrix& m);
nlohmann::json layer_attention_json(const LayerDetail& detail);  // [H][T][T]
nlohmann::json attention_json(const Transformer& model, const ModelTrace& trace);
nlohmann::json next_json(const LoadedModel& model, const ModelTrace& trace, int top);

}  // namespace attn
