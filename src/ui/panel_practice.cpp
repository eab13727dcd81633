// The practice view: the lesson's four exercises (answers on demand, their numbers live from the
// app's own model), the "prove it" checklist and where to go further. Not a test itself: a tick
// whose view has a check question unlocks once that check is passed (checks.h); the others are
// ticked on the learner's word and say so ("self-checked").
#include <imgui.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "checks.h"
#include "panels.h"
#include "widgets.h"

namespace attn::ui {

namespace {

// [SECTION] Text helpers

std::string fixed(double v, int decimals) { return number_text(static_cast<float>(v), decimals); }

std::string percent(double share) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.0f%%", share * 100.0);
  return buf;
}

// "[0.40, 0.20, 0.40]"; decimals < 0: as few digits as the number needs ("[1, 0, 2]", "[0.5, 1]").
std::string row_text(const Matrix& m, int row, int decimals) {
  std::string out = "[";
  for (int c = 0; c < m.cols(); ++c) {
    char compact[32];
    std::snprintf(compact, sizeof compact, "%.4g", static_cast<double>(m(row, c)));
    out += (c ? ", " : "") + (decimals < 0 ? std::string(compact) : fixed(m(row, c), decimals));
  }
  return out + "]";
}

// "[0.40, 0.20, 0.40], [0.20, 0.40, 0.40], ..." one row per token
std::string rows_text(const Matrix& m, int decimals) {
  std::string out;
  for (int r = 0; r < m.rows(); ++r) out += (r ? ", " : "") + row_text(m, r, decimals);
  return out;
}

std::string quoted(const std::string& token) { return "'" + token + "'"; }

// [SECTION] The four exercises

struct Exercise {
  const char* name;      // "Explain"
  const char* kind;      // what the learner does
  std::string question;
  std::string answer;    // paragraphs separated by blank lines
  View view;             // the view that works it out live
  const char* view_label;
  bool live;             // the answer quotes the app's current numbers
};

std::string explain_answer(const AppState& state) {
  const AttentionTrace& t = state.model.trace;
  const int reader = state.inputs.token;
  const std::vector<std::string> readers = query_labels(state), books = key_labels(state);
  int best = 0;
  for (int j = 1; j < t.weights.cols(); ++j)
    if (t.weights(reader, j) > t.weights(reader, best)) best = j;
  std::string answer =
      "Picture a reader in a library. The question they walk in with is the query. Every book has a title "
      "on its spine: that is its key. What is written inside is its value. The reader holds the question "
      "against every title, and the better a title fits, the more of that book they read. They leave with "
      "a blend of many books, mostly the best fits.\n\n"
      "In self-attention every token is a reader and a book at once: it asks with its query, is found by "
      "its key, and hands over its value.";
  answer += " Right now " + quoted(readers[reader]) + " asks its question, and the best-fitting title is the "
            "key of " + quoted(books[best]) + ": it reads " + percent(t.weights(reader, best)) +
            " of that book, so the value of " + quoted(books[best]) + " makes up the largest part of what " +
            quoted(readers[reader]) + " carries on.";
  if (t.weights(reader, best) < 0.5f)
    answer += " (Here no single book wins a majority: the blend is spread out.)";
  return answer;
}

std::string derive_answer(const AppState& state) {
  const AttentionTrace& d = state.model.derive;
  const bool lesson = state.inputs.derive_q == AppInputs::derive_default_qk() &&
                      state.inputs.derive_k == AppInputs::derive_default_qk() &&
                      state.inputs.derive_v == AppInputs::derive_default_v();
  std::string answer =
      "Four moves, in order. Dot every query with every key: Q·Kᵀ, a (3, 3) table. Divide it all by "
      "√d = √2 ≈ 1.414. In each row, take e to the power of each number and divide by the row's total, so the "
      "row adds up to 1: those are the weights. Finally each token's output is its weights times the rows "
      "of V, added up.\n\n";
  answer += lesson ? "With the lesson's numbers (Q = K = [[1, 0], [0, 1], [1, 1]], V = [[1, 2], [3, 4], [5, 6]]):\n"
                   : "With the numbers now set in the Derive view:\n";
  answer += "Q·Kᵀ = " + rows_text(d.raw_scores, -1) + "\n";
  answer += "scaled = " + rows_text(d.scaled_scores, 3) + "\n";
  answer += "weights ≈ " + rows_text(d.weights, 2) + "\n";
  answer += "outputs ≈ " + rows_text(d.output, 2) + "\n\n";
  answer +=
      "Every output is a weighted average of the rows of V, so it sits between them: a token whose query "
      "matches one key much better than the others takes mostly that token's value.";
  return answer;
}

std::string build_answer() {
  return "Start from token vectors X, shape (T, d_model), and three weight matrices. Project: Q = X·W_Q, "
         "K = X·W_K, V = X·W_V, each (T, d). Score every pair: S = Q·Kᵀ / √d, shape (T, T).\n\n"
         "For the causal mask, set every score above the diagonal (a key later than its query) to −∞ before "
         "the softmax: e^−∞ is exactly 0, so those weights are exactly 0, and the rest of each row still adds "
         "up to 1.\n\n"
         "Softmax along each row, subtracting the row's largest score first so exp can never overflow (the "
         "weights do not change). Output = weights · V, shape (T, d).\n\n"
         "In NumPy that is a handful of array lines; in PyTorch the same lines on tensors, with masked_fill "
         "for the mask and softmax(dim=-1). Feed both the same random X and weights and print the largest "
         "absolute difference: it should be around 1e-6 (float rounding), and "
         "torch.nn.functional.scaled_dot_product_attention(..., is_causal=True) makes a third check. The "
         "weight matrix comes out lower-triangular: token t reads only tokens 1 to t.";
}

std::string break_answer(const AppState& state) {
  const BreakResult& b = state.model.saturation;
  const SaturationStats &on = b.scaled, &off = b.unscaled;
  const double root_d = std::sqrt(static_cast<double>(b.d));
  const BreakRatioRange& range = state.model.saturation_range;
  const double grad_ratio = break_gradient_ratio(b, false);
  char buf[2400];
  std::snprintf(
      buf, sizeof buf,
      "Why one-hot: a score q·k adds up d = %d products. If the entries of q and k are spread around 0 with "
      "variance 1, the sum has a spread of √d ≈ %.1f. In this app's run (T = %d tokens, seed %llu) the scores "
      "have a standard deviation of %.1f without the division and %.2f with it. Softmax exaggerates gaps: a "
      "score 20 above the rest gets about 485 million times the weight (e^20). So %s of rows put more than 0.99 on "
      "a single key without √d (%s with it), and the average spread of a row (its entropy) falls from %.2f "
      "to %.2f (a uniform row of %d would be %.2f).\n\n"
      "What it does to gradients: the gradient of a softmax output with respect to score i is "
      "wᵢ(gᵢ − Σⱼ wⱼgⱼ). With one weight near 1 and the others near 0, every one of those terms is near 0, "
      "so the row passes almost nothing back to its scores. Here the typical (median) row passes back %.2g "
      "with scaling and %.2g without, about %.0f times less (over seeds 0 to %d: %.0f to %.0f times), and the "
      "most saturated row only %.1g. Those rows stop learning where to look. (That compares each side at "
      "its own softmax input; at the raw q·k the scaled side is also divided by √d, so the gap is √d ≈ %.0f "
      "times smaller: %.1f to %.1f times.)\n\n"
      "The catch: the total gradient into q is not smaller without the division (%.2g against %.2g here). "
      "The few rows that are not saturated get very large gradients and dominate, so training is steered by "
      "a handful of rows and becomes unstable.\n\n"
      "Dividing by √d brings the spread back near 1, where softmax keeps several keys in play and every row "
      "keeps a usable gradient.",
      b.d, root_d, b.T, static_cast<unsigned long long>(b.seed), off.score_std, on.score_std,
      percent(off.frac_one_hot).c_str(), percent(on.frac_one_hot).c_str(), on.mean_entropy, off.mean_entropy, b.T,
      std::log(static_cast<double>(b.T)), on.median_row_grad, off.median_row_grad, grad_ratio, range.seeds - 1,
      range.min, range.max, off.min_row_grad, root_d, range.min_raw, range.max_raw, off.q_grad_norm,
      on.q_grad_norm);
  return buf;
}

std::vector<Exercise> exercises(const AppState& state) {
  return {
      {"Explain", "say it in plain words, no notes",
       "Explain queries, keys and values using the picture of a library.", explain_answer(state), View::Library,
       "Open the Library view", true},
      {"Derive", "the maths by hand",
       "Take 3 tokens with d = 2 and small Q, K and V of your own. Work out the attention weights and the "
       "outputs on paper.",
       derive_answer(state), View::Derive, "Open the Derive view", true},
      {"Build", "code it from scratch",
       "Write single-head self-attention in NumPy, then in PyTorch, and check that both give the same "
       "numbers. Then add the causal mask.",
       build_answer(), View::Build, "Open the Build view", false},
      {"Break", "make it fail, and say why",
       "Drop the √d scaling and use d = 512. What do the softmax rows look like, why are they almost "
       "one-hot, and what happens to the gradients?",
       break_answer(state), View::Break, "Open the Break view", true},
  };
}

// [SECTION] Prove it, go further

const char* const kChecklist[] = {
    "I can write the formula: output = softmax(Q·Kᵀ / √d) · V.",
    "I can say what each token's query, key and value are for: what it looks for, what it offers to be "
    "matched on, what it passes on.",
    "I can explain why the cost grows with T²: every token is compared with every token.",
    "I can explain why the weights change with the input: attention mixes tokens by how well they match, "
    "not by fixed weights.",
    "I can say why attention handles all tokens at once, where an RNN must go one step at a time.",
    "I can tell self-attention (Q, K and V from one sequence) from cross-attention (queries from one "
    "sequence, keys and values from another).",
    "I can explain why every row of weights adds up to 1.",
    "I know the causal mask sets future scores to −∞ before the softmax, not after it.",
};
constexpr int kChecklistSize = static_cast<int>(sizeof kChecklist / sizeof kChecklist[0]);
// The check that proves each line (View::Practice: none, the line is self-checked).
constexpr View kChecklistProof[kChecklistSize] = {View::Steps,    View::Library,  View::Cost,
                                                  View::Compare,  View::Practice, View::Practice,
                                                  View::Derive,   View::Mistakes};

bool self_checked(int item) { return kChecklistProof[item] == View::Practice; }
bool unlocked(const AppState& state, int item) { return self_checked(item) || check_passed(state, kChecklistProof[item]); }
// A line is ticked when the learner ticked it and it is unlocked (a tick stored before its check
// was passed waits for the check).
bool ticked(const AppState& state, int item) { return ((state.inputs.checklist >> item) & 1u) && unlocked(state, item); }

struct Reference {
  const char* title;
  const char* source;  // who made it, and what it is
  const char* url;
  bool recommended;
};

const Reference kReferences[] = {
    {"Attention in transformers, step-by-step", "3Blue1Brown · video", "https://www.youtube.com/watch?v=eMlx5fFNoYc",
     true},
    {"Transformer Explainer", "Georgia Tech Polo Club · a live GPT-2 in the browser",
     "https://poloclub.github.io/transformer-explainer/", false},
    {"The Illustrated Transformer", "Jay Alammar · article", "https://jalammar.github.io/illustrated-transformer/",
     false},
    {"Build a Large Language Model (From Scratch), ch. 3", "Sebastian Raschka · book chapter with free code",
     "https://github.com/rasbt/LLMs-from-scratch/tree/main/ch03", false},
};

const ImVec4 kAnswerBar(0.35f, 0.60f, 0.95f, 1.0f);
const ImVec4 kRecommended(1.0f, 0.80f, 0.35f, 1.0f);

// An answer: its paragraphs indented, with a coloured bar down its left side.
void answer_block(const std::string& answer) {
  const float bar = ImGui::GetFontSize() * 0.2f, indent = ImGui::GetFontSize() * 0.9f;
  const ImVec2 top = ImGui::GetCursorScreenPos();
  ImGui::Indent(indent);
  ImGui::BeginGroup();
  paragraph(answer.c_str());
  ImGui::EndGroup();
  ImGui::Unindent(indent);
  ImGui::GetWindowDrawList()->AddRectFilled(top, ImVec2(top.x + bar, ImGui::GetItemRectMax().y),
                                            ImGui::GetColorU32(kAnswerBar));
}

void draw_exercises(const AppState& state, AppInputs& next, bool (&answer_shown)[4]) {
  const std::vector<Exercise> list = exercises(state);
  for (int i = 0; i < static_cast<int>(list.size()); ++i) {
    const Exercise& e = list[i];
    ImGui::PushID(i);
    ImGui::Spacing();
    ImGui::Text("%d  %s", i + 1, e.name);
    const std::string kind = std::string("· ") + e.kind;
    same_line_if_fits(ImGui::CalcTextSize(kind.c_str()).x);
    ImGui::TextDisabled("%s", kind.c_str());
    paragraph(e.question.c_str());
    if (i == 0) publish_item_rect("practice:picture");  // the view's first exercise: what an embed shows first
    if (ImGui::Button(answer_shown[i] ? "Hide answer" : "Show answer")) answer_shown[i] = !answer_shown[i];
    publish_item_rect(("practice:answer:" + std::to_string(i)).c_str());
    same_line_if_fits(button_width(e.view_label));
    if (ImGui::Button(e.view_label)) next.view = e.view;
    publish_item_rect(("practice:goto:" + std::to_string(i)).c_str());
    if (answer_shown[i]) {
      if (e.live) hint("Its numbers come from the app as it is now, so they follow what you change.");
      answer_block(e.answer);
    }
    ImGui::PopID();
    ImGui::Spacing();
    ImGui::Separator();
  }
}

void draw_checklist(const AppState& state, AppInputs& next) {
  int count = 0;
  for (int i = 0; i < kChecklistSize; ++i) count += ticked(state, i);
  ImGui::Spacing();
  ImGui::Text("Prove it");
  ImGui::SameLine();
  ImGui::TextDisabled("· %d of %d ticked", count, kChecklistSize);
  hint("A line with a check unlocks when you pass that view's check (Derive: every weight typed right). "
       "The lines marked self-checked are yours to tick when you can do them without notes. Kept in this browser.");
  for (int i = 0; i < kChecklistSize; ++i) {
    const unsigned bit = 1u << i;
    const bool open = unlocked(state, i);
    bool checked = ticked(state, i);
    ImGui::PushID(i);
    ImGui::BeginDisabled(!open);
    const bool clicked = ImGui::Checkbox("##check", &checked);
    ImGui::EndDisabled();
    publish_item_rect(("check:" + std::to_string(i)).c_str());
    ImGui::SameLine();
    // The statement wraps under itself (a checkbox label would not wrap); clicking it ticks too.
    ImGui::BeginGroup();
    ImGui::AlignTextToFramePadding();
    ImGui::TextWrapped("%s", kChecklist[i]);
    ImGui::EndGroup();
    const bool text_clicked = open && ImGui::IsItemClicked();
    if (text_clicked) checked = !checked;
    if (clicked || text_clicked) next.checklist = checked ? next.checklist | bit : next.checklist & ~bit;
    ImGui::Indent(ImGui::GetFrameHeight() + ImGui::GetStyle().ItemSpacing.x);
    // (wrapped, and the button on the next line where it does not fit: a phone is narrow)
    if (self_checked(i)) {
      hint("self-checked: no question in the app proves it");
    } else if (!open) {
      hint((std::string("locked until the ") + view_title(kChecklistProof[i]) + " check is passed").c_str());
      same_line_if_fits(button_width("Go there"));
      if (ImGui::SmallButton("Go there")) next.view = kChecklistProof[i];
      publish_item_rect(("check:go:" + std::to_string(i)).c_str());
    } else {
      hint((std::string("unlocked: the ") + view_title(kChecklistProof[i]) + " check is passed").c_str());
    }
    ImGui::Unindent(ImGui::GetFrameHeight() + ImGui::GetStyle().ItemSpacing.x);
    ImGui::PopID();
  }
}

void draw_references() {
  ImGui::Spacing();
  ImGui::Separator();
  ImGui::Spacing();
  ImGui::Text("Go further");
  ImGui::SameLine();
  ImGui::TextDisabled("· optional: each opens in a new tab");
  for (int i = 0; i < static_cast<int>(sizeof kReferences / sizeof kReferences[0]); ++i) {
    const Reference& r = kReferences[i];
    ImGui::PushID(i);
    // A title longer than a phone is wide is shortened on its button (the tooltip and the page say it whole).
    const float room = ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ScrollbarSize - button_width("  ↗");
    if (ImGui::Button((fit_text(r.title, room) + "  ↗").c_str())) open_url(r.url);
    publish_item_rect(("ref:" + std::to_string(i)).c_str());
    explain_item((std::string(r.title) + "\n" + r.url).c_str(), false);  // the click opens it
    if (r.recommended) {
      same_line_if_fits(ImGui::CalcTextSize("★ start here").x);
      ImGui::AlignTextToFramePadding();
      ImGui::TextColored(kRecommended, "★ start here");
    }
    hint(r.source);
    if (r.recommended)
      hint("The clearest moving picture of queries, keys and values: watch word meanings shift as attention "
           "blends them.");
    ImGui::PopID();
    ImGui::Spacing();
  }
}

}  // namespace

void draw_practice_panel(const AppState& state, AppInputs& next, UiState& ui) {
  panel_intro("Four exercises from the lesson. Try each on paper, out loud or in code first, then open the "
              "answer and compare.");
  if (ImGui::Button("Printable handout  ↗") && !open_handout()) ImGui::OpenPopup("handout-unavailable");
  publish_item_rect("handout");
  hint("A page to print, search or translate: the sentence, the weights, the seven steps' numbers and these "
       "exercises, as they are now.");
  if (ImGui::BeginPopup("handout-unavailable")) {
    ImGui::TextUnformatted("The handout works in the browser version.");
    ImGui::EndPopup();
  }
  ImGui::Separator();
  draw_exercises(state, next, ui.practice.answer_shown);
  draw_checklist(state, next);
  draw_references();
}

nlohmann::json practice_view_data(const AppState& state) {
  nlohmann::json out;
  out["exercises"] = nlohmann::json::array();
  for (const Exercise& e : exercises(state))
    out["exercises"].push_back(
        {{"name", e.name}, {"question", e.question}, {"answer", e.answer}, {"view", view_name(e.view)}});
  out["checklist"] = nlohmann::json::array();
  for (int i = 0; i < kChecklistSize; ++i)
    out["checklist"].push_back({{"text", kChecklist[i]}, {"checked", ticked(state, i)},
                                {"self_checked", self_checked(i)}, {"unlocked", unlocked(state, i)},
                                {"check", self_checked(i) ? nlohmann::json(nullptr) : nlohmann::json(view_name(kChecklistProof[i]))}});
  out["references"] = nlohmann::json::array();
  for (const Reference& r : kReferences)
    out["references"].push_back(
        {{"title", r.title}, {"source", r.source}, {"url", r.url}, {"recommended", r.recommended}});
  return out;
}

}  // namespace attn::ui
