// Reads Hugging Face's tokenizer files (tokenizer.json, vocab.json + merges.txt) into a TextTokenizer,
// checking everything a hostile file could get wrong. Not the tokenizer itself (src/core/bpe.cpp).
#include "tokenizer_files.h"

#include <cstdint>
#include <stdexcept>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace attn {
namespace {

using nlohmann::json;

[[noreturn]] void refuse(const std::string& file, const std::string& what) {
  throw std::invalid_argument(file + ": " + what);
}

void check_size(const std::string& text, const std::string& file) {
  if (text.size() > kMaxTokenizerFileBytes)
    refuse(file, std::to_string(text.size()) + " bytes is over the limit of " + std::to_string(kMaxTokenizerFileBytes) +
                     " bytes for a tokenizer file");
}

json parse_json(const std::string& text, const std::string& file) {
  check_size(text, file);
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    // nlohmann's message names the byte; keep it, drop its "[json.exception...]" prefix
    std::string what = e.what();
    const std::size_t cut = what.find("] ");
    refuse(file, "not valid JSON (" + (cut == std::string::npos ? what : what.substr(cut + 2)) + ")");
  }
}

std::string type_name(const json& j) { return j.type_name(); }

// {token: id} with ids exactly 0..n-1 → vocab[id] = token.
std::vector<std::string> vocab_from_object(const json& object, const std::string& file, const std::string& where) {
  if (!object.is_object()) refuse(file, where + " must be an object of token: id, got " + type_name(object));
  if (object.empty()) refuse(file, where + " is empty");
  const std::size_t n = object.size();
  std::vector<std::string> vocab(n);
  std::vector<bool> seen(n, false);
  for (const auto& [token, value] : object.items()) {
    if (!value.is_number_integer())
      refuse(file, where + ": the id of '" + printable_excerpt(token) + "' must be a whole number, got " + type_name(value));
    const std::int64_t id = value.get<std::int64_t>();
    if (id < 0 || static_cast<std::uint64_t>(id) >= n)
      refuse(file, where + ": the id " + std::to_string(id) + " of '" + printable_excerpt(token) + "' is outside 0.." +
                       std::to_string(n - 1) + " (ids must be exactly 0 to the number of tokens - 1)");
    if (seen[static_cast<std::size_t>(id)])
      refuse(file, where + ": the id " + std::to_string(id) + " is given to both '" +
                       printable_excerpt(vocab[static_cast<std::size_t>(id)]) + "' and '" + printable_excerpt(token) + "'");
    seen[static_cast<std::size_t>(id)] = true;
    vocab[static_cast<std::size_t>(id)] = token;
  }
  return vocab;  // n tokens, n distinct ids in 0..n-1: every id is present
}

// The core's own checks (empty tokens, invalid UTF-8, merges outside the vocabulary) name no file.
template <typename Build>
TextTokenizer build_or_refuse(const std::string& file, Build build) {
  try {
    return build();
  } catch (const std::invalid_argument& e) {
    refuse(file, e.what());
  }
}

// A merge's parts and result must be tokens; checked here so the message can give the line.
void check_merge(const std::unordered_map<std::string, int>& ids, const std::pair<std::string, std::string>& merge,
                 const std::string& where) {
  for (const std::string* part : {&merge.first, &merge.second})
    if (!ids.count(*part)) throw std::invalid_argument(where + ": '" + printable_excerpt(*part) + "' is not in the vocabulary");
  if (!ids.count(merge.first + merge.second))
    throw std::invalid_argument(where + ": the result '" + printable_excerpt(merge.first + merge.second) +
                                "' is not in the vocabulary");
}

std::unordered_map<std::string, int> index(const std::vector<std::string>& vocab) {
  std::unordered_map<std::string, int> ids;
  ids.reserve(vocab.size());
  for (std::size_t i = 0; i < vocab.size(); ++i) ids.emplace(vocab[i], static_cast<int>(i));
  return ids;
}

// GPT-2's pre-tokenizer, directly or as one step of a Sequence; anything else is refused by name.
void check_byte_level_pre_tokenizer(const json& root, const std::string& file) {
  const auto it = root.find("pre_tokenizer");
  if (it == root.end() || it->is_null())
    refuse(file, "model type BPE needs the ByteLevel pre_tokenizer (GPT-2's), but there is none");
  const auto type_of = [&](const json& step) -> std::string {
    if (!step.is_object() || !step.contains("type") || !step["type"].is_string())
      refuse(file, "a pre_tokenizer without a \"type\" string");
    return step["type"].get<std::string>();
  };
  std::vector<const json*> steps;
  if (type_of(*it) == "Sequence") {
    const auto list = it->find("pretokenizers");
    if (list == it->end() || !list->is_array()) refuse(file, "pre_tokenizer Sequence has no \"pretokenizers\" list");
    for (const json& step : *list) steps.push_back(&step);
  } else {
    steps.push_back(&*it);
  }
  const json* byte_level = nullptr;
  for (const json* step : steps) {
    const std::string type = type_of(*step);
    if (type != "ByteLevel")
      refuse(file, "pre_tokenizer '" + printable_excerpt(type) + "' is not supported (only GPT-2's ByteLevel)");
    byte_level = step;
  }
  if (!byte_level) refuse(file, "model type BPE needs the ByteLevel pre_tokenizer (GPT-2's), but the Sequence is empty");
  const auto flag = [&](const char* name, bool fallback) {
    const auto f = byte_level->find(name);
    if (f == byte_level->end() || f->is_null()) return fallback;
    if (!f->is_boolean()) refuse(file, std::string("ByteLevel's ") + name + " must be true or false");
    return f->get<bool>();
  };
  if (flag("add_prefix_space", false)) refuse(file, "ByteLevel with add_prefix_space true is not supported (GPT-2 has false)");
  if (!flag("use_regex", true)) refuse(file, "ByteLevel with use_regex false is not supported (GPT-2 splits with its regex)");
}

}  // namespace

TextTokenizer tokenizer_from_vocab_merges(const std::string& vocab_json, const std::string& merges_txt,
                                          const std::string& vocab_name, const std::string& merges_name) {
  std::vector<std::string> vocab = vocab_from_object(parse_json(vocab_json, vocab_name), vocab_name, "the vocabulary");
  const auto ids = index(vocab);
  check_size(merges_txt, merges_name);
  std::vector<std::pair<std::string, std::string>> merges;
  std::size_t line_no = 0;
  for (std::size_t pos = 0; pos < merges_txt.size();) {
    std::size_t end = merges_txt.find('\n', pos);
    if (end == std::string::npos) end = merges_txt.size();
    std::string line = merges_txt.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line_no == 1 && line.rfind("#version", 0) == 0) continue;
    const std::size_t space = line.find(' ');
    if (space == std::string::npos || space == 0 || space + 1 == line.size() || line.find(' ', space + 1) != std::string::npos)
      refuse(merges_name, "line " + std::to_string(line_no) + ": expected two tokens separated by one space, got '" +
                              printable_excerpt(line) + "'");
    merges.emplace_back(line.substr(0, space), line.substr(space + 1));
    try {
      check_merge(ids, merges.back(), "line " + std::to_string(line_no));
    } catch (const std::invalid_argument& e) {
      refuse(merges_name, e.what());
    }
  }
  return build_or_refuse(vocab_name, [&] { return TextTokenizer::byte_level_bpe(std::move(vocab), std::move(merges)); });
}

TextTokenizer tokenizer_from_json(const std::string& text, const std::string& file) {
  const json root = parse_json(text, file);
  if (!root.is_object()) refuse(file, "expected a JSON object, got " + type_name(root));
  const auto model_it = root.find("model");
  if (model_it == root.end() || !model_it->is_object()) refuse(file, "no \"model\" object");
  const json& model = *model_it;
  const auto type_it = model.find("type");
  if (type_it == model.end() || !type_it->is_string()) refuse(file, "the model has no \"type\" string");
  const std::string type = type_it->get<std::string>();
  if (type != "BPE" && type != "WordLevel")
    refuse(file, "model type '" + printable_excerpt(type) + "' is not supported (only BPE and WordLevel)");
  // normalizer: none (GPT-2), or Lowercase for a WordLevel model (a trained model's tokenizer.json)
  bool lowercase = false;
  const auto normalizer = root.find("normalizer");
  if (normalizer != root.end() && !normalizer->is_null()) {
    const std::string name = normalizer->is_object() && normalizer->contains("type") && (*normalizer)["type"].is_string()
                                 ? (*normalizer)["type"].get<std::string>()
                                 : std::string("?");
    if (name != "Lowercase" || type != "WordLevel")
      refuse(file, "normalizer '" + printable_excerpt(name) +
                       "' is not supported (GPT-2 has none; a WordLevel model may have Lowercase)");
    lowercase = true;
  }
  const auto vocab_it = model.find("vocab");
  if (vocab_it == model.end()) refuse(file, "the model has no \"vocab\"");
  std::vector<std::string> vocab = vocab_from_object(*vocab_it, file, "model.vocab");
  const auto ids = index(vocab);

  // added_tokens (e.g. <|endoftext|>): must be tokens of the vocabulary under the same id. Their text
  // in the input is encoded like any other text (as gpt-3-encoder does).
  const auto added = root.find("added_tokens");
  if (added != root.end() && !added->is_null()) {
    if (!added->is_array()) refuse(file, "added_tokens must be a list");
    for (const json& token : *added) {
      if (!token.is_object() || !token.contains("id") || !token["id"].is_number_integer() || !token.contains("content") ||
          !token["content"].is_string())
        refuse(file, "each of added_tokens needs a whole-number \"id\" and a \"content\" string");
      const std::int64_t id = token["id"].get<std::int64_t>();
      const std::string content = token["content"].get<std::string>();
      if (id < 0 || static_cast<std::uint64_t>(id) >= vocab.size())
        refuse(file, "added token '" + printable_excerpt(content) + "' has the id " + std::to_string(id) +
                         ", outside the vocabulary (0.." + std::to_string(vocab.size() - 1) + ")");
      if (vocab[static_cast<std::size_t>(id)] != content)
        refuse(file, "added token " + std::to_string(id) + " is '" + printable_excerpt(content) + "' but the vocabulary has '" +
                         printable_excerpt(vocab[static_cast<std::size_t>(id)]) + "' there");
    }
  }

  if (type == "WordLevel") {
    const auto unk = model.find("unk_token");
    if (unk == model.end() || !unk->is_string()) refuse(file, "the WordLevel model has no \"unk_token\" string");
    const auto unk_id = ids.find(unk->get<std::string>());
    if (unk_id == ids.end())
      refuse(file, "the unk_token '" + printable_excerpt(unk->get<std::string>()) + "' is not in the vocabulary");
    return build_or_refuse(file, [&] { return TextTokenizer::word_level(std::move(vocab), unk_id->second, lowercase); });
  }

  check_byte_level_pre_tokenizer(root, file);
  for (const char* affix : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    const auto a = model.find(affix);
    if (a != model.end() && !a->is_null() && !(a->is_string() && a->get<std::string>().empty()))
      refuse(file, std::string("a BPE model with a ") + affix + " is not supported (GPT-2 has none)");
  }
  const auto ignore_merges = model.find("ignore_merges");
  if (ignore_merges != model.end() && ignore_merges->is_boolean() && ignore_merges->get<bool>())
    refuse(file, "a BPE model with ignore_merges true is not supported (GPT-2 always merges)");
  const auto merges_it = model.find("merges");
  if (merges_it == model.end() || !merges_it->is_array()) refuse(file, "the BPE model has no \"merges\" list");
  std::vector<std::pair<std::string, std::string>> merges;
  merges.reserve(merges_it->size());
  for (std::size_t k = 0; k < merges_it->size(); ++k) {
    const json& m = (*merges_it)[k];
    const std::string where = "merge " + std::to_string(k + 1);
    if (m.is_string()) {  // "a b"
      const std::string s = m.get<std::string>();
      const std::size_t space = s.find(' ');
      if (space == std::string::npos || space == 0 || space + 1 == s.size() || s.find(' ', space + 1) != std::string::npos)
        refuse(file, where + ": expected two tokens separated by one space, got '" + printable_excerpt(s) + "'");
      merges.emplace_back(s.substr(0, space), s.substr(space + 1));
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {  // ["a", "b"]
      merges.emplace_back(m[0].get<std::string>(), m[1].get<std::string>());
    } else {
      refuse(file, where + ": expected \"a b\" or [\"a\", \"b\"], got " + printable_excerpt(m.dump()));
    }
    try {
      check_merge(ids, merges.back(), where);
    } catch (const std::invalid_argument& e) {
      refuse(file, e.what());
    }
  }
  return build_or_refuse(file, [&] { return TextTokenizer::byte_level_bpe(std::move(vocab), std::move(merges)); });
}

}  // namespace attn
