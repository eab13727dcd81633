// Matrix images: one value per texel in, one colour per texel out (viridis, or blue-white-orange
// for signed values), the same stops as ui::color_sequential / color_diverging. Not a heatmap
// widget: labels, hover and layout stay with the panel that shows the image.
//
// Shapes: u_values (cols, rows) R32F; output (cols, rows) RGBA8. Masked entries arrive as
// -3.4e38 (see matrix_image.cpp) and are drawn in the masked-cell grey.
precision highp int;

uniform highp sampler2D u_values;
uniform float u_low;       // value drawn with the first colour
uniform float u_high;      // value drawn with the last colour
uniform bool u_diverging;  // false: viridis

out vec4 out_colour;

const vec3 kViridis[9] = vec3[9](vec3(0.267, 0.005, 0.329), vec3(0.279, 0.175, 0.483), vec3(0.230, 0.322, 0.546),
                                 vec3(0.173, 0.449, 0.558), vec3(0.128, 0.567, 0.551), vec3(0.153, 0.682, 0.506),
                                 vec3(0.369, 0.789, 0.383), vec3(0.678, 0.864, 0.190), vec3(0.993, 0.906, 0.144));
const vec3 kBlueOrange[5] = vec3[5](vec3(0.129, 0.400, 0.675), vec3(0.573, 0.773, 0.871), vec3(0.969, 0.969, 0.969),
                                    vec3(0.992, 0.722, 0.388), vec3(0.702, 0.345, 0.024));
const vec3 kMaskedGrey = vec3(70.0, 70.0, 76.0) / 255.0;

vec3 viridis(float t) {
  float position = t * 8.0;
  int stop = min(int(position), 7);
  return mix(kViridis[stop], kViridis[stop + 1], position - float(stop));
}

vec3 blue_orange(float t) {
  float position = t * 4.0;
  int stop = min(int(position), 3);
  return mix(kBlueOrange[stop], kBlueOrange[stop + 1], position - float(stop));
}

void main() {
  float value = texelFetch(u_values, ivec2(gl_FragCoord.xy), 0).x;
  if (value <= -3.0e38) {
    out_colour = vec4(kMaskedGrey, 1.0);
    return;
  }
  float t = clamp((value - u_low) / (u_high - u_low), 0.0, 1.0);
  out_colour = vec4(u_diverging ? blue_orange(t) : viridis(t), 1.0);
}
