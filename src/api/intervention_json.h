// The JSON face of the interventions (src/core/attribution.h), shared by the CLI (`model --ablate …`)
// and the page: what was changed, the next tokens before and after, the chosen token's
// log-probability, each head's direct logit attribution, value-weighted attention, rollout, and the
// sweeps. Not the maths and not the option syntax (the CLI parses its flags into a request).
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "../core/attribution.h"
#include "model_files.h"

namespace attn {

enum class SweepKind { None, Heads, Positions };

// A patch as the page and the JS API name it: the text A to copy from (empty: no patch), and what
// is copied from A's run into this one: heads' outputs, or the stream entering a layer at a position.
struct PatchSpec {
  std::string from;
  std::vector<HeadRef> heads;
  std::vector<std::pair<int, int>> resid;  // (layer, position)
  bool operator==(const PatchSpec& o) const { return from == o.from && heads == o.heads && resid == o.resid; }
  bool operator!=(const PatchSpec& o) const { return !(*this == o); }
};

// The JSON forms the page, the JS API and the permalinks share, each checked for its shape only
// (std::invalid_argument "<what>: …"); whether an entry fits a model and a text is
// validate_intervention's: [[l, h], ...]; "zero" | "mean"; [{layer, head: h | "all", query, key}];
// {from: TEXT, heads?: [[l, h]], resid?: [[l, position]]}.
nlohmann::json heads_json(const std::vector<HeadRef>& heads);
std::vector<HeadRef> heads_from_json(const nlohmann::json& v, const std::string& what);
AblateKind ablate_kind_from_json(const nlohmann::json& v, const std::string& what);
nlohmann::json cuts_json(const std::vector<LinkCut>& cuts);
std::vector<LinkCut> cuts_from_json(const nlohmann::json& v, const std::string& what);
nlohmann::json patch_json(const PatchSpec& patch);  // null when there is none
PatchSpec patch_from_json(const nlohmann::json& v, const std::string& what);
// A sweep's cells as the page and the model's worker pass them on (a stopped sweep to continue, a slice done):
// {values (row-major, null where not run), done, baseline, source}; read back into rows × columns cells (throws
// where they have another shape).
nlohmann::json sweep_cells_json(const Sweep& sweep);
Sweep sweep_cells_from_json(const nlohmann::json& v, int rows, int columns);

// `edit` with what a patch copies from A's run (`source`) into a run of as many tokens; throws
// std::invalid_argument naming a layer outside the model.
Intervention with_patches(const Transformer& model, Intervention edit, const ModelTrace& source,
                          const std::vector<HeadRef>& heads, const std::vector<std::pair<int, int>>& resid);

struct InterventionRequest {
  std::vector<int> ids;                          // the text the model reads (B when patching), without padding
  Intervention edit;                             // ablate, ablate_kind, cuts; patches come from `source_ids`
  std::vector<int> source_ids;                   // A, the run patches copy from (empty: no patching)
  std::vector<HeadRef> patch_heads;              // heads whose output A gives B
  std::vector<std::pair<int, int>> patch_resid;  // (layer, position): streams A gives B
  int target = -1;                               // −1: the unchanged run's likeliest token at `at`
  int against = -1;                              // ≥ 0: attribution of target − against (models with attribution only)
  int at = -1;                                   // −1: a decoder's last position, an encoder's first mask token
  SweepKind sweep = SweepKind::None;             // heads: ablate (or patch) each head alone; positions: patch each stream
  int top = 5;
  int padding = 0;                               // [PAD] / <pad> tokens appended to both texts, attention mask 0
};

// A token named as the tokenizer's vocabulary writes it ("Ġstreet"), as text that is one token
// (" street"), or "#id". Throws std::invalid_argument("<what>: …") otherwise.
int token_from_spec(const LoadedModel& model, const std::string& spec, const std::string& what);

// {model, tokens, token_ids, at, target {token, id}, against?, next [position] (the unchanged run;
//  an encoder: masked [{position, top}] as model_trace_json has it), log_prob, padding?, intervened?
//  {ablate, ablate_kind, cuts, patch?, next (or masked), log_prob, delta_log_prob, attention [L][H][T][T]},
//  patch? {source_log_prob, base_log_prob, patched_log_prob, restored (null: no difference to restore)},
//  attribution {logit, offset, embeddings, heads [L][H], biases [L], mlps [L], sum, post_norms_frozen,
//  before_final_softcap} of the run shown (intervened when there is a change), value_weighted
//  [L][H][T][T], value_norms [L][H][T], rollout [L][T][T], sweep? {kind, metric, values, baseline,
//  source?}}.
// What is measured: log p(target) at `at`. A decoder's `at` defaults to its last token, an encoder's to
// its first mask token; an encoder with no mask token and no `at`, or a model without an LM head (an
// encoder read without its masked-LM head), measures nothing: at, target and every log-prob are null,
// and a target, a sweep (an `at` too without an LM head) are refused. attribution is null with
// attribution_note (one line) where it cannot be read: a model whose logit is not a sum of parts
// (why_no_attribution: an encoder's post-norm blocks and masked-LM head), nothing measured, or the
// stream at `at` patched; `against` (which feeds only attribution) is refused on a model without it.
// Throws std::invalid_argument for any bad part of the request.
nlohmann::json intervention_json(const LoadedModel& model, const InterventionRequest& request);

// The page's form of a request (attentionExplainer.intervene): {text, top?, ablate? [[l, h], ...],
// ablate_kind? "zero" | "mean", cut? [{layer, head: h | "all", query, key}], patch? {from: TEXT,
// heads?: [[l, h]], resid?: [[l, position]]}, target?, against? (a token as token_from_spec reads
// it, or an id), at?, sweep? "heads" | "positions", pad? (padding tokens)}. The texts are read as
// model_text_ids reads them. Throws std::invalid_argument naming the key.
InterventionRequest intervention_request(const LoadedModel& model, const nlohmann::json& request);

}  // namespace attn
