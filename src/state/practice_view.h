// The Practice view's texts: the four exercises (Explain, Derive, Build, Break) with answers that
// quote the app's live numbers, the "prove it" checklist and the check that unlocks each line, the
// references. The panel (src/ui/panel_practice.cpp) draws them, practice_view_data (view_data.h)
// reports them, the handout prints them. No ImGui.
#pragma once
#include <string>
#include <vector>

#include "app_state.h"

namespace attn {

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
// The four, their answers computed from the state now.
std::vector<Exercise> exercises(const AppState& state);

// [SECTION] Prove it, go further

inline constexpr const char* kChecklist[] = {
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
inline constexpr int kChecklistSize = static_cast<int>(sizeof kChecklist / sizeof kChecklist[0]);
// The check that proves each line (View::Practice: none, the line is self-checked).
inline constexpr View kChecklistProof[kChecklistSize] = {View::Steps,    View::Library,  View::Cost,
                                                  View::Compare,  View::Practice, View::Practice,
                                                  View::Derive,   View::Mistakes};

// A line the learner ticks on their word (its proof is View::Practice: no check).
bool self_checked(int item);
// Whether a line may be ticked: self-checked, or its view's check passed.
bool unlocked(const AppState& state, int item);
// A line is ticked when the learner ticked it and it is unlocked (a tick stored before its check
// was passed waits for the check).
bool ticked(const AppState& state, int item);

struct Reference {
  const char* title;
  const char* source;  // who made it, and what it is
  const char* url;
  bool recommended;
};

inline constexpr Reference kReferences[] = {
    {"Attention in transformers, step-by-step", "3Blue1Brown · video", "https://www.youtube.com/watch?v=eMlx5fFNoYc",
     true},
    {"Transformer Explainer", "Georgia Tech Polo Club · a live GPT-2 in the browser",
     "https://poloclub.github.io/transformer-explainer/", false},
    {"The Illustrated Transformer", "Jay Alammar · article", "https://jalammar.github.io/illustrated-transformer/",
     false},
    {"Build a Large Language Model (From Scratch), ch. 3", "Sebastian Raschka · book chapter with free code",
     "https://github.com/rasbt/LLMs-from-scratch/tree/main/ch03", false},
};

}  // namespace attn
