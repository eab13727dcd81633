// What the views read of a loaded model (model_views.h): the runs, the shown layer, the predictions, the
// interventions' effect and the readings of one head, each from its own inputs, each kept where they
// did not change.
#include "model_views.h"

#include <algorithm>

#include "../core/refuse.h"
#include "intervention_json.h"

namespace attn {

using json = nlohmann::json;

namespace {
json edit_json(const Intervention& e) {
  return {{"ablate", heads_json(e.ablate)}, {"kind", e.ablate_kind == AblateKind::Mean ? "mean" : "zero"},
          {"cuts", cuts_json(e.cuts)}};
}
Intervention edit_from_json(const json& v) {
  Intervention e;
  e.ablate = heads_from_json(v.at("ablate"), "ask.ablate");
  e.ablate_kind = ablate_kind_from_json(v.at("kind"), "ask.kind");
  e.cuts = cuts_from_json(v.at("cuts"), "ask.cuts");
  return e;
}
}  // namespace

bool same_edits(const Intervention& a, const Intervention& b) {
  return a.ablate == b.ablate && a.ablate_kind == b.ablate_kind && a.cuts == b.cuts;
}

json model_views_ask_json(const ModelViewsAsk& a) {
  return {{"ids", a.ids},
          {"layer", a.layer},
          {"head", a.head},
          {"token", a.token},
          {"position", a.position},
          {"edit", edit_json(a.edit)},
          {"patch_ids", a.patch_ids},
          {"patch_heads", heads_json(a.patch_heads)},
          {"patch_resid", a.patch_resid},
          {"influence", a.influence},
          {"attribution", a.attribution},
          {"projections", a.projections},
          {"compare", a.compare},
          {"compare_ids", a.compare_ids},
          {"compare_edit", edit_json(a.compare_edit)}};
}

ModelViewsAsk model_views_ask_from_json(const json& v) {
  try {
    ModelViewsAsk a;
    v.at("ids").get_to(a.ids);
    a.layer = v.at("layer"), a.head = v.at("head"), a.token = v.at("token"), a.position = v.at("position");
    a.edit = edit_from_json(v.at("edit"));
    v.at("patch_ids").get_to(a.patch_ids);
    a.patch_heads = heads_from_json(v.at("patch_heads"), "ask.patch_heads");
    v.at("patch_resid").get_to(a.patch_resid);
    a.influence = v.at("influence");
    a.attribution = v.at("attribution"), a.projections = v.at("projections"), a.compare = v.at("compare");
    v.at("compare_ids").get_to(a.compare_ids);
    a.compare_edit = edit_from_json(v.at("compare_edit"));
    if (a.influence < 0 || a.influence > 2) refuse("ask.influence", "must be 0, 1 or 2");
    return a;
  } catch (const json::exception& e) {
    throw std::invalid_argument(std::string("ask: ") + e.what());
  }
}

bool ModelViewsAsk::operator==(const ModelViewsAsk& o) const { return model_views_ask_json(*this) == model_views_ask_json(o); }

bool ModelViewsAsk::covers(const ModelViewsAsk& wanted) const {
  ModelViewsAsk have = *this, want = wanted;
  if (!want.attribution) have.attribution = false;
  if (!want.projections) have.projections = false;
  if (want.influence == 0) have.influence = 0;
  if (!want.compare)
    for (ModelViewsAsk* a : {&have, &want}) a->compare = false, a->compare_ids.clear(), a->compare_edit = Intervention{};
  return have == want;
}

ModelViews model_views(const Transformer& model, const ModelViewsAsk& ask, const BaseForward& base_forward,
                       const ModelViews* previous, const ForwardCache* cache) {
  const TransformerConfig& c = model.config;
  const ModelViewsAsk* was = previous ? &previous->ask : nullptr;
  const int T = static_cast<int>(ask.ids.size());
  if (T == 0) refuse("ask", "no tokens");
  if (ask.layer < 0 || ask.layer >= c.n_layer || ask.head < 0 || ask.head >= c.n_head || ask.token < 0 || ask.token >= T ||
      ask.position >= T)
    refuse("ask", "a layer, head or token outside the model or the text");
  ModelViews v;
  v.ask = ask;
  ForwardOptions no_head;  // the LM head where a view reads it only (next_tokens_at)
  no_head.predict_from = T;
  // The runs: each again only where its own inputs changed.
  const bool same_base = was && was->ids == ask.ids && previous->base;
  v.base = same_base ? previous->base : base_forward(ask.ids);
  const bool patching = !ask.patch_ids.empty();
  const bool same_source = patching && was && was->patch_ids == ask.patch_ids && previous->patch_source;
  if (patching)
    v.patch_source = same_source ? previous->patch_source
                                 : std::make_shared<const ModelTrace>(transformer_forward(model, ask.patch_ids, no_head));
  Intervention edit = ask.edit;
  if (patching) edit = with_patches(model, edit, *v.patch_source, ask.patch_heads, ask.patch_resid);
  validate_intervention(c, T, edit);
  const bool same_edit = same_base && (!patching || same_source) && same_edits(ask.edit, was->edit) && was->patch_ids == ask.patch_ids &&
                         was->patch_heads == ask.patch_heads && was->patch_resid == ask.patch_resid;
  v.shown = edit.empty() ? v.base
            : same_edit  ? previous->shown
                         : std::make_shared<const ModelTrace>(rerun_forward(model, *v.base, edit, no_head));
  const bool same_shown = previous && v.shown == previous->shown;
  v.detail = same_shown && was->layer == ask.layer ? previous->detail
                                                  : std::make_shared<const LayerDetail>(layer_detail(model, *v.shown, ask.layer));
  // The predictions and what the edits did to them.
  const bool same_position = same_shown && previous->base == v.base && was->position == ask.position;
  if (same_position) {
    v.next = previous->next;
    v.effect = previous->effect;
  } else if (ask.position >= 0) {
    v.next = next_tokens_at(model, *v.shown, ask.position, kShownNextTokens);
    if (!edit.empty()) {
      EditEffect& e = v.effect;
      e.shown = true;
      e.position = ask.position;
      e.base_next = next_tokens_at(model, *v.base, ask.position, kShownNextTokens);
      e.target = e.base_next.front().id;
      e.base_log_prob = token_log_prob(model, *v.base, ask.position, e.target);
      e.log_prob = token_log_prob(model, *v.shown, ask.position, e.target);
      e.patched = patching;
      if (patching) {
        e.source_log_prob = token_log_prob(model, *v.patch_source, ask.position, e.target);
        e.restored = restored_fraction(e.log_prob, e.source_log_prob, e.base_log_prob);
      }
    }
  }
  if (ask.attribution && !v.unchanged_next().empty() && why_no_attribution(c).empty()) {
    const int target = v.unchanged_next().front().id;
    const bool stream_patched = std::any_of(edit.stream_patches.begin(), edit.stream_patches.end(),
                                            [&](const StreamPatch& p) { return p.position == ask.position; });
    const LogitAttribution* old = same_position ? previous->attribution.get() : nullptr;
    if (old && old->target == target) v.attribution = previous->attribution;
    else if (!stream_patched) {
      const bool cached = cache && cache->model == &model && cache->token_ids == ask.ids && edit.empty();
      v.attribution = std::make_shared<const LogitAttribution>(cached ? attribute_logit(model, *cache, ask.position, target)
                                                                      : attribute_logit(model, *v.shown, ask.position, target));
    }
  }
  // The shown head's readings.
  const TransformerBlock& block = model.blocks[static_cast<std::size_t>(ask.layer)];
  const bool same_detail = previous && v.detail == previous->detail;
  if (ask.influence != 0 && same_detail && was->influence == ask.influence && (ask.influence == 2 || was->head == ask.head))
    v.influence = previous->influence;
  else if (ask.influence == 1) {
    ValueWeighted vw = value_weighted(c, block, *v.detail, ask.head);
    v.influence = std::make_shared<const Influence>(Influence{std::move(vw.weighted), std::move(vw.value_norms)});
  } else if (ask.influence == 2) {  // every layer up to the shown one
    std::vector<Matrix> means;
    for (int l = 0; l < ask.layer; ++l) means.push_back(head_mean_weights(layer_detail(model, *v.shown, l)));
    means.push_back(head_mean_weights(*v.detail));
    v.influence = std::make_shared<const Influence>(Influence{attention_rollout(means).back(), {}});
  }
  v.around = around_head(c, block, *v.detail, ask.head, ask.token);
  if (ask.projections) {
    const bool same_head = previous && previous->projections && was->layer == ask.layer && was->head == ask.head;
    if (same_head) v.projections = previous->projections;
    else {
      auto p = std::make_shared<HeadProjections>();
      for (int which = 0; which < 3; ++which) {
        p->weights[which] = head_weights(c, block, ask.head, static_cast<Projection>(which));
        p->biases[which] = head_bias(c, block, ask.head, static_cast<Projection>(which));
      }
      v.projections = std::move(p);
    }
  }
  // Compare's B.
  if (ask.compare) {
    ForwardOptions b_no_head;
    b_no_head.predict_from = static_cast<int>(ask.compare_ids.size());
    const bool same_b = was && was->compare && was->compare_ids == ask.compare_ids && previous->compare_base;
    v.compare_base = same_b ? previous->compare_base
                            : std::make_shared<const ModelTrace>(transformer_forward(model, ask.compare_ids, b_no_head));
    const bool same_b_edit = same_b && same_edits(ask.compare_edit, was->compare_edit);
    v.compare_shown = ask.compare_edit.empty() ? v.compare_base
                      : same_b_edit ? previous->compare_shown
                                    : std::make_shared<const ModelTrace>(rerun_forward(model, *v.compare_base, ask.compare_edit, b_no_head));
    v.compare_detail = previous && v.compare_shown == previous->compare_shown && was->layer == ask.layer
                           ? previous->compare_detail
                           : std::make_shared<const LayerDetail>(layer_detail(model, *v.compare_shown, ask.layer));
    const bool same_twins = previous && previous->twins.shown && v.base == previous->base && v.compare_base == previous->compare_base &&
                            was->token == ask.token && was->layer == ask.layer;
    v.twins = same_twins ? previous->twins : ask_twins(model, *v.base, *v.compare_base, ask.token, ask.layer);
  }
  return v;
}

}  // namespace attn
