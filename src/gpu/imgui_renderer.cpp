// The app's Dear ImGui renderer (see imgui_renderer.h): one program, one vertex array with a
// vertex and an index buffer refilled every frame, the font atlas as a texture.
#include "imgui_renderer.h"

#include <imgui.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "gl_objects.h"

namespace gpu {

namespace {
GLuint g_program = 0, g_vertex_array = 0, g_vertices = 0, g_indices = 0, g_font = 0;
GLint g_projection = -1, g_texture = -1;
std::uint64_t g_texture_changes = 0;

GLuint texture_of(ImTextureID id) { return static_cast<GLuint>(reinterpret_cast<std::uintptr_t>(id)); }

// WebGL2 has no glDrawElementsBaseVertex: a draw command's vertex offset moves the attribute
// pointers instead (so lists of more than 65 536 vertices work with 16-bit indices).
void point_attributes(unsigned first_vertex) {
  const std::size_t base = static_cast<std::size_t>(first_vertex) * sizeof(ImDrawVert);
  const auto at = [base](std::size_t member) { return reinterpret_cast<const void*>(base + member); };
  glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, sizeof(ImDrawVert), at(offsetof(ImDrawVert, pos)));
  glVertexAttribPointer(1, 2, GL_FLOAT, GL_FALSE, sizeof(ImDrawVert), at(offsetof(ImDrawVert, uv)));
  glVertexAttribPointer(2, 4, GL_UNSIGNED_BYTE, GL_TRUE, sizeof(ImDrawVert), at(offsetof(ImDrawVert, col)));
}

// Everything the draw depends on, set every frame (the GPU passes of src/gpu may have run since).
void set_render_state(const ImDrawData* data, int fb_width, int fb_height) {
  glBindFramebuffer(GL_FRAMEBUFFER, 0);
  glViewport(0, 0, fb_width, fb_height);
  glEnable(GL_BLEND);
  glBlendEquation(GL_FUNC_ADD);
  glBlendFuncSeparate(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA, GL_ONE, GL_ONE_MINUS_SRC_ALPHA);
  glDisable(GL_CULL_FACE);
  glDisable(GL_DEPTH_TEST);
  glDisable(GL_STENCIL_TEST);
  glEnable(GL_SCISSOR_TEST);
  glUseProgram(g_program);
  const float l = data->DisplayPos.x, r = l + data->DisplaySize.x;
  const float t = data->DisplayPos.y, b = t + data->DisplaySize.y;
  const float projection[16] = {2.0f / (r - l), 0, 0, 0, 0, 2.0f / (t - b), 0, 0, 0, 0, -1.0f, 0,
                                (r + l) / (l - r), (t + b) / (b - t), 0, 1.0f};
  glUniformMatrix4fv(g_projection, 1, GL_FALSE, projection);
  glUniform1i(g_texture, 0);
  glActiveTexture(GL_TEXTURE0);
  glBindVertexArray(g_vertex_array);
  glBindBuffer(GL_ARRAY_BUFFER, g_vertices);
}
}  // namespace

bool start_imgui_renderer() {
  std::string error;
  g_program = build_program("imgui.vert", "imgui.frag", &error);
  if (!g_program) return false;
  g_projection = glGetUniformLocation(g_program, "u_projection");
  g_texture = glGetUniformLocation(g_program, "u_texture");
  glGenVertexArrays(1, &g_vertex_array);
  glGenBuffers(1, &g_vertices);
  glGenBuffers(1, &g_indices);
  glBindVertexArray(g_vertex_array);
  glBindBuffer(GL_ARRAY_BUFFER, g_vertices);
  glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, g_indices);  // part of the vertex array's state
  for (GLuint a = 0; a < 3; ++a) glEnableVertexAttribArray(a);
  point_attributes(0);
  glBindVertexArray(0);
  ImGuiIO& io = ImGui::GetIO();
  io.BackendRendererName = "attn_gl3_webgl2";
  io.BackendFlags |= ImGuiBackendFlags_RendererHasVtxOffset;
  rebuild_imgui_font();
  return true;
}

void rebuild_imgui_font() {
  ImGuiIO& io = ImGui::GetIO();
  unsigned char* pixels = nullptr;
  int width = 0, height = 0;
  io.Fonts->GetTexDataAsRGBA32(&pixels, &width, &height);
  if (!g_font) glGenTextures(1, &g_font);
  glActiveTexture(GL_TEXTURE0);
  glBindTexture(GL_TEXTURE_2D, g_font);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
  glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, width, height, 0, GL_RGBA, GL_UNSIGNED_BYTE, pixels);
  io.Fonts->SetTexID(reinterpret_cast<ImTextureID>(static_cast<std::uintptr_t>(g_font)));
  // The texture has the pixels now: the atlas's RGBA copy (4 bytes a texel, ~13 MB) goes. The alpha
  // one stays (a quarter of it): it holds the U+XXXX boxes drawn into it (app/fonts.cpp), and a lost
  // context's texture is made again from it.
  IM_FREE(io.Fonts->TexPixelsRGBA32);
  io.Fonts->TexPixelsRGBA32 = nullptr;
  texture_contents_changed();
}

void texture_contents_changed() { ++g_texture_changes; }

namespace {
// 64-bit words mixed with a multiply and a rotate (the tail bytes zero-padded, the length mixed in): one
// pass over the draw lists' bytes, eight at a time; a changed vertex changes the result.
struct Fingerprint {
  std::uint64_t h = 0x9e3779b97f4a7c15ull;
  void word(std::uint64_t w) {
    h ^= w * 0xff51afd7ed558ccdull;
    h = ((h << 31) | (h >> 33)) * 0xc4ceb9fe1a85ec53ull;
  }
  void bytes(const void* data, std::size_t n) {
    if (n == 0) return word(0);  // an empty list may have no buffer at all
    const auto* p = static_cast<const unsigned char*>(data);
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      std::uint64_t w;
      std::memcpy(&w, p + i, 8);
      word(w);
    }
    std::uint64_t tail = 0;
    std::memcpy(&tail, p + i, n - i);
    word(tail ^ (static_cast<std::uint64_t>(n) << 56));
  }
  void real(float f) {
    std::uint32_t bits;
    std::memcpy(&bits, &f, 4);
    word(bits);
  }
};
}  // namespace

std::uint64_t picture_fingerprint(const ImDrawData* data, int fb_width, int fb_height, std::uint32_t background) {
  Fingerprint f;
  f.word(static_cast<std::uint64_t>(static_cast<std::uint32_t>(fb_width)) << 32 | static_cast<std::uint32_t>(fb_height));
  f.word(background);
  f.word(g_texture_changes);
  if (!data) return f.h;
  for (const float v : {data->DisplayPos.x, data->DisplayPos.y, data->DisplaySize.x, data->DisplaySize.y,
                        data->FramebufferScale.x, data->FramebufferScale.y})
    f.real(v);
  for (int n = 0; n < data->CmdListsCount; ++n) {
    const ImDrawList* list = data->CmdLists[n];
    f.bytes(list->VtxBuffer.Data, static_cast<std::size_t>(list->VtxBuffer.Size) * sizeof(ImDrawVert));
    f.bytes(list->IdxBuffer.Data, static_cast<std::size_t>(list->IdxBuffer.Size) * sizeof(ImDrawIdx));
    for (const ImDrawCmd& cmd : list->CmdBuffer) {
      for (const float v : {cmd.ClipRect.x, cmd.ClipRect.y, cmd.ClipRect.z, cmd.ClipRect.w}) f.real(v);
      f.word(reinterpret_cast<std::uintptr_t>(cmd.TextureId));
      f.word(reinterpret_cast<std::uintptr_t>(cmd.UserCallback));
      f.word(static_cast<std::uint64_t>(cmd.VtxOffset) << 32 | cmd.IdxOffset);
      f.word(cmd.ElemCount);
    }
  }
  return f.h;
}

void render_imgui(const ImDrawData* data, int fb_width, int fb_height) {
  if (!g_program || !data || fb_width <= 0 || fb_height <= 0 || data->DisplaySize.x <= 0) return;
  set_render_state(data, fb_width, fb_height);
  const ImVec2 origin = data->DisplayPos, scale = data->FramebufferScale;
  const GLenum index_type = sizeof(ImDrawIdx) == 2 ? GL_UNSIGNED_SHORT : GL_UNSIGNED_INT;
  for (int n = 0; n < data->CmdListsCount; ++n) {
    const ImDrawList* list = data->CmdLists[n];
    glBufferData(GL_ARRAY_BUFFER, static_cast<GLsizeiptr>(list->VtxBuffer.Size) * sizeof(ImDrawVert),
                 list->VtxBuffer.Data, GL_STREAM_DRAW);
    glBufferData(GL_ELEMENT_ARRAY_BUFFER, static_cast<GLsizeiptr>(list->IdxBuffer.Size) * sizeof(ImDrawIdx),
                 list->IdxBuffer.Data, GL_STREAM_DRAW);
    unsigned pointed_at = 0;
    point_attributes(0);
    for (const ImDrawCmd& cmd : list->CmdBuffer) {
      if (cmd.UserCallback) {
        if (cmd.UserCallback == ImDrawCallback_ResetRenderState) set_render_state(data, fb_width, fb_height);
        else cmd.UserCallback(list, &cmd);
        continue;
      }
      // The clip rectangle in framebuffer pixels (GL's origin is the bottom left).
      const float x0 = (cmd.ClipRect.x - origin.x) * scale.x, y0 = (cmd.ClipRect.y - origin.y) * scale.y;
      const float x1 = (cmd.ClipRect.z - origin.x) * scale.x, y1 = (cmd.ClipRect.w - origin.y) * scale.y;
      if (x1 <= x0 || y1 <= y0) continue;
      glScissor(static_cast<GLint>(x0), static_cast<GLint>(fb_height - y1), static_cast<GLsizei>(x1 - x0),
                static_cast<GLsizei>(y1 - y0));
      if (cmd.VtxOffset != pointed_at) point_attributes(pointed_at = cmd.VtxOffset);
      glBindTexture(GL_TEXTURE_2D, texture_of(cmd.GetTexID()));
      glDrawElements(GL_TRIANGLES, static_cast<GLsizei>(cmd.ElemCount), index_type,
                     reinterpret_cast<const void*>(static_cast<std::size_t>(cmd.IdxOffset) * sizeof(ImDrawIdx)));
    }
  }
  glDisable(GL_SCISSOR_TEST);
  glBindVertexArray(0);
}

void stop_imgui_renderer() {
  if (g_program) glDeleteProgram(g_program);
  if (g_vertex_array) glDeleteVertexArrays(1, &g_vertex_array);
  if (g_vertices) glDeleteBuffers(1, &g_vertices);
  if (g_indices) glDeleteBuffers(1, &g_indices);
  if (g_font) glDeleteTextures(1, &g_font);
  forget_imgui_renderer();
}

void forget_imgui_renderer() { g_program = g_vertex_array = g_vertices = g_indices = g_font = 0; }

}  // namespace gpu
