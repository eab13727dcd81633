// The Library view's words: the selected query as a reader, each key-side token a book. Shares as
// percents, a row of named numbers, and where attention's blend comes from in a sentence. The reading
// itself is state.views.library (view_numbers.h); the panel (src/ui/panel_library.cpp) draws the
// shelf, library_view_data (view_data.h) reports it. No ImGui.
#pragma once
#include <string>
#include <vector>

#include "app_state.h"

namespace attn {

// "seeks creature +1.20 · seeks thing 0.00 · ..." for one row of a matrix with named columns; a
// real model's long rows (64 unnamed dimensions): the first few and how many more.
std::string named_vector(const std::vector<std::string>& names, const Matrix& m, int row);
// "Most of the weight goes to 'animal' (43%) and 'tired' (12%) ...", only where the named books
// hold at least half of it; then what each book adds to the blend by size (weight × |value|), which
// is not its weight where the contents differ in length.
std::string where_the_blend_comes_from(const AppState& state, const LibraryReading& r);

}  // namespace attn
