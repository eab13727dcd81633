// What the views read of a loaded model for the learner's inputs, computed from its weights by one
// function wherever the weights are: in the model's Web Worker for the page's own changes (the page
// posts the ask, the answer comes back packed: model_transfer.h), or in the page itself (the native
// app, the JS API's synchronous calls, a page whose worker could not start). The page draws the
// answer; what it computes itself (the shown head's trace, the family views) needs no weights.
#pragma once
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "../core/attribution.h"
#include "../core/transformer.h"

namespace attn {

constexpr int kShownNextTokens = 5;  // the likeliest next tokens a view shows after the selected token

// Every input of the answer (the page checked that the edits fit the texts: validate_intervention).
struct ModelViewsAsk {
  std::vector<int> ids;        // the text's tokens
  int layer = 0, head = 0;     // shown
  int token = 0;               // the selected token
  int position = -1;           // where the predictions are read (a decoder's: token; −1: nowhere)
  Intervention edit;           // the learner's heads switched off and links cut (no patches: below)
  std::vector<int> patch_ids;  // A's tokens, the run a patch copies from (empty: no patch)
  std::vector<HeadRef> patch_heads;
  std::vector<std::pair<int, int>> patch_resid;  // (layer, position)
  int influence = 0;           // the Weights view's reading: 0 none, 1 value-weighted, 2 rollout
  bool attribution = false;    // the Heads view's attribution of the unchanged run's likeliest token
  bool projections = false;    // the shown head's slices of W_Q, W_K, W_V (the Flow and Build views draw them)
  bool compare = false;        // Compare's second text B: compare_ids, with compare_edit
  std::vector<int> compare_ids;
  Intervention compare_edit;   // the edits where they fit B, else none (the page decides)
  bool operator==(const ModelViewsAsk& o) const;
  bool operator!=(const ModelViewsAsk& o) const { return !(*this == o); }
  // Whether the answer to this ask serves `wanted` too: the same but for parts it has that `wanted` does not
  // need (the attribution, the projections, a reading, Compare's B: a view that draws fewer of them).
  bool covers(const ModelViewsAsk& wanted) const;
};
// The learner's edits of an ask alike (heads switched off, their kind, links cut; an ask's edits have no patches).
bool same_edits(const Intervention& a, const Intervention& b);
nlohmann::json model_views_ask_json(const ModelViewsAsk& ask);
// Throws std::invalid_argument for a malformed ask (shapes only: the worker's model checks the rest).
ModelViewsAsk model_views_ask_from_json(const nlohmann::json& v);

// What the learner's interventions did to the answer at the selected position: the unchanged run's
// likeliest next token, its log-probability before and after, and for a patch A's (the text copied
// from) and the share of the A/B difference restored.
struct EditEffect {
  bool shown = false;                   // a loaded model with an intervention
  int position = 0, target = 0;         // the selected token; the unchanged run's top next token there
  double base_log_prob = 0, log_prob = 0;
  bool patched = false;
  double source_log_prob = 0, restored = 0;  // restored NaN: |A − B| < kMinRestorable, nothing to restore
  std::vector<NextToken> base_next;     // the unchanged run's next tokens (the strip draws both)
  double delta() const { return log_prob - base_log_prob; }
};

// The Weights view's reading of the chosen head beyond its weights: the matrix (Tq, Tk), and for the
// value-weighted reading the size of what each key sends.
struct Influence {
  Matrix values;
  Vector value_norms;
};

// The shown head's columns of its layer's W_Q, W_K, W_V (C × head_dim each) and biases (zeros without one):
// the only weights the page keeps of a model whose worker holds them.
struct HeadProjections {
  Matrix weights[3];
  Vector biases[3];
};

struct ModelViews {
  ModelViewsAsk ask;
  // The runs: the model as it is, the run a patch copies from, the shown one (base with the edits: the
  // same pointer without), and Compare's B as it is and with its edits.
  std::shared_ptr<const ModelTrace> base, patch_source, shown, compare_base, compare_shown;
  std::shared_ptr<const LayerDetail> detail;          // shown's layer ask.layer in full
  std::shared_ptr<const LayerDetail> compare_detail;  // compare_shown's
  std::vector<NextToken> next;                        // shown's likeliest tokens at ask.position
  EditEffect effect;
  // Null where the model cannot be read so, nothing is predicted, or a patch replaced the stream there.
  std::shared_ptr<const LogitAttribution> attribution;
  std::shared_ptr<const Influence> influence;
  AroundHeadView around;
  std::shared_ptr<const HeadProjections> projections;  // (ask.projections)
  TwinAsk twins;
  // The next tokens of the model as it is (without the interventions).
  const std::vector<NextToken>& unchanged_next() const { return effect.shown ? effect.base_next : next; }
};

// The model as it is for ids (its LM head nowhere): the page's incremental forward, or the worker's.
using BaseForward = std::function<std::shared_ptr<const ModelTrace>(const std::vector<int>& ids)>;

// The answer for `ask`, every part taken from `previous` (when given, by the same weights) where its own
// inputs did not change. `cache` (the one base_forward fills, when it holds ask.ids' text): the
// attribution reads each layer's row from it. Throws std::invalid_argument as the core does.
ModelViews model_views(const Transformer& model, const ModelViewsAsk& ask, const BaseForward& base_forward,
                       const ModelViews* previous = nullptr, const ForwardCache* cache = nullptr);

}  // namespace attn
