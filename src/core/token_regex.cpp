// The pre-tokenizer regex engine: a parser to a tree, a compiler to a backtracking program, and the
// matcher that runs it within a step budget. Not a general regex library (token_regex.h lists it all).
#include "token_regex.h"

#include <algorithm>
#include <memory>
#include <stdexcept>

#include "unicode_ranges.h"  // generated at build time by tools/gen_unicode_ranges.py

namespace attn {
namespace {

constexpr std::uint8_t kLetter = 1, kNumber = 2, kSpace = 4, kNotLetter = 8, kNotNumber = 16, kNotSpace = 32;
constexpr long kUnbounded = -1;
constexpr std::size_t kMaxProgram = 20000;  // instructions, after counted repeats are written out
constexpr int kMaxDepth = 64;               // nesting of groups in the pattern, and of lookaheads at run time

enum Op : std::uint8_t { kClass, kRepeat, kSplit, kJmp, kLook, kMatch };

bool is_letter(std::uint32_t cp) {
  if (cp < 0x80) return (cp | 0x20) >= 'a' && (cp | 0x20) <= 'z';
  return unicode_ranges::contains(unicode_ranges::kLetterRanges, cp);
}
bool is_number(std::uint32_t cp) {
  if (cp < 0x80) return cp >= '0' && cp <= '9';
  return unicode_ranges::contains(unicode_ranges::kNumberRanges, cp);
}

struct Node {
  enum Type { Empty, Class, Seq, Alt, Repeat, Look } type = Empty;
  int cls = -1;
  long min = 0, max = 0;
  bool negate = false;
  std::vector<std::unique_ptr<Node>> kids;
};

class Parser {
 public:
  Parser(const std::string& pattern, std::vector<TokenRegex::ClassSet>& classes) : p_(pattern), classes_(classes) {}

  std::unique_ptr<Node> parse() {
    auto root = alternation(false, 0);
    if (i_ < p_.size()) fail("unmatched ')'");
    return root;
  }

  [[noreturn]] void fail(const std::string& what) const {
    std::string shown;
    for (char c : p_.substr(0, 60)) shown += (static_cast<unsigned char>(c) < 0x20) ? '?' : c;
    if (p_.size() > 60) shown += "...";
    std::string message = "regex '" + shown + "': " + what + " (at byte " + std::to_string(i_) + ")";
    for (char& c : message)  // `what` may quote the pattern's own bytes (an escaped newline): one line
      if (static_cast<unsigned char>(c) < 0x20) c = '?';
    throw std::invalid_argument(message);
  }

 private:
  bool more() const { return i_ < p_.size(); }
  char peek() const { return p_[i_]; }

  std::uint32_t next_code_point() {
    const unsigned char b0 = static_cast<unsigned char>(p_[i_]);
    std::size_t len = b0 < 0x80 ? 1 : b0 >= 0xF0 ? 4 : b0 >= 0xE0 ? 3 : b0 >= 0xC0 ? 2 : 0;
    if (len == 0 || i_ + len > p_.size()) fail("not valid UTF-8");
    std::uint32_t cp = len == 1 ? b0 : (b0 & (0x7F >> len));
    for (std::size_t k = 1; k < len; ++k) {
      const unsigned char b = static_cast<unsigned char>(p_[i_ + k]);
      if ((b & 0xC0) != 0x80) fail("not valid UTF-8");
      cp = (cp << 6) | (b & 0x3F);
    }
    i_ += len;
    return cp;
  }

  int add_class(TokenRegex::ClassSet set) {
    classes_.push_back(std::move(set));
    return static_cast<int>(classes_.size()) - 1;
  }

  std::unique_ptr<Node> class_node(TokenRegex::ClassSet set) {
    auto n = std::make_unique<Node>();
    n->type = Node::Class;
    n->cls = add_class(std::move(set));
    return n;
  }

  // A literal under (?i:): ASCII letters match both cases, plus what Unicode case folding adds
  // (U+017F long s folds to s, U+212A Kelvin sign to k). Other letters would need folding tables.
  TokenRegex::ClassSet literal(std::uint32_t cp, bool fold) {
    TokenRegex::ClassSet set;
    set.ranges.push_back({cp, cp});
    if (!fold) return set;
    if (cp >= 0x80 && (is_letter(cp) || cp == 0x345)) fail("a non-ASCII letter inside (?i:...) is not supported");
    if ((cp | 0x20) >= 'a' && (cp | 0x20) <= 'z') {
      const std::uint32_t lower = cp | 0x20;
      set.ranges = {{lower - 0x20, lower - 0x20}, {lower, lower}};
      if (lower == 's') set.ranges.push_back({0x17F, 0x17F});
      if (lower == 'k') set.ranges.push_back({0x212A, 0x212A});
    }
    return set;
  }

  // After a backslash: a property/space class into *set (returns true), or a literal code point.
  bool escape(TokenRegex::ClassSet* set, std::uint32_t* literal_cp) {
    if (!more()) fail("a lone backslash at the end");
    const char c = p_[i_++];
    switch (c) {
      case 's': set->props |= kSpace; return true;
      case 'S': set->props |= kNotSpace; return true;
      case 'p':
      case 'P': {
        std::string name;
        if (more() && peek() == '{') {
          const std::size_t close = p_.find('}', i_);
          if (close == std::string::npos) fail("\\p{ without its }");
          name = p_.substr(i_ + 1, close - i_ - 1);
          i_ = close + 1;
        } else if (more()) {
          name = std::string(1, p_[i_++]);
        }
        bool negate = c == 'P';
        if (!name.empty() && name[0] == '^') negate = !negate, name.erase(0, 1);
        if (name == "L" || name == "Letter")
          set->props |= negate ? kNotLetter : kLetter;
        else if (name == "N" || name == "Number")
          set->props |= negate ? kNotNumber : kNumber;
        else
          fail("the property \\p{" + name + "} is not supported (only \\p{L} and \\p{N})");
        return true;
      }
      case 'r': *literal_cp = '\r'; return false;
      case 'n': *literal_cp = '\n'; return false;
      case 't': *literal_cp = '\t'; return false;
      case 'f': *literal_cp = '\f'; return false;
      case 'v': *literal_cp = '\v'; return false;
      default:
        if ((c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') || (c >= '{' && c <= '~') || c == ' ') {
          *literal_cp = static_cast<unsigned char>(c);
          return false;
        }
        fail(std::string("the escape \\") + c + " is not supported");
    }
  }

  std::unique_ptr<Node> bracket(bool fold) {
    if (fold) fail("a [...] class inside (?i:...) is not supported");
    TokenRegex::ClassSet set;
    if (more() && peek() == '^') set.negated = true, ++i_;
    bool first = true;
    for (;;) {
      if (!more()) fail("a [ without its ]");
      if (peek() == ']' && !first) break;
      first = false;
      if (peek() == '[') fail("nested classes and [:posix:] classes are not supported");
      if (peek() == '&' && i_ + 1 < p_.size() && p_[i_ + 1] == '&') fail("class intersection && is not supported");
      std::uint32_t lo = 0;
      if (peek() == '\\') {
        ++i_;
        if (escape(&set, &lo)) continue;
      } else {
        lo = next_code_point();
      }
      std::uint32_t hi = lo;
      if (i_ + 1 < p_.size() && peek() == '-' && p_[i_ + 1] != ']') {
        ++i_;
        if (peek() == '\\') {
          ++i_;
          TokenRegex::ClassSet probe;
          if (escape(&probe, &hi)) fail("a range ending in a class escape");
        } else {
          hi = next_code_point();
        }
        if (hi < lo) fail("a range with its ends reversed");
      }
      set.ranges.push_back({lo, hi});
    }
    ++i_;  // ]
    return class_node(std::move(set));
  }

  // {m}, {m,}, {m,n} after an atom; false (and nothing consumed) when the brace is not one.
  bool counted(long* min, long* max) {
    std::size_t k = i_ + 1;
    const auto number = [&](long* out) {
      const std::size_t start = k;
      long v = 0;
      while (k < p_.size() && p_[k] >= '0' && p_[k] <= '9' && k - start < 6) v = v * 10 + (p_[k++] - '0');
      *out = v;
      return k > start;
    };
    if (!number(min)) return false;
    *max = *min;
    if (k < p_.size() && p_[k] == ',') {
      ++k;
      if (!number(max)) *max = kUnbounded;
    }
    if (k >= p_.size() || p_[k] != '}') return false;
    if (*max != kUnbounded && *max < *min) fail("a {m,n} with n < m");
    i_ = k + 1;
    return true;
  }

  static bool nullable(const Node& n) {
    switch (n.type) {
      case Node::Empty: return true;
      case Node::Class: return false;
      case Node::Look: return true;
      case Node::Repeat: return n.min == 0 || nullable(*n.kids[0]);
      case Node::Seq:
        return std::all_of(n.kids.begin(), n.kids.end(), [](const auto& k) { return nullable(*k); });
      case Node::Alt:
        return std::any_of(n.kids.begin(), n.kids.end(), [](const auto& k) { return nullable(*k); });
    }
    return true;
  }

  std::unique_ptr<Node> atom(bool fold, int depth) {
    const char c = peek();
    if (c == '(') {
      ++i_;
      bool look = false, negate = false;
      if (more() && peek() == '?') {
        ++i_;
        if (p_.compare(i_, 1, ":") == 0) {
          i_ += 1;
        } else if (p_.compare(i_, 2, "i:") == 0) {
          i_ += 2, fold = true;
        } else if (p_.compare(i_, 1, "!") == 0 || p_.compare(i_, 1, "=") == 0) {
          look = true, negate = p_[i_] == '!', i_ += 1;
        } else {
          fail("this kind of group (?" + p_.substr(i_, 2) + " is not supported");
        }
      }
      auto inner = alternation(fold, depth + 1);
      if (!more() || peek() != ')') fail("a ( without its )");
      ++i_;
      if (!look) return inner;
      auto n = std::make_unique<Node>();
      n->type = Node::Look;
      n->negate = negate;
      n->kids.push_back(std::move(inner));
      return n;
    }
    if (c == '[') {
      ++i_;
      return bracket(fold);
    }
    if (c == '.') {
      ++i_;
      TokenRegex::ClassSet set;
      set.negated = true;
      set.ranges.push_back({'\n', '\n'});
      return class_node(std::move(set));
    }
    if (c == '\\') {
      ++i_;
      TokenRegex::ClassSet set;
      std::uint32_t cp = 0;
      if (escape(&set, &cp)) return class_node(std::move(set));
      return class_node(literal(cp, fold));
    }
    if (c == '^' || c == '$') fail("anchors ^ and $ are not supported");
    if (c == '*' || c == '+' || c == '?' || c == '{') fail(std::string("a quantifier '") + c + "' with nothing to repeat");
    if (c == ']' || c == '}') fail(std::string("an unescaped '") + c + "'");
    return class_node(literal(next_code_point(), fold));
  }

  std::unique_ptr<Node> sequence(bool fold, int depth) {
    auto seq = std::make_unique<Node>();
    seq->type = Node::Seq;
    while (more() && peek() != '|' && peek() != ')') {
      auto a = atom(fold, depth);
      for (;;) {
        if (!more()) break;
        long min = 0, max = 0;
        const char q = peek();
        if (q == '?') min = 0, max = 1, ++i_;
        else if (q == '*') min = 0, max = kUnbounded, ++i_;
        else if (q == '+') min = 1, max = kUnbounded, ++i_;
        else if (q == '{') {
          if (!counted(&min, &max)) fail("a '{' that is not a {m,n} quantifier");
        } else break;
        if (more() && (peek() == '?' || peek() == '+')) fail("lazy and possessive quantifiers are not supported");
        if (a->type == Node::Look) fail("a quantifier on a lookahead");
        if (max == kUnbounded && a->type != Node::Class && nullable(*a))
          fail("a repeated group that can match nothing is not supported");
        auto r = std::make_unique<Node>();
        r->type = Node::Repeat;
        r->min = min, r->max = max;
        r->kids.push_back(std::move(a));
        a = std::move(r);
        break;  // one quantifier per atom (a?* and the like are refused below)
      }
      if (more() && (peek() == '*' || peek() == '+' || peek() == '?' || peek() == '{'))
        fail("two quantifiers in a row");
      seq->kids.push_back(std::move(a));
    }
    return seq;
  }

  std::unique_ptr<Node> alternation(bool fold, int depth) {
    if (depth > kMaxDepth) fail("groups nested too deep");
    auto alt = std::make_unique<Node>();
    alt->type = Node::Alt;
    alt->kids.push_back(sequence(fold, depth));
    while (more() && peek() == '|') {
      ++i_;
      alt->kids.push_back(sequence(fold, depth));
    }
    if (alt->kids.size() == 1) return std::move(alt->kids[0]);
    return alt;
  }

  const std::string& p_;
  std::vector<TokenRegex::ClassSet>& classes_;
  std::size_t i_ = 0;
};

class Compiler {
 public:
  Compiler(std::vector<TokenRegex::Inst>& program, const Parser& parser) : prog_(program), parser_(parser) {}

  void emit(const Node& n) {
    if (prog_.size() > kMaxProgram) parser_.fail("the pattern is too large once its repeats are written out");
    switch (n.type) {
      case Node::Empty: return;
      case Node::Class: {
        TokenRegex::Inst in;
        in.op = kClass, in.cls = n.cls;
        prog_.push_back(in);
        return;
      }
      case Node::Seq:
        for (const auto& k : n.kids) emit(*k);
        return;
      case Node::Alt: {
        std::vector<int> jumps;
        for (std::size_t k = 0; k < n.kids.size(); ++k) {
          int split = -1;
          if (k + 1 < n.kids.size()) split = add(kSplit);
          if (split >= 0) prog_[split].x = here();
          emit(*n.kids[k]);
          if (k + 1 < n.kids.size()) {
            jumps.push_back(add(kJmp));
            prog_[split].y = here();
          }
        }
        for (int j : jumps) prog_[j].x = here();
        return;
      }
      case Node::Look: {
        const int look = add(kLook);
        prog_[look].negate = n.negate;
        prog_[look].x = here();
        emit(*n.kids[0]);
        add(kMatch);
        prog_[look].y = here();
        return;
      }
      case Node::Repeat: {
        const Node& body = *n.kids[0];
        if (body.type == Node::Class) {  // one instruction that takes a run and gives back one at a time
          TokenRegex::Inst in;
          in.op = kRepeat, in.cls = body.cls, in.min = n.min, in.max = n.max;
          prog_.push_back(in);
          return;
        }
        for (long k = 0; k < n.min; ++k) emit(body);
        if (n.max == kUnbounded) {
          const int loop = add(kSplit);
          prog_[loop].x = here();
          emit(body);
          prog_[add(kJmp)].x = loop;
          prog_[loop].y = here();
          return;
        }
        std::vector<int> splits;
        for (long k = n.min; k < n.max; ++k) {
          const int s = add(kSplit);
          prog_[s].x = here();
          splits.push_back(s);
          emit(body);
        }
        for (int s : splits) prog_[s].y = here();
        return;
      }
    }
  }

 private:
  int add(std::uint8_t op) {
    TokenRegex::Inst in;
    in.op = op;
    prog_.push_back(in);
    return static_cast<int>(prog_.size()) - 1;
  }
  int here() const { return static_cast<int>(prog_.size()); }

  std::vector<TokenRegex::Inst>& prog_;
  const Parser& parser_;
};

[[noreturn]] void out_of_budget(const std::string& pattern) {
  std::string shown;
  for (char c : pattern.substr(0, 60)) shown += (static_cast<unsigned char>(c) < 0x20) ? '?' : c;
  throw std::invalid_argument("regex '" + shown + "': needs too many steps on this text (it backtracks without end)");
}

}  // namespace

bool is_unicode_white_space(std::uint32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

bool TokenRegex::ClassSet::test(std::uint32_t cp) const {
  bool in = false;
  for (const auto& [lo, hi] : ranges)
    if (cp >= lo && cp <= hi) {
      in = true;
      break;
    }
  if (!in && props) {
    if ((props & kLetter) && is_letter(cp)) in = true;
    else if ((props & kNumber) && is_number(cp)) in = true;
    else if ((props & kSpace) && is_unicode_white_space(cp)) in = true;
    else if ((props & kNotLetter) && !is_letter(cp)) in = true;
    else if ((props & kNotNumber) && !is_number(cp)) in = true;
    else if ((props & kNotSpace) && !is_unicode_white_space(cp)) in = true;
  }
  return in != negated;
}

TokenRegex::TokenRegex(const std::string& pattern) : pattern_(pattern) {
  if (pattern.size() > 4096) throw std::invalid_argument("regex: the pattern is " + std::to_string(pattern.size()) + " bytes, over the limit of 4096");
  Parser parser(pattern_, classes_);
  const auto root = parser.parse();
  Compiler compiler(program_, parser);
  compiler.emit(*root);
  Inst match;
  match.op = kMatch;
  program_.push_back(match);
  if (program_.size() > kMaxProgram) parser.fail("the pattern is too large once its repeats are written out");
}

bool TokenRegex::match_at(int start_pc, std::size_t start_pos, const std::uint32_t* cps, std::size_t n, std::size_t* end,
                          long long* budget, int depth) const {
  if (depth > kMaxDepth) out_of_budget(pattern_);
  struct Frame {
    int pc;
    std::size_t pos;
    long count;  // >= 0: retry the Repeat at pc taking this many characters from pos
  };
  std::vector<Frame> stack;
  stack.push_back({start_pc, start_pos, -1});
  while (!stack.empty()) {
    Frame f = stack.back();
    stack.pop_back();
    int pc = f.pc;
    std::size_t pos = f.pos;
    if (f.count >= 0) {
      if (f.count > program_[pc].min) stack.push_back({pc, pos, f.count - 1});
      pos += static_cast<std::size_t>(f.count);
      ++pc;
    }
    for (bool alive = true; alive;) {
      if (--*budget < 0) out_of_budget(pattern_);
      const Inst& in = program_[static_cast<std::size_t>(pc)];
      switch (in.op) {
        case kClass:
          if (pos < n && classes_[in.cls].test(cps[pos])) ++pos, ++pc;
          else alive = false;
          break;
        case kRepeat: {
          const ClassSet& set = classes_[in.cls];
          long k = 0;
          while ((in.max == kUnbounded || k < in.max) && pos + k < n && set.test(cps[pos + k])) ++k;
          *budget -= k;
          if (k < in.min) {
            alive = false;
            break;
          }
          if (k > in.min) stack.push_back({pc, pos, k - 1});
          pos += static_cast<std::size_t>(k);
          ++pc;
          break;
        }
        case kSplit:
          stack.push_back({in.y, pos, -1});
          pc = in.x;
          break;
        case kJmp: pc = in.x; break;
        case kLook: {
          std::size_t ignored = 0;
          const bool matched = match_at(in.x, pos, cps, n, &ignored, budget, depth + 1);
          if (matched == in.negate) alive = false;
          else pc = in.y;
          break;
        }
        case kMatch: *end = pos; return true;
        default: alive = false;
      }
    }
  }
  return false;
}

void TokenRegex::find_all(const std::uint32_t* cps, std::size_t n, std::vector<std::pair<std::size_t, std::size_t>>& out,
                          long long* budget) const {
  // Oniguruma's find_iter: search from last_end; an empty match at the end of the previous match is
  // skipped by stepping one character on.
  std::size_t last_end = 0;
  bool have_last = false;
  std::size_t last_match_end = 0;
  while (last_end <= n) {
    std::size_t begin = last_end, end = 0;
    bool found = false;
    for (; begin <= n; ++begin)
      if (match_at(0, begin, cps, n, &end, budget, 0)) {
        found = true;
        break;
      }
    if (!found) return;
    if (end == begin && have_last && last_match_end == end) {
      last_end += 1;
      continue;
    }
    last_end = end;
    have_last = true;
    last_match_end = end;
    out.emplace_back(begin, end);
  }
}

}  // namespace attn
