// attention_cli: the core on the command line (compute JSON, the Break experiment, a readable
// trace of the worked example, that example as Python code). Not the app: no window, stdout
// carries only the result.
// Bad input: exit status 2 and one line on stderr; nothing on stdout.
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "../api/code_export.h"
#include "../api/compute_json.h"
#include "../api/intervention_json.h"
#include "../api/model_json.h"
#include "../api/tokenizer_files.h"
#include "../api/train_files.h"
#include "../core/attention.h"
#include "../core/break_experiment.h"
#include "../core/model.h"
#include "../core/train.h"

namespace {

const char* const kUsage =
    "usage: attention_cli COMMAND [options]\n"
    "\n"
    "commands:\n"
    "  compute                      read one JSON request on stdin, write the result as JSON\n"
    "                               request: {\"Q\",\"K\",\"V\"} or {\"X\",\"Wq\",\"Wk\",\"Wv\"[,\"X_kv\"]},\n"
    "                               options \"causal\", \"scale\", \"temperature\", \"backend\"\n"
    "                               (\"scalar\" | \"eigen\" | \"simd\", default \"simd\")\n"
    "  break --d D --T T --seed S   the lesson's Break experiment: softmax saturation with and\n"
    "                               without the 1/sqrt(d) scaling (d <= 4096, T <= 1024)\n"
    "  explain [--sentence TEXT] [--token WORD] [--causal] [--no-scale] [--temperature X]\n"
    "                               a readable trace of the worked example (default: the\n"
    "                               lesson's sentence and the token \"it\")\n"
    "  code (--lang numpy|torch | --json-input) [--sentence TEXT] [--kv-sentence TEXT]\n"
    "       [--causal] [--no-scale] [--temperature X]\n"
    "                               the worked example as a runnable Python program (NumPy or\n"
    "                               PyTorch) with its matrices written out, as the app's Build\n"
    "                               view shows it; --kv-sentence makes it cross-attention;\n"
    "                               --json-input prints the same problem as a compute request\n"
    "  model --dir DIR (--text TEXT | --ids 1,2,3) [--top K] [--pad K]\n"
    "                               open a model folder (GPT-2, Llama, Mistral, Qwen 2 / 3,\n"
    "                               Gemma 2 / 3: config.json, model.safetensors or its index\n"
    "                               + shards, tokenizer.json or vocab.json + merges.txt) and\n"
    "                               print its shape, the tokens, the attention of every layer\n"
    "                               and head [layer][head][query][key] and the K (default 5)\n"
    "                               likeliest next tokens at every position; --ids reads the\n"
    "                               given token ids instead of tokenising TEXT; an encoder\n"
    "                               (BERT, DistilBERT, RoBERTa) prints masked: its predictions\n"
    "                               for each [MASK] / <mask> instead of next; --pad K appends K\n"
    "                               padding tokens hidden as keys (attention mask 0)\n"
    "  tokenize (--dir DIR | --vocab FILE --merges FILE | --tokenizer-json FILE) [--text TEXT]\n"
    "           [--add-special-tokens] [--batch]\n"
    "                               a real model's tokenizer (BPE: GPT-2, Llama, Qwen, Mistral, Gemma,\n"
    "                               RoBERTa; WordPiece: BERT, DistilBERT;\n"
    "                               or WordLevel); --add-special-tokens: with the template's specials;\n"
    "                               --batch: a JSON array of texts on stdin (strings, or\n"
    "                               {\"text\", \"add_special_tokens\"}), one result each\n"
    "                               on TEXT (default: stdin): {\"ids\": [...], \"tokens\": [...]},\n"
    "                               tokens as shown to a learner (\"\u00b7it\" for \" it\");\n"
    "                               DIR holds tokenizer.json, vocab.json + merges.txt, or a BERT's\n"
    "                               vocab.txt (+ tokenizer_config.json), read as the model loader does\n"
    "  train --seed S --steps N --out DIR [--no-scale] [--layers L --heads H --d-model D]\n"
    "        [--lr X] [--batch B] [--grad-clip X] [--weight-decay X] [--eval-every K]\n"
    "        [--until-accuracy A] [--all-tokens] [--init-out DIR0] [--recipe default|roles]\n"
    "                               train a small GPT-2 on the pronoun corpus (defaults: 1 layer,\n"
    "                               2 heads, d_model 32, lr 0.003, batch 16, the loss on the\n"
    "                               referent only; --all-tokens: on every next token); writes\n"
    "                               config.json, model.safetensors and tokenizer.json into DIR,\n"
    "                               progress on stderr, one JSON object on stdout; --until-accuracy\n"
    "                               stops once the held-out accuracy (checked every K steps,\n"
    "                               default 50) reaches A;\n"
    "                               --init-out saves the starting model and the first batch\n"
    "                               --recipe roles: two creatures, the adjective names the one\n"
    "                               that acts or is acted on (docs/training.md), attention only,\n"
    "                               2 layers x 1 head, d_model 32, batch 64, lr 0.001; its JSON adds\n"
    "                               follow_share and accuracy_last_layer_head_ablated\n"
    "  train --experiment scale --steps N [--seed S] [--eval-every K]\n"
    "                               the sqrt(d) experiment: the same seed trained with and without\n"
    "                               the division at d_head 256; for each arm the loss curve in ten\n"
    "                               windows and the step held-out accuracy first reached 90%\n"
    "                               (each held-out triple once, checked every K steps, default\n"
    "                               25), or null: not in N steps\n"
    "  help                         this text\n"
    "\n"
    "exit status: 0 ok, 2 bad input (one line on stderr)\n";

struct UsageError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// --name value pairs and --switches; anything unknown is an error.
std::map<std::string, std::string> parse_flags(const std::vector<std::string>& args,
                                               const std::vector<std::string>& with_value,
                                               const std::vector<std::string>& switches) {
  std::map<std::string, std::string> flags;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (std::find(switches.begin(), switches.end(), a) != switches.end()) {
      flags[a] = "1";
    } else if (std::find(with_value.begin(), with_value.end(), a) != with_value.end()) {
      if (i + 1 >= args.size()) throw UsageError(a + " needs a value");
      flags[a] = args[++i];
    } else {
      throw UsageError("unknown option '" + a + "' (see: attention_cli help)");
    }
  }
  return flags;
}

long long parse_integer(const std::string& text, const std::string& flag, long long lo, long long hi) {
  long long v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < lo || v > hi)
    throw UsageError(flag + " must be a whole number from " + std::to_string(lo) + " to " + std::to_string(hi) +
                     ", got '" + text + "'");
  return v;
}

int run_compute() {
  std::string input((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  std::cout << attn::compute_text(input) << "\n";
  return 0;
}

int run_break(const std::vector<std::string>& args) {
  const auto flags = parse_flags(args, {"--d", "--T", "--seed"}, {});
  for (const char* needed : {"--d", "--T"})
    if (!flags.count(needed)) throw UsageError(std::string("break needs ") + needed);
  const int d = static_cast<int>(parse_integer(flags.at("--d"), "--d", 1, attn::kMaxBreakD));
  const int T = static_cast<int>(parse_integer(flags.at("--T"), "--T", 1, attn::kMaxBreakT));
  const auto seed = flags.count("--seed") ? parse_integer(flags.at("--seed"), "--seed", 0, 1ll << 62) : 0;
  const attn::BreakResult r = attn::run_break_experiment(d, T, static_cast<std::uint64_t>(seed));
  const attn::BreakRatioRange range = attn::break_ratio_range(d, T, 0);  // seeds 0-7 whatever --seed is
  std::cout << attn::break_result_json(r, range).dump(2) << "\n";
  return 0;
}

std::string fixed(double v, int decimals = 3) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

// --causal, --no-scale and --temperature X, shared by explain and code.
attn::AttentionOptions options_from_flags(const std::map<std::string, std::string>& flags) {
  attn::AttentionOptions options;
  options.causal = flags.count("--causal") > 0;
  options.scale = flags.count("--no-scale") == 0;
  if (flags.count("--temperature")) {
    const std::string& t = flags.at("--temperature");
    float v = 0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec != std::errc() || end != t.data() + t.size()) throw UsageError("--temperature must be a number, got '" + t + "'");
    options.temperature = v;
  }
  return options;
}

int run_explain(const std::vector<std::string>& args) {
  const auto flags = parse_flags(args, {"--sentence", "--token", "--temperature"}, {"--causal", "--no-scale"});
  const std::string sentence = flags.count("--sentence") ? flags.at("--sentence") : attn::kLessonSentence;
  const attn::AttentionOptions options = options_from_flags(flags);
  const attn::EmbeddedSentence e = attn::embed_sentence(sentence);
  const attn::WorkedModel& m = attn::worked_model();
  const attn::AttentionTrace t = attn::attend_projected(e.x, e.x, m.wq, m.wk, m.wv, options);
  const int T = static_cast<int>(e.tokens.size());

  const std::string wanted = flags.count("--token") ? flags.at("--token") : "it";
  std::string wanted_lower = wanted;
  std::transform(wanted_lower.begin(), wanted_lower.end(), wanted_lower.begin(),
                 [](unsigned char c) { return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c); });
  int row = -1;
  for (int i = 0; i < T && row < 0; ++i)
    if (e.tokens[i].lower == wanted_lower) row = i;
  if (row < 0) {
    if (flags.count("--token")) throw UsageError("token '" + wanted + "' is not in the sentence");
    row = 0;
  }

  std::ostringstream out;
  out << "Sentence: " << sentence << "\n";
  out << "Tokens (T = " << T << "): ";
  for (int i = 0; i < T; ++i) out << (i ? " | " : "") << e.tokens[i].text << (e.unknown[i] ? "*" : "");
  out << "\n";
  if (std::find(e.unknown.begin(), e.unknown.end(), true) != e.unknown.end())
    out << "  * not in the lexicon: a fixed pseudo-random vector stands in for it\n";
  out << "Model: hand-made (not trained), d = " << attn::kHeadDim << ", score = q.k x " << fixed(t.score_factor, 4)
      << (options.scale ? " (1/sqrt(d)" : " (no sqrt(d) scaling") << ", temperature " << fixed(options.temperature, 2)
      << ")" << (options.causal ? ", causal mask on" : "") << "\n\n";

  out << "Query of '" << e.tokens[row].text << "': [";
  for (int c = 0; c < attn::kHeadDim; ++c)
    out << (c ? ", " : "") << attn::query_dim_names()[c] << " " << fixed(t.query(row, c), 2);
  out << "]\n\n";

  std::vector<int> order(T);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return t.weights(row, a) > t.weights(row, b); });
  out << "Keys ranked by weight     q.k     scaled   weight\n";
  for (int j : order) {
    const bool masked = !std::isfinite(t.masked_scores(row, j));
    std::string name = e.tokens[j].text + " (#" + std::to_string(j) + ")";
    name.resize(std::max<std::size_t>(name.size(), 22), ' ');
    out << "  " << name << " " << (masked ? "      -" : fixed(t.raw_scores(row, j), 2)) << "   "
        << (masked ? "masked" : fixed(t.scaled_scores(row, j), 3)) << "   " << fixed(t.weights(row, j), 3) << " "
        << std::string(static_cast<std::size_t>(t.weights(row, j) * 40.0f + 0.5f), '#') << "\n";
  }
  out << "  (weights sum to " << fixed(t.weights.row(row).sum(), 3) << ")\n\n";
  out << "Output of '" << e.tokens[row].text << "' = weights . V: [";
  for (int c = 0; c < attn::kHeadDim; ++c)
    out << (c ? ", " : "") << attn::value_dim_names()[c] << " " << fixed(t.output(row, c), 3);
  out << "]\n";
  std::cout << out.str();
  return 0;
}

int run_code(const std::vector<std::string>& args) {
  const auto flags = parse_flags(args, {"--lang", "--sentence", "--kv-sentence", "--temperature"},
                                 {"--causal", "--no-scale", "--json-input"});
  const bool json_input = flags.count("--json-input") > 0;
  if (json_input == (flags.count("--lang") > 0)) throw UsageError("code needs either --lang numpy|torch or --json-input");
  const std::string lang = json_input ? "" : flags.at("--lang");
  if (!json_input && lang != "numpy" && lang != "torch")
    throw UsageError("--lang must be numpy or torch, got '" + lang + "'");
  const attn::AttentionOptions options = options_from_flags(flags);
  attn::validate_options(options);
  // The same inputs the app builds: the worked example on the sentence(s).
  const bool cross = flags.count("--kv-sentence") > 0;
  const attn::EmbeddedSentence queries =
      attn::embed_sentence(flags.count("--sentence") ? flags.at("--sentence") : attn::kLessonSentence);
  const attn::EmbeddedSentence keys = cross ? attn::embed_sentence(flags.at("--kv-sentence")) : queries;
  const attn::CodeInput input = attn::worked_example_code_input(queries, keys, cross, options);
  if (json_input)
    std::cout << attn::compute_request(input).dump() << "\n";
  else
    std::cout << (lang == "numpy" ? attn::numpy_code(input) : attn::torch_code(input));
  return 0;
}

// "a,b,c" → {"a", "b", "c"} (at most `most` items: a longer list is refused by its first use).
std::vector<std::string> split_list(const std::string& list, std::size_t most = 4096) {
  std::vector<std::string> items;
  std::size_t at = 0;
  while (at <= list.size() && items.size() <= most) {
    const std::size_t comma = std::min(list.find(',', at), list.size());
    items.push_back(list.substr(at, comma - at));
    at = comma + 1;
  }
  return items;
}

// "L.H,L.H": heads, counted from 0 ("L.*" too where `all` allows it: head −1).
std::vector<attn::HeadRef> parse_heads(const std::string& list, const std::string& flag, bool all = false) {
  std::vector<attn::HeadRef> heads;
  for (const std::string& item : split_list(list)) {
    const std::size_t dot = item.find('.');
    if (dot == std::string::npos) throw UsageError(flag + ": '" + item + "' is not LAYER.HEAD (for example 0.3)");
    const int layer = static_cast<int>(parse_integer(item.substr(0, dot), flag + " layer", 0, attn::kMaxModelLayers));
    const std::string head = item.substr(dot + 1);
    heads.push_back({layer, all && head == "*" ? -1 : static_cast<int>(parse_integer(head, flag + " head", 0, attn::kMaxModelHeads))});
  }
  return heads;
}

int run_model(const std::vector<std::string>& args) {
  const auto flags = parse_flags(args,
                                 {"--dir", "--text", "--ids", "--top", "--ablate", "--ablate-kind", "--cut", "--patch-from",
                                  "--patch", "--patch-resid", "--target", "--against", "--at", "--sweep", "--pad"},
                                 {});
  if (!flags.count("--dir")) throw UsageError("model needs --dir");
  if (flags.count("--text") + flags.count("--ids") != 1) throw UsageError("model needs one of --text TEXT or --ids 1,2,3");
  const int top = flags.count("--top") ? static_cast<int>(parse_integer(flags.at("--top"), "--top", 1, 100)) : 5;
  const int pad = flags.count("--pad") ? static_cast<int>(parse_integer(flags.at("--pad"), "--pad", 0, attn::kMaxModelTokens)) : 0;
  std::vector<int> ids;
  if (flags.count("--ids"))
    for (const std::string& item : split_list(flags.at("--ids"), attn::kMaxModelTokens))
      ids.push_back(static_cast<int>(parse_integer(item, "--ids", 0, attn::kMaxVocab - 1)));
  // the intervention's flags, checked before the model is read
  attn::InterventionRequest request;
  request.top = top;
  bool intervening = false;
  if (flags.count("--ablate")) request.edit.ablate = parse_heads(flags.at("--ablate"), "--ablate"), intervening = true;
  if (flags.count("--ablate-kind")) {
    const std::string& kind = flags.at("--ablate-kind");
    if (kind != "zero" && kind != "mean") throw UsageError("--ablate-kind must be zero or mean, got '" + kind + "'");
    request.edit.ablate_kind = kind == "zero" ? attn::AblateKind::Zero : attn::AblateKind::Mean;
  }
  if (flags.count("--cut")) {
    intervening = true;
    for (const std::string& item : split_list(flags.at("--cut"))) {
      const std::size_t colon = item.find(':'), dash = item.find('-', colon == std::string::npos ? 0 : colon);
      if (colon == std::string::npos || dash == std::string::npos)
        throw UsageError("--cut: '" + item + "' is not LAYER.HEAD:QUERY-KEY (for example 2.5:7-3, or 2.*:7-3 for every head)");
      const attn::HeadRef head = parse_heads(item.substr(0, colon), "--cut", true).at(0);
      request.edit.cuts.push_back({head.layer, head.head,
                                   static_cast<int>(parse_integer(item.substr(colon + 1, dash - colon - 1), "--cut query", 0, attn::kMaxModelTokens)),
                                   static_cast<int>(parse_integer(item.substr(dash + 1), "--cut key", 0, attn::kMaxModelTokens))});
    }
  }
  if (flags.count("--patch")) request.patch_heads = parse_heads(flags.at("--patch"), "--patch"), intervening = true;
  if (flags.count("--patch-resid")) {
    intervening = true;
    for (const std::string& item : split_list(flags.at("--patch-resid"))) {
      const std::size_t sign = item.find('@');
      if (sign == std::string::npos) throw UsageError("--patch-resid: '" + item + "' is not LAYER@POSITION (for example 3@5)");
      request.patch_resid.emplace_back(static_cast<int>(parse_integer(item.substr(0, sign), "--patch-resid layer", 0, attn::kMaxModelLayers)),
                                       static_cast<int>(parse_integer(item.substr(sign + 1), "--patch-resid position", 0, attn::kMaxModelTokens)));
    }
  }
  if (flags.count("--sweep")) {
    const std::string& sweep = flags.at("--sweep");
    if (sweep != "heads" && sweep != "positions") throw UsageError("--sweep must be heads or positions, got '" + sweep + "'");
    request.sweep = sweep == "heads" ? attn::SweepKind::Heads : attn::SweepKind::Positions;
    intervening = true;
  }
  if (flags.count("--at")) request.at = static_cast<int>(parse_integer(flags.at("--at"), "--at", 0, attn::kMaxModelTokens)), intervening = true;
  intervening = intervening || flags.count("--patch-from") || flags.count("--target") || flags.count("--against");
  if ((request.patch_heads.size() || request.patch_resid.size()) && !flags.count("--patch-from"))
    throw UsageError("--patch and --patch-resid copy from another text: give it with --patch-from TEXT");

  const attn::LoadedModel model = attn::load_model_dir(flags.at("--dir"));
  for (int id : ids)
    if (id >= model.model->config.vocab_size)
      throw UsageError("--ids: token id " + std::to_string(id) + " is outside the vocabulary (0 to " +
                       std::to_string(model.model->config.vocab_size - 1) + ")");
  nlohmann::json result;
  if (!intervening) {
    result = flags.count("--ids") ? attn::model_trace_json(model, ids, top, pad) : attn::model_trace_json(model, flags.at("--text"), top, pad);
  } else {  // every family's interventions: intervention_json (an encoder's without attribution, which says why)
    request.ids = flags.count("--ids") ? ids : attn::model_text_ids(model, flags.at("--text"), "--text");
    request.padding = pad;
    if (flags.count("--patch-from")) request.source_ids = attn::model_text_ids(model, flags.at("--patch-from"), "--patch-from");
    if (flags.count("--target")) request.target = attn::token_from_spec(model, flags.at("--target"), "--target");
    if (flags.count("--against")) request.against = attn::token_from_spec(model, flags.at("--against"), "--against");
    result = attn::intervention_json(model, request);
  }
  // Tokens may be pieces of a character: written as U+FFFD rather than refused.
  std::cout << result.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  return 0;
}

// tokenize: the model tokenizer from Hugging Face's files, on --text or stdin.
int run_tokenize(const std::vector<std::string>& args) {
  const auto flags =
      parse_flags(args, {"--dir", "--vocab", "--merges", "--tokenizer-json", "--text"}, {"--add-special-tokens", "--batch"});
  const auto read = [](const std::string& path) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    if (ec) throw UsageError(path + ": cannot read (" + ec.message() + ")");
    if (size > attn::kMaxTokenizerFileBytes)
      throw UsageError(path + ": " + std::to_string(size) + " bytes is over the limit of " +
                       std::to_string(attn::kMaxTokenizerFileBytes) + " bytes for a tokenizer file");
    std::ifstream in(path, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) throw UsageError(path + ": cannot read");
    return bytes;
  };
  const int sources = static_cast<int>(flags.count("--dir")) + static_cast<int>(flags.count("--tokenizer-json")) +
                      static_cast<int>(flags.count("--vocab") || flags.count("--merges"));
  if (sources != 1) throw UsageError("tokenize needs one of --dir DIR, --vocab FILE --merges FILE, --tokenizer-json FILE");
  std::string json_path, vocab_path, merges_path, vocab_txt_path, config_path;
  if (flags.count("--dir")) {  // as the loader picks: tokenizer.json, vocab.json + merges.txt, or BERT's vocab.txt
    const std::filesystem::path dir = flags.at("--dir");
    if (std::filesystem::exists(dir / "tokenizer.json")) {
      json_path = (dir / "tokenizer.json").string();
    } else if (!std::filesystem::exists(dir / "vocab.json") && !std::filesystem::exists(dir / "merges.txt") &&
               std::filesystem::exists(dir / "vocab.txt")) {
      vocab_txt_path = (dir / "vocab.txt").string();
      if (std::filesystem::exists(dir / "tokenizer_config.json")) config_path = (dir / "tokenizer_config.json").string();
    } else {
      vocab_path = (dir / "vocab.json").string(), merges_path = (dir / "merges.txt").string();
    }
  } else if (flags.count("--tokenizer-json")) {
    json_path = flags.at("--tokenizer-json");
  } else {
    if (!flags.count("--vocab") || !flags.count("--merges")) throw UsageError("--vocab and --merges go together");
    vocab_path = flags.at("--vocab"), merges_path = flags.at("--merges");
  }
  const attn::TextTokenizer tokenizer =
      !json_path.empty()      ? attn::tokenizer_from_json(read(json_path), json_path)
      : !vocab_txt_path.empty() ? attn::tokenizer_from_vocab_txt(read(vocab_txt_path), config_path.empty() ? "" : read(config_path),
                                                                 vocab_txt_path, config_path.empty() ? "tokenizer_config.json" : config_path)
                              : attn::tokenizer_from_vocab_merges(read(vocab_path), read(merges_path), vocab_path, merges_path);
  const bool add_special = flags.count("--add-special-tokens") > 0;
  const auto result = [&](const std::string& text, bool with_special, bool with_vocab_tokens) {
    const std::vector<int> ids = tokenizer.encode(text, with_special);
    nlohmann::json tokens = nlohmann::json::array(), spelled = nlohmann::json::array();
    for (int id : ids) {
      tokens.push_back(tokenizer.display(id));
      if (with_vocab_tokens) spelled.push_back(tokenizer.vocab_token(id));
    }
    nlohmann::json out{{"ids", ids}, {"tokens", tokens}};
    if (with_vocab_tokens) out["vocab_tokens"] = spelled;
    return out;
  };
  // --batch: stdin is a JSON array of texts, each a string or {"text": ..., "add_special_tokens": bool};
  // stdout one result per text, with the vocabulary's spelling of each token (the file is loaded once)
  if (flags.count("--batch")) {
    if (flags.count("--text")) throw UsageError("--batch reads its texts from stdin, not --text");
    std::string input((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    const nlohmann::json texts = nlohmann::json::parse(input, nullptr, false);
    const char* usage = "--batch needs a JSON array of strings or {\"text\": string, \"add_special_tokens\": bool} on stdin";
    if (!texts.is_array()) throw UsageError(usage);
    nlohmann::json results = nlohmann::json::array();
    for (const auto& t : texts) {
      if (t.is_string()) {
        results.push_back(result(t.get<std::string>(), add_special, true));
        continue;
      }
      if (!t.is_object() || !t.contains("text") || !t["text"].is_string()) throw UsageError(usage);
      const auto special = t.find("add_special_tokens");
      if (special != t.end() && !special->is_boolean()) throw UsageError(usage);
      results.push_back(result(t["text"].get<std::string>(), special != t.end() ? special->get<bool>() : add_special, true));
    }
    std::cout << results.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return 0;
  }
  std::string text = flags.count("--text") ? flags.at("--text") : std::string();
  if (!flags.count("--text")) {  // stdin, read no further than one byte past the limit encode() refuses
    text.resize(attn::kMaxModelTextBytes + 1);
    std::cin.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<std::size_t>(std::cin.gcount()));
  }
  std::cout << result(text, add_special, false).dump() << "\n";
  return 0;
}


// train --experiment scale: both arms of scale_experiment_settings from one seed, one after the other.
int run_scale_experiment(const std::map<std::string, std::string>& flags) {
  if (flags.at("--experiment") != "scale") throw UsageError("--experiment must be 'scale', got '" + flags.at("--experiment") + "'");
  for (const auto& [flag, value] : flags)
    if (flag != "--experiment" && flag != "--steps" && flag != "--seed" && flag != "--eval-every")
      throw UsageError("train --experiment takes --steps, --seed and --eval-every only, not " + flag);
  if (!flags.count("--steps")) throw UsageError("train --experiment needs --steps");
  const int steps = static_cast<int>(parse_integer(flags.at("--steps"), "--steps", 10, 1000000));
  const std::uint64_t seed = flags.count("--seed") ? static_cast<std::uint64_t>(parse_integer(flags.at("--seed"), "--seed", 0, 1LL << 53)) : 1;
  const int eval_every = flags.count("--eval-every") ? static_cast<int>(parse_integer(flags.at("--eval-every"), "--eval-every", 1, steps))
                                                     : attn::kExperimentEvalEvery;
  constexpr int kWindows = 10;
  nlohmann::json arms = nlohmann::json::array();
  for (const bool scale : {true, false}) {
    attn::TrainSettings s = attn::scale_experiment_settings(scale);
    s.seed = seed;
    attn::Trainer trainer;
    trainer.init(s);
    const std::vector<std::size_t> checked = attn::heldout_one_per_triple(trainer.corpus());
    const char* arm = scale ? "scores / sqrt(d)" : "raw scores";
    const auto start = std::chrono::steady_clock::now();
    std::vector<double> window_sum(kWindows, 0.0);
    std::vector<int> window_count(kWindows, 0);
    nlohmann::json reached = nullptr;
    double accuracy = 0;
    for (int step = 1; step <= steps; ++step) {
      const float loss = trainer.step();
      const int w = static_cast<int>((static_cast<long long>(step - 1) * kWindows) / steps);
      window_sum[w] += loss, ++window_count[w];
      if (step % eval_every == 0 || step == steps) {
        accuracy = trainer.heldout_accuracy(checked);
        std::cerr << arm << ": step " << step << "  loss " << loss << "  held-out accuracy " << accuracy << "\n";
        if (reached.is_null() && accuracy >= attn::kExperimentBar) reached = step;
      }
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    nlohmann::json curve = nlohmann::json::array();
    for (int w = 0; w < kWindows; ++w) curve.push_back(window_count[w] ? window_sum[w] / window_count[w] : 0.0);
    std::cerr << arm << ": " << (reached.is_null() ? "did not reach 90% held-out accuracy in " + std::to_string(steps) + " steps"
                                                   : "90% held-out accuracy at step " + std::to_string(reached.get<int>()))
              << "\n";
    arms.push_back({{"scale", scale}, {"layers", s.n_layer}, {"heads", s.n_head}, {"d_model", s.n_embd},
                    {"head_dim", s.n_embd / s.n_head}, {"lr", s.lr}, {"seconds", seconds}, {"loss_windows", curve},
                    {"final_accuracy", accuracy}, {"reached_90_at", reached}, {"heldout_sentences", checked.size()}});
  }
  std::cout << nlohmann::json{{"experiment", "scale"}, {"seed", seed}, {"steps", steps}, {"eval_every", eval_every},
                              {"arms", arms}}.dump()
            << "\n";
  return 0;
}

// train: the Train experiment's trainer on the pronoun corpus, the model saved as a folder.
int run_train(const std::vector<std::string>& args) {
  const auto flags = parse_flags(args,
                                 {"--seed", "--steps", "--out", "--layers", "--heads", "--d-model", "--lr", "--batch", "--grad-clip",
                                  "--weight-decay", "--eval-every", "--until-accuracy", "--init-out", "--experiment", "--recipe"},
                                 {"--no-scale", "--all-tokens"});
  if (flags.count("--experiment")) return run_scale_experiment(flags);
  for (const char* needed : {"--seed", "--steps", "--out"})
    if (!flags.count(needed)) throw UsageError(std::string("train needs ") + needed);
  const auto number = [&](const char* flag, float fallback) {
    if (!flags.count(flag)) return fallback;
    const std::string& text = flags.at(flag);
    char* end = nullptr;
    const float v = std::strtof(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size()) throw UsageError(std::string(flag) + " must be a number, got '" + text + "'");
    return v;
  };
  const auto integer = [&](const char* flag, long long lo, long long hi, long long fallback) {
    return flags.count(flag) ? parse_integer(flags.at(flag), flag, lo, hi) : fallback;
  };
  // --recipe roles: the roles corpus, attention only, its shape, batch and lr (roles_recipe_settings);
  // the flags below still override its numbers
  const std::string recipe = flags.count("--recipe") ? flags.at("--recipe") : "default";
  if (recipe != "default" && recipe != "roles") throw UsageError("--recipe must be default or roles, got '" + recipe + "'");
  attn::TrainSettings s = recipe == "roles" ? attn::roles_recipe_settings() : attn::TrainSettings{};
  s.seed = static_cast<std::uint64_t>(integer("--seed", 0, 1LL << 53, 0));
  const int steps = static_cast<int>(integer("--steps", 1, 1000000, 0));
  // 0 and negatives go through to validate_train_settings, which names the setting
  s.n_layer = static_cast<int>(integer("--layers", -1000, 1000, s.n_layer));
  s.n_head = static_cast<int>(integer("--heads", -1000, 1000, s.n_head));
  s.n_embd = static_cast<int>(integer("--d-model", -100000, 100000, s.n_embd));
  s.batch = static_cast<int>(integer("--batch", -1000, 100000, s.batch));
  s.lr = number("--lr", s.lr), s.grad_clip = number("--grad-clip", s.grad_clip);
  s.weight_decay = number("--weight-decay", s.weight_decay);
  s.scale = !flags.count("--no-scale");
  s.answer_only = !flags.count("--all-tokens");
  const int eval_every = static_cast<int>(integer("--eval-every", 1, 1000000, 50));
  const float until = number("--until-accuracy", 2.0f);
  attn::Trainer trainer;
  trainer.init(s);
  if (flags.count("--init-out")) {  // the starting point and the first batch, for the PyTorch comparison
    attn::save_trained_model(trainer.model(), trainer.corpus(), flags.at("--init-out"));
  }
  const auto start = std::chrono::steady_clock::now();
  float loss = 0;
  int reached = -1;
  nlohmann::json first_batch;
  for (int step = 1; step <= steps; ++step) {
    loss = trainer.step();
    if (step == 1) first_batch = trainer.last_batch();
    if (step % eval_every == 0 || step == steps) {
      const double acc = trainer.heldout_accuracy();
      std::cerr << "step " << step << "  loss " << loss << "  held-out accuracy " << acc << "\n";
      if (acc >= until) {
        reached = step;
        break;
      }
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const attn::TrainEvaluation e = trainer.evaluate();
  attn::save_trained_model(trainer.model(), trainer.corpus(), flags.at("--out"));
  if (flags.count("--init-out")) {
    std::ofstream out(std::filesystem::path(flags.at("--init-out")) / "batch.json");
    out << nlohmann::json{{"batch", first_batch}, {"lr", s.lr}, {"weight_decay", s.weight_decay}, {"beta1", s.beta1},
                          {"beta2", s.beta2}, {"eps", s.adam_eps}, {"grad_clip", s.grad_clip},
                          {"answer_only", s.answer_only}}
               .dump()
        << "\n";
  }
  nlohmann::json result = {{"steps", trainer.steps_done()}, {"seconds", seconds}, {"final_loss", loss},
                           {"heldout_accuracy", e.accuracy}, {"twin_accuracy", e.twin_accuracy},
                           {"best_head_share", e.head_share}, {"best_head", e.best_head},
                           {"best_head_share_per_layer", e.layer_head_share}, {"any_head_share", e.any_head_share},
                           {"any_head_share_per_layer", e.layer_any_head_share}, {"heldout_sentences", e.sentences},
                           {"scale", s.scale}, {"head_dim", s.n_embd / s.n_head}};
  if (until <= 1) result["reached_accuracy_at"] = reached < 0 ? nlohmann::json(nullptr) : nlohmann::json(reached);
  result["recipe"] = recipe, result["corpus"] = attn::corpus_kind_name(s.corpus), result["attention_only"] = s.attention_only;
  result["twin_pairs"] = e.twin_pairs, result["follow_share"] = e.follow_share, result["follow_head"] = e.follow_head;
  result["noun_weight"] = e.noun_weight;
  if (recipe == "roles") {  // the ablation check: held-out accuracy with each last-layer head zeroed
    const attn::Transformer model = trainer.model();
    std::vector<double> ablated;
    for (int h = 0; h < s.n_head; ++h) ablated.push_back(attn::ablated_accuracy(model, trainer.corpus(), {{s.n_layer - 1, h}}));
    result["accuracy_by_inference"] = attn::ablated_accuracy(model, trainer.corpus(), {});
    result["accuracy_last_layer_head_ablated"] = ablated;
  }
  std::cout << result.dump() << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "help" || args[0] == "--help" || args[0] == "-h") {
    std::cout << kUsage;
    return args.empty() ? 2 : 0;
  }
  const std::string command = args[0];
  args.erase(args.begin());
  try {
    if (command == "compute") {
      if (!args.empty()) throw UsageError("compute takes no options (the request is JSON on stdin)");
      return run_compute();
    }
    if (command == "break") return run_break(args);
    if (command == "explain") return run_explain(args);
    if (command == "code") return run_code(args);
    if (command == "model") return run_model(args);
    if (command == "tokenize") return run_tokenize(args);
    if (command == "train") return run_train(args);
    throw UsageError("unknown command '" + command + "' (see: attention_cli help)");
  } catch (const std::exception& e) {  // bad input of any kind: one line, exit 2
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
}
