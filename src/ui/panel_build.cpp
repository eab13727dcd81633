// The build view: the current attention as a runnable NumPy or PyTorch program to copy, and how
// far the project's own CPU backends are from each other on it. Not the code writer (src/api/code_export), and
// not where the programs and the table are computed (src/state/build_state.cpp).
#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "../api/compute_json.h"
#include "model_ui.h"
#include "panels.h"
#include "widgets.h"

namespace attn::ui {

namespace {

// Green for "agrees" / "copied", red for "does not": darker on the light theme to stay readable.
ImU32 good_color(bool light) { return light ? IM_COL32(20, 125, 55, 255) : IM_COL32(120, 220, 140, 255); }
ImU32 bad_color(bool light) { return light ? IM_COL32(190, 40, 30, 255) : IM_COL32(255, 120, 110, 255); }

std::string error_text(double v) {
  if (v == 0) return "0 (identical)";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1e", v);
  return buf;
}

// The program in a read-only text box that can be selected from, scrolling both ways: code lines
// are long and must not wrap, and ImGui's multiline box has no horizontal scrollbar of its own.
void code_box(const char* id, const std::string& code, float height, bool light) {
  const ImGuiStyle& style = ImGui::GetStyle();
  // A plain page colour instead of the input-field tint: this is something to read, not to type in.
  ImGui::PushStyleColor(ImGuiCol_FrameBg, light ? IM_COL32(255, 255, 255, 255) : IM_COL32(14, 16, 21, 255));
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(0, 0));
  ImGui::BeginChild(id, ImVec2(0, height), true, ImGuiWindowFlags_HorizontalScrollbar);
  ImGui::PopStyleVar();
  const ImVec2 text = ImGui::CalcTextSize(code.c_str());
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const ImVec2 size(std::max(text.x + style.FramePadding.x * 2 + ImGui::GetFontSize(), avail.x),
                    std::max(text.y + style.FramePadding.y * 2 + ImGui::GetTextLineHeight(), avail.y));
  // ImGui's text box takes a char*; read-only, it never writes through it.
  ImGui::InputTextMultiline("##code", const_cast<char*>(code.c_str()), code.size() + 1, size, ImGuiInputTextFlags_ReadOnly);
  ImGui::EndChild();
  ImGui::PopStyleColor();
}

void agreement_table(const std::vector<BackendAgreement>& rows, bool light) {
  const ImGuiTableFlags flags =
      ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_NoHostExtendX;
  if (!ImGui::BeginTable("##agreement", 5, flags)) return;
  ImGui::TableSetupColumn("Backend");
  ImGui::TableSetupColumn("max |Δ weights|");
  ImGui::TableSetupColumn("max |Δ output|");
  ImGui::TableSetupColumn("relative");
  ImGui::TableSetupColumn("within tolerance?");
  ImGui::TableHeadersRow();
  ImGui::TableNextRow();
  ImGui::TableNextColumn();
  ImGui::TextUnformatted("scalar");
  for (int column = 1; column < 5; ++column) {
    ImGui::TableNextColumn();
    hint(column == 1 ? "the reference" : "—");
  }
  for (const BackendAgreement& a : rows) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    // SIMD code differs per machine (SSE2, AVX2, WebAssembly SIMD): say which one ran.
    const bool simd = a.backend == backend_name(Backend::Simd);
    ImGui::TextUnformatted((simd ? a.backend + " (" + simd_flavour() + ")" : a.backend).c_str());
    if (!a.unavailable.empty()) {  // e.g. the GPU path without float render targets, or a lost context
      ImGui::TableNextColumn();
      hint(("not available: " + a.unavailable).c_str());
      for (int column = 2; column < 5; ++column) ImGui::TableNextColumn();
      continue;
    }
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(error_text(a.max_abs_weights).c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(error_text(a.max_abs_output).c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(error_text(a.relative).c_str());
    ImGui::TableNextColumn();
    const bool pass = a.relative <= a.tolerance;
    ImGui::PushStyleColor(ImGuiCol_Text, pass ? good_color(light) : bad_color(light));
    ImGui::TextUnformatted((std::string(pass ? "✓ yes" : "✗ no") + (a.tolerance == kBuildRelativeTolerance ? " (1e-5)" : " (1e-4)")).c_str());
    ImGui::PopStyleColor();
  }
  for (const auto& entry : registered_backends()) {
    if (std::any_of(rows.begin(), rows.end(), [&](const BackendAgreement& a) { return a.backend == entry.first; }))
      continue;
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(entry.first.c_str());
    ImGui::TableNextColumn();
    hint("checking once the inputs rest…");
    for (int column = 2; column < 5; ++column) ImGui::TableNextColumn();
  }
  ImGui::EndTable();
}

}  // namespace

void draw_build_panel(const AppState& state, Action&, UiState& all) {
  const BuildState& cache = state.build;  // brought up to date by draw_app (update_view_state)
  UiState::Build& ui = all.build;
  CodeLanguage& language = ui.language;
  const float font = ImGui::GetFontSize();

  panel_intro("The attention on screen now, as a short Python program: the sentence's token vectors, "
              "the weight matrices and the settings are written into it as numbers.");
  head_banner(state);
  if (!cache.code_note.empty()) hint(("Too large to print whole: " + cache.code_note + " The program starts from the head's Q, K and V.").c_str());

  if (ImGui::RadioButton("NumPy", language == CodeLanguage::NumPy)) language = CodeLanguage::NumPy;
  ImGui::SameLine();
  if (ImGui::RadioButton("PyTorch", language == CodeLanguage::PyTorch)) language = CodeLanguage::PyTorch;
  same_line_if_fits(button_width("Copy to clipboard"), font * 1.5f);
  const std::string& code = language == CodeLanguage::NumPy ? cache.numpy : cache.torch;
  if (ImGui::Button("Copy to clipboard")) {
    ImGui::SetClipboardText(code.c_str());
    ui.copied_at = ImGui::GetTime();
  }
  publish_item_rect("build:copy");
  if (ImGui::GetTime() - ui.copied_at < 2.0) {
    ImGui::SameLine();
    ImGui::PushStyleColor(ImGuiCol_Text, good_color(state.inputs.light_theme));
    ImGui::TextUnformatted("Copied");
    ImGui::PopStyleColor();
  }

  hint(build_hint(language, cache).c_str());
  if (state.inputs.mistake != Mistake::None)
    hint("The mistake chosen in the Mistakes view is not in the code: it computes attention the right way, "
         "so its weights differ from the Weights view until you switch the mistake off.");

  // The code takes what the backend section below leaves (about 12 lines), but never under 10
  // lines: in a small window the view scrolls instead.
  const float line = ImGui::GetTextLineHeightWithSpacing();
  const float code_height = std::max(ImGui::GetContentRegionAvail().y - line * 12.0f, line * 10.0f);
  code_box(language == CodeLanguage::NumPy ? "numpy_code" : "torch_code", code, code_height,
           state.inputs.light_theme);
  publish_picture_rect(View::Build);

  ImGui::Spacing();
  ImGui::TextUnformatted("Do the project's backends agree?");
  paragraph("The app can compute attention three ways on your CPU: scalar (plain loops, one number at a "
            "time: the reference), Eigen (a matrix library) and SIMD (several numbers per instruction), and "
            "with WebGL2 a fourth on the GPU (webgl: shaders in 32-bit floats, so a looser tolerance). They "
            "add the same numbers in a different order, so the last digits may differ; a bug would show as a "
            "large difference. Here each runs on the current Q, K and V, mask, scaling and temperature.");
  begin_sideways_box("agreement");  // five columns of numbers: wider than a phone
  agreement_table(cache.agreement, state.inputs.light_theme);
  end_sideways_box("build:agreement");
  hint("Δ: the largest difference from the scalar result over all weights or all outputs. Relative: that "
       "difference divided by the largest reference value.");
}

}  // namespace attn::ui
