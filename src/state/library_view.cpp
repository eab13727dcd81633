// The Library view's words and data (see library_view.h): shares as percents, a row as named
// numbers, where the blend comes from, and the view's data. Not the shelf's drawing
// (src/ui/panel_library.cpp); the reading itself is view_numbers.cpp's (state.views.library).
#include "library_view.h"

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "view_data.h"
#include "view_text.h"

namespace attn {

namespace {

// A book's title in running text: quoted, a very long token shortened (the view wraps sentences,
// not words), by characters so the sentence is the same on every screen.
std::string book(const std::string& title) {
  constexpr std::size_t kMaxCodePoints = 24;
  std::vector<std::size_t> starts;  // where each code point starts
  for (std::size_t i = 0; i < title.size(); ++i)
    if ((static_cast<unsigned char>(title[i]) & 0xC0) != 0x80) starts.push_back(i);
  if (starts.size() <= kMaxCodePoints) return in_quotes(title);
  return in_quotes(title.substr(0, starts[kMaxCodePoints - 1]) + "…");  // 23 of them and the ellipsis
}

}  // namespace

// "seeks creature +1.20 · seeks thing 0.00 · ..." for one row of a matrix with named columns; a
// real model's long rows (64 unnamed dimensions): the first few and how many more.
std::string named_vector(const std::vector<std::string>& names, const Matrix& m, int row) {
  constexpr int kListed = 6;
  const int cols = std::min(static_cast<int>(m.cols()), static_cast<int>(names.size()));
  const int shown = cols > kListed + 2 ? kListed : cols;
  std::string out;
  for (int c = 0; c < shown; ++c) {
    if (c) out += "  ·  ";
    out += names[c] + " " + number_text(m(row, c), 2);
  }
  if (shown < cols) out += "  ·  … " + std::to_string(cols - shown) + " more";
  return out;
}


// "Most of the weight goes to 'animal' (43%) and 'tired' (12%) ...", only where the named books
// hold at least half of it; then what each book adds to the blend by size (weight × |value|), which
// is not its weight where the contents differ in length.
std::string where_the_blend_comes_from(const AppState& state, const LibraryReading& r) {
  auto book = [&](int j) { return attn::book(state.model.keys.tokens[static_cast<std::size_t>(j)].text); };
  std::vector<int> order(r.attention.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return r.attention[a] > r.attention[b]; });
  const float top = r.attention[order[0]];
  int visible = 0;
  for (float w : r.attention) visible += w > 0.0f;
  // Nothing stands out when the best share is barely above an even split: say so, not "mostly".
  if (visible > 1 && top < 1.5f / static_cast<float>(visible))
    return "No book stands out: the " + std::to_string(visible) + " books it can see are read about equally (" +
           percent(1.0f / static_cast<float>(visible)) + " each, give or take).";
  std::string text;
  if (top >= 0.995f) {
    text = "All the weight goes to " + book(order[0]) + ".";
  } else if (top >= 0.9f) {
    text = "Almost all the weight goes to " + book(order[0]) + " (" + percent(top) + ").";
  } else {
    std::vector<int> named = {order[0]};
    float covered = top;
    for (std::size_t k = 1; k < order.size() && named.size() < 3; ++k) {
      if (r.attention[order[k]] < 0.12f || covered >= 0.8f) break;
      named.push_back(order[k]);
      covered += r.attention[order[k]];
    }
    std::string list;
    for (std::size_t k = 0; k < named.size(); ++k) {
      if (k) list += k + 1 == named.size() ? " and " : ", ";
      list += book(named[k]) + " (" + percent(r.attention[named[k]]) + ")";
    }
    int others = 0;
    for (std::size_t j = 0; j < r.attention.size(); ++j)
      if (r.attention[j] > 0.0f && std::find(named.begin(), named.end(), static_cast<int>(j)) == named.end()) ++others;
    text = covered >= 0.5f ? "Most of the weight goes to " + list
                           : "The largest weights: " + list + "; no few books get most of it";
    if (others > 0)
      text += "; the other " + std::to_string(others) + (others == 1 ? " book gets " : " books get ") +
              percent(std::max(0.0f, 1.0f - covered)) + " together";
    text += ".";
  }
  // What each book adds by size: its weight × the length of its contents.
  std::vector<float> adds(r.attention.size());
  float total = 0;
  for (std::size_t j = 0; j < adds.size(); ++j) total += adds[j] = r.attention[j] * r.value_lengths[j];
  if (total <= 0) return text;
  const int largest = static_cast<int>(std::max_element(adds.begin(), adds.end()) - adds.begin());
  const float share = adds[static_cast<std::size_t>(largest)] / total;
  text += " Weights are not shares of the take-home: the contents differ in length. Counted as weight × |v| (the "
          "length of its contents), " + book(largest) + " gives " + percent(share) + " of the total" +
          (largest == order[0] ? "" : ", more than the book with the largest weight") + ".";
  return text;
}

nlohmann::json library_view_data(const AppState& state) {
  const LibraryReading& r = state.views.library;
  return {{"reader", r.reader},
          {"best", r.best},
          {"best_title", state.model.keys.tokens[r.best].text},
          {"mode", state.inputs.library_best_only ? "best_only" : "attention"},
          {"read", r.read},
          {"attention_take_home", r.blend},
          {"library_take_home", r.best_book},
          {"value_lengths", r.value_lengths},
          {"summary", state.inputs.library_best_only ? nlohmann::json(nullptr)
                                                     : nlohmann::json(where_the_blend_comes_from(state, r))},
          {"thin_book", [&] {
             const int thin = r.thin_book;
             if (thin < 0) return nlohmann::json(nullptr);
             return nlohmann::json{{"index", thin},
                                   {"title", state.model.keys.tokens[thin].text},
                                   {"read", r.attention[thin]},
                                   {"value_length", r.value_lengths[static_cast<std::size_t>(thin)]},
                                   {"best_value_length", r.value_lengths[static_cast<std::size_t>(r.best)]}};
           }()}};
}

}  // namespace attn
