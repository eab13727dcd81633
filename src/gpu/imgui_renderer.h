// Draws Dear ImGui's frame with WebGL2 / OpenGL 3.3: the app's own renderer, used instead of
// imgui_impl_opengl3. That backend reads about twenty pieces of GL state back every frame to put
// them back afterwards; in a browser each read is a synchronous trip to the GPU process (~3 ms of
// a frame in Chromium, ocornut/imgui#6085). This one owns the GL state at draw time: it sets what
// it needs and reads nothing back. Not a widget library: panels never call it.
#pragma once

#include <cstdint>

struct ImDrawData;

namespace gpu {

// Needs the GL context current and ImGui's font atlas built. False (and a message on stderr) when
// the shaders cannot be built. Called again after a lost WebGL context comes back.
bool start_imgui_renderer();
// Uploads ImGui's font atlas again (after the fonts were rebuilt for a new pixel ratio).
void rebuild_imgui_font();
// Draws into the default framebuffer of fb_width × fb_height pixels.
void render_imgui(const ImDrawData* data, int fb_width, int fb_height);
// What render_imgui would draw, as one number: the draw lists (vertices, indices, clip rects,
// textures), the framebuffer's size, the background and how many times any texture's contents
// changed. Equal fingerprints: the same picture (a frame that changed nothing need not be drawn).
std::uint64_t picture_fingerprint(const ImDrawData* data, int fb_width, int fb_height, std::uint32_t background);
// Counts new contents in a texture that the draw lists name (the font atlas, a matrix image).
void texture_contents_changed();
// Deletes the GL objects (the context is alive) / drops their names (the context was lost).
void stop_imgui_renderer();
void forget_imgui_renderer();

}  // namespace gpu
