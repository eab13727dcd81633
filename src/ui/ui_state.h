// The panels' throwaway UI leftovers, one struct per panel: text typed but not (yet) valid, the
// loader's fields, "copied" moments, scroll and sync markers, which tab ImGui shows. Not AppState:
// nothing here is an input or a computed number, and losing it loses nothing a URL or getState restores.
// Owned by the caller of draw_app (src/app/main.cpp) and handed down to the panels that keep any.
#pragma once
#include "../state/app_state.h"

namespace attn::ui {

// A text box whose typing is kept while it is invalid (the state keeps its last good text), and
// refilled from the state when the state changed elsewhere (URL, API, Reset) and the box is not being typed in.
struct TextBox {
  char buffer[4200] = {};
  unsigned synced_revision = ~0u;  // the state revision the buffer was last filled from
  std::string synced_text;         // ... and the text (a text the model's worker computes comes before its revision)
  bool active = false;             // being typed in (last frame)
};

// The typed answer being typed into (a check's number field, a Derive cell): one field at a time
// holds its draft here until it is left, so a half-typed "0." is neither marked nor posted.
struct TypedAnswer {
  char draft[kMaxAnswerChars + 1] = "";
  unsigned field = 0;  // the field's ImGui id (0: none is being typed into)
};

struct UiState {
  struct App {  // app_ui.cpp
    View shown_tab = View::Flow;  // which tab ImGui shows; forced when the view changes elsewhere
    bool first_frame = true;      // the first frame forces the state's view as well
    bool drawer_open = false;     // the narrow layout's "More": the controls instead of the view
  } app;
  struct Controls {  // panel_controls.cpp
    TextBox sentence, kv_sentence;  // the controls column's
    TextBox phone_sentence;         // the narrow layout's bar (its own box)
    bool show_loader = false;       // the "Load a model…" section is open
    // What is typed into the loader's fields. The token stays in this buffer (the field shows dots)
    // and goes to the page with each download; it is in no state, URL or storage.
    struct LoaderFields {
      char repo[200] = "HuggingFaceTB/SmolLM2-135M";
      char revision[100] = "main";
      char token[256] = "";
    } loader;
  } controls;
  struct Build {  // panel_build.cpp
    CodeLanguage language = CodeLanguage::NumPy;
    double copied_at = -1e9;  // when "Copy to clipboard" was pressed (ImGui's clock), for "Copied"
  } build;
  struct Compare {  // panel_compare.cpp
    TextBox second_sentence;
  } compare;
  struct Library {  // panel_library.cpp
    unsigned scrolled_for_revision = ~0u;  // the shelf was scrolled to the best match for this revision
  } library;
  struct Practice {  // panel_practice.cpp
    bool answer_shown[4] = {};  // which exercises' answers are open
  } practice;
  TypedAnswer typed_answer;  // checks.cpp's typed_answer_field (the checks' number, Derive's cells)
  struct Derive {  // panel_derive.cpp
    // The last refused cell edit, kept so its message stays next to the matrix after the field is
    // left, until the next good one.
    struct Refusal {
      int matrix = -1, row = -1, col = -1;  // which cell (matrix 0, 1, 2 = Q, K, V)
      float typed = 0;
    } refusal;
  } derive;
};

}  // namespace attn::ui
