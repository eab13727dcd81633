// The table of the app's inputs: one row per field of AppInputs with its public name, type, default,
// domain, where it may come from (URL, data- attribute) and what Reset does with it. Not the state.
//
// Everything else is derived from these rows: setState's checks (apply_state_json), the JSON of
// getState (inputs_to_json), AppInputs' equality, Reset, and, through attn_inputs_table, the page's
// URL parameters and permalinks (web/explainer.js) and docs/embedding.md's parameter list (checked by
// tests/e2e/app.test.mjs). Adding an input = a member of AppInputs, one row here, and the code
// that uses it.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace attn {

struct AppInputs;
struct AppState;

// What an input is to the learner, which decides what Reset does with it.
enum class InputGroup {
  Lesson,    // the lesson's inputs (sentence, mask, temperature, ...): Reset restores the defaults
  Place,     // where the learner is (the view, the model): Reset keeps it
  Progress,  // what the learner has done (Prove-it ticks): kept, and stored by the page
  Setting,   // presentation and machinery (theme, motion, embed, backend): kept
};

// How the page's address uses an input.
enum class UrlUse {
  None,       // never read from the URL (progress lives in the browser's storage)
  Read,       // read from ?NAME= (and data-NAME), not written into permalinks (the learner's own settings)
  Permalink,  // read, and written into every permalink whenever it is not the default
};

struct InputField {
  const char* name;      // the public name: JSON key of getState/setState, ?NAME=, data-NAME
  const char* type;      // "boolean", "integer", "number", "string", "choice", "views", "matrix", "token",
                         // "heads", "cuts", "patch" (the interventions' JSON; in a URL as JSON text)
  double min = 0, max = 0;            // integer and number: the inclusive domain
  std::vector<std::string> choices;   // choice and views: the names accepted
  int rows = 0, cols = 0;             // matrix: its shape
  InputGroup group = InputGroup::Lesson;
  UrlUse url = UrlUse::Permalink;
  const char* doc = "";               // one line for docs/embedding.md and the page
  // The value as getState writes it (numbers exact: the shortest text that reads back as the same float).
  nlohmann::json (*get)(const AppInputs& in) = nullptr;
  // Checks `value` and writes it into `next`; throws std::invalid_argument "name: why". `state`
  // gives what a check needs (the loaded models; the tokens of next's sentence).
  void (*set)(const InputField& field, const AppState& state, AppInputs& next, const nlohmann::json& value) = nullptr;
  bool (*equal)(const AppInputs& a, const AppInputs& b) = nullptr;
  void (*copy)(AppInputs& to, const AppInputs& from) = nullptr;
};

// Every input, in the order setState applies them: the sentence and the model before the token,
// the layer and the head, which are checked against them.
const std::vector<InputField>& input_fields();
const InputField* find_input(const std::string& name);

// The table for the page and the docs: [{name, type, default, min, max, choices, rows, cols,
// group, url, data, doc}] ("data": the data- attribute of the embed loader, null when none).
nlohmann::json input_table_json();

// Reset: every Lesson input back to its default; the view, the model, progress and settings stay.
void reset_lesson_inputs(AppInputs& inputs);

}  // namespace attn
