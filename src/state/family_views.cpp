// The family views' numbers (see family_views.h): rotary positions by distance, K/V head groups, the
// K/V cache, soft-capping and q/k norm of the chosen head. Reads the forward; draws nothing.
#include "family_views.h"

#include <algorithm>
#include <cmath>

#include "../core/attribution.h"

namespace attn {

std::vector<HeadGroup> head_groups(const TransformerConfig& config) {
  std::vector<HeadGroup> groups;
  const int g = config.kv_group();
  if (g <= 0) return groups;
  for (int kv = 0; kv < config.n_kv_head; ++kv) groups.push_back({kv, kv * g, kv * g + g - 1});
  return groups;
}

std::string head_groups_text(const TransformerConfig& config) {
  const std::vector<HeadGroup> groups = head_groups(config);
  if (groups.empty()) return "";
  if (config.kv_group() == 1) {
    return config.n_head == 1 ? "The one head has its own keys and values."
                              : "Every head has its own keys and values (no sharing).";
  }
  if (groups.size() == 1) return "All " + std::to_string(config.n_head) + " heads share one K/V head.";
  auto one = [](const HeadGroup& g, bool first) {
    return std::string(first ? "Heads " : "heads ") + std::to_string(g.first_head + 1) + "–" +
           std::to_string(g.last_head + 1) + " share K/V head " + std::to_string(g.kv_head + 1);
  };
  std::string text;
  const std::size_t n = groups.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (n > 4 && i == 2) {
      text += ", …";
      i = n - 2;
      continue;
    }
    text += (i ? ", " : "") + one(groups[i], i == 0);
  }
  return text + ".";
}

std::string layer_kind_text(const TransformerConfig& config, int layer) {
  if (layer < 0 || layer >= static_cast<int>(config.layers.size())) return "global";
  const int w = config.layers[static_cast<std::size_t>(layer)].window;
  return w > 0 ? "local (window " + std::to_string(w) + ")" : "global";
}

KvCacheView kv_cache_view(const TransformerConfig& config, int T, int bytes_per_number) {
  KvCacheView v;
  v.available = true;
  v.n_layer = config.n_layer, v.n_head = config.n_head, v.n_kv_head = config.n_kv_head, v.head_dim = config.head_dim;
  v.T = T;
  v.bytes_per_number = bytes_per_number;
  v.per_token_layer = 2ll * config.n_kv_head * config.head_dim;
  v.per_token_layer_unshared = 2ll * config.n_head * config.head_dim;
  for (int l = 0; l < config.n_layer; ++l) {
    const int w = l < static_cast<int>(config.layers.size()) ? config.layers[static_cast<std::size_t>(l)].window : 0;
    const int held = w > 0 ? std::min(T, w) : T;
    v.tokens_held.push_back(held);
    v.numbers += v.per_token_layer * held;
    v.numbers_unshared += v.per_token_layer_unshared * held;
    v.numbers_no_window += v.per_token_layer * T;
  }
  return v;
}

namespace {

Vector rotated(const Vector& v, const RopeConfig& rope, int position) {
  Matrix m = v;
  apply_rope(m, 1, static_cast<int>(v.size()), rope, position);
  return m.row(0);
}

// Head h's columns of row t of a (T, heads · hd) matrix.
Vector head_row(const Matrix& m, int t, int h, int hd) {
  return m.block(t, static_cast<Eigen::Index>(h) * hd, 1, hd);
}

Matrix head_columns(const Matrix& m, int h, int hd) { return m.middleCols(static_cast<Eigen::Index>(h) * hd, hd); }

std::vector<float> row_rms(const Matrix& m) {
  std::vector<float> out;
  for (Eigen::Index i = 0; i < m.rows(); ++i)
    out.push_back(m.cols() ? std::sqrt(m.row(i).squaredNorm() / static_cast<float>(m.cols())) : 0.0f);
  return out;
}

}  // namespace

float rotated_score(const Vector& q, const Vector& k, const RopeConfig& rope, int query_position, int key_position,
                    float factor) {
  return rotated(q, rope, query_position).dot(rotated(k, rope, key_position)) * factor;
}

FamilyViews family_views(const TransformerConfig& config, const LayerDetail& L, const AttentionTrace& trace,
                         int layer, int head, int token, int bytes_per_number) {
  FamilyViews f;
  if (layer < 0 || layer >= config.n_layer || L.query.size() == 0) return f;
  const int T = static_cast<int>(L.query.rows()), hd = config.head_dim;
  const int kv = config.kv_head_of(head);
  const int i = std::clamp(token, 0, std::max(0, T - 1));
  f.loaded = true;
  f.layer = layer, f.head = head, f.kv_head = kv, f.T = T;
  f.window = layer < static_cast<int>(config.layers.size()) ? config.layers[static_cast<std::size_t>(layer)].window : 0;
  f.cache = kv_cache_view(config, T, bytes_per_number);

  // Positions: the head's q of token i and k of token j as they were before the rotation.
  PositionsView& p = f.positions;
  p.learned = config.positions == PositionKind::Learned && config.n_positions > 0;
  p.rope = config.positions == PositionKind::Rope && T > 0;
  p.query_token = i;
  p.head_dim = hd;
  p.score_factor = trace.score_factor;
  if (p.rope) {
    const RopeConfig& rope = config.layers[static_cast<std::size_t>(layer)].rope;
    p.theta = rope.theta;
    p.inv_freq = rope_inv_freq(rope, hd);
    // the key: the selected token's largest weight on an earlier token (itself when it is the first)
    int j = i;
    float best = -1;
    for (int c = 0; c < i && c < trace.weights.cols(); ++c)
      if (std::isfinite(trace.weights(i, c)) && trace.weights(i, c) > best) best = trace.weights(i, c), j = c;
    p.key_token = j;
    const Matrix& q_src = config.qk_norm ? L.query_normed : L.query_projected;
    const Matrix& k_src = config.qk_norm ? L.key_normed : L.key_projected;
    p.q_before = head_row(q_src, i, head, hd);
    p.k_before = head_row(k_src, j, kv, hd);
    p.q_after = head_row(L.query, i, head, hd);
    p.k_after = head_row(L.key, j, kv, hd);
    for (int d = 0; d < T; ++d) p.by_distance.push_back(rotated_score(p.q_before, p.k_before, rope, d, 0, p.score_factor));
  }

  // Soft-capping: the selected row before and after the cap, and how much the cap changed anything.
  SoftcapView& s = f.softcap;
  s.on = trace.options.softcap > 0 && trace.capped_scores.size() > 0;
  s.cap = trace.options.softcap;
  if (s.on) {
    for (Eigen::Index c = 0; c < trace.scaled_scores.cols(); ++c) {
      s.scaled_row.push_back(trace.scaled_scores(i, c));
      s.capped_row.push_back(trace.capped_scores(i, c));
    }
    for (Eigen::Index r = 0; r < trace.scaled_scores.rows(); ++r)
      for (Eigen::Index c = 0; c < trace.scaled_scores.cols(); ++c) {
        if (mask_hides(trace.options, r, c)) continue;
        const float a = trace.scaled_scores(r, c), b = trace.capped_scores(r, c);
        s.largest_scaled = std::max(s.largest_scaled, std::fabs(a));
        s.largest_capped = std::max(s.largest_capped, std::fabs(b));
        s.largest_change = std::max(s.largest_change, std::fabs(a - b));
      }
  }

  // Q/K norm: the head's q and its K/V head's k before and after the norm.
  QkNormView& n = f.qk_norm;
  n.on = config.qk_norm && L.query_normed.size() > 0 && L.query_projected.size() > 0;
  if (n.on) {
    n.q_before = head_columns(L.query_projected, head, hd);
    n.q_after = head_columns(L.query_normed, head, hd);
    n.k_before = head_columns(L.key_projected, kv, hd);
    n.k_after = head_columns(L.key_normed, kv, hd);
    n.q_rms_before = row_rms(n.q_before), n.q_rms_after = row_rms(n.q_after);
    n.k_rms_before = row_rms(n.k_before), n.k_rms_after = row_rms(n.k_after);
  }
  return f;
}

}  // namespace attn
