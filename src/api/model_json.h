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
// (entries the mask hides exactly 0: above the diagonal for a decoder), next [position] → up to `top`
// of {token, id, p}}. An encoder (model.causal false) has no `next`: `masked`, one {position, top: [{token,
// id, p}]} per mask token of the text (its masked-LM head's predictions there; [] without mask tokens).
// `padding` > 0: that many of the tokenizer's [PAD] / <pad> tokens are appended with attention mask 0
// (hidden as keys from every query; `padding` in the result; tokens and attention include them).
// Throws std::invalid_argument for empty text, too many tokens, top outside 1…100, and for an
// encoder: a [MASK] / <mask> typed when its tokenizer has no mask token, or a mask token when the
// model has no masked-LM head.
nlohmann::json model_trace_json(const LoadedModel& model, const std::string& text, int top, int padding = 0);
// The same for token ids given directly (ids outside the vocabulary are refused by the forward).
nlohmann::json model_trace_json(const LoadedModel& model, const std::vector<int>& ids, int top, int padding = 0);

// model_trace_json in its three parts, for a page whose worker computes the numbers: the ids it reads
// (checked, padded), the forward (every layer's stream kept, `top` next tokens everywhere), and the answer
// from the trace's ids, next tokens and padding, with the attention computed by attention_json.
std::vector<int> model_trace_ids(const LoadedModel& model, const std::vector<int>& ids, int top, int padding);
ModelTrace model_trace_numbers(const Transformer& model, const std::vector<int>& padded_ids, int top, int padding);
nlohmann::json model_trace_answer(const LoadedModel& model, const ModelTrace& trace, nlohmann::json attention, int top);

// What both traces and interventions read a text and its padding with. model_text_ids: the ids the
// model reads (the tokenizer's specials added), refusing an empty text and, for an encoder, a
// [MASK] / <mask> typed when its tokenizer has no mask token ("<what>: …"). check_mask_tokens: an
// encoder's mask token among ids when the model has no masked-LM head is refused ("text: …").
// padded_ids: ids and `padding` of the tokenizer's [PAD] / <pad> tokens (0 … kMaxModelTokens;
// a tokenizer with neither is refused).
std::vector<int> model_text_ids(const LoadedModel& model, const std::string& text, const std::string& what = "text");
void check_mask_tokens(const LoadedModel& model, const std::vector<int>& ids);
std::vector<int> padded_ids(const LoadedModel& model, std::vector<int> ids, int padding);

// The parts both traces and interventions print: a refusal when layers × heads × T × T numbers would
// be too many for JSON; a matrix as rows (non-finite entries null); every layer's and head's weights
// [L][H][T][T] (recomputed per layer from the trace, with its intervention); next [position] → up to
// `top` of {token, id, p}.
void check_attention_size(const TransformerConfig& config, long long T);
nlohmann::json matrix_json(const Matrix& m);
nlohmann::json layer_attention_json(const LayerDetail& detail);  // [H][T][T]
nlohmann::json attention_json(const Transformer& model, const ModelTrace& trace);
nlohmann::json next_json(const LoadedModel& model, const ModelTrace& trace, int top);
// An encoder's mask tokens (the tokenizer's mask_id, padding excluded) and its predictions at each:
// [{position, top: up to `top` of {token, id, p}}].
nlohmann::json masked_json(const LoadedModel& model, const ModelTrace& trace, int top);

}  // namespace attn
