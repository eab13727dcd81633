// Attention pass 4: the weights A_ij = exp(S_ij - max_i) / sum_i; hidden keys get exactly 0.
// Not the output: see attention_output.frag.
//
// Shapes: u_scores (ceil(Tk/4), Tq), u_row_stats (1, Tq) = (max_i, sum_i); output (ceil(Tk/4), Tq),
// four keys per texel like the scores (padding keys past Tk are 0 too).
precision highp int;

uniform highp sampler2D u_scores;
uniform highp sampler2D u_row_stats;
uniform int u_key_count;  // Tk
uniform bool u_causal;

out vec4 out_weights;

void main() {
  int query = int(gl_FragCoord.y);
  int visible = u_causal ? min(u_key_count, query + 1) : u_key_count;
  vec2 stats = texelFetch(u_row_stats, ivec2(0, query), 0).xy;  // the row's max and sum (sum >= 1)
  bvec4 shown = lessThan(int(gl_FragCoord.x) * 4 + ivec4(0, 1, 2, 3), ivec4(visible));
  vec4 exps = exp(min(texelFetch(u_scores, ivec2(gl_FragCoord.xy), 0) - stats.x, 0.0));
  out_weights = mix(vec4(0.0), exps / stats.y, shown);
}
