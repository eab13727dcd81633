// Dear ImGui's pixels: the vertex colour times the texture (white texels for plain shapes).
uniform sampler2D u_texture;

in vec2 v_uv;
in vec4 v_colour;

out vec4 out_colour;

void main() { out_colour = v_colour * texture(u_texture, v_uv); }
