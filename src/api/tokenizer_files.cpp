// Reads Hugging Face's tokenizer files (tokenizer.json, vocab.json + merges.txt, BERT's vocab.txt) into a
// TextTokenizer, checking everything a hostile file could get wrong. Not the tokenizer itself (src/core/bpe.cpp).
#include "tokenizer_files.h"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "../core/token_regex.h"
#include "../core/utf8.h"
#include "../core/refuse.h"

namespace attn {
namespace {

using nlohmann::json;

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

bool utf8_ok(const std::string& s) { return utf8::valid(s); }

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

// ---- the pipeline of a BPE tokenizer.json --------------------------------------------------

std::string type_of(const json& step, const std::string& file, const std::string& what) {
  if (!step.is_object()) refuse(file, what + " must be an object, got " + type_name(step));
  const auto it = step.find("type");
  if (it == step.end() || !it->is_string()) refuse(file, what + " has no \"type\" string");
  return it->get<std::string>();
}

bool flag(const json& step, const char* name, bool fallback, const std::string& file, const std::string& what) {
  const auto f = step.find(name);
  if (f == step.end() || f->is_null()) return fallback;
  if (!f->is_boolean()) refuse(file, what + "'s " + name + " must be true or false");
  return f->get<bool>();
}

std::string text_field(const json& step, const char* name, const std::string& file, const std::string& what) {
  const auto f = step.find(name);
  if (f == step.end() || !f->is_string()) refuse(file, what + " needs a \"" + name + "\" string");
  const std::string v = f->get<std::string>();
  if (!utf8_ok(v)) refuse(file, what + "'s " + name + " is not valid UTF-8");
  return v;
}

// {"String": "..."} or {"Regex": "..."}: the literal, or the compiled regex.
void read_pattern(const json& step, const std::string& file, const std::string& what, std::string* literal,
                  std::shared_ptr<const TokenRegex>* regex) {
  const auto f = step.find("pattern");
  if (f == step.end() || !f->is_object() || f->size() != 1) refuse(file, what + " needs a pattern {\"String\": ...} or {\"Regex\": ...}");
  const std::string kind = f->begin().key();
  const json& value = f->begin().value();
  if (!value.is_string()) refuse(file, what + "'s pattern must be a string");
  const std::string v = value.get<std::string>();
  if (!utf8_ok(v)) refuse(file, what + "'s pattern is not valid UTF-8");
  if (kind == "String") {
    if (v.empty()) refuse(file, what + " with an empty String pattern is not supported");
    *literal = v;
  } else if (kind == "Regex") {
    try {
      *regex = std::make_shared<TokenRegex>(v);
    } catch (const std::invalid_argument& e) {
      refuse(file, what + ": " + e.what());
    }
  } else {
    refuse(file, what + "'s pattern kind '" + printable_excerpt(kind) + "' is not supported (String or Regex)");
  }
}

std::vector<const json*> steps_of(const json& node, const char* list_name, const std::string& file, const std::string& what,
                                  int depth = 0) {
  if (depth > 8) refuse(file, what + " Sequences nested too deep");
  std::vector<const json*> steps;
  if (type_of(node, file, what) != "Sequence") return {&node};
  const auto list = node.find(list_name);
  if (list == node.end() || !list->is_array()) refuse(file, what + " Sequence has no \"" + list_name + "\" list");
  for (const json& step : *list)
    for (const json* inner : steps_of(step, list_name, file, what, depth + 1)) steps.push_back(inner);
  return steps;
}

void read_normalizers(const json& root, const std::string& file, TokenizerPipeline& p) {
  const auto it = root.find("normalizer");
  if (it == root.end() || it->is_null()) return;
  for (const json* step : steps_of(*it, "normalizers", file, "normalizer")) {
    const std::string type = type_of(*step, file, "normalizer");
    TokenizerPipeline::Normalizer n;
    using T = TokenizerPipeline::Normalizer::Type;
    if (type == "NFC") n.type = T::NFC;
    else if (type == "NFKC") n.type = T::NFKC;
    else if (type == "NFD") n.type = T::NFD;
    else if (type == "NFKD") n.type = T::NFKD;
    else if (type == "StripAccents") n.type = T::StripAccents;
    else if (type == "Lowercase") n.type = T::Lowercase;
    else if (type == "BertNormalizer") {
      n.type = T::Bert;
      const std::string what = "normalizer BertNormalizer";
      n.clean_text = flag(*step, "clean_text", true, file, what);
      n.handle_chinese_chars = flag(*step, "handle_chinese_chars", true, file, what);
      n.lowercase = flag(*step, "lowercase", true, file, what);
      n.strip_accents = flag(*step, "strip_accents", n.lowercase, file, what);  // null: as lowercase
    }
    else if (type == "Prepend") n.type = T::Prepend, n.text = text_field(*step, "prepend", file, "normalizer Prepend");
    else if (type == "Replace") {
      n.type = T::Replace;
      read_pattern(*step, file, "normalizer Replace", &n.text, &n.regex);
      n.content = text_field(*step, "content", file, "normalizer Replace");
    } else {
      refuse(file, "normalizer '" + printable_excerpt(type) +
                       "' is not supported (NFC, NFKC, NFD, NFKD, Lowercase, StripAccents, BertNormalizer, Prepend, Replace, Sequence)");
    }
    p.normalizers.push_back(std::move(n));
  }
}

void read_pre_tokenizers(const json& root, const std::string& file, TokenizerPipeline& p) {
  const auto it = root.find("pre_tokenizer");
  if (it == root.end() || it->is_null()) return;
  for (const json* step : steps_of(*it, "pretokenizers", file, "pre_tokenizer")) {
    const std::string type = type_of(*step, file, "pre_tokenizer");
    TokenizerPipeline::PreTokenizer t;
    using T = TokenizerPipeline::PreTokenizer::Type;
    if (type == "ByteLevel") {
      t.type = T::ByteLevel;
      t.add_prefix_space = flag(*step, "add_prefix_space", false, file, "ByteLevel");  // the library needs it given
      t.use_regex = flag(*step, "use_regex", true, file, "ByteLevel");
    } else if (type == "Split") {
      t.type = T::Split;
      read_pattern(*step, file, "pre_tokenizer Split", &t.pattern, &t.regex);
      const std::string b = text_field(*step, "behavior", file, "pre_tokenizer Split");
      using B = TokenizerPipeline::Behavior;
      if (b == "Removed") t.behavior = B::Removed;
      else if (b == "Isolated") t.behavior = B::Isolated;
      else if (b == "MergedWithPrevious") t.behavior = B::MergedWithPrevious;
      else if (b == "MergedWithNext") t.behavior = B::MergedWithNext;
      else if (b == "Contiguous") t.behavior = B::Contiguous;
      else refuse(file, "pre_tokenizer Split's behavior '" + printable_excerpt(b) + "' is not one the library has");
      t.invert = flag(*step, "invert", false, file, "Split");
    } else if (type == "Metaspace") {
      t.type = T::Metaspace;
      const std::string r = text_field(*step, "replacement", file, "pre_tokenizer Metaspace");
      std::uint32_t cp = 0;
      if (r.empty() || utf8::sequence(r, 0, &cp) != r.size()) refuse(file, "Metaspace's replacement must be one character");
      t.replacement = cp;
      using P = TokenizerPipeline::PreTokenizer::Prepend;
      const auto scheme = step->find("prepend_scheme");
      if (scheme != step->end() && !scheme->is_null()) {
        const std::string s = scheme->is_string() ? scheme->get<std::string>() : "?";
        if (s == "always") t.prepend = P::Always;
        else if (s == "first") t.prepend = P::First;
        else if (s == "never") t.prepend = P::Never;
        else refuse(file, "Metaspace's prepend_scheme must be \"first\", \"always\" or \"never\"");
      } else {  // older files: add_prefix_space
        t.prepend = flag(*step, "add_prefix_space", true, file, "Metaspace") ? P::Always : P::Never;
      }
      t.split = flag(*step, "split", true, file, "Metaspace");
    } else if (type == "BertPreTokenizer") {
      t.type = T::Bert;
    } else if (type == "WhitespaceSplit") {
      t.type = T::WhitespaceSplit;
    } else {
      refuse(file, "pre_tokenizer '" + printable_excerpt(type) +
                       "' is not supported (ByteLevel, Split, Metaspace, BertPreTokenizer, WhitespaceSplit, Sequence)");
    }
    p.pre_tokenizers.push_back(std::move(t));
  }
}

// A token's id by a scan of the vocabulary and the added tokens (a few lookups per file: no index needed).
int id_of(const std::unordered_map<std::string, int>& ids, const std::string& token, const std::string& file, const std::string& what,
          const std::vector<TokenizerPipeline::AddedToken>& added = {}, const std::vector<std::string>* vocab = nullptr) {
  const auto it = ids.find(token);
  if (it != ids.end()) return it->second;
  if (vocab) {
    const auto v = std::find(vocab->begin(), vocab->end(), token);
    if (v != vocab->end()) return static_cast<int>(v - vocab->begin());
  }
  for (const auto& a : added)
    if (a.content == token) return a.id;
  refuse(file, what + " '" + printable_excerpt(token) + "' is not a token");
}

void read_post_processor(const json& root, const std::string& file, TokenizerPipeline& p) {
  const auto it = root.find("post_processor");
  if (it == root.end() || it->is_null()) return;
  for (const json* step : steps_of(*it, "processors", file, "post_processor")) {
    const std::string type = type_of(*step, file, "post_processor");
    if (type == "ByteLevel") continue;  // it only moves offsets
    if (type == "RobertaProcessing" || type == "BertProcessing") {
      // [CLS] A [SEP] or <s> A </s>, by the ids the file gives (the library uses them as they are;
      // trim_offsets and add_prefix_space move offsets only)
      for (const char* name : {"cls", "sep"}) {
        const auto f = step->find(name);
        if (f == step->end() || !f->is_array() || f->size() != 2 || !(*f)[0].is_string() || !(*f)[1].is_number_integer() ||
            (*f)[1].get<std::int64_t>() < 0 || (*f)[1].get<std::int64_t>() >= (1 << 24))
          refuse(file, type + "'s " + name + " must be [token, id] with a whole-number id");
        (name[0] == 'c' ? p.template_before : p.template_after).push_back(static_cast<int>((*f)[1].get<std::int64_t>()));
      }
      continue;
    }
    if (type != "TemplateProcessing")
      refuse(file, "post_processor '" + printable_excerpt(type) + "' is not supported (TemplateProcessing, ByteLevel, Sequence)");
    const auto single = step->find("single");
    const auto specials = step->find("special_tokens");
    if (single == step->end() || !single->is_array()) refuse(file, "TemplateProcessing needs a \"single\" list");
    bool seen_text = false;
    for (const json& piece : *single) {
      if (!piece.is_object() || piece.size() != 1) refuse(file, "TemplateProcessing's single has a piece that is not {SpecialToken} or {Sequence}");
      const std::string kind = piece.begin().key();
      const json& body = piece.begin().value();
      if (!body.is_object() || !body.contains("id") || !body["id"].is_string())
        refuse(file, "TemplateProcessing's " + printable_excerpt(kind) + " needs an \"id\" string");
      const std::string name = body["id"].get<std::string>();
      if (kind == "Sequence") {
        if (seen_text || name != "A") refuse(file, "TemplateProcessing's single must hold the sequence A once");
        seen_text = true;
      } else if (kind == "SpecialToken") {
        if (specials == step->end() || !specials->is_object() || !specials->contains(name))
          refuse(file, "TemplateProcessing's special token '" + printable_excerpt(name) + "' is not in its special_tokens");
        const json& entry = (*specials)[name];
        const auto list = entry.find("ids");
        if (!entry.is_object() || list == entry.end() || !list->is_array() || list->size() > 16)
          refuse(file, "TemplateProcessing's special_tokens['" + printable_excerpt(name) + "'] needs an \"ids\" list");
        for (const json& id : *list) {
          if (!id.is_number_integer() || id.get<std::int64_t>() < 0 || id.get<std::int64_t>() > (1 << 24))
            refuse(file, "TemplateProcessing's special token ids must be whole numbers in range");
          (seen_text ? p.template_after : p.template_before).push_back(static_cast<int>(id.get<std::int64_t>()));
        }
      } else {
        refuse(file, "TemplateProcessing's piece '" + printable_excerpt(kind) + "' is not SpecialToken or Sequence");
      }
    }
    if (!seen_text) refuse(file, "TemplateProcessing's single has no sequence A");
  }
}

void read_decoder(const json& root, const std::string& file, TokenizerPipeline& p) {
  const auto it = root.find("decoder");
  if (it == root.end() || it->is_null()) {
    p.decoder.join_with_spaces = true;
    return;
  }
  bool fused = false;
  for (const json* step : steps_of(*it, "decoders", file, "decoder")) {
    const std::string type = type_of(*step, file, "decoder");
    if (p.decoder.strip_start || p.decoder.strip_stop) refuse(file, "a decoder after Strip is not supported");
    if (type == "ByteLevel") {
      p.decoder.byte_level = true;
    } else if (type == "Replace") {
      std::string from;
      std::shared_ptr<const TokenRegex> regex;
      read_pattern(*step, file, "decoder Replace", &from, &regex);
      if (regex) refuse(file, "decoder Replace with a Regex pattern is not supported");
      p.decoder.replaces.emplace_back(from, text_field(*step, "content", file, "decoder Replace"));
    } else if (type == "ByteFallback") {
      p.decoder.byte_fallback = true;
    } else if (type == "Fuse") {
      fused = true;
    } else if (type == "Strip") {
      const std::string c = text_field(*step, "content", file, "decoder Strip");
      std::uint32_t cp = 0;
      if (c.empty() || utf8::sequence(c, 0, &cp) != c.size()) refuse(file, "decoder Strip's content must be one character");
      const auto count = [&](const char* name) {
        const auto f = step->find(name);
        if (f == step->end() || !f->is_number_integer() || f->get<std::int64_t>() < 0 || f->get<std::int64_t>() > 64)
          refuse(file, std::string("decoder Strip's ") + name + " must be a whole number from 0 to 64");
        return static_cast<int>(f->get<std::int64_t>());
      };
      if (!fused) refuse(file, "decoder Strip before Fuse is not supported (it would cut every token)");
      p.decoder.strip_char = cp, p.decoder.strip_start = count("start"), p.decoder.strip_stop = count("stop");
    } else if (type == "Metaspace") {
      const std::string r = text_field(*step, "replacement", file, "decoder Metaspace");
      p.decoder.replaces.emplace_back(r, " ");
      const auto scheme = step->find("prepend_scheme");
      const bool never = (scheme != step->end() && scheme->is_string() && scheme->get<std::string>() == "never") ||
                         ((scheme == step->end() || scheme->is_null()) && !flag(*step, "add_prefix_space", true, file, "Metaspace"));
      if (!never) p.decoder.strip_start = 1;
    } else if (type == "WordPiece") {
      p.decoder.wordpiece = true;
      const auto prefix = step->find("prefix");
      if (prefix != step->end() && !prefix->is_null()) p.decoder.wordpiece_prefix = text_field(*step, "prefix", file, "decoder WordPiece");
      p.decoder.cleanup = flag(*step, "cleanup", true, file, "decoder WordPiece");
    } else {
      refuse(file, "decoder '" + printable_excerpt(type) +
                       "' is not supported (ByteLevel, Metaspace, Replace, ByteFallback, Fuse, Strip, WordPiece)");
    }
  }
}

void read_added_tokens(const json& root, const std::string& file, TokenizerPipeline& p) {
  const auto added = root.find("added_tokens");
  if (added == root.end() || added->is_null()) return;
  if (!added->is_array()) refuse(file, "added_tokens must be a list");
  for (const json& token : *added) {
    if (!token.is_object() || !token.contains("id") || !token["id"].is_number_integer() || !token.contains("content") ||
        !token["content"].is_string())
      refuse(file, "each of added_tokens needs a whole-number \"id\" and a \"content\" string");
    TokenizerPipeline::AddedToken a;
    const std::int64_t id = token["id"].get<std::int64_t>();
    a.content = token["content"].get<std::string>();
    if (id < 0 || id >= (1 << 24)) refuse(file, "added token '" + printable_excerpt(a.content) + "' has the id " + std::to_string(id));
    a.id = static_cast<int>(id);
    const std::string what = "added token '" + printable_excerpt(a.content) + "'";
    a.special = flag(token, "special", false, file, what);
    a.single_word = flag(token, "single_word", false, file, what);
    a.lstrip = flag(token, "lstrip", false, file, what);
    a.rstrip = flag(token, "rstrip", false, file, what);
    a.normalized = flag(token, "normalized", !a.special, file, what);
    p.added.push_back(std::move(a));
  }
}

// The parts around the model: added tokens, normalizers, pre-tokenizers, post-processor, decoder.
void read_steps(const json& root, const std::string& file, TokenizerPipeline& p) {
  read_added_tokens(root, file, p);
  read_normalizers(root, file, p);
  read_pre_tokenizers(root, file, p);
  read_post_processor(root, file, p);
  read_decoder(root, file, p);
}

TokenizerPipeline read_bpe(const json& root, const json& model, std::vector<std::string> vocab, const std::string& file) {
  TokenizerPipeline p;
  const std::unordered_map<std::string, int> no_ids;  // tokens are looked up by the core, or in the vocabulary below
  const auto dropout = model.find("dropout");
  if (dropout != model.end() && !dropout->is_null() && !(dropout->is_number() && dropout->get<double>() == 0.0))
    refuse(file, "a BPE model with dropout is not supported (it samples; only null)");
  p.byte_fallback = flag(model, "byte_fallback", false, file, "the BPE model");
  p.fuse_unk = flag(model, "fuse_unk", false, file, "the BPE model");
  p.ignore_merges = flag(model, "ignore_merges", false, file, "the BPE model");
  const auto unk = model.find("unk_token");
  if (unk != model.end() && !unk->is_null()) {
    if (!unk->is_string()) refuse(file, "the BPE model's unk_token must be a string or null");
    p.unk_id = id_of(no_ids, unk->get<std::string>(), file, "the unk_token", {}, &vocab);
  }
  for (const char* affix : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    const auto a = model.find(affix);
    if (a == model.end() || a->is_null()) continue;
    if (!a->is_string()) refuse(file, std::string("the BPE model's ") + affix + " must be a string or null");
    (affix[0] == 'c' ? p.continuing_subword_prefix : p.end_of_word_suffix) = a->get<std::string>();
  }
  const auto merges_it = model.find("merges");
  if (merges_it == model.end() || !merges_it->is_array()) refuse(file, "the BPE model has no \"merges\" list");
  p.merges.reserve(merges_it->size());
  for (std::size_t k = 0; k < merges_it->size(); ++k) {
    const json& m = (*merges_it)[k];
    const std::string where = "merge " + std::to_string(k + 1);
    if (m.is_string()) {  // "a b"
      const std::string& s = m.get_ref<const std::string&>();
      const std::size_t space = s.find(' ');
      if (space == std::string::npos || space == 0 || space + 1 == s.size() || s.find(' ', space + 1) != std::string::npos)
        refuse(file, where + ": expected two tokens separated by one space, got '" + printable_excerpt(s) + "'");
      p.merges.emplace_back(s.substr(0, space), s.substr(space + 1));
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {  // ["a", "b"]
      p.merges.emplace_back(m[0].get<std::string>(), m[1].get<std::string>());
    } else {
      refuse(file, where + ": expected \"a b\" or [\"a\", \"b\"], got " + printable_excerpt(m.dump()));
    }
  }
  read_steps(root, file, p);
  p.vocab = std::move(vocab);
  return p;
}

// A WordPiece model ({"unk_token", "continuing_subword_prefix", "max_input_chars_per_word", "vocab"}),
// BERT's: its unk token must be in the vocabulary.
TokenizerPipeline read_wordpiece(const json& root, const json& model, std::vector<std::string> vocab, const std::string& file) {
  TokenizerPipeline p;
  p.model = TokenizerPipeline::Model::WordPiece;
  p.continuing_subword_prefix = "##";
  std::string unk = "[UNK]";
  const auto unk_it = model.find("unk_token");
  if (unk_it != model.end() && !unk_it->is_null()) unk = text_field(model, "unk_token", file, "the WordPiece model");
  const auto prefix = model.find("continuing_subword_prefix");
  if (prefix != model.end() && !prefix->is_null())
    p.continuing_subword_prefix = text_field(model, "continuing_subword_prefix", file, "the WordPiece model");
  const auto max = model.find("max_input_chars_per_word");
  if (max != model.end() && !max->is_null()) {
    if (!max->is_number_unsigned()) refuse(file, "the WordPiece model's max_input_chars_per_word must be a whole number of 0 or more");
    p.max_input_chars_per_word = static_cast<std::size_t>(std::min<std::uint64_t>(max->get<std::uint64_t>(), SIZE_MAX));
  }
  const auto v = std::find(vocab.begin(), vocab.end(), unk);
  if (v == vocab.end())
    refuse(file, "the WordPiece model's unk_token '" + printable_excerpt(unk) +
                     "' is not in its vocabulary (a word it cannot split would have no token)");
  p.unk_id = static_cast<int>(v - vocab.begin());
  read_steps(root, file, p);
  p.vocab = std::move(vocab);
  return p;
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

TextTokenizer tokenizer_from_vocab_txt(const std::string& vocab_txt, const std::string& config_json, const std::string& vocab_name,
                                       const std::string& config_name) {
  check_size(vocab_txt, vocab_name);
  // tokenizer_config.json: the options transformers' BertTokenizerFast passes to the pipeline
  bool lowercase = true, chinese = true;
  int strip_accents = -1;  // null: as lowercase
  std::string names[5] = {"[UNK]", "[SEP]", "[PAD]", "[CLS]", "[MASK]"};
  if (!config_json.empty()) {
    const json config = parse_json(config_json, config_name);
    if (!config.is_object()) refuse(config_name, "expected a JSON object, got " + type_name(config));
    lowercase = flag(config, "do_lower_case", true, config_name, "the config");
    chinese = flag(config, "tokenize_chinese_chars", true, config_name, "the config");
    const auto strip = config.find("strip_accents");
    if (strip != config.end() && !strip->is_null()) strip_accents = flag(config, "strip_accents", false, config_name, "the config") ? 1 : 0;
    const char* keys[5] = {"unk_token", "sep_token", "pad_token", "cls_token", "mask_token"};
    for (int k = 0; k < 5; ++k) {
      const auto f = config.find(keys[k]);
      if (f == config.end() || f->is_null()) continue;
      const json& v = f->is_object() && f->contains("content") ? (*f)["content"] : *f;  // "[UNK]" or {"content": "[UNK]", ...}
      if (!v.is_string() || v.get<std::string>().empty() || !utf8_ok(v.get<std::string>()))
        refuse(config_name, std::string(keys[k]) + " must be a token (a non-empty string)");
      names[k] = v.get<std::string>();
    }
  }
  // vocab.txt: one token a line, the line number its id; a trailing newline ends the last line
  TokenizerPipeline p;
  for (std::size_t pos = 0; pos < vocab_txt.size();) {
    std::size_t end = vocab_txt.find('\n', pos);
    if (end == std::string::npos) end = vocab_txt.size();
    std::string line = vocab_txt.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    p.vocab.push_back(std::move(line));
    pos = end + 1;
  }
  p.model = TokenizerPipeline::Model::WordPiece;
  p.continuing_subword_prefix = "##";
  std::unordered_map<std::string, int> ids;
  for (std::size_t i = 0; i < p.vocab.size(); ++i) ids.emplace(p.vocab[i], static_cast<int>(i));
  const auto unk = ids.find(names[0]);
  if (unk == ids.end()) refuse(vocab_name, "the unknown-word token '" + printable_excerpt(names[0]) + "' is not in the vocabulary");
  p.unk_id = unk->second;
  // the special tokens the vocabulary has, matched in the raw text as transformers adds them
  for (const std::string& name : names) {
    const auto it = ids.find(name);
    if (it == ids.end() || std::any_of(p.added.begin(), p.added.end(), [&](const auto& a) { return a.content == name; })) continue;
    TokenizerPipeline::AddedToken a;
    a.content = name, a.id = it->second, a.special = true;
    p.added.push_back(std::move(a));
  }
  TokenizerPipeline::Normalizer n;
  n.type = TokenizerPipeline::Normalizer::Type::Bert;
  n.clean_text = true, n.handle_chinese_chars = chinese, n.lowercase = lowercase;
  n.strip_accents = strip_accents < 0 ? lowercase : strip_accents == 1;
  p.normalizers.push_back(std::move(n));
  TokenizerPipeline::PreTokenizer bert;
  bert.type = TokenizerPipeline::PreTokenizer::Type::Bert;
  p.pre_tokenizers.push_back(std::move(bert));
  const auto cls = ids.find(names[3]), sep = ids.find(names[1]);
  if (cls != ids.end() && sep != ids.end()) p.template_before = {cls->second}, p.template_after = {sep->second};
  p.decoder.wordpiece = true, p.decoder.cleanup = true;
  return build_or_refuse(vocab_name, [&] { return TextTokenizer::from_pipeline(std::move(p)); });
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
  if (type != "BPE" && type != "WordLevel" && type != "WordPiece")
    refuse(file, "model type '" + printable_excerpt(type) + "' is not supported (only BPE, WordPiece and WordLevel)");
  // normalizer: none (GPT-2), or Lowercase for a WordLevel model (a trained model's tokenizer.json)
  bool lowercase = false;
  const auto normalizer = root.find("normalizer");
  if (type == "WordLevel" && normalizer != root.end() && !normalizer->is_null()) {
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
  if (type == "BPE" || type == "WordPiece") {
    TokenizerPipeline pipeline =
        type == "BPE" ? read_bpe(root, model, std::move(vocab), file) : read_wordpiece(root, model, std::move(vocab), file);
    return build_or_refuse(file, [&] { return TextTokenizer::from_pipeline(std::move(pipeline)); });
  }

  // added_tokens of a WordLevel model: must be tokens of the vocabulary under the same id.
  const auto ids = index(vocab);
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

  refuse(file, "unreachable model type");
}

}  // namespace attn
