// The app's GPU services in one place: ImGui's renderer, the attention backend and the matrix
// images, started once the GL context exists and rebuilt when a lost WebGL context comes back.
// Not maths (src/core) and not a panel: panels only call matrix_image(); compute requests reach
// attention() by name.
#pragma once
#include "gpu_attention.h"
#include "imgui_renderer.h"
#include "matrix_image.h"

namespace gpu {

// Needs the app's GL context current and ImGui's fonts built. Builds ImGui's renderer, the
// attention passes (timed once against the CPU: GpuAttention::check_speed), the colour pass and, in the browser, starts listening for context loss.
// Never throws; false only when ImGui's renderer cannot be built (nothing could be drawn). When the
// GPU cannot do attention, attention().available() is false, the reason is printed, and the app
// stays on the CPU.
bool start();
// Deletes every GL object of src/gpu (call before the context goes away).
void stop();

GpuAttention& attention();

// Call once a frame: after a lost context came back, rebuilds everything above in the new one.
void poll_context_restored();

}  // namespace gpu
