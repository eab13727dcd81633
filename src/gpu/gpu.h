// The app's GPU services in one place: the attention backend and the matrix images, started once
// the GL context exists and rebuilt when a lost WebGL context comes back. Not maths (src/core)
// and not a panel: panels only call matrix_image(); compute requests reach attention() by name.
#pragma once
#include "gpu_attention.h"
#include "matrix_image.h"

namespace gpu {

// Needs the app's GL context current. Builds the attention passes and the colour pass and, in the
// browser, starts listening for context loss. Never throws; when the GPU cannot do attention,
// attention().available() is false, the reason is printed, and the app stays on the CPU.
void start();
// Deletes every GL object of src/gpu (call before the context goes away).
void stop();

GpuAttention& attention();

// True once after a lost context came back; the GPU paths are already rebuilt by then. The
// caller rebuilds its own GL objects (ImGui's), which died with the old context too.
bool poll_context_restored();

}  // namespace gpu
