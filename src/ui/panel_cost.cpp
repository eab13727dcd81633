// The cost view (placeholder until its full version lands; see panels.h).
#include <imgui.h>

#include "panels.h"
#include "widgets.h"

namespace attn::ui {

void draw_cost_panel(const AppState&, AppInputs&) { hint("This view is being built."); }

nlohmann::json cost_view_data(const AppState&) { return nullptr; }

}  // namespace attn::ui
