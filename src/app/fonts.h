// The UI font and its fallbacks: builds ImGui's atlas from the UI font, the fallback fonts that
// have arrived (only the code points the text shows) and a "U+XXXX" box for each shown code point
// no font has yet. Not a panel and not the fetching itself (platform.h does that).
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace attn {
struct AppState;
struct FontFallbackState;
}  // namespace attn

namespace fonts {

// Builds the atlas at this scale (device pixels × presentation size). False: the UI font is missing.
// The caller uploads it again (gpu::rebuild_imgui_font) when the GL texture already exists.
bool build_atlas(attn::FontFallbackState& fonts, float scale);

// Once a frame, before ImGui::NewFrame: reads the text on screen (the sentence boxes, the token
// labels, a text field being typed in), asks for the fallback files it needs and takes the ones that
// arrived. True when the atlas must be built again (then build_atlas and re-upload).
bool update(attn::AppState& state);

// A fallback file arrived (or could not be had: path empty): `path` is where its bytes are now
// (web: the wasm file system; natively the build's assets folder).
void file_arrived(const std::string& file, const std::string& path);

// getState().fonts: {loaded, requested, failed: [group names], wanted, in_atlas, placeholders:
// counts of shown code points the UI font lacks / drawn from a fallback / drawn as "U+XXXX",
// placeholder_code_points: ["U+1F600", ...]}.
nlohmann::json state_json(const attn::FontFallbackState& fonts);

}  // namespace fonts
