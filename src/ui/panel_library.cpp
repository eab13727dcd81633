// The library view: the selected query is a reader's question, each key-side token a book (title =
// key, contents = value), each weight how much of a book is read. Not a model: it draws the trace and
// state.views.library (the reading, the best book, the contents' lengths: view_numbers.h).
//
// [SECTION] Small helpers
// [SECTION] What the reader does (the weights row, the best match, both take-homes)
// [SECTION] The shelf
// [SECTION] The take-home
// [SECTION] Where the picture stops working
// [SECTION] The view
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

#include "../state/library_view.h"
#include "layout.h"
#include "model_ui.h"
#include "panels.h"
#include "widgets.h"

namespace attn::ui {

namespace {

// [SECTION] Small helpers

// A token as running text names it: quoted, a very long word shortened rather than wrapped mid-word.
std::string token_name(const std::string& token) { return in_quotes(fit_text(token, ImGui::GetFontSize() * 10.0f)); }

// A long vector (a real model's value, 64 numbers) as one thin bar per dimension around a zero
// line, `width` × `height` at `at`.
void vector_strip(ImDrawList* dl, ImVec2 at, float width, float height, const std::vector<float>& values, float scale) {
  const int n = static_cast<int>(values.size());
  if (n == 0) return;
  dl->AddRectFilled(at, ImVec2(at.x + width, at.y + height), ImGui::GetColorU32(ImGuiCol_FrameBg));
  const float mid = at.y + height * 0.5f, step = width / static_cast<float>(n);
  for (int c = 0; c < n; ++c) {
    const float v = std::clamp(values[c] / scale, -1.0f, 1.0f);
    const float x0 = at.x + step * c, x1 = x0 + std::max(1.0f, step - (step >= 3 ? 1.0f : 0.0f));
    dl->AddRectFilled(ImVec2(x0, v >= 0 ? mid - v * height * 0.5f : mid), ImVec2(x1, v >= 0 ? mid : mid - v * height * 0.5f),
                      color_diverging(v));
  }
  dl->AddLine(ImVec2(at.x, mid), ImVec2(at.x + width, mid), ImGui::GetColorU32(ImGuiCol_TextDisabled));
}

// [SECTION] What the reader does (the weights row, the best match, both take-homes)

// Everything the shelf and the take-home need for the selected reader, in one place (view_numbers.h).
using Reading = LibraryReading;
const Reading& read_shelf(const AppState& state) { return state.views.library; }


// [SECTION] The shelf

// The part of a book that is read, and what is taken home: its value, so the value hue of every view
// (paler in the light theme, where the titles over it are dark).
ImU32 read_color() { return color(palette().value, palette().light ? 0.45f : 0.92f); }
const ImU32 kSpineColors[] = {IM_COL32(62, 70, 96, 255), IM_COL32(78, 62, 86, 255), IM_COL32(56, 80, 78, 255),
                              IM_COL32(84, 72, 60, 255)};
// A spine: four muted colours, lightened towards white in the light theme.
ImU32 spine_color(int j) {
  ImVec4 c = ImGui::ColorConvertU32ToFloat4(kSpineColors[j % 4]);
  if (palette().light)
    for (float* channel : {&c.x, &c.y, &c.z}) *channel += (1.0f - *channel) * 0.72f;
  return ImGui::GetColorU32(c);
}

void book_explanation(const AppState& state, const Reading& r, int j) {
  const AttentionTrace& t = state.model.trace;
  const bool swapped = state.inputs.mistake == Mistake::SwapKeysValues;
  ImGui::PushTextWrapPos(explanation_wrap(26.0f));
  ImGui::Text("Book %s (key token %d)", token_name(state.model.keys.tokens[j].text).c_str(), j + 1);
  ImGui::Separator();
  ImGui::TextDisabled("Title (its key):");
  ImGui::TextUnformatted(named_vector(column_names(state, Columns::Key, static_cast<int>(t.key.cols())), t.key, j).c_str());
  ImGui::TextDisabled("Contents (its value):");
  ImGui::TextUnformatted(named_vector(column_names(state, Columns::Value, static_cast<int>(t.value.cols())), t.value, j).c_str());
  if (swapped)
    ImGui::TextColored(ImGui::GetStyleColorVec4(ImGuiCol_PlotLinesHovered),
                       "Mistake on: the question is matched against the contents, and the titles are taken home.");
  ImGui::Separator();
  if (key_hidden_by_mask(t, r.reader, j)) {
    ImGui::TextUnformatted(
        "Not on the shelf for this reader yet: the causal mask hides words that come later, "
        "so none of it is read.");
  } else {
    ImGui::Text("Title match: q·k = %s, scaled %s", number_text(t.raw_scores(r.reader, j), 2).c_str(),
                number_text(t.masked_scores(r.reader, j), 2).c_str());
    ImGui::Text("Attention reads %s of it.", percent(r.attention[j]).c_str());
    ImGui::Text("A real library reads %s.", j == r.best ? "all of it (best match)" : "none of it");
  }
  ImGui::PopTextWrapPos();
}

// The first of `candidates` (one text per book each) whose every text fits in `width`, so that a
// row of numbers is either complete or absent, never gappy. Empty texts when none fits.
std::vector<std::string> first_fitting(const std::vector<std::vector<std::string>>& candidates, float width,
                                       bool* dropped) {
  for (const auto& texts : candidates) {
    bool fits = true;
    for (const std::string& s : texts) fits = fits && ImGui::CalcTextSize(s.c_str()).x <= width;
    if (fits) return texts;
  }
  *dropped = true;
  return std::vector<std::string>(candidates.front().size());
}

// The shelf's three rows of numbers, one text per book: raw score, scaled score, share read.
struct ShelfNumbers {
  std::vector<std::string> raw, scaled, read;
  bool percent_signs_dropped = false;  // the read row shows "43" under a "read %" caption
};

// Each row in the longest form that fits under every book: fewer decimals (whole numbers lose
// nothing without them; other scores keep at least one), or no % sign, before a row is given up.
ShelfNumbers shelf_numbers(const AppState& state, const Reading& r, float room, bool* dropped) {
  const AttentionTrace& t = state.model.trace;
  const int books = static_cast<int>(t.weights.cols());
  auto all_whole = [&](const Matrix& m) {
    for (int j = 0; j < books; ++j)
      if (!key_hidden_by_mask(t, r.reader, j) && std::fabs(m(r.reader, j) - std::round(m(r.reader, j))) > 0.005f)
        return false;
    return true;
  };
  const int raw_min_decimals = all_whole(t.raw_scores) ? 0 : 1;
  const int scaled_min_decimals = all_whole(t.masked_scores) ? 0 : 1;
  std::vector<std::vector<std::string>> raw(3 - raw_min_decimals), scaled(3 - scaled_min_decimals), read(2);
  for (int j = 0; j < books; ++j) {
    const bool hidden = key_hidden_by_mask(t, r.reader, j);
    for (int decimals = 2; decimals >= raw_min_decimals; --decimals)
      raw[2 - decimals].push_back(number_text(t.raw_scores(r.reader, j), decimals));
    for (int decimals = 2; decimals >= scaled_min_decimals; --decimals)
      scaled[2 - decimals].push_back(hidden ? "−∞" : number_text(t.masked_scores(r.reader, j), decimals));
    const std::string share = hidden ? "—" : percent(r.read[j]);
    read[0].push_back(share);
    read[1].push_back(share.back() == '%' ? share.substr(0, share.size() - 1) : share);
  }
  ShelfNumbers n;
  n.raw = first_fitting(raw, room, dropped);
  n.scaled = first_fitting(scaled, room, dropped);
  n.read = first_fitting(read, room, dropped);
  n.percent_signs_dropped = n.read != read[0] && !n.read.front().empty();
  return n;
}

// One book per key token: score numbers above, the spine with its title, the read share below.
// The captions stay put on the left; the books scroll sideways when a long sentence needs it.
void draw_shelf(const AppState& state, const Reading& r, UiState::Library& ui) {
  const AttentionTrace& t = state.model.trace;
  const bool best_only = state.inputs.library_best_only;
  const int books = static_cast<int>(t.weights.cols());
  const float font = ImGui::GetFontSize(), line = ImGui::GetTextLineHeight();
  const ImGuiStyle& style = ImGui::GetStyle();

  // Captions, one per band: the two score rows, the books (two lines), the read row.
  const char* captions[] = {"match q·k", "scaled", "title = key", "fill = read", "read %"};
  float caption_width = 0;
  for (const char* c : captions) caption_width = std::max(caption_width, ImGui::CalcTextSize(c).x);
  caption_width += style.ItemSpacing.x;

  // Books share the width, but never get too thin for their title: then the shelf scrolls.
  const float visible_width = std::max(font * 4.0f, ImGui::GetContentRegionAvail().x - caption_width);
  const float slot = std::clamp(visible_width / books, line * 1.25f, font * 3.2f);
  const float gap = std::max(1.0f, slot * 0.1f), book_width = slot - gap;
  const float shelf_width = slot * books;
  const bool scrolls = shelf_width > visible_width + 0.5f;

  // A book is as tall as its longest title needs, within limits; longer titles get an ellipsis.
  float longest_title = 0;
  for (const Token& tok : state.model.keys.tokens)
    longest_title = std::max(longest_title, ImGui::CalcTextSize(tok.text.c_str()).x);
  const float book_height = std::clamp(longest_title + font * 1.2f, font * 5.0f, font * 8.5f);

  const float row_gap = style.ItemSpacing.y * 0.5f, plank_height = font * 0.4f;
  const float raw_y = 0, scaled_y = line + row_gap, books_y = scaled_y + line + row_gap;
  const float read_y = books_y + book_height + plank_height + row_gap, total_height = read_y + line;

  bool numbers_dropped = false;
  const ShelfNumbers numbers = shelf_numbers(state, r, slot - font * 0.12f, &numbers_dropped);
  const float shadow = std::max(1.0f, font / 15.0f), outline = std::max(2.0f, font * 0.13f);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text), dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const ImU32 highlight = ImGui::GetColorU32(ImGuiCol_PlotLinesHovered);
  const ImVec2 caption_origin = ImGui::GetCursorScreenPos();
  dl->AddText(ImVec2(caption_origin.x, caption_origin.y + raw_y), dim, captions[0]);
  dl->AddText(ImVec2(caption_origin.x, caption_origin.y + scaled_y), dim, captions[1]);
  dl->AddText(ImVec2(caption_origin.x, caption_origin.y + books_y + font * 0.3f), dim, captions[2]);
  dl->AddText(ImVec2(caption_origin.x, caption_origin.y + books_y + font * 0.3f + line), dim, captions[3]);
  dl->AddText(ImVec2(caption_origin.x, caption_origin.y + read_y), dim,
              numbers.percent_signs_dropped ? captions[4] : "read");
  ImGui::Dummy(ImVec2(caption_width, total_height));
  ImGui::SameLine(0, 0);

  const float scrollbar = scrolls ? style.ScrollbarSize : 0.0f;
  ImGui::BeginChild("##shelf", ImVec2(std::min(shelf_width, visible_width), total_height + scrollbar), false,
                    ImGuiWindowFlags_HorizontalScrollbar | ImGuiWindowFlags_NoBackground);
  // Bring the best match into view when the reader or the sentence changes.
  if (scrolls && ui.scrolled_for_revision != state.revision) {
    ImGui::SetScrollX(std::max(0.0f, slot * (r.best + 0.5f) - visible_width * 0.5f));
    ui.scrolled_for_revision = state.revision;
  }
  dl = ImGui::GetWindowDrawList();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("##books", ImVec2(shelf_width, total_height));
  int hovered_book = -1;
  if (ImGui::IsItemHovered()) {
    const float x = ImGui::GetIO().MousePos.x - origin.x;
    if (x >= 0 && x < shelf_width) hovered_book = static_cast<int>(x / slot);
  }
  dl->AddRectFilled(ImVec2(origin.x, origin.y + books_y + book_height),
                    ImVec2(origin.x + shelf_width, origin.y + books_y + book_height + plank_height),
                    IM_COL32(122, 88, 54, 255), font * 0.1f);

  auto centred = [&](float y, float x0, ImU32 color, const std::string& s) {
    const float w = ImGui::CalcTextSize(s.c_str()).x;
    dl->AddText(ImVec2(x0 + (book_width - w) * 0.5f, origin.y + y), color, s.c_str());
  };

  for (int j = 0; j < books; ++j) {
    const float x0 = origin.x + slot * j;
    const bool hidden = key_hidden_by_mask(t, r.reader, j);
    const ImVec2 a(x0, origin.y + books_y), b(x0 + book_width, origin.y + books_y + book_height);
    centred(raw_y, x0, hidden ? dim : text, numbers.raw[j]);
    centred(scaled_y, x0, hidden ? dim : text, numbers.scaled[j]);

    // The spine, the part read (filled from the bottom) and the title on top of both.
    const float rounding = std::min(font * 0.15f, book_width * 0.2f);
    if (hidden) {
      draw_masked_cell(dl, a, b);
    } else {
      dl->AddRectFilled(a, b, spine_color(j), rounding);
      dl->AddRect(a, b, color(palette().key, 0.9f), rounding);  // the spine's title is its key: the key hue
      const float share = std::clamp(r.read[j], 0.0f, 1.0f);
      if (share > 0) dl->AddRectFilled(ImVec2(a.x, b.y - book_height * share), b, read_color(), rounding);
      if (best_only) {  // where attention's share would reach, for comparison
        const float y = b.y - book_height * std::clamp(r.attention[j], 0.0f, 1.0f);
        dl->AddLine(ImVec2(a.x, y), ImVec2(b.x, y), IM_COL32(255, 255, 255, 230), std::max(1.5f, font * 0.12f));
      }
    }
    const std::string title = fit_text(state.model.keys.tokens[j].text, book_height - font * 0.8f);
    const ImVec2 at(x0 + (book_width - line) * 0.5f, b.y - font * 0.4f);
    if (!palette().light)  // a shadow keeps the white title readable on any fill
      text_vertical(dl, ImVec2(at.x + shadow, at.y + shadow), IM_COL32(0, 0, 0, 200), title.c_str());
    text_vertical(dl, at, hidden ? dim : palette().light ? color(palette().text) : IM_COL32(255, 255, 255, 255),
                  title.c_str());  // the title readable on any fill
    if (j == r.best)
      dl->AddRect(ImVec2(a.x - shadow, a.y - shadow), ImVec2(b.x + shadow, b.y + shadow), highlight, rounding, 0,
                  outline);
    if (j == hovered_book) dl->AddRect(a, b, ImGui::GetColorU32(ImGuiCol_Text), rounding, 0, outline);
    centred(read_y, x0, hidden ? dim : (j == r.best ? highlight : text), numbers.read[j]);
  }
  explain_parts("##books", books, hovered_book, r.best, [&](int j) { book_explanation(state, r, j); });
  ImGui::EndChild();
  publish_picture_rect(View::Library);

  if (best_only) hint("The white line on each book marks how much of it attention would have read.");
  if (numbers_dropped) hint("Some numbers do not fit under their book: hover a book to read them.");
  if (scrolls) hint("A long shelf: scroll it sideways.");
}

// [SECTION] The take-home

// One signed bar (centred on 0 when any content is negative), then the number.
void value_bar(ImDrawList* dl, ImVec2 at, float width, float value, float scale, bool signed_values) {
  const float line = ImGui::GetTextLineHeight(), number_width = ImGui::CalcTextSize("−0.00").x;
  const float bar_width = std::max(1.0f, width - number_width - ImGui::GetStyle().ItemSpacing.x);
  const float top = at.y + line * 0.15f, bottom = at.y + line * 0.85f;
  dl->AddRectFilled(ImVec2(at.x, top), ImVec2(at.x + bar_width, bottom), ImGui::GetColorU32(ImGuiCol_FrameBg));
  const float zero = signed_values ? at.x + bar_width * 0.5f : at.x;
  const float reach = (signed_values ? bar_width * 0.5f : bar_width) * std::clamp(value / scale, -1.0f, 1.0f);
  dl->AddRectFilled(ImVec2(std::min(zero, zero + reach), top), ImVec2(std::max(zero, zero + reach), bottom),
                    value < 0 ? color_diverging(-0.8f) : read_color());
  const float overhang = line * 0.1f;
  if (signed_values)
    dl->AddLine(ImVec2(zero, top - overhang), ImVec2(zero, bottom + overhang),
                ImGui::GetColorU32(ImGuiCol_TextDisabled));
  const std::string number = number_text(value, 2);
  dl->AddText(ImVec2(at.x + width - ImGui::CalcTextSize(number.c_str()).x, at.y), ImGui::GetColorU32(ImGuiCol_Text),
              number.c_str());
}

// Dimmed text at `at`, shortened to `width`.
void dl_text_fit(ImVec2 at, const std::string& text, float width) {
  ImGui::GetWindowDrawList()->AddText(at, ImGui::GetColorU32(ImGuiCol_TextDisabled), fit_text(text, width).c_str());
}

void draw_take_home(const AppState& state, const Reading& r) {
  const AttentionTrace& t = state.model.trace;
  const Matrix& contents = state.inputs.mistake == Mistake::SwapKeysValues ? t.key : t.value;
  const bool best_only = state.inputs.library_best_only;
  const float font = ImGui::GetFontSize(), line = ImGui::GetTextLineHeight();
  const ImGuiStyle& style = ImGui::GetStyle();
  const std::vector<std::string> names = column_names(state, Columns::Value, static_cast<int>(contents.cols()));
  const std::string reader = token_name(state.model.queries.tokens[r.reader].text);
  const std::string best = token_name(state.model.keys.tokens[r.best].text);

  // Every take-home is a mix of the books' contents, so the largest content bounds every bar.
  const float scale = std::max(1e-6f, contents.cwiseAbs().maxCoeff());
  const bool signed_values = contents.minCoeff() < 0.0f;

  heading(("What " + reader + " takes home: " + (best_only ? "both ways, side by side" : "its output vector")).c_str());
  if (names.size() > 16) {  // a real model's value: one strip per take-home, a bar per dimension
    hint("One bar per dimension of the value (they have no names): up = positive, down = negative.");
    const float avail = ImGui::GetContentRegionAvail().x - style.ItemSpacing.x * 4.0f;
    const float width = best_only ? std::min(avail * 0.5f, font * 16.0f) : std::min(avail, font * 24.0f);
    const float height = font * 3.0f;
    const ImVec2 p = ImGui::GetCursorScreenPos();
    if (best_only) {
      dl_text_fit(p, "Attention: a blend", width);
      dl_text_fit(ImVec2(p.x + width + style.ItemSpacing.x * 4.0f, p.y), "Library: " + best + " only", width);
    }
    const float top = p.y + (best_only ? line + style.ItemSpacing.y : 0.0f);
    vector_strip(ImGui::GetWindowDrawList(), ImVec2(p.x, top), width, height, r.blend, scale);
    if (best_only)
      vector_strip(ImGui::GetWindowDrawList(), ImVec2(p.x + width + style.ItemSpacing.x * 4.0f, top), width, height,
                   r.best_book, scale);
    ImGui::Dummy(ImVec2(best_only ? width * 2.0f + style.ItemSpacing.x * 4.0f : width, top - p.y + height));
  } else {
  float name_width = 0;
  for (const std::string& n : names) name_width = std::max(name_width, ImGui::CalcTextSize(n.c_str()).x);
  name_width += style.ItemSpacing.x;
  const float avail = ImGui::GetContentRegionAvail().x - name_width;
  const float column =
      best_only ? std::min(avail * 0.5f - style.ItemSpacing.x * 2.0f, font * 14.0f) : std::min(avail, font * 18.0f);
  const float column_gap = style.ItemSpacing.x * 3.0f;
  ImDrawList* dl = ImGui::GetWindowDrawList();

  if (best_only) {  // column headings, shortened to fit their column
    const ImVec2 p = ImGui::GetCursorScreenPos();
    const std::string blend = fit_text("Attention: a blend", column),
                      whole = fit_text("Library: " + best + " only", column);
    dl->AddText(ImVec2(p.x + name_width, p.y), ImGui::GetColorU32(ImGuiCol_TextDisabled), blend.c_str());
    dl->AddText(ImVec2(p.x + name_width + column + column_gap, p.y), ImGui::GetColorU32(ImGuiCol_TextDisabled),
                whole.c_str());
    ImGui::Dummy(ImVec2(name_width + column * 2 + column_gap, line));
  }
  for (int c = 0; c < static_cast<int>(r.blend.size()) && c < static_cast<int>(names.size()); ++c) {
    const ImVec2 p = ImGui::GetCursorScreenPos();
    dl->AddText(p, ImGui::GetColorU32(ImGuiCol_Text), names[c].c_str());
    value_bar(dl, ImVec2(p.x + name_width, p.y), column, r.blend[c], scale, signed_values);
    if (best_only)
      value_bar(dl, ImVec2(p.x + name_width + column + column_gap, p.y), column, r.best_book[c], scale, signed_values);
    ImGui::Dummy(ImVec2(name_width + column * (best_only ? 2.0f : 1.0f) + (best_only ? column_gap : 0.0f), line));
  }
  }

  ImGui::Spacing();
  if (best_only) {
    int ties = 0;
    for (int j = 0; j < static_cast<int>(r.attention.size()); ++j)
      ties += j != r.best && !key_hidden_by_mask(t, r.reader, j) &&
              t.masked_scores(r.reader, j) == t.masked_scores(r.reader, r.best);
    const float attention_best = r.attention[r.best];
    int visible = 0;
    for (float w : r.attention) visible += w > 0.0f;
    std::string text = "The library hands over one whole book: its take-home is exactly the contents of " + best + ". ";
    if (attention_best >= 0.9f)
      text += "Attention's blend is close to it, because it reads " + percent(attention_best) + " of " + best + ".";
    else if (visible > 1 && attention_best < 1.5f / static_cast<float>(visible))
      text += "Attention's blend leans towards no book in particular: it reads them all about equally.";
    else
      text += "Attention's blend only leans towards " + best + ": the other books supply " +
              percent(1.0f - attention_best) + " of it.";
    if (ties)
      text += " (" + std::to_string(ties + 1) + " titles match equally well; this library takes the first of them.)";
    paragraph(text.c_str());
  } else {
    paragraph(where_the_blend_comes_from(state, r).c_str());
  }
}

// [SECTION] Where the picture stops working

void draw_limits(const AppState& state, const Reading& r) {
  heading("Where the library picture stops working");
  const std::string reader = token_name(state.model.queries.tokens[state.inputs.token].text);
  ImGui::Bullet();
  paragraph(
      "A library lends whole books and you decide which ones. Attention never picks: every book it can see "
      "is read in part, and the parts always add up to exactly one book's worth.");
  ImGui::Bullet();
  paragraph(("The shares belong to this question only. Choose another query token than " + reader +
                   " on the left: the same shelf is read in a different mix.")
                      .c_str());
  ImGui::Bullet();
  paragraph(
      "Matching and reading use different vectors: the title (key) decides how much is read, the contents "
      "(value) decide what is taken home. A well-matched book with little inside adds little.");
  if (const int thin = r.thin_book; thin >= 0) {
    const AttentionTrace& t = state.model.trace;
    const float thin_length = r.value_lengths[static_cast<std::size_t>(thin)];
    const std::string book = token_name(state.model.keys.tokens[thin].text);
    const std::string best = token_name(state.model.keys.tokens[r.best].text);
    ImGui::Indent();
    paragraph(("Here: " + book + " is read " + percent(r.attention[thin]) + " (its title scores q·k = " +
               number_text(t.raw_scores(r.reader, thin), 2) + "), but its contents are thin: |v| = " +
               number_text(thin_length, 2) + " against " + number_text(r.value_lengths[static_cast<std::size_t>(r.best)], 2) +
               " for " + best + ", so it adds only " + number_text(r.attention[thin] * thin_length, 2) +
               " to the take-home.")
                  .c_str());
    ImGui::Unindent();
  }
  if (!cross_shown(state)) {
    ImGui::Bullet();
    paragraph("The reader is also one of the books: a token can read its own contents.");
  }
  if (causal_shown(state)) {
    ImGui::Bullet();
    paragraph("With the causal mask, books from later in the sentence are not on the shelf yet (hatched).");
  }
}

}  // namespace

// [SECTION] The view

void draw_library_panel(const AppState& state, Action& action, UiState& all) {
  AppInputs& next = action.inputs;
  UiState::Library& ui = all.library;
  panel_intro("Attention as a library: a question, a shelf, a take-home.");
  head_banner(state);
  const Reading& r = read_shelf(state);
  const AttentionTrace& t = state.model.trace;
  const std::string reader = token_name(state.model.queries.tokens[r.reader].text);

  // The long labels where they fit, short ones in a small embed (the IDs after ## stay the same).
  const auto fitting = [](const char* long_label, const char* short_label) {
    const float box = ImGui::GetFrameHeight() + ImGui::GetStyle().ItemInnerSpacing.x;
    return box + ImGui::CalcTextSize(long_label, nullptr, true).x <= ImGui::GetContentRegionAvail().x ? long_label
                                                                                                       : short_label;
  };
  if (ImGui::RadioButton(fitting("Attention: read some of every book, more of the better matches##attention",
                                 "Attention: some of every book##attention"),
                         !next.library_best_only))
    next.library_best_only = false;
  if (ImGui::RadioButton(fitting("A real library: read only the single best-matching book##library",
                                 "A library: the best book only##library"),
                         next.library_best_only))
    next.library_best_only = true;
  ImGui::Spacing();
  // With little height (a small embed, a phone on its side) the shelf comes before the words about it.
  const bool shelf_first = layout().short_height;
  if (shelf_first) {
    draw_shelf(state, r, ui);
    ImGui::Spacing();
  }

  paragraph(("Reader: " + reader + " (query token " + std::to_string(r.reader + 1) +
                   "). Its question is its query: " +
                   named_vector(column_names(state, Columns::Query, static_cast<int>(t.query.cols())), t.query, r.reader) + ".")
                      .c_str());
  paragraph(
      cross_shown(state)
          ? "The shelf holds the second sentence: each word is a book whose spine title is its key and whose "
            "contents are its value. The fill shows how much of each book is read."
          : "The shelf holds every word of the sentence: each is a book whose spine title is its key and "
            "whose contents are its value. The fill shows how much of each book is read.");
  if (!shelf_first) {
    ImGui::Spacing();
    draw_shelf(state, r, ui);
  }
  ImGui::Spacing();
  ImGui::Separator();
  ImGui::Spacing();
  draw_take_home(state, r);
  ImGui::Spacing();
  ImGui::Separator();
  ImGui::Spacing();
  draw_limits(state, r);
}


}  // namespace attn::ui
