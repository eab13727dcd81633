// Matrix images (see matrix_image.h): a cache of (values texture -> colour pass -> RGBA8 texture
// with mipmaps) per key. Not a panel: it knows nothing of what the matrix means.
#include "matrix_image.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "gl_objects.h"
#include "imgui_renderer.h"

namespace gpu {

namespace {

struct MatrixImage {
  Texture values;        // R32F, one entry per texel
  RenderTarget colours;  // RGBA8 with mipmaps, what ImGui draws
  std::vector<float> shown_values;  // what the colours show now, to notice a change
  int rows = 0, cols = 0;
  float low = 0, high = 0;
  ColourMap map = ColourMap::Sequential;
  std::uint64_t version = 0;
  bool drawn = false;
};

GLuint g_colour_program = 0;
GLuint g_image_vertex_array = 0;
std::map<std::string, MatrixImage> g_images;

// The shader cannot rely on a texture keeping infinities: masked entries travel as this number.
constexpr float kMaskedValue = -std::numeric_limits<float>::max();

GLint g_max_texture_size = 0;

// Bit-for-bit equality (NaN included), in blocks without early exit so the compiler vectorises it:
// comparing a 2048 × 2048 matrix every frame must stay far below a frame's time.
bool same_bits(const std::vector<float>& shown, const float* values, std::size_t count) {
  if (shown.size() != count) return false;
  constexpr std::size_t kBlock = 4096;
  for (std::size_t start = 0; start < count; start += kBlock) {
    const std::size_t end = std::min(count, start + kBlock);
    std::uint32_t difference = 0;
    for (std::size_t i = start; i < end; ++i) {
      std::uint32_t a, b;
      std::memcpy(&a, &shown[i], sizeof a);
      std::memcpy(&b, &values[i], sizeof b);
      difference |= a ^ b;
    }
    if (difference) return false;
  }
  return true;
}

void draw_image(MatrixImage& image, const float* values) {
  PassState pass_state;
  std::vector<float> uploaded(values, values + static_cast<std::size_t>(image.rows) * image.cols);
  for (float& v : uploaded)
    if (!std::isfinite(v)) v = kMaskedValue;

  glActiveTexture(GL_TEXTURE0);
  allocate_texture(image.values, GL_R32F, GL_RED, GL_FLOAT, image.cols, image.rows);
  glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, image.cols, image.rows, GL_RED, GL_FLOAT, uploaded.data());
  const bool new_target = image.colours.texture.id == 0;
  image.drawn = allocate_target(image.colours, GL_RGBA8, GL_RGBA, GL_UNSIGNED_BYTE, image.cols, image.rows);
  if (new_target) {  // what ImGui samples: crisp cells when magnified, averaged when minified
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR_MIPMAP_LINEAR);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  }
  if (!image.drawn) return;

  begin_pass(g_colour_program, image.colours);
  bind_input(g_colour_program, "u_values", 0, image.values);
  glUniform1f(glGetUniformLocation(g_colour_program, "u_low"), image.low);
  glUniform1f(glGetUniformLocation(g_colour_program, "u_high"), image.high);
  glUniform1i(glGetUniformLocation(g_colour_program, "u_diverging"), image.map == ColourMap::Diverging ? 1 : 0);
  glBindVertexArray(g_image_vertex_array);
  draw_full_target();
  glBindTexture(GL_TEXTURE_2D, image.colours.texture.id);
  glGenerateMipmap(GL_TEXTURE_2D);
  texture_contents_changed();
}

}  // namespace

ImTextureID matrix_image(const char* key, const float* values, int rows, int cols, float low, float high,
                         ColourMap map, std::uint64_t version) {
  if (!g_colour_program || !values || rows <= 0 || cols <= 0 || context_is_lost()) return nullptr;
  if (rows > g_max_texture_size || cols > g_max_texture_size) return nullptr;
  if (!(high > low)) high = low + 1.0f;  // a flat range would divide by zero: show the first colour

  MatrixImage& image = g_images[key];
  const std::size_t count = static_cast<std::size_t>(rows) * cols;
  const bool same_settings = image.drawn && image.rows == rows && image.cols == cols && image.low == low &&
                             image.high == high && image.map == map;
  const bool same_values = version != 0 ? version == image.version : same_bits(image.shown_values, values, count);
  if (!(same_settings && same_values)) {
    image.rows = rows;
    image.cols = cols;
    image.low = low;
    image.high = high;
    image.map = map;
    image.version = version;
    if (version == 0) image.shown_values.assign(values, values + count);  // kept only to compare
    else image.shown_values.clear();
    draw_image(image, values);
  }
  if (!image.drawn) return nullptr;
  return reinterpret_cast<ImTextureID>(static_cast<std::uintptr_t>(image.colours.texture.id));
}

void create_matrix_images() {
  destroy_matrix_images();
  std::string error;
  g_colour_program = build_program("fullscreen.vert", "colour_map.frag", &error);
  if (g_colour_program) glGenVertexArrays(1, &g_image_vertex_array);
  glGetIntegerv(GL_MAX_TEXTURE_SIZE, &g_max_texture_size);
}

void destroy_matrix_images() {
  if (g_colour_program) glDeleteProgram(g_colour_program);
  if (g_image_vertex_array) glDeleteVertexArrays(1, &g_image_vertex_array);
  for (auto& entry : g_images) {
    release(entry.second.values);
    release(entry.second.colours);
  }
  forget_matrix_images();
}

void forget_matrix_images() {
  g_colour_program = 0;
  g_image_vertex_array = 0;
  g_images.clear();
}

}  // namespace gpu
