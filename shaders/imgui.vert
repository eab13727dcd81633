// Dear ImGui's vertices (src/gpu/imgui_renderer.cpp): a position in framebuffer pixels, a texture
// coordinate into the font atlas or a matrix image, and an RGBA8 colour (normalised on input).
uniform mat4 u_projection;  // pixels -> clip space (an orthographic projection of the display)

layout(location = 0) in vec2 a_position;
layout(location = 1) in vec2 a_uv;
layout(location = 2) in vec4 a_colour;

out vec2 v_uv;
out vec4 v_colour;

void main() {
  v_uv = a_uv;
  v_colour = a_colour;
  gl_Position = u_projection * vec4(a_position, 0.0, 1.0);
}
