// The app's active text field, seen from the page: web/touch.js lends a hidden DOM <input> while
// a field is active (so a phone's keyboard and IME can type into it) and sends its edits here.
// Not the field itself: ImGui's InputText keeps the text; this only reads it and queues keys.
#include <imgui.h>
#include <imgui_internal.h>

#include <GLFW/glfw3.h>

#include <deque>
#include <string>

#include <nlohmann/json.hpp>

#include "js_api.h"
#include "platform.h"

namespace {

// One edit per frame: a key is held down for one frame and let go in the next (ImGui 1.86 reads the
// keys once a frame), text is queued as typed characters. Order is kept: deletions before insertions.
struct Edit {
  int key = -1;  // a GLFW key, or -1 for text
  std::string text;
};
std::deque<Edit> g_edits;
int g_key_down = -1;
bool g_announced_active = false;

// The keys web/touch.js may send, by its numbers (0: none).
constexpr int kKeys[] = {-1, GLFW_KEY_ENTER, GLFW_KEY_ESCAPE, GLFW_KEY_LEFT, GLFW_KEY_RIGHT,
                         GLFW_KEY_HOME, GLFW_KEY_END, GLFW_KEY_TAB};

bool text_field_active() {
  const ImGuiContext& g = *GImGui;
  return g.ActiveId != 0 && g.ActiveId == g.InputTextState.ID;
}

}  // namespace

namespace platform {

void pump_text_field() {
  ImGuiIO& io = ImGui::GetIO();
  if (g_key_down >= 0) {
    io.KeysDown[g_key_down] = false;
    g_key_down = -1;
    return;
  }
  if (g_edits.empty()) return;
  const Edit edit = g_edits.front();
  g_edits.pop_front();
  if (edit.key >= 0) {
    io.KeysDown[edit.key] = true;
    g_key_down = edit.key;
  } else {
    io.AddInputCharactersUTF8(edit.text.c_str());
  }
}

void announce_text_field() {
  const bool active = text_field_active();
  if (active == g_announced_active) return;
  g_announced_active = active;
  if (!active) g_edits.clear();  // keys for a field that has gone would land elsewhere
  notify_text_field(active);
}

}  // namespace platform

// {active, text, cursor}: the active field's text (UTF-8) and its cursor as a UTF-16 index (ImGui
// 1.86 keeps 16-bit characters, so its index is the page's).
JS_EXPORT const char* attn_text_field() {
  nlohmann::json out = {{"active", false}};
  if (text_field_active()) {
    const ImGuiInputTextState& s = GImGui->InputTextState;
    std::string text(static_cast<std::size_t>(s.CurLenW) * 3 + 1, '\0');
    const int bytes = ImTextStrToUtf8(text.data(), static_cast<int>(text.size()), s.TextW.Data, s.TextW.Data + s.CurLenW);
    text.resize(static_cast<std::size_t>(bytes));
    out = {{"active", true}, {"text", text}, {"cursor", s.Stb.cursor}};
  }
  return js_api::reply(out);
}

// Deletes `backspaces` characters before the cursor, then types `text`, then presses key number
// `key` (see kKeys; 0 for none).
JS_EXPORT void attn_text_field_edit(const char* text, int backspaces, int key) {
  for (int i = 0; i < backspaces && i < 100000; ++i) g_edits.push_back({GLFW_KEY_BACKSPACE, {}});
  if (text && *text) g_edits.push_back({-1, text});
  if (key > 0 && key < static_cast<int>(sizeof kKeys / sizeof kKeys[0])) g_edits.push_back({kKeys[key], {}});
}
