// Attention pass 2: the largest visible score of each query row (softmax subtracts it so that
// exp() never overflows). Not the sum: see attention_row_sum.frag.
//
// Shapes: u_scores (ceil(Tk/4), Tq) from pass 1; output (1, Tq): texel (0, i).x = max_j S_ij
// over the keys query i may see (all Tk, or keys 0..i when causal).
precision highp int;

uniform highp sampler2D u_scores;
uniform int u_key_count;  // Tk
uniform bool u_causal;    // key j is hidden from query i when j > i

out vec4 out_row_max;

const float kLowest = -3.4e38;

void main() {
  int query = int(gl_FragCoord.y);
  int visible = u_causal ? min(u_key_count, query + 1) : u_key_count;
  vec4 best = vec4(kLowest);
  for (int x = 0; x * 4 < visible; ++x) {
    bvec4 shown = lessThan(x * 4 + ivec4(0, 1, 2, 3), ivec4(visible));
    best = max(best, mix(vec4(kLowest), texelFetch(u_scores, ivec2(x, query), 0), shown));
  }
  out_row_max = vec4(max(max(best.x, best.y), max(best.z, best.w)), 0.0, 0.0, 0.0);
}
