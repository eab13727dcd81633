// The app's GPU services (see gpu.h): one attention backend, the matrix images, context loss.
// Not GL drawing itself: imgui_renderer.cpp, gpu_attention.cpp and matrix_image.cpp do that.
#include "gpu.h"

#include <cstdio>

namespace gpu {

namespace {
GpuAttention g_attention;
bool g_restore_pending = false;

// The browser has taken the context: every GL name is dead. Nothing may touch GL until it is back.
void on_context_lost() {
  forget_imgui_renderer();
  g_attention.forget_context();
  forget_matrix_images();
  g_restore_pending = false;
}

// Rebuilt at the start of the next frame (poll_context_restored), not inside the browser event.
void on_context_restored() { g_restore_pending = true; }

bool build() {
  const bool drawable = start_imgui_renderer();
  g_attention.create();
  g_attention.check_speed();  // once per context: what auto trusts, not the GPU's name
  create_matrix_images();
  if (!g_attention.available())
    std::fprintf(stderr, "note: GPU attention is unavailable (%s); computing on the CPU\n",
                 g_attention.unavailable_reason());
  return drawable;
}
}  // namespace

bool start() {
  watch_context(on_context_lost, on_context_restored);
  return build();
}

void stop() {
  stop_imgui_renderer();
  g_attention.destroy();
  destroy_matrix_images();
}

GpuAttention& attention() { return g_attention; }

void poll_context_restored() {
  if (!g_restore_pending || context_is_lost()) return;
  g_restore_pending = false;
  build();
}

}  // namespace gpu
