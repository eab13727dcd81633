// Big matrices as images: a (rows, cols) matrix uploaded into a float texture and coloured by a
// shader pass (shaders/colour_map.frag) into an RGBA8 texture that ImGui::Image() shows, so a
// 2048 × 2048 weight matrix costs one textured quad per frame instead of four million rectangles.
// Not a heatmap widget: labels, hover read-outs and layout stay with the panel (see ui/widgets.h).
#pragma once
#include <imgui.h>

#include <cstdint>

namespace gpu {

enum class ColourMap {
  Sequential,  // viridis, as ui::color_sequential (weights: low = dark purple, high = yellow)
  Diverging,   // blue - white - orange, as ui::color_diverging (signed values, e.g. scores)
};

// Shows `values` (rows × cols floats, row-major; non-finite entries = masked, drawn grey) with
// `low` mapped to the first colour of `map` and `high` to the last. One texel per entry, row 0 at
// the top; small matrices magnify into crisp cells, big ones minify smoothly (mipmaps).
//
// Usage, in a panel:   if (ImTextureID image = gpu::matrix_image("weights##big", w.data(), T, T, 0, 1))
//                        ImGui::Image(image, size);
//                      else ui::heatmap(...);   // no GPU image right now: draw the cells
//
// `key` names the image (one texture per key; use a fixed key per place in the UI, unique in the
// whole window: ui::heatmap uses its ImGui ID). The colours
// are recomputed only when the values, shape, range or map change. With version 0 the values are
// compared with the last ones every call (about 3 ms a frame for 2048 × 2048 natively); for big
// matrices pass a `version` that changes whenever the values do (e.g. AppState::revision) instead.
// Returns nullptr while the GL context is lost or when the matrix is larger than a texture.
ImTextureID matrix_image(const char* key, const float* values, int rows, int cols, float low, float high,
                         ColourMap map = ColourMap::Sequential, std::uint64_t version = 0);

// Lifetime, driven by gpu.h: build the colour pass (GL context current), delete every image, or
// drop every GL name after a context loss (images are redrawn on their next call).
void create_matrix_images();
void destroy_matrix_images();
void forget_matrix_images();

}  // namespace gpu
