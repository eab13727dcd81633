// Attention pass 5: the output O = A·V, four value features per output texel.
// Not the weights: it reads them from pass 4 and skips the keys the causal mask hides.
//
// Shapes: u_weights (ceil(Tk/4), Tq), u_value (ceil(dv/4), Tk) zero-padded;
// output (ceil(dv/4), Tq): texel (c, i) = sum_j A_ij · V_j[4c .. 4c+3].
precision highp int;

uniform highp sampler2D u_weights;
uniform highp sampler2D u_value;
uniform int u_key_count;  // Tk
uniform bool u_causal;

out vec4 out_values;

void main() {
  int query = int(gl_FragCoord.y);
  int column = int(gl_FragCoord.x);
  int visible = u_causal ? min(u_key_count, query + 1) : u_key_count;
  vec4 total = vec4(0.0);
  for (int x = 0; x * 4 < visible; ++x) {
    vec4 w = texelFetch(u_weights, ivec2(x, query), 0);  // 0 for hidden and padding keys
    ivec4 keys = min(x * 4 + ivec4(0, 1, 2, 3), ivec4(u_key_count - 1));
    total += w.x * texelFetch(u_value, ivec2(column, keys.x), 0) + w.y * texelFetch(u_value, ivec2(column, keys.y), 0) +
             w.z * texelFetch(u_value, ivec2(column, keys.z), 0) + w.w * texelFetch(u_value, ivec2(column, keys.w), 0);
  }
  out_values = total;
}
