// Attention pass 3: the softmax denominator of each query row, sum_j exp(S_ij - max_i) over the
// visible keys. Not the weights: see attention_normalise.frag.
//
// Shapes: u_scores (ceil(Tk/4), Tq), u_row_max (1, Tq); output (1, Tq): texel (0, i) = (max_i, sum_i).
precision highp int;

uniform highp sampler2D u_scores;
uniform highp sampler2D u_row_max;
uniform int u_key_count;  // Tk
uniform bool u_causal;

out vec4 out_row_stats;

void main() {
  int query = int(gl_FragCoord.y);
  int visible = u_causal ? min(u_key_count, query + 1) : u_key_count;
  float row_max = texelFetch(u_row_max, ivec2(0, query), 0).x;
  // four running sums (one per lane) add fewer numbers each: less rounding on long rows
  vec4 sums = vec4(0.0);
  for (int x = 0; x * 4 < visible; ++x) {
    bvec4 shown = lessThan(x * 4 + ivec4(0, 1, 2, 3), ivec4(visible));
    // hidden keys may score above the max; min() keeps their (discarded) exp finite
    vec4 exps = exp(min(texelFetch(u_scores, ivec2(x, query), 0) - row_max, 0.0));
    sums += mix(vec4(0.0), exps, shown);
  }
  out_row_stats = vec4(row_max, (sums.x + sums.y) + (sums.z + sums.w), 0.0, 0.0);
}
