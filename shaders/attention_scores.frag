// Attention pass 1: the scaled scores S = (Q·Kᵀ)·scale, four keys per output texel.
// Not the mask: every key gets a score here; the softmax passes skip hidden keys by their index.
//
// Shapes (textures are (width, height) = (columns, rows), four floats per RGBA32F texel):
//   u_query (ceil(d/4), Tq), u_key (ceil(d/4), Tk): four features per texel, zero-padded
//   output  (ceil(Tk/4), Tq): texel (x, i) = scores of query i with keys 4x .. 4x+3
precision highp int;

uniform highp sampler2D u_query;
uniform highp sampler2D u_key;
uniform int u_feature_texels;  // ceil(d/4)
uniform int u_key_count;       // Tk
uniform float u_scale;         // 1/(√d · temperature), or 1/temperature without scaling

out vec4 out_scores;

void main() {
  int query = int(gl_FragCoord.y);
  // keys past Tk (the padding of the last texel) repeat the last key; their weight is set to 0 later
  ivec4 keys = min(int(gl_FragCoord.x) * 4 + ivec4(0, 1, 2, 3), ivec4(u_key_count - 1));
  vec4 dots = vec4(0.0);
  for (int c = 0; c < u_feature_texels; ++c) {
    vec4 q = texelFetch(u_query, ivec2(c, query), 0);
    dots += vec4(dot(q, texelFetch(u_key, ivec2(c, keys.x), 0)), dot(q, texelFetch(u_key, ivec2(c, keys.y), 0)),
                 dot(q, texelFetch(u_key, ivec2(c, keys.z), 0)), dot(q, texelFetch(u_key, ivec2(c, keys.w), 0)));
  }
  out_scores = dots * u_scale;
}
