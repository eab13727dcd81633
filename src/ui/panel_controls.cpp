// The controls column: model picker (and loading a model), layer and head, sentence, token picker,
// causal mask, √d scaling, temperature, reset. Not a view: it edits AppInputs (through `next`),
// every view reads the result; loading itself happens at the platform edge (src/app).
#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

#include "../state/input_table.h"
#include "model_ui.h"
#include "panels.h"
#include "widgets.h"

namespace attn::ui {

namespace {

// A text box whose typing is kept while it is invalid (TextBox, ui_state.h: the state keeps its last
// good sentence). Returns true when the text changed this frame.
bool sentence_box(const char* label, const std::string& current, unsigned revision, TextBox& box) {
  if ((box.synced_revision != revision || box.synced_text != current) && !box.active) {  // changed elsewhere (URL, API, reset, the strip)
    std::snprintf(box.buffer, sizeof box.buffer, "%s", current.c_str());
    box.synced_revision = revision;
    box.synced_text = current;
  }
  ImGui::SetNextItemWidth(-1);
  const bool edited = ImGui::InputText(label, box.buffer, sizeof box.buffer);
  box.active = ImGui::IsItemActive();
  return edited;
}

void error_line(const AppState& state, const char* key) {
  if (state.error.empty() || state.error_key != key) return;
  ImGui::PushStyleColor(ImGuiCol_Text, color(palette().warning));
  ImGui::TextWrapped("%s", state.error.c_str());
  ImGui::PopStyleColor();
  hint("The views still show the last valid sentence.");
}

// Where the loaded model computes and whether the views wait for an answer: "updating…" while the worker
// computes the learner's change (the views show the last complete answer), why the page computes where it does.
void model_run_line(const AppState& state) {
  const ModelRun& run = state.model_run;
  if (!real_model(state)) return;
  if (run.pending) {
    ImGui::PushStyleColor(ImGuiCol_Text, color(palette().warning));
    ImGui::TextWrapped("updating… the views show the last complete answer while the model's worker computes your change");
    ImGui::PopStyleColor();
    publish_item_rect("model_run:updating");
  }
  if (!run.error.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, color(palette().warning));
    ImGui::TextWrapped("%s", run.error.c_str());
    ImGui::PopStyleColor();
  } else if (!run.note.empty()) {
    hint(run.note.c_str());
  }
}

// The query-token combo (width set by the caller).
void token_picker(const AppState& state, AppInputs& next) {
  const auto& tokens = state.model.queries.tokens;
  char preview[160];
  std::snprintf(preview, sizeof preview, "%s  (row %d of %d)", tokens[state.inputs.token].text.c_str(),
                state.inputs.token + 1, static_cast<int>(tokens.size()));
  if (ImGui::BeginCombo("##token", preview, ImGuiComboFlags_HeightLarge)) {
    for (int i = 0; i < static_cast<int>(tokens.size()); ++i) {
      char item[160];
      std::snprintf(item, sizeof item, "%d  %s%s", i + 1, tokens[i].text.c_str(),
                    state.model.queries.unknown[i] ? "  (not in lexicon)" : "");
      if (ImGui::Selectable(item, i == state.inputs.token)) next.token = i;
    }
    ImGui::EndCombo();
  }
  publish_item_rect("token");
}

void export_buttons(const AppState& state) {
  ImGui::TextUnformatted("Export");
  if (ImGui::SmallButton("Weights CSV")) save_text_file("attention-weights.csv", "text/csv", weights_csv(state));
  publish_item_rect("export:csv");
  ImGui::SameLine();
  if (ImGui::SmallButton("Weights PNG") && !export_weights_png()) ImGui::OpenPopup("png-unavailable");
  publish_item_rect("export:png");
  if (state.inputs.advanced) {
    if (ImGui::SmallButton("State JSON"))
      save_text_file("attention-state.json", "application/json", state_to_json(state).dump(2));
    publish_item_rect("export:json");
    ImGui::SameLine();
  }
  if (ImGui::SmallButton("Copy link") && !copy_permalink()) ImGui::OpenPopup("link-unavailable");
  publish_item_rect("copy-link");
  if (ImGui::BeginPopup("png-unavailable")) {
    ImGui::TextUnformatted("PNG export works in the browser version.");
    ImGui::EndPopup();
  }
  if (ImGui::BeginPopup("link-unavailable")) {
    ImGui::TextUnformatted("Links work in the browser version (the address bar holds the state).");
    ImGui::EndPopup();
  }
}

// Which backend computes the large problems (the cost view's), and a one-line why. The sentence
// itself is tiny (T ≤ 128, d = 4): its numbers always come from the exact reference trace.
void backend_picker(const AppState& state, AppInputs& next) {
  ImGui::TextUnformatted("Large problems computed by");
  ImGui::SetNextItemWidth(-1);
  if (ImGui::BeginCombo("##backend", state.inputs.backend.c_str())) {
    std::vector<const char*> names = {"auto"};
    names.insert(names.end(), std::begin(kBackendNames), std::end(kBackendNames));
    for (const char* name : names)
      if (ImGui::Selectable(name, state.inputs.backend == name)) next.backend = name;
    ImGui::EndCombo();
  }
  publish_item_rect("backend");
  const BackendChoice live = live_backend(state);
  const GpuFacts gpu = gpu_facts();
  ImGui::Text("Live: %s", live.name.c_str());
  hint(live.reason.c_str());
  if (!gpu.available) {  // the short visible notice: no GPU path, the CPU computes
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_PlotHistogram]);
    ImGui::TextWrapped("GPU path off: %s.", gpu.unavailable_reason.c_str());
    ImGui::PopStyleColor();
  }
}


// [SECTION] Models: the picker, layer and head, loading

// "124.4 M", "1.2 k": a parameter count as a learner reads it.
std::string count_text(double n) {
  char text[32];
  if (n >= 1e9) std::snprintf(text, sizeof text, "%.1f B", n / 1e9);
  else if (n >= 1e6) std::snprintf(text, sizeof text, "%.1f M", n / 1e6);
  else if (n >= 1e3) std::snprintf(text, sizeof text, "%.1f k", n / 1e3);
  else std::snprintf(text, sizeof text, "%.0f", n);
  return text;
}

std::string megabytes(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", bytes / 1e6);
  return text;
}

std::string model_item_text(const LoadedModel& m) {
  const TransformerConfig& c = m.model->config;
  return m.name + "  (" + std::to_string(c.n_layer) + " × " + std::to_string(c.n_head) + " heads, " +
         count_text(static_cast<double>(m.model->parameter_count())) + " parameters)";
}

constexpr const char* kHandmadeTitle = "Hand-made (worked example)";

// The combo of every model; "Load a model…" opens the loading section (`show_loader`).
void model_combo(const AppState& state, AppInputs& next, bool& show_loader) {
  const LoadedModel* current = current_loaded_model(state);
  const std::string preview = current ? current->name : kHandmadeTitle;
  if (ImGui::BeginCombo("##model", preview.c_str(), ImGuiComboFlags_HeightLarge)) {
    if (ImGui::Selectable(kHandmadeTitle, !current)) {
      next.model = kHandmadeModel;
      next.layer = next.head = 0;
    }
    for (const LoadedModel& m : state.models)
      if (ImGui::Selectable(model_item_text(m).c_str(), current == &m)) {
        if (next.model != m.name) next.layer = next.head = 0;
        next.model = m.name;
      }
    for (const std::string& name : state.loading.on_request)
      if (!find_model(state, name) && ImGui::Selectable((name + "  (fetched when chosen)").c_str(), false))
        request_builtin_model(name);  // it becomes the current model once it arrives
    ImGui::Separator();
    if (ImGui::Selectable("Load a model…")) show_loader = true;
    ImGui::EndCombo();
  }
  publish_item_rect("model");
}

// Layer and head pickers side by side (each only where the model has more than one).
void layer_head_pickers(const AppState& state, AppInputs& next, float width, bool compact) {
  const LoadedModel* m = current_loaded_model(state);
  if (!m) return;
  const TransformerConfig& c = m->model->config;
  const float spacing = ImGui::GetStyle().ItemSpacing.x;
  const bool both = c.n_layer > 1 && c.n_head > 1;
  const float each = both ? (width - spacing) * 0.5f : width;
  auto picker = [&](const char* id, const char* word, const char* letter, int count, int current, int* target) {
    // The longest preview that fits beside the combo's arrow: "Layer 3 of 12", "L3 of 12", "L3".
    char preview[48];
    const float room = each - ImGui::GetFrameHeight() - ImGui::GetStyle().FramePadding.x * 2.0f;
    std::snprintf(preview, sizeof preview, "%s %d of %d", word, current + 1, count);
    if (compact || ImGui::CalcTextSize(preview).x > room) std::snprintf(preview, sizeof preview, "%s%d of %d", letter, current + 1, count);
    if (compact || ImGui::CalcTextSize(preview).x > room) std::snprintf(preview, sizeof preview, "%s%d", letter, current + 1);
    ImGui::SetNextItemWidth(each);
    if (ImGui::BeginCombo(id, preview, ImGuiComboFlags_HeightLarge)) {
      for (int i = 0; i < count; ++i) {
        char item[32];
        std::snprintf(item, sizeof item, "%s %d", word, i + 1);
        if (ImGui::Selectable(item, i == current)) *target = i;
      }
      ImGui::EndCombo();
    }
  };
  if (c.n_layer > 1) {
    picker("##layer", "Layer", "L", c.n_layer, state.inputs.layer, &next.layer);
    publish_item_rect("layer");
    if (c.n_head > 1) ImGui::SameLine(0, spacing);
  }
  if (c.n_head > 1) {
    picker("##head", "Head", "H", c.n_head, state.inputs.head, &next.head);
    publish_item_rect("head");
  }
}

void error_text(const std::string& text) {
  ImGui::PushStyleColor(ImGuiCol_Text, color(palette().warning));
  ImGui::TextWrapped("%s", text.c_str());
  ImGui::PopStyleColor();
}

// "124.4 MB", "1.23 GB": a download's size as a learner reads it.
std::string size_text(double bytes) {
  char text[32];
  if (bytes >= 1e9) std::snprintf(text, sizeof text, "%.2f GB", bytes / 1e9);
  else std::snprintf(text, sizeof text, "%s MB", megabytes(bytes).c_str());
  return text;
}

// "Load a model…": files of a model folder, or a Hugging Face repository (with an access token for
// gated ones); progress per file and in total, Cancel; the models the browser keeps; Unload.
void model_loader(const AppState& state, bool& show_loader, UiState::Controls::LoaderFields& fields) {
  const ModelLoadStatus& load = state.loading;
  ImGui::TextUnformatted("Load a model");
  ImGui::SameLine(ImGui::GetContentRegionAvail().x - ImGui::CalcTextSize("Close").x);
  if (ImGui::SmallButton("Close")) show_loader = false;
  publish_item_rect("load:close");
  hint("GPT-2, Llama, Mistral, Qwen 2 / 3 and Gemma 2 / 3 models. A model folder holds config.json, model.safetensors "
       "(or model.safetensors.index.json with its shards) and tokenizer.json (or vocab.json with merges.txt). "
       "Choose those files, or drop the folder anywhere on the page.");
  if (ImGui::Button("Choose files…", ImVec2(-1, 0))) request_model_files();
  publish_item_rect("load:files");

  ImGui::TextUnformatted("Or a Hugging Face repository");
  ImGui::SetNextItemWidth(-1);
  ImGui::InputTextWithHint("##repo", "owner/name, e.g. Qwen/Qwen2.5-0.5B", fields.repo, sizeof fields.repo);
  publish_item_rect("load:repo");
  const float font = ImGui::GetFontSize();
  ImGui::SetNextItemWidth(std::max(font * 4.0f, ImGui::GetContentRegionAvail().x - font * 6.0f));
  ImGui::InputTextWithHint("##revision", "revision", fields.revision, sizeof fields.revision);
  publish_item_rect("load:revision");
  ImGui::SameLine();
  const bool can_download = !load.active && fields.repo[0] != '\0';
  ImGui::BeginDisabled(!can_download);
  if (ImGui::Button("Download", ImVec2(-1, 0)))
    request_hub_model(fields.repo, fields.revision[0] ? fields.revision : "main", fields.token);
  ImGui::EndDisabled();
  publish_item_rect("load:hub");
  ImGui::SetNextItemWidth(-1);
  ImGui::InputTextWithHint("##token", "access token, for gated models (hf_…)", fields.token, sizeof fields.token,
                           ImGuiInputTextFlags_Password);
  publish_item_rect("load:token");
  hint("Files come straight from huggingface.co to this page; the size is shown before the weights download, and "
       "models larger than this page's 4 GB of memory are refused. Gated models (Llama, Gemma) need your own token "
       "from huggingface.co/settings/tokens after you accept the licence there; it stays in this tab's memory and "
       "goes to the hub only. Or download the files yourself and choose them above.");

  if (!load.offered_hub.empty() && !load.active) {
    const std::string size = load.offered_bytes >= 0 ? size_text(load.offered_bytes) : "size not known yet";
    const std::string offer = "This link offers " + load.offered_hub + " (" + size + ").";
    ImGui::TextWrapped("%s", offer.c_str());
    if (ImGui::Button("Load", ImVec2(-1, 0))) request_hub_model(load.offered_hub, "main", fields.token);
    publish_item_rect("load:offered");
  }
  if (load.active) {
    if (!load.label.empty()) ImGui::TextWrapped("%s", load.label.c_str());
    char overlay[96];
    float fraction = 0;
    if (load.bytes_total > 0) {
      fraction = static_cast<float>(std::clamp(load.bytes_done / load.bytes_total, 0.0, 1.0));
      std::snprintf(overlay, sizeof overlay, "%s / %s MB · %.0f%%", megabytes(load.bytes_done).c_str(),
                    megabytes(load.bytes_total).c_str(), static_cast<double>(fraction) * 100.0);
    } else {
      std::snprintf(overlay, sizeof overlay, "%s MB", megabytes(load.bytes_done).c_str());
    }
    ImGui::PushStyleColor(ImGuiCol_PlotHistogram, color_sequential(0.4f));  // white overlay text stays readable
    ImGui::ProgressBar(fraction, ImVec2(-1, 0), overlay);
    ImGui::PopStyleColor();
    publish_item_rect("load:progress");
    // A sharded model: the file arriving now, under the bar of all of them.
    if (!load.file.empty() && load.file_bytes_total > 0 && load.file_bytes_total < load.bytes_total)
      hint((load.file + ": " + megabytes(load.file_bytes_done) + " / " + megabytes(load.file_bytes_total) + " MB").c_str());
    if (ImGui::Button("Cancel", ImVec2(-1, 0))) cancel_model_load();
    publish_item_rect("load:cancel");
  }
  if (!load.error.empty()) error_text(load.error);

  if (!load.kept.empty()) {
    ImGui::TextUnformatted("Kept in this browser (loads without a download)");
    for (std::size_t i = 0; i < load.kept.size(); ++i) {
      const KeptModel& k = load.kept[i];
      ImGui::PushID(static_cast<int>(i));
      const std::string what = k.repo + (k.revision == "main" ? "" : " @" + k.revision) + " · " + size_text(k.bytes);
      ImGui::TextWrapped("%s", what.c_str());
      ImGui::BeginDisabled(load.active);
      if (ImGui::SmallButton("Load")) request_hub_model(k.repo, k.revision, fields.token);
      ImGui::EndDisabled();
      ImGui::SameLine();
      if (ImGui::SmallButton("Remove")) forget_kept_model(k.repo, k.revision);
      publish_item_rect(("load:forget:" + std::to_string(i)).c_str());
      ImGui::PopID();
    }
  }
  bool any_unloadable = false;
  for (const LoadedModel& m : state.models) any_unloadable |= m.name != kBuiltInTrainedModel;
  if (any_unloadable) {
    ImGui::TextUnformatted("Loaded (Unload gives their memory back)");
    for (std::size_t i = 0; i < state.models.size(); ++i) {
      const LoadedModel& m = state.models[i];
      if (m.name == kBuiltInTrainedModel) continue;
      ImGui::PushID(static_cast<int>(1000 + i));
      if (ImGui::SmallButton("Unload")) unload_model(m.name);
      publish_item_rect(("load:unload:" + std::to_string(i)).c_str());
      ImGui::SameLine();
      ImGui::TextWrapped("%s · %s", m.name.c_str(), size_text(static_cast<double>(m.model->weight_bytes())).c_str());
      ImGui::PopID();
    }
  }
}

// What a control that does not apply here says instead (dimmed, one line, indented).
void not_for_this_model(const char* why) {
  ImGui::Indent();
  hint(why);
  ImGui::Unindent();
}

// A switch that cannot be changed here: shown in the state it computes with, inactive, with the reason.
void fixed_switch(const char* label, const char* rect, bool shown, const char* why) {
  ImGui::BeginDisabled();
  ImGui::Checkbox(label, &shown);
  ImGui::EndDisabled();
  publish_item_rect(rect);
  not_for_this_model(why);
}

// Longer texts (a real model's pages of tokens) keep only the picker: a wall of chips reads worse.
constexpr int kMostWordChips = 40;

// The sentence as one chip per token, wrapping at the column's edge: a click (or Enter, with the
// keyboard's Tab/arrows) makes that token the query. The current query is filled with the query hue.
void word_chips(const AppState& state, AppInputs& next) {
  const auto& tokens = state.model.queries.tokens;
  if (tokens.size() > static_cast<std::size_t>(kMostWordChips)) return;
  const Palette& p = palette();
  const ImGuiStyle& style = ImGui::GetStyle();
  const float spacing = style.ItemSpacing.x * 0.5f;
  ImGui::PushStyleVar(ImGuiStyleVar_FramePadding, ImVec2(style.FramePadding.x * 0.7f, style.FramePadding.y * 0.5f));
  ImGui::PushStyleVar(ImGuiStyleVar_ItemSpacing, ImVec2(spacing, style.ItemSpacing.y * 0.6f));
  ImGui::PushStyleVar(ImGuiStyleVar_FrameBorderSize, std::max(1.0f, ImGui::GetFontSize() * 0.07f));
  for (int i = 0; i < static_cast<int>(tokens.size()); ++i) {
    const bool current = i == state.inputs.token;
    char label[160];
    std::snprintf(label, sizeof label, "%s##chip%d", tokens[static_cast<std::size_t>(i)].text.c_str(), i);
    const float width = ImGui::CalcTextSize(label, nullptr, true).x + ImGui::GetStyle().FramePadding.x * 2.0f;
    if (i > 0) same_line_if_fits(width, spacing);
    ImGui::PushStyleColor(ImGuiCol_Button, current ? color(p.query, 0.30f) : ImGui::GetColorU32(ImGuiCol_FrameBg));
    ImGui::PushStyleColor(ImGuiCol_ButtonHovered, color(p.query, current ? 0.40f : 0.18f));
    ImGui::PushStyleColor(ImGuiCol_ButtonActive, color(p.query, 0.45f));
    ImGui::PushStyleColor(ImGuiCol_Border, current ? color(p.query) : color(p.box_border, 0.7f));
    if (ImGui::Button(label)) next.token = i;
    ImGui::PopStyleColor(4);
    if (ImGui::IsItemHovered()) ImGui::SetMouseCursor(ImGuiMouseCursor_Hand);
    if (!current)  // the chip's own click does what it says
      explain_item(("Make “" + tokens[static_cast<std::size_t>(i)].text + "” the query").c_str(), false);
    publish_item_rect(("chip:" + std::to_string(i)).c_str());
  }
  ImGui::PopStyleVar(3);
}

}  // namespace

ControlTexts control_texts(const AppState& state) {
  ControlTexts t;
  const LoadedModel* m = current_loaded_model(state);
  if (m) {
    t.causal = m->model->config.causal
                   ? "Always on: this model writes left to right, so a token reads only itself and earlier ones."
                   : "Always off: this model is an encoder. It reads the whole text at once, so every token looks at "
                     "the words after it too (the cells right of the diagonal). A decoder such as GPT-2 would hide all "
                     "of those: each token could see only itself and the words before it.";
    const float own = m->model->config.score_scale;  // 1/√d_head, or Gemma's query_pre_attn_scalar^-½
    t.scale = own == 1.0f ? std::string("Off: this model was trained without it (its scores are not scaled).")
                          : "Off: the chosen head's scores are no longer divided by " + number_text(1.0f / own, 2) +
                                " (the model's own scale, applied before any cap), so only its weights come out "
                                "sharper; the Heads grid, its summaries and the next-token strip keep the model's own "
                                "run. Dropping ÷√d from a model trained with it is not training without it: the Train "
                                "view's experiment is.";
    t.temperature = "This head's scores are divided by it: < 1 sharpens its weights, > 1 flattens them. Only this "
                    "head: the Heads grid and the next-token strip keep the model's own run. (A chatbot's "
                    "\"temperature\" is another dial: it divides the next-token scores when sampling.)";
  } else {
    t.causal = "Each token may look only at itself and earlier tokens (as in GPT).";
    t.scale = "Off: the head's scores are not divided by √d = " + number_text(std::sqrt(static_cast<float>(
                  state.model.trace.key.cols())), 2) + ", in every view of this model. To see both side by side: "
              "Mistakes → Forget √d; what ÷√d does in training: the Train view's experiment.";
    t.temperature = "The scores are divided by it: < 1 sharpens the weights, > 1 flattens them. (A chatbot's "
                    "\"temperature\" is another dial: it divides the next-token scores when sampling.)";
  }
  return t;
}

nlohmann::json control_texts_json(const AppState& state) {
  const ControlTexts t = control_texts(state);
  return {{"causal", t.causal}, {"scale", t.scale}, {"temperature", t.temperature}};
}

void draw_phone_bar(const AppState& state, AppInputs& next, bool with_sentence, UiState::Controls& ui) {
  TextBox& sentence = ui.phone_sentence;  // what is typed, kept while it is invalid
  if (with_sentence) {
    if (sentence_box("##sentence", shown_inputs(state).sentence, state.revision, sentence)) next.sentence = sentence.buffer;
    publish_item_rect("sentence");
    error_line(state, "sentence");
    model_run_line(state);
  }
  const bool real = real_model(state);  // a decoder always masks: no switch to offer
  const ImGuiStyle& style = ImGui::GetStyle();
  const float arrows = (ImGui::GetFrameHeight() + style.ItemSpacing.x) * 2.0f;
  // (one more spacing of room: a label's glyphs may reach a pixel or two past their measured width)
  const float causal = real ? 0.0f : ImGui::GetFrameHeight() + style.ItemInnerSpacing.x + ImGui::CalcTextSize("Causal").x + style.ItemSpacing.x * 2.0f;
  ImGui::SetNextItemWidth(std::max(ImGui::GetFontSize() * 5.0f, ImGui::GetContentRegionAvail().x - arrows - causal));
  token_picker(state, next);
  const int T = static_cast<int>(state.model.queries.tokens.size());
  ImGui::SameLine();
  if (ImGui::ArrowButton("##prev", ImGuiDir_Left) && next.token > 0) --next.token;
  ImGui::SameLine();
  if (ImGui::ArrowButton("##next", ImGuiDir_Right) && next.token + 1 < T) ++next.token;
  if (!real) {
    ImGui::SameLine();
    ImGui::Checkbox("Causal", &next.causal);
    publish_item_rect("causal");
  }
}

void draw_compact_controls(const AppState& state, AppInputs& next) {
  const float font = ImGui::GetFontSize();
  const bool real = real_model(state);
  ImGui::SetNextItemWidth(std::min(font * (real ? 10.0f : 14.0f), ImGui::GetContentRegionAvail().x * (real ? 0.35f : 0.45f)));
  token_picker(state, next);
  if (real) {  // a decoder always masks: the layer and head pickers take the causal switch's place
    ImGui::SameLine();
    layer_head_pickers(state, next, std::min(font * 7.0f, ImGui::GetContentRegionAvail().x * 0.4f), true);
    ImGui::SameLine();
  } else {
    ImGui::SameLine();
    ImGui::Checkbox("Causal", &next.causal);
    publish_item_rect("causal");
    ImGui::SameLine();
  }
  ImGui::Checkbox("÷√d", &next.scale);
  publish_item_rect("scale");
  explain_item(control_texts(state).scale.c_str());
}

void draw_controls(const AppState& state, AppInputs& next, UiState::Controls& ui) {
  TextBox &sentence = ui.sentence, &kv_sentence = ui.kv_sentence;  // what is typed, kept while it is invalid
  bool& show_loader = ui.show_loader;  // the "Load a model…" section is open
  const bool real = real_model(state);
  const ModelLoadStatus& load = state.loading;
  // A download in progress, its failure or an offered repository keep the section open.
  const bool loader_open = show_loader || load.active || !load.error.empty() || !load.offered_hub.empty();

  ImGui::TextUnformatted("Model");
  ImGui::SetNextItemWidth(-1);
  model_combo(state, next, show_loader);
  if (!loader_open && ImGui::SmallButton("Load a model…")) show_loader = true;
  if (!loader_open) publish_item_rect("load:open");
  layer_head_pickers(state, next, ImGui::GetContentRegionAvail().x, false);
  error_line(state, "model");
  if (loader_open) {
    ImGui::Separator();
    model_loader(state, show_loader, ui.loader);
  }
  ImGui::Separator();

  // Derive, Break and Cost compute their own small problems: the sentence and the switches below
  // change nothing there, so they are shown inactive, with why.
  const View view = state.inputs.view;
  const bool own_problem = view == View::Derive || view == View::Break || view == View::Cost;
  if (own_problem) hint("This view has its own small problem: the sentence, token and switches below do not change it.");
  ImGui::BeginDisabled(own_problem);
  // Self-attention reads Q, K and V all from this sentence; only cross-attention splits them.
  ImGui::TextUnformatted(real ? "Text" : cross_shown(state) ? "Sentence (gives the queries)" : "Sentence (gives Q, K and V)");
  if (sentence_box("##sentence", shown_inputs(state).sentence, state.revision, sentence)) next.sentence = sentence.buffer;
  publish_item_rect("sentence");
  error_line(state, "sentence");
  model_run_line(state);
  word_chips(state, next);

  ImGui::TextUnformatted("Query token");
  ImGui::SetNextItemWidth(-1);
  token_picker(state, next);
  const auto& tokens = state.model.queries.tokens;
  if (ImGui::ArrowButton("##prev", ImGuiDir_Left) && next.token > 0) --next.token;
  ImGui::SameLine();
  if (ImGui::ArrowButton("##next", ImGuiDir_Right) && next.token + 1 < static_cast<int>(tokens.size())) ++next.token;
  ImGui::SameLine();
  hint("or the keyboard's [ and ] keys");
  if (real) {
    ImGui::Spacing();
    next_token_strip(state, next);
  }
  ImGui::Separator();
  const ControlTexts texts = control_texts(state);
  if (real) {  // a decoder always masks, an encoder never: shown inactive, with the reason
    fixed_switch("Causal mask", "causal", current_loaded_model(state)->model->config.causal, texts.causal.c_str());
  } else {
    ImGui::Checkbox("Causal mask", &next.causal);
    publish_item_rect("causal");
    explain_item(texts.causal.c_str());
  }
  const LoadedModel* loaded = current_loaded_model(state);
  if (loaded && loaded->model->config.score_scale == 1.0f) {  // shown off, inactive, with the reason
    fixed_switch("Divide by √d", "scale", false, texts.scale.c_str());
  } else if (state.inputs.mistake == Mistake::ForgetScale) {  // the mistake already leaves the division out
    fixed_switch("Divide by √d", "scale", false, "Off: the \"Forget √d\" mistake is on (Mistakes view), which compares with and without it.");
  } else {
    ImGui::Checkbox("Divide by √d", &next.scale);
    publish_item_rect("scale");
    explain_item(texts.scale.c_str());
  }
  ImGui::TextUnformatted("Temperature");
  ImGui::SetNextItemWidth(-1);
  ImGui::SliderFloat("##temperature", &next.temperature, kMinTemperature, kMaxTemperature, "%.2f", ImGuiSliderFlags_Logarithmic);
  hint(texts.temperature.c_str());

  ImGui::Separator();
  if (real) {
    fixed_switch("Cross-attention", "cross", false, "Not in this model: its heads read one text, their own.");
  } else {
    ImGui::Checkbox("Cross-attention", &next.cross);
    publish_item_rect("cross");
    explain_item("Queries come from the sentence above; keys and values from a second sentence.");
  }
  if (!real && (next.cross || state.inputs.cross)) {
    ImGui::TextUnformatted("Second sentence (keys, values)");
    if (sentence_box("##kv_sentence", state.inputs.kv_sentence, state.revision, kv_sentence))
      next.kv_sentence = kv_sentence.buffer;
    error_line(state, "kv_sentence");
  }
  ImGui::EndDisabled();

  ImGui::Separator();
  // The lesson's inputs only: the view, the model, the Prove-it ticks and the settings stay.
  if (ImGui::Button("Reset", ImVec2(-1, 0))) reset_lesson_inputs(next);
  publish_item_rect("reset");
  ImGui::Separator();
  export_buttons(state);
  ImGui::Checkbox("Light theme", &next.light_theme);
  ImGui::Checkbox("Advanced", &next.advanced);
  publish_item_rect("advanced");
  explain_item("Developer internals: which backend computes, the GPU, the state JSON.");
  if (state.inputs.advanced) {
    ImGui::Separator();
    backend_picker(state, next);
  }
  ImGui::Spacing();
  const auto& e = state.model.queries;
  int unknown = 0;
  for (bool u : e.unknown) unknown += u;
  ImGui::Text("T = %d tokens, d = %d", static_cast<int>(e.tokens.size()), static_cast<int>(state.model.trace.key.cols()));
  if (real) {
    hint("A trained model: its heads learned their patterns from text; nobody chose these numbers.");
    return;
  }
  if (unknown)
    hint("Words outside the small lexicon get a fixed pseudo-random vector: their attention means little.");
  hint("The model is hand-made, not trained: its numbers were chosen so you can read why each token looks where it does.");
  hint(toy_model_description());
}

}  // namespace attn::ui
