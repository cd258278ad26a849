#include "llm/tokenizer/regex.h"

#include <bitset>
#include <cctype>

#include "llm/tokenizer/unicode.h"
#include "llm/tokenizer/utf8.h"

namespace reel::llm::internal {
namespace {

// ---------------------------------------------------------------------------------------------
// Character sets.

enum class SpecialClass : uint8_t { kSpace, kWord, kDigit, kHexDigit };

struct SetItem {
  enum Kind : uint8_t { kRange, kCategories, kSpecial } kind;
  bool negated = false;
  uint32_t lo = 0, hi = 0;  // kRange
  uint32_t mask = 0;        // kCategories
  SpecialClass special = SpecialClass::kSpace;
};

struct CharSet {
  std::vector<SetItem> items;
  bool negated = false;
  std::bitset<128> ascii;  // precomputed answer for ASCII

  bool ItemsMatch(uint32_t cp) const {
    for (const SetItem& it : items) {
      bool m = false;
      switch (it.kind) {
        case SetItem::kRange:
          m = cp >= it.lo && cp <= it.hi;
          break;
        case SetItem::kCategories:
          m = InCategories(cp, it.mask);
          break;
        case SetItem::kSpecial:
          switch (it.special) {
            case SpecialClass::kSpace:
              m = IsOnigSpace(cp);
              break;
            case SpecialClass::kWord:
              m = IsOnigWord(cp);
              break;
            case SpecialClass::kDigit:
              m = CategoryOf(cp) == GeneralCategory::kNd;
              break;
            case SpecialClass::kHexDigit:
              m = (cp >= '0' && cp <= '9') || (cp >= 'a' && cp <= 'f') || (cp >= 'A' && cp <= 'F');
              break;
          }
          break;
      }
      if (m != it.negated) return true;
    }
    return false;
  }
  void Finish() {
    for (uint32_t c = 0; c < 128; ++c) ascii[c] = ItemsMatch(c) != negated;
  }
  bool Matches(uint32_t cp) const {
    if (cp < 128) return ascii[cp];
    return ItemsMatch(cp) != negated;
  }
};

// ---------------------------------------------------------------------------------------------
// Syntax tree.

enum class AssertKind : uint8_t {
  kLineStart,
  kLineEnd,
  kTextStart,
  kTextEnd,
  kTextEndNewline,
  kWordBoundary,
  kNotWordBoundary
};
enum class Greed : uint8_t { kGreedy, kLazy, kPossessive };

struct Node {
  enum Kind : uint8_t {
    kEmpty,
    kChar,
    kSet,
    kAny,
    kConcat,
    kAlt,
    kRepeat,
    kLook,
    kAtomic,
    kAssert
  };
  Kind kind = kEmpty;
  uint32_t cp = 0;
  int set = -1;
  std::vector<std::unique_ptr<Node>> kids;
  int min = 0, max = 0;  // kRepeat; max -1 = unbounded
  Greed greed = Greed::kGreedy;
  bool behind = false, negative = false;  // kLook
  AssertKind assert_kind = AssertKind::kTextStart;
};
using NodePtr = std::unique_ptr<Node>;

NodePtr MakeNode(Node::Kind kind) {
  auto n = std::make_unique<Node>();
  n->kind = kind;
  return n;
}

// ---------------------------------------------------------------------------------------------
// Parser.

class Parser {
 public:
  Parser(std::string_view pattern, std::vector<CharSet>& sets) : p_(pattern), sets_(sets) {}

  Result<NodePtr> Parse() {
    NodePtr n;
    REEL_RETURN_IF_ERROR(ParseAlternation(false, n));
    if (pos_ < p_.size()) return Error("unmatched ')'");
    return n;
  }

 private:
  Status Error(const std::string& what) const {
    return Unsupported("regular expression /" + std::string(p_) + "/: " + what + " (at byte " +
                       std::to_string(pos_) + ")");
  }
  bool AtEnd() const { return pos_ >= p_.size(); }
  uint32_t Peek() const {
    size_t i = pos_;
    return NextCodePoint(p_, i);
  }
  uint32_t Take() { return NextCodePoint(p_, pos_); }
  bool TakeIf(char c) {
    if (!AtEnd() && p_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  Status ParseAlternation(bool icase, NodePtr& out) {
    bool saved = icase_;
    icase_ = icase;
    std::vector<NodePtr> alts;
    while (true) {
      NodePtr seq;
      REEL_RETURN_IF_ERROR(ParseSequence(seq));
      alts.push_back(std::move(seq));
      if (!TakeIf('|')) break;
    }
    icase_ = saved;
    if (alts.size() == 1) {
      out = std::move(alts[0]);
    } else {
      out = MakeNode(Node::kAlt);
      out->kids = std::move(alts);
    }
    return Status::Ok();
  }

  Status ParseSequence(NodePtr& out) {
    out = MakeNode(Node::kConcat);
    std::string icase_run;  // lowercased case-insensitive literals in a row
    while (!AtEnd() && p_[pos_] != '|' && p_[pos_] != ')') {
      // "(?i)" with no colon: the option holds to the end of the enclosing group, alternatives
      // included, as in Oniguruma.
      if (p_.compare(pos_, 4, "(?i)") == 0 || p_.compare(pos_, 5, "(?-i)") == 0) {
        bool on = p_[pos_ + 2] == 'i';
        pos_ += on ? 4 : 5;
        NodePtr rest;
        REEL_RETURN_IF_ERROR(ParseAlternation(on, rest));
        out->kids.push_back(std::move(rest));
        break;
      }
      NodePtr atom;
      REEL_RETURN_IF_ERROR(ParseQuantified(atom, icase_run));
      out->kids.push_back(std::move(atom));
    }
    return Status::Ok();
  }

  Status CheckIcaseRun(const std::string& run) {
    static const char* const kMulti[] = {"ss", "st", "ff", "fi", "fl"};
    for (const char* m : kMulti) {
      if (run.find(m) != std::string::npos) {
        return Error("case-insensitive \"" + std::string(m) +
                     "\" (multi-character case folding is not reproduced)");
      }
    }
    return Status::Ok();
  }

  Status ParseQuantified(NodePtr& out, std::string& icase_run) {
    size_t atom_start = pos_;
    bool is_literal = false;
    uint32_t literal = 0;
    REEL_RETURN_IF_ERROR(ParseAtom(out, is_literal, literal));
    if (is_literal && icase_) {
      icase_run.push_back(
          static_cast<char>(literal >= 'A' && literal <= 'Z' ? literal + 32 : literal));
      REEL_RETURN_IF_ERROR(CheckIcaseRun(icase_run));
    } else {
      icase_run.clear();
    }
    (void)atom_start;
    while (!AtEnd()) {
      int min = 0, max = 0;
      char c = p_[pos_];
      if (c == '*') {
        min = 0, max = -1;
        ++pos_;
      } else if (c == '+') {
        min = 1, max = -1;
        ++pos_;
      } else if (c == '?') {
        min = 0, max = 1;
        ++pos_;
      } else if (c == '{') {
        size_t save = pos_;
        if (!ParseInterval(min, max)) {
          pos_ = save;
          break;  // not an interval: '{' is a literal, read by the next atom
        }
        if (!AtEnd() && (p_[pos_] == '?' || p_[pos_] == '+')) {
          return Error("'?' or '+' after an interval");
        }
        if (max != -1 && min > max) return Error("interval with min > max");
        if (min > 1000 || max > 1000) return Error("interval bounds above 1000");
        out = Wrap(std::move(out), min, max, Greed::kGreedy);
        icase_run.clear();
        continue;
      } else {
        break;
      }
      Greed greed = Greed::kGreedy;
      if (TakeIf('?')) {
        greed = Greed::kLazy;
      } else if (TakeIf('+')) {
        greed = Greed::kPossessive;
      }
      if (!AtEnd() && (p_[pos_] == '*' || p_[pos_] == '+' || p_[pos_] == '?')) {
        return Error("nested quantifier");
      }
      out = Wrap(std::move(out), min, max, greed);
      icase_run.clear();
    }
    return Status::Ok();
  }

  static NodePtr Wrap(NodePtr child, int min, int max, Greed greed) {
    bool single =
        child->kind == Node::kChar || child->kind == Node::kSet || child->kind == Node::kAny;
    if (greed == Greed::kPossessive && !single) {
      // X*+ is (?>X*).
      NodePtr atomic = MakeNode(Node::kAtomic);
      atomic->kids.push_back(Wrap(std::move(child), min, max, Greed::kGreedy));
      return atomic;
    }
    NodePtr r = MakeNode(Node::kRepeat);
    r->min = min;
    r->max = max;
    r->greed = greed;
    r->kids.push_back(std::move(child));
    return r;
  }

  bool ParseInterval(int& min, int& max) {
    // at '{': {n}, {n,}, {n,m}, {,m}
    ++pos_;
    auto number = [&](int& v) {
      size_t s = pos_;
      v = 0;
      while (!AtEnd() && p_[pos_] >= '0' && p_[pos_] <= '9') {
        v = v * 10 + (p_[pos_] - '0');
        if (v > 100000) v = 100000;
        ++pos_;
      }
      return pos_ > s;
    };
    bool has_min = number(min);
    if (TakeIf('}')) {
      if (!has_min) return false;
      max = min;
      return true;
    }
    if (!TakeIf(',')) return false;
    int m = 0;
    bool has_max = number(m);
    if (!TakeIf('}')) return false;
    if (!has_min && !has_max) return false;
    if (!has_min) min = 0;
    max = has_max ? m : -1;
    return true;
  }

  NodePtr CharNode(uint32_t cp) {
    if (icase_ && ((cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z'))) {
      uint32_t lower = cp | 0x20;
      CharSet set;
      set.items.push_back({SetItem::kRange, false, lower, lower});
      set.items.push_back({SetItem::kRange, false, lower - 32, lower - 32});
      if (lower == 's') set.items.push_back({SetItem::kRange, false, 0x17F, 0x17F});
      if (lower == 'k') set.items.push_back({SetItem::kRange, false, 0x212A, 0x212A});
      set.Finish();
      NodePtr n = MakeNode(Node::kSet);
      n->set = static_cast<int>(sets_.size());
      sets_.push_back(std::move(set));
      return n;
    }
    NodePtr n = MakeNode(Node::kChar);
    n->cp = cp;
    return n;
  }

  Status ParseAtom(NodePtr& out, bool& is_literal, uint32_t& literal) {
    is_literal = false;
    uint32_t c = Peek();
    if (c == '(') return ParseGroup(out);
    if (c == '[') {
      if (icase_) return Error("character class inside a case-insensitive group");
      ++pos_;
      CharSet set;
      REEL_RETURN_IF_ERROR(ParseClass(set));
      set.Finish();
      out = MakeNode(Node::kSet);
      out->set = static_cast<int>(sets_.size());
      sets_.push_back(std::move(set));
      return Status::Ok();
    }
    if (c == '.') {
      ++pos_;
      out = MakeNode(Node::kAny);
      return Status::Ok();
    }
    if (c == '^' || c == '$') {
      ++pos_;
      out = MakeNode(Node::kAssert);
      out->assert_kind = c == '^' ? AssertKind::kLineStart : AssertKind::kLineEnd;
      return Status::Ok();
    }
    if (c == '*' || c == '+' || c == '?') return Error("quantifier without a target");
    if (c == '\\') {
      ++pos_;
      return ParseEscape(out, is_literal, literal);
    }
    Take();
    if (icase_ && c >= 0x80) return Error("non-ASCII literal inside a case-insensitive group");
    is_literal = true;
    literal = c;
    out = CharNode(c);
    return Status::Ok();
  }

  Status ParseGroup(NodePtr& out) {
    ++pos_;  // '('
    if (!TakeIf('?')) {
      REEL_RETURN_IF_ERROR(ParseAlternation(icase_, out));  // a capturing group
      if (!TakeIf(')')) return Error("missing ')'");
      return Status::Ok();
    }
    if (AtEnd()) return Error("unfinished group");
    char k = p_[pos_];
    if (k == ':' || k == '>' || k == '=' || k == '!') {
      ++pos_;
      NodePtr inner;
      REEL_RETURN_IF_ERROR(ParseAlternation(icase_, inner));
      if (!TakeIf(')')) return Error("missing ')'");
      if (k == ':') {
        out = std::move(inner);
      } else if (k == '>') {
        out = MakeNode(Node::kAtomic);
        out->kids.push_back(std::move(inner));
      } else {
        out = MakeNode(Node::kLook);
        out->negative = k == '!';
        out->kids.push_back(std::move(inner));
      }
      return Status::Ok();
    }
    if (k == '<' && pos_ + 1 < p_.size() && (p_[pos_ + 1] == '=' || p_[pos_ + 1] == '!')) {
      bool negative = p_[pos_ + 1] == '!';
      pos_ += 2;
      NodePtr inner;
      REEL_RETURN_IF_ERROR(ParseAlternation(icase_, inner));
      if (!TakeIf(')')) return Error("missing ')'");
      out = MakeNode(Node::kLook);
      out->behind = true;
      out->negative = negative;
      out->kids.push_back(std::move(inner));
      return Status::Ok();
    }
    if (k == '<' || k == '\'') {  // named capture: (?<name>...)
      char close = k == '<' ? '>' : '\'';
      size_t e = p_.find(close, pos_ + 1);
      if (e == std::string_view::npos) return Error("unfinished group name");
      pos_ = e + 1;
      REEL_RETURN_IF_ERROR(ParseAlternation(icase_, out));
      if (!TakeIf(')')) return Error("missing ')'");
      return Status::Ok();
    }
    if (k == 'i' || k == '-') {
      bool on = k == 'i';
      if (!on) {
        if (pos_ + 1 >= p_.size() || p_[pos_ + 1] != 'i') return Error("unsupported group option");
        ++pos_;
      }
      ++pos_;
      if (TakeIf(':')) {
        REEL_RETURN_IF_ERROR(ParseAlternation(on, out));
        if (!TakeIf(')')) return Error("missing ')'");
        return Status::Ok();
      }
      return Error("unsupported group option");
    }
    return Error("unsupported group construct \"(?" + std::string(1, k) + "\"");
  }

  // Reads \p{...} / \P{...} after the 'p' or 'P'.
  Status ParseProperty(bool negated, SetItem& item) {
    if (!TakeIf('{')) return Error("\\p without braces");
    if (TakeIf('^')) negated = !negated;
    size_t e = p_.find('}', pos_);
    if (e == std::string_view::npos) return Error("unfinished \\p{");
    std::string name;
    for (size_t i = pos_; i < e; ++i) {
      char ch = p_[i];
      if (ch == ' ' || ch == '_' || ch == '-') continue;
      name.push_back(static_cast<char>(ch >= 'A' && ch <= 'Z' ? ch + 32 : ch));
    }
    pos_ = e + 1;
    static const struct {
      const char* name;
      uint32_t mask;
    } kProps[] = {
        {"l", kLetterMask},
        {"letter", kLetterMask},
        {"lu", CategoryBit(G::kLu)},
        {"uppercaseletter", CategoryBit(G::kLu)},
        {"ll", CategoryBit(G::kLl)},
        {"lowercaseletter", CategoryBit(G::kLl)},
        {"lt", CategoryBit(G::kLt)},
        {"titlecaseletter", CategoryBit(G::kLt)},
        {"lm", CategoryBit(G::kLm)},
        {"modifierletter", CategoryBit(G::kLm)},
        {"lo", CategoryBit(G::kLo)},
        {"otherletter", CategoryBit(G::kLo)},
        {"lc", CategoryBit(G::kLu) | CategoryBit(G::kLl) | CategoryBit(G::kLt)},
        {"casedletter", CategoryBit(G::kLu) | CategoryBit(G::kLl) | CategoryBit(G::kLt)},
        {"m", kMarkMask},
        {"mark", kMarkMask},
        {"combiningmark", kMarkMask},
        {"mn", CategoryBit(G::kMn)},
        {"nonspacingmark", CategoryBit(G::kMn)},
        {"mc", CategoryBit(G::kMc)},
        {"spacingmark", CategoryBit(G::kMc)},
        {"me", CategoryBit(G::kMe)},
        {"enclosingmark", CategoryBit(G::kMe)},
        {"n", kNumberMask},
        {"number", kNumberMask},
        {"nd", CategoryBit(G::kNd)},
        {"decimalnumber", CategoryBit(G::kNd)},
        {"nl", CategoryBit(G::kNl)},
        {"letternumber", CategoryBit(G::kNl)},
        {"no", CategoryBit(G::kNo)},
        {"othernumber", CategoryBit(G::kNo)},
        {"p", kPunctuationMask},
        {"punctuation", kPunctuationMask},
        {"punct", kPunctuationMask},
        {"pc", CategoryBit(G::kPc)},
        {"connectorpunctuation", CategoryBit(G::kPc)},
        {"pd", CategoryBit(G::kPd)},
        {"dashpunctuation", CategoryBit(G::kPd)},
        {"ps", CategoryBit(G::kPs)},
        {"openpunctuation", CategoryBit(G::kPs)},
        {"pe", CategoryBit(G::kPe)},
        {"closepunctuation", CategoryBit(G::kPe)},
        {"pi", CategoryBit(G::kPi)},
        {"initialpunctuation", CategoryBit(G::kPi)},
        {"pf", CategoryBit(G::kPf)},
        {"finalpunctuation", CategoryBit(G::kPf)},
        {"po", CategoryBit(G::kPo)},
        {"otherpunctuation", CategoryBit(G::kPo)},
        {"s", kSymbolMask},
        {"symbol", kSymbolMask},
        {"sm", CategoryBit(G::kSm)},
        {"mathsymbol", CategoryBit(G::kSm)},
        {"sc", CategoryBit(G::kSc)},
        {"currencysymbol", CategoryBit(G::kSc)},
        {"sk", CategoryBit(G::kSk)},
        {"modifiersymbol", CategoryBit(G::kSk)},
        {"so", CategoryBit(G::kSo)},
        {"othersymbol", CategoryBit(G::kSo)},
        {"z", kSeparatorMask},
        {"separator", kSeparatorMask},
        {"zs", CategoryBit(G::kZs)},
        {"spaceseparator", CategoryBit(G::kZs)},
        {"zl", CategoryBit(G::kZl)},
        {"lineseparator", CategoryBit(G::kZl)},
        {"zp", CategoryBit(G::kZp)},
        {"paragraphseparator", CategoryBit(G::kZp)},
        {"c", kOtherMask},
        {"other", kOtherMask},
        {"cc", CategoryBit(G::kCc)},
        {"control", CategoryBit(G::kCc)},
        {"cf", CategoryBit(G::kCf)},
        {"format", CategoryBit(G::kCf)},
        {"cs", CategoryBit(G::kCs)},
        {"surrogate", CategoryBit(G::kCs)},
        {"co", CategoryBit(G::kCo)},
        {"privateuse", CategoryBit(G::kCo)},
        {"cn", CategoryBit(G::kCn)},
        {"unassigned", CategoryBit(G::kCn)},
    };
    for (const auto& prop : kProps) {
      if (name == prop.name) {
        item.kind = SetItem::kCategories;
        item.mask = prop.mask;
        item.negated = negated;
        return Status::Ok();
      }
    }
    return Error("unsupported property \\p{" + name + "}");
  }

  // Escapes that stand for one character; returns false if `c` is not one.
  bool SimpleEscape(uint32_t c, uint32_t& out, Status& error) {
    switch (c) {
      case 't':
        out = 0x09;
        return true;
      case 'n':
        out = 0x0A;
        return true;
      case 'r':
        out = 0x0D;
        return true;
      case 'f':
        out = 0x0C;
        return true;
      case 'v':
        out = 0x0B;
        return true;
      case 'a':
        out = 0x07;
        return true;
      case 'e':
        out = 0x1B;
        return true;
      case 'x': {
        uint32_t v = 0;
        if (TakeIf('{')) {
          int digits = 0;
          while (!AtEnd() && std::isxdigit(static_cast<unsigned char>(p_[pos_]))) {
            v = v * 16 + HexValue(p_[pos_++]);
            if (++digits > 8) break;
          }
          if (!TakeIf('}') || digits == 0 || v > 0x10FFFF) {
            error = Error("bad \\x{...}");
            return true;
          }
        } else {
          int digits = 0;
          while (digits < 2 && !AtEnd() && std::isxdigit(static_cast<unsigned char>(p_[pos_]))) {
            v = v * 16 + HexValue(p_[pos_++]);
            ++digits;
          }
          if (digits == 0) {
            error = Error("bad \\x");
            return true;
          }
          if (v >= 0x80) {
            error = Error("\\xHH above 0x7F (a raw byte in UTF-8)");
            return true;
          }
        }
        out = v;
        return true;
      }
      case 'u': {
        uint32_t v = 0;
        for (int i = 0; i < 4; ++i) {
          if (AtEnd() || !std::isxdigit(static_cast<unsigned char>(p_[pos_]))) {
            error = Error("bad \\u");
            return true;
          }
          v = v * 16 + HexValue(p_[pos_++]);
        }
        out = v;
        return true;
      }
      case '0': {
        uint32_t v = 0;
        for (int i = 0; i < 2 && !AtEnd() && p_[pos_] >= '0' && p_[pos_] <= '7'; ++i) {
          v = v * 8 + static_cast<uint32_t>(p_[pos_++] - '0');
        }
        out = v;
        return true;
      }
      default:
        break;
    }
    if (c < 0x80 && !std::isalnum(static_cast<int>(c))) {
      out = c;  // an escaped punctuation character stands for itself
      return true;
    }
    if (c >= 0x80) {
      out = c;
      return true;
    }
    return false;
  }

  static uint32_t HexValue(char c) {
    if (c >= '0' && c <= '9') return static_cast<uint32_t>(c - '0');
    if (c >= 'a' && c <= 'f') return static_cast<uint32_t>(c - 'a' + 10);
    return static_cast<uint32_t>(c - 'A' + 10);
  }

  // \s \S \d \D \w \W \h \H \p \P; returns false if `c` is none of them.
  bool ClassEscape(uint32_t c, SetItem& item, Status& error) {
    item = SetItem{};
    item.kind = SetItem::kSpecial;
    switch (c) {
      case 's':
      case 'S':
        item.special = SpecialClass::kSpace;
        break;
      case 'w':
      case 'W':
        item.special = SpecialClass::kWord;
        break;
      case 'd':
      case 'D':
        item.special = SpecialClass::kDigit;
        break;
      case 'h':
      case 'H':
        item.special = SpecialClass::kHexDigit;
        break;
      case 'p':
      case 'P':
        error = ParseProperty(c == 'P', item);
        return true;
      default:
        return false;
    }
    item.negated = c >= 'A' && c <= 'Z';
    return true;
  }

  Status ParseEscape(NodePtr& out, bool& is_literal, uint32_t& literal) {
    if (AtEnd()) return Error("trailing backslash");
    uint32_t c = Take();
    SetItem item;
    Status error;
    if (ClassEscape(c, item, error)) {
      REEL_RETURN_IF_ERROR(error);
      if (icase_ && item.kind == SetItem::kCategories) {
        return Error("property class inside a case-insensitive group");
      }
      CharSet set;
      set.items.push_back(item);
      set.Finish();
      out = MakeNode(Node::kSet);
      out->set = static_cast<int>(sets_.size());
      sets_.push_back(std::move(set));
      return Status::Ok();
    }
    AssertKind kind;
    bool is_assert = true;
    switch (c) {
      case 'A':
        kind = AssertKind::kTextStart;
        break;
      case 'z':
        kind = AssertKind::kTextEnd;
        break;
      case 'Z':
        kind = AssertKind::kTextEndNewline;
        break;
      case 'b':
        kind = AssertKind::kWordBoundary;
        break;
      case 'B':
        kind = AssertKind::kNotWordBoundary;
        break;
      default:
        is_assert = false;
        break;
    }
    if (is_assert) {
      out = MakeNode(Node::kAssert);
      out->assert_kind = kind;
      return Status::Ok();
    }
    uint32_t v = 0;
    if (SimpleEscape(c, v, error)) {
      REEL_RETURN_IF_ERROR(error);
      if (icase_ && v >= 0x80) return Error("non-ASCII literal inside a case-insensitive group");
      is_literal = true;
      literal = v;
      out = CharNode(v);
      return Status::Ok();
    }
    std::string esc;
    AppendUtf8(esc, c);
    return Error("unsupported escape \\" + esc);
  }

  Status ParseClass(CharSet& set) {
    if (TakeIf('^')) set.negated = true;
    bool first = true;
    while (true) {
      if (AtEnd()) return Error("missing ']'");
      uint32_t c = Peek();
      if (c == ']' && !first) {
        ++pos_;
        break;
      }
      if (c == '[') return Error("nested character class or POSIX bracket");
      if (c == '&' && pos_ + 1 < p_.size() && p_[pos_ + 1] == '&') {
        return Error("character class intersection (&&)");
      }
      first = false;
      uint32_t lo;
      Take();
      if (c == '\\') {
        if (AtEnd()) return Error("trailing backslash");
        uint32_t e = Take();
        SetItem item;
        Status error;
        if (ClassEscape(e, item, error)) {
          REEL_RETURN_IF_ERROR(error);
          set.items.push_back(item);
          continue;
        }
        if (e == 'b') {
          lo = 0x08;
        } else if (!SimpleEscape(e, lo, error)) {
          std::string esc;
          AppendUtf8(esc, e);
          return Error("unsupported escape \\" + esc + " in a class");
        }
        REEL_RETURN_IF_ERROR(error);
      } else {
        lo = c;
      }
      uint32_t hi = lo;
      if (!AtEnd() && p_[pos_] == '-' && pos_ + 1 < p_.size() && p_[pos_ + 1] != ']') {
        ++pos_;
        uint32_t h = Take();
        if (h == '[') return Error("nested character class");
        if (h == '\\') {
          if (AtEnd()) return Error("trailing backslash");
          uint32_t e = Take();
          Status error;
          if (!SimpleEscape(e, h, error)) return Error("bad range end in a class");
          REEL_RETURN_IF_ERROR(error);
        }
        if (h < lo) return Error("empty range in a class");
        hi = h;
      }
      set.items.push_back({SetItem::kRange, false, lo, hi});
    }
    return Status::Ok();
  }

  std::string_view p_;
  size_t pos_ = 0;
  bool icase_ = false;
  std::vector<CharSet>& sets_;
};

// ---------------------------------------------------------------------------------------------
// Analysis.

bool Nullable(const Node& n) {
  switch (n.kind) {
    case Node::kEmpty:
    case Node::kLook:
    case Node::kAssert:
      return true;
    case Node::kChar:
    case Node::kSet:
    case Node::kAny:
      return false;
    case Node::kConcat:
      for (const auto& k : n.kids) {
        if (!Nullable(*k)) return false;
      }
      return true;
    case Node::kAlt:
      for (const auto& k : n.kids) {
        if (Nullable(*k)) return true;
      }
      return false;
    case Node::kRepeat:
      return n.min == 0 || Nullable(*n.kids[0]);
    case Node::kAtomic:
      return Nullable(*n.kids[0]);
  }
  return true;
}

// Length in characters of every match of `n`, or -1 if it varies.
int FixedLength(const Node& n) {
  switch (n.kind) {
    case Node::kEmpty:
    case Node::kLook:
    case Node::kAssert:
      return 0;
    case Node::kChar:
    case Node::kSet:
    case Node::kAny:
      return 1;
    case Node::kConcat: {
      int total = 0;
      for (const auto& k : n.kids) {
        int l = FixedLength(*k);
        if (l < 0) return -1;
        total += l;
      }
      return total;
    }
    case Node::kAlt: {
      int l = -2;
      for (const auto& k : n.kids) {
        int x = FixedLength(*k);
        if (x < 0 || (l != -2 && x != l)) return -1;
        l = x;
      }
      return l < 0 ? 0 : l;
    }
    case Node::kRepeat: {
      if (n.min != n.max) return -1;
      int l = FixedLength(*n.kids[0]);
      return l < 0 ? -1 : l * n.min;
    }
    case Node::kAtomic:
      return FixedLength(*n.kids[0]);
  }
  return -1;
}

using ByteSet = std::bitset<256>;

void AddFirstBytesOfSet(const CharSet& set, ByteSet& bytes) {
  for (uint32_t c = 0; c < 128; ++c) {
    if (set.ascii[c]) bytes.set(c);
  }
  for (uint32_t b = 0xC2; b <= 0xF4; ++b) bytes.set(b);  // any non-ASCII character might match
}

// Adds the possible first bytes of a match of `n`; returns whether `n` can match empty (then
// what follows contributes too).
bool FirstBytes(const Node& n, const std::vector<CharSet>& sets, ByteSet& bytes) {
  switch (n.kind) {
    case Node::kEmpty:
    case Node::kLook:
    case Node::kAssert:
      return true;
    case Node::kChar: {
      std::string s;
      AppendUtf8(s, n.cp);
      bytes.set(static_cast<unsigned char>(s[0]));
      return false;
    }
    case Node::kSet:
      AddFirstBytesOfSet(sets[static_cast<size_t>(n.set)], bytes);
      return false;
    case Node::kAny:
      bytes.set();
      bytes.reset('\n');
      return false;
    case Node::kConcat:
      for (const auto& k : n.kids) {
        if (!FirstBytes(*k, sets, bytes)) return false;
      }
      return true;
    case Node::kAlt: {
      bool nullable = false;
      for (const auto& k : n.kids) nullable |= FirstBytes(*k, sets, bytes);
      return nullable;
    }
    case Node::kRepeat: {
      bool nullable = FirstBytes(*n.kids[0], sets, bytes);
      return nullable || n.min == 0;
    }
    case Node::kAtomic:
      return FirstBytes(*n.kids[0], sets, bytes);
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Program.

enum class Op : uint8_t {
  kFail,  // never in a program: a state known to fail
  kChar,
  kSet,
  kAny,
  kSplit,
  kJmp,
  kAssert,
  kLook,
  kAtomic,
  kRepeatSet,
  kRepeatChar,
  kRepeatAny,
  kMatch
};

struct Inst {
  Op op;
  Greed greed = Greed::kGreedy;
  bool negative = false;
  bool behind = false;
  uint32_t a = 0;  // char, set index, jump target, sub-program, assert kind
  uint32_t b = 0;  // second split target
  int min = 0, max = 0;
  // A join point: a split or jump target, or the instruction after a repetition (reached with
  // each count). Failures are remembered here (see Matcher).
  bool memo = false;
};

}  // namespace

struct Regex::Program {
  std::string pattern;
  std::vector<CharSet> sets;
  std::vector<std::vector<Inst>> subs;
  uint32_t main = 0;                  // the whole pattern's sub-program
  std::vector<uint64_t> first_state;  // per sub-program: the number of its first instruction
  uint64_t instructions = 0;          // in all sub-programs
  ByteSet first_bytes;
  bool nullable = false;
};

namespace {

class Compiler {
 public:
  explicit Compiler(Regex::Program& prog) : prog_(prog) {}

  Status CompileSub(const Node& n, uint32_t& index) {
    index = static_cast<uint32_t>(prog_.subs.size());
    prog_.subs.emplace_back();
    std::vector<Inst> code;
    REEL_RETURN_IF_ERROR(Emit(n, code));
    code.push_back({Op::kMatch});
    if (code.size() > 200000) {
      return Unsupported("regular expression /" + prog_.pattern + "/: too large when expanded");
    }
    prog_.subs[index] = std::move(code);
    return Status::Ok();
  }

 private:
  Status Emit(const Node& n, std::vector<Inst>& code) {
    switch (n.kind) {
      case Node::kEmpty:
        return Status::Ok();
      case Node::kChar:
        code.push_back({Op::kChar, Greed::kGreedy, false, false, n.cp});
        return Status::Ok();
      case Node::kSet:
        code.push_back({Op::kSet, Greed::kGreedy, false, false, static_cast<uint32_t>(n.set)});
        return Status::Ok();
      case Node::kAny:
        code.push_back({Op::kAny});
        return Status::Ok();
      case Node::kAssert:
        code.push_back(
            {Op::kAssert, Greed::kGreedy, false, false, static_cast<uint32_t>(n.assert_kind)});
        return Status::Ok();
      case Node::kConcat:
        for (const auto& k : n.kids) REEL_RETURN_IF_ERROR(Emit(*k, code));
        return Status::Ok();
      case Node::kAlt: {
        // split L1, next; L1: alt0; jmp end; next: split L2, next2; ...
        std::vector<size_t> jumps;
        for (size_t i = 0; i < n.kids.size(); ++i) {
          size_t split = 0;
          bool last = i + 1 == n.kids.size();
          if (!last) {
            split = code.size();
            code.push_back({Op::kSplit});
            code[split].a = static_cast<uint32_t>(code.size());
          }
          REEL_RETURN_IF_ERROR(Emit(*n.kids[i], code));
          if (!last) {
            jumps.push_back(code.size());
            code.push_back({Op::kJmp});
            code[split].b = static_cast<uint32_t>(code.size());
          }
        }
        for (size_t j : jumps) code[j].a = static_cast<uint32_t>(code.size());
        return Status::Ok();
      }
      case Node::kLook: {
        uint32_t sub;
        REEL_RETURN_IF_ERROR(CompileSub(*n.kids[0], sub));
        Inst inst{Op::kLook};
        inst.a = sub;
        inst.negative = n.negative;
        inst.behind = n.behind;
        if (n.behind) {
          int len = FixedLength(*n.kids[0]);
          if (len < 0) {
            return Unsupported("regular expression /" + prog_.pattern +
                               "/: look-behind of varying length");
          }
          inst.min = len;
        }
        code.push_back(inst);
        return Status::Ok();
      }
      case Node::kAtomic: {
        uint32_t sub;
        REEL_RETURN_IF_ERROR(CompileSub(*n.kids[0], sub));
        code.push_back({Op::kAtomic, Greed::kGreedy, false, false, sub});
        return Status::Ok();
      }
      case Node::kRepeat:
        return EmitRepeat(n, code);
    }
    return Status::Ok();
  }

  Status EmitRepeat(const Node& n, std::vector<Inst>& code) {
    const Node& child = *n.kids[0];
    if (child.kind == Node::kChar || child.kind == Node::kSet || child.kind == Node::kAny) {
      Inst inst{child.kind == Node::kChar  ? Op::kRepeatChar
                : child.kind == Node::kSet ? Op::kRepeatSet
                                           : Op::kRepeatAny};
      inst.a = child.kind == Node::kChar ? child.cp : static_cast<uint32_t>(child.set);
      inst.greed = n.greed;
      inst.min = n.min;
      inst.max = n.max;
      code.push_back(inst);
      return Status::Ok();
    }
    if (Nullable(child)) {
      return Unsupported("regular expression /" + prog_.pattern +
                         "/: a repeated group that can match the empty string");
    }
    bool lazy = n.greed == Greed::kLazy;
    for (int i = 0; i < n.min; ++i) REEL_RETURN_IF_ERROR(Emit(child, code));
    if (n.max == -1) {
      size_t loop = code.size();
      code.push_back({Op::kSplit});
      size_t body = code.size();
      REEL_RETURN_IF_ERROR(Emit(child, code));
      code.push_back({Op::kJmp, Greed::kGreedy, false, false, static_cast<uint32_t>(loop)});
      size_t exit = code.size();
      code[loop].a = static_cast<uint32_t>(lazy ? exit : body);
      code[loop].b = static_cast<uint32_t>(lazy ? body : exit);
      return Status::Ok();
    }
    std::vector<size_t> splits;
    for (int i = n.min; i < n.max; ++i) {
      splits.push_back(code.size());
      code.push_back({Op::kSplit});
      code[splits.back()].a = static_cast<uint32_t>(code.size());  // body (fixed up if lazy)
      REEL_RETURN_IF_ERROR(Emit(child, code));
    }
    size_t exit = code.size();
    for (size_t s : splits) {
      uint32_t body = code[s].a;
      code[s].a = static_cast<uint32_t>(lazy ? exit : body);
      code[s].b = static_cast<uint32_t>(lazy ? body : exit);
    }
    return Status::Ok();
  }

  Regex::Program& prog_;
};

// Marks the join points (Inst::memo) of every sub-program and numbers their instructions. Join
// points: the first instruction of a sub-program (look-around and atomic groups call theirs again
// and again), split and jump targets, and the instruction after a repetition (reached with each
// count).
void MarkJoinPoints(Regex::Program& prog) {
  uint64_t next = 0;
  for (std::vector<Inst>& code : prog.subs) {
    prog.first_state.push_back(next);
    next += code.size();
    auto mark = [&](size_t target) {
      if (target < code.size() && code[target].op != Op::kMatch) code[target].memo = true;
    };
    mark(0);
    for (size_t pc = 0; pc < code.size(); ++pc) {
      switch (code[pc].op) {
        case Op::kSplit:
          mark(code[pc].a);
          mark(code[pc].b);
          break;
        case Op::kJmp:
          mark(code[pc].a);
          break;
        case Op::kRepeatSet:
        case Op::kRepeatChar:
        case Op::kRepeatAny:
          mark(pc + 1);
          break;
        default:
          break;
      }
    }
  }
  prog.instructions = next;
}

// An open-addressing hash table from keys below 2^63 to 64-bit values, doubling when half full:
// its memory follows what is stored, not the text's length.
class WordTable {
 public:
  const uint64_t* Find(uint64_t key) const {
    if (slots_.empty()) return nullptr;
    for (size_t i = Hash(key) & mask_;; i = (i + 1) & mask_) {
      if (slots_[i].key == key) return &slots_[i].value;
      if (slots_[i].key == kEmpty) return nullptr;
    }
  }
  // The value of `key`, inserted as 0 when absent.
  uint64_t& At(uint64_t key) {
    if (2 * (used_ + 1) > slots_.size()) Grow();
    for (size_t i = Hash(key) & mask_;; i = (i + 1) & mask_) {
      Slot& slot = slots_[i];
      if (slot.key == key) return slot.value;
      if (slot.key == kEmpty) {
        slot.key = key;
        ++used_;
        return slot.value;
      }
    }
  }

 private:
  static constexpr uint64_t kEmpty = ~uint64_t{0};
  struct Slot {
    uint64_t key = kEmpty;
    uint64_t value = 0;
  };
  static size_t Hash(uint64_t key) {
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdULL;
    key ^= key >> 33;
    return static_cast<size_t>(key);
  }
  void Grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 1024 : 2 * old.size(), Slot{});
    mask_ = slots_.size() - 1;
    for (const Slot& slot : old) {
      if (slot.key == kEmpty) continue;
      size_t i = Hash(slot.key) & mask_;
      while (slots_[i].key != kEmpty) i = (i + 1) & mask_;
      slots_[i] = slot;
    }
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  size_t used_ = 0;
};

// A set of (state, text position) pairs, 64 positions to a word. States are below 2^37 and
// positions below 2^32, so a key (state, position / 64) fits in 63 bits.
class StateSet {
 public:
  bool Contains(uint64_t state, size_t pos) const {
    const uint64_t* bits = words_.Find(state << 26 | pos >> 6);
    return bits != nullptr && ((*bits >> (pos & 63)) & 1);
  }
  void Insert(uint64_t state, size_t pos) {
    words_.At(state << 26 | pos >> 6) |= uint64_t{1} << (pos & 63);
  }

 private:
  WordTable words_;
};

enum BacktrackKind : uint8_t {
  kPlain,         // try pc at pos (a split's other branch)
  kGreedyRepeat,  // a repetition with `aux` items matched: give one back
  kLazyRepeat,    // a lazy repetition with `aux` items matched: take one more
  kGreedyLoop,    // an unbounded greedy repetition (remembering): give back down to `aux`
  kLazyLoop,      // an unbounded lazy repetition (remembering) that started at `aux`
  kJoinVisited,   // popped: every continuation of the join point (pc, pos) has failed
};

struct Backtrack {
  uint32_t pc;
  uint32_t pos;
  uint32_t aux;  // see BacktrackKind
  uint8_t kind;  // BacktrackKind
};

// The backtracking search, remembering outcomes once it has worked long enough.
//
// Why remembering is exact: the pattern has no back-references and reports no groups, so what
// the search finds from a state (instruction of a sub-program, text position) depends on that
// state alone (look-behind and anchors read the text, which does not change), and so does the
// first match found from it. A join point's state is recorded
//   - as failed when everything after it has been tried without a match (its kJoinVisited entry
//     is popped: backtracking went below it);
//   - as succeeded, with the match's end, when the match of a look-around or atomic group's
//     sub-program is reached while it is on the stack (every kJoinVisited entry still on the
//     stack is a state the match passed through): those are called again and again.
// A later visit of a recorded state fails at once, or jumps to its match. Between two join
// points the program runs without choices, so a path that reaches a state again has passed
// through a recorded join point.
//
// A repetition of one item without an upper bound also records "loop" states (LoopState): for a
// position p in a run of matching items, every continuation from p to the end of the run has
// failed (the give-backs of a greedy one have gone below p, or a lazy one has taken the whole
// run). A scan that reaches such a p stops there, so the many starts inside one run cost one
// scan. Each such repetition remembers the last run it scanned (`runs_`), and where the run's
// known failures begin, so a scan from inside it costs nothing.
//
// Cost once remembering: each state is explored at most once per text, so a FindAll does O(m * n)
// work (m instructions, n bytes) plus a scan of each run per repetition: linear in the text.
// The work before remembering starts is capped (memo_after_).
class Matcher {
 public:
  Matcher(const Regex::Program& prog, std::string_view text, Regex::Memo memo)
      : prog_(prog), text_(text) {
    switch (memo) {
      case Regex::Memo::kAuto:
        // Ordinary patterns need a few steps a byte (the tokenizers' patterns on real text: see
        // RegexWorkTest); remembering costs more than it saves on them.
        memo_after_ = 64 * (static_cast<uint64_t>(text.size()) + 1) + 4096;
        break;
      case Regex::Memo::kAlways:
        memo_after_ = 0;
        StartRemembering();
        break;
      case Regex::Memo::kNever:
        memo_after_ = ~uint64_t{0};
        break;
    }
  }

  uint64_t steps() const { return steps_; }
  bool memoized() const { return memo_on_; }

  bool Exec(uint32_t sub, size_t pos, size_t& end) {
    const std::vector<Inst>& code = prog_.subs[sub];
    const uint64_t first_state = prog_.first_state[sub];
    const size_t base = stack_.size();
    // Successes are kept for look-around and atomic groups only: the whole pattern's search ends
    // at its match, and the next one starts after it, where no state of that path lies.
    const bool keep_successes = sub != prog_.main;
    uint32_t pc = 0;
    while (true) {
      const Inst& in = code[pc];
      bool ok = true;
      Step();
      if (in.memo && memo_on_) {
        const uint64_t state = JoinState(first_state + pc);
        const uint64_t* e = nullptr;
        if (failed_.Contains(state, pos)) {
          ok = false;
        } else if (keep_successes && (e = succeeded_.Find(SuccessKey(state, pos))) != nullptr) {
          end = *e;
          RecordSuccess(base, first_state, end);
          return true;
        } else {
          stack_.push_back({pc, static_cast<uint32_t>(pos), 0, kJoinVisited});
        }
      }
      switch (ok ? in.op : Op::kFail) {
        case Op::kFail:
          break;
        case Op::kChar:
          ok = pos < text_.size() && Decode(pos) == in.a;
          if (ok) {
            Advance(pos);
            ++pc;
          }
          break;
        case Op::kSet:
          ok = pos < text_.size() && prog_.sets[in.a].Matches(Decode(pos));
          if (ok) {
            Advance(pos);
            ++pc;
          }
          break;
        case Op::kAny:
          ok = pos < text_.size() && text_[pos] != '\n';
          if (ok) {
            Advance(pos);
            ++pc;
          }
          break;
        case Op::kSplit:
          stack_.push_back({in.b, static_cast<uint32_t>(pos), 0, kPlain});
          pc = in.a;
          break;
        case Op::kJmp:
          pc = in.a;
          break;
        case Op::kAssert:
          ok = CheckAssert(static_cast<AssertKind>(in.a), pos);
          if (ok) ++pc;
          break;
        case Op::kLook: {
          bool found;
          size_t e;
          if (in.behind) {
            size_t p = pos;
            bool room = true;
            for (int i = 0; i < in.min; ++i) {
              if (p == 0) {
                room = false;
                break;
              }
              PrevCodePoint(text_, p);
            }
            found = room && Exec(in.a, p, e) && e == pos;
          } else {
            found = Exec(in.a, pos, e);
          }
          ok = found != in.negative;
          if (ok) ++pc;
          break;
        }
        case Op::kAtomic: {
          size_t e;
          ok = Exec(in.a, pos, e);
          if (ok) {
            pos = e;
            ++pc;
          }
          break;
        }
        case Op::kRepeatSet:
        case Op::kRepeatChar:
        case Op::kRepeatAny:
          ok = memo_on_ && in.max < 0 ? Loop(in, first_state + pc, pc, pos) : Repeat(in, pc, pos);
          if (ok) ++pc;
          break;
        case Op::kMatch:
          end = pos;
          if (memo_on_ && keep_successes) RecordSuccess(base, first_state, end);
          stack_.resize(base);
          return true;
      }
      if (ok) continue;
      // Backtrack.
      while (true) {
        if (stack_.size() == base) return false;
        Backtrack bt = stack_.back();
        stack_.pop_back();
        Step();
        if (bt.kind == kPlain) {
          pc = bt.pc;
          pos = bt.pos;
          break;
        }
        if (bt.kind == kJoinVisited) {
          failed_.Insert(JoinState(first_state + bt.pc), bt.pos);
          continue;
        }
        const Inst& rep = code[bt.pc];
        const uint64_t id = first_state + bt.pc;
        if ((bt.kind == kGreedyRepeat || bt.kind == kLazyRepeat) && memo_on_ && rep.max < 0) {
          // An unbounded repetition's entry pushed before remembering started: a loop from now
          // on, starting where its first `min` items end (walked back to once).
          size_t low = bt.pos;
          for (int count = static_cast<int>(bt.aux); count > rep.min; --count) {
            PrevCodePoint(text_, low);
          }
          bt.kind = bt.kind == kGreedyRepeat ? kGreedyLoop : kLazyLoop;
          bt.aux = static_cast<uint32_t>(low);
        }
        if (bt.kind == kGreedyRepeat || bt.kind == kGreedyLoop) {
          size_t p = bt.pos;
          const size_t low = bt.aux;  // kGreedyLoop: give back down to here
          if (bt.kind == kGreedyRepeat) {
            if (static_cast<int>(bt.aux) <= rep.min) continue;
            PrevCodePoint(text_, p);
            const int count = static_cast<int>(bt.aux) - 1;
            if (count > rep.min)
              stack_.push_back(
                  {bt.pc, static_cast<uint32_t>(p), static_cast<uint32_t>(count), kGreedyRepeat});
          } else {
            LoopFailed(id, p);
            if (p <= low) continue;
            PrevCodePoint(text_, p);
            stack_.push_back({bt.pc, static_cast<uint32_t>(p), bt.aux, kGreedyLoop});
          }
          pos = p;
          pc = bt.pc + 1;
          break;
        }
        if (bt.kind == kLazyRepeat) {  // take one more item, if it matches
          size_t p = bt.pos;
          if (p < text_.size() && ItemMatches(rep, p)) {
            Advance(p);
            const int count = static_cast<int>(bt.aux) + 1;
            if (rep.max < 0 || count < rep.max) {
              stack_.push_back(
                  {bt.pc, static_cast<uint32_t>(p), static_cast<uint32_t>(count), kLazyRepeat});
            }
            pos = p;
            pc = bt.pc + 1;
            break;
          }
          continue;
        }
        // kLazyLoop: take one more item unless what follows is known to fail.
        size_t p = bt.pos;
        bool more = p < text_.size() && ItemMatches(rep, p);
        if (more) {
          Advance(p);
          more = !failed_.Contains(LoopState(id), p);
        }
        if (more) {
          stack_.push_back({bt.pc, static_cast<uint32_t>(p), bt.aux, kLazyLoop});
          pos = p;
          pc = bt.pc + 1;
          break;
        }
        // Every continuation from where it started to the end of the run has failed.
        for (size_t y = bt.pos;; PrevCodePoint(text_, y)) {
          failed_.Insert(LoopState(id), y);
          if (y <= bt.aux) break;
        }
      }
    }
  }

 private:
  // Keys of remembered states: a join point (arriving there), or the loop state of an unbounded
  // repetition (every continuation from there to the end of the run).
  static uint64_t JoinState(uint64_t instruction) { return 2 * instruction; }
  static uint64_t LoopState(uint64_t instruction) { return 2 * instruction + 1; }
  static uint64_t SuccessKey(uint64_t state, size_t pos) { return state << 32 | pos; }

  // The last run of matching items an unbounded repetition scanned: a scan from any position in
  // [lo, hi] ends at hi; every continuation from failed_from to hi is known to fail.
  struct Run {
    size_t lo = 1, hi = 0, failed_from = 0;
  };

  void Step() {
    if (++steps_ > memo_after_ && !memo_on_) StartRemembering();
  }
  void StartRemembering() {
    memo_on_ = true;
    runs_.assign(prog_.instructions, Run{});
  }

  // Every kJoinVisited state on the stack above `base` leads to the match ending at `end`.
  void RecordSuccess(size_t base, uint64_t first_state, size_t end) {
    for (size_t i = base; i < stack_.size(); ++i) {
      if (stack_[i].kind == kJoinVisited) {
        succeeded_.At(SuccessKey(JoinState(first_state + stack_[i].pc), stack_[i].pos)) = end;
      }
    }
    stack_.resize(base);
  }

  void LoopFailed(uint64_t id, size_t pos) {
    failed_.Insert(LoopState(id), pos);
    Run& run = runs_[id];
    if (run.lo <= pos && pos <= run.hi && pos < run.failed_from) run.failed_from = pos;
  }

  // A repetition with an upper bound, or any repetition before remembering starts: scans as far
  // as it may (greedy, possessive) or must (lazy) and pushes what backtracking may try next.
  bool Repeat(const Inst& in, uint32_t pc, size_t& pos) {
    int count = 0;
    size_t p = pos;
    const int want = in.greed == Greed::kLazy ? in.min : in.max;
    while ((want < 0 || count < want) && p < text_.size() && ItemMatches(in, p)) {
      Advance(p);
      ++count;
    }
    steps_ += static_cast<uint64_t>(count);
    if (count < in.min) return false;
    if (in.greed == Greed::kGreedy && count > in.min) {
      stack_.push_back({pc, static_cast<uint32_t>(p), static_cast<uint32_t>(count), kGreedyRepeat});
    } else if (in.greed == Greed::kLazy && (in.max < 0 || count < in.max)) {
      stack_.push_back({pc, static_cast<uint32_t>(p), static_cast<uint32_t>(count), kLazyRepeat});
    }
    pos = p;
    return true;
  }

  // An unbounded repetition while remembering: `id` numbers the instruction. Uses and keeps the
  // run it scans (runs_) and its loop states.
  bool Loop(const Inst& in, uint64_t id, uint32_t pc, size_t& pos) {
    size_t low = pos;
    for (int i = 0; i < in.min; ++i) {
      if (low >= text_.size() || !ItemMatches(in, low)) return false;
      Advance(low);
    }
    steps_ += static_cast<uint64_t>(in.min);
    const bool possessive = in.greed == Greed::kPossessive;
    if (!possessive && failed_.Contains(LoopState(id), low)) return false;
    if (in.greed == Greed::kLazy) {
      stack_.push_back({pc, static_cast<uint32_t>(low), static_cast<uint32_t>(low), kLazyLoop});
      pos = low;
      return true;
    }
    Run& run = runs_[id];
    if (low < run.lo || low > run.hi) {
      // Scan the run, noting where known failures begin; from the start of the run scanned
      // before (when this scan reaches it) the rest is known.
      const bool known = run.lo <= run.hi && low < run.lo;
      size_t p = low;
      size_t failed_from = SIZE_MAX;
      while (true) {
        if (known && p == run.lo) {
          steps_ += p - low;
          if (failed_from == SIZE_MAX) failed_from = run.failed_from;
          p = run.hi;
          break;
        }
        if (p >= text_.size() || !ItemMatches(in, p)) {
          steps_ += p - low;
          break;
        }
        Advance(p);
        if (!possessive && failed_from == SIZE_MAX && failed_.Contains(LoopState(id), p)) {
          failed_from = p;
        }
      }
      run = {low, p, failed_from == SIZE_MAX ? p + 1 : failed_from};
    }
    if (possessive) {
      pos = run.hi;
      return true;
    }
    if (run.failed_from <= low) return false;
    size_t end = run.hi;
    if (run.failed_from <= run.hi) {  // the first try is the last position not known to fail
      end = run.failed_from;
      PrevCodePoint(text_, end);
    }
    stack_.push_back({pc, static_cast<uint32_t>(end), static_cast<uint32_t>(low), kGreedyLoop});
    pos = end;
    return true;
  }

  uint32_t Decode(size_t pos) const {
    size_t i = pos;
    return NextCodePoint(text_, i);
  }
  void Advance(size_t& pos) const {
    pos += static_cast<size_t>(SequenceLength(static_cast<unsigned char>(text_[pos])));
  }
  bool ItemMatches(const Inst& in, size_t pos) const {
    switch (in.op) {
      case Op::kRepeatChar:
        return Decode(pos) == in.a;
      case Op::kRepeatSet:
        return prog_.sets[in.a].Matches(Decode(pos));
      default:
        return text_[pos] != '\n';
    }
  }
  bool IsWordAt(size_t pos) const { return pos < text_.size() && IsOnigWord(Decode(pos)); }
  bool IsWordBefore(size_t pos) const {
    if (pos == 0) return false;
    size_t p = pos;
    return IsOnigWord(PrevCodePoint(text_, p));
  }
  bool CheckAssert(AssertKind kind, size_t pos) const {
    switch (kind) {
      case AssertKind::kLineStart:
        return pos == 0 || text_[pos - 1] == '\n';
      case AssertKind::kLineEnd:
        return pos == text_.size() || text_[pos] == '\n';
      case AssertKind::kTextStart:
        return pos == 0;
      case AssertKind::kTextEnd:
        return pos == text_.size();
      case AssertKind::kTextEndNewline:
        return pos == text_.size() || (pos + 1 == text_.size() && text_[pos] == '\n');
      case AssertKind::kWordBoundary:
        return IsWordBefore(pos) != IsWordAt(pos);
      case AssertKind::kNotWordBoundary:
        return IsWordBefore(pos) == IsWordAt(pos);
    }
    return false;
  }

  const Regex::Program& prog_;
  std::string_view text_;
  std::vector<Backtrack> stack_;
  uint64_t steps_ = 0;
  uint64_t memo_after_ = 0;  // steps before remembering starts
  bool memo_on_ = false;
  StateSet failed_;      // join and loop states known to fail
  WordTable succeeded_;  // join state -> the end of its match
  std::vector<Run> runs_;
};

// The first match at or after `from` (Regex::Search with a matcher kept across searches).
bool SearchWith(const Regex::Program& p, Matcher& m, std::string_view text, size_t from,
                size_t& start, size_t& end) {
  size_t pos = from;
  while (true) {
    if (pos < text.size()) {
      if (p.nullable || p.first_bytes[static_cast<unsigned char>(text[pos])]) {
        if (m.Exec(p.main, pos, end)) {
          start = pos;
          return true;
        }
      }
      pos += static_cast<size_t>(SequenceLength(static_cast<unsigned char>(text[pos])));
    } else {
      if (p.nullable && m.Exec(p.main, pos, end)) {
        start = pos;
        return true;
      }
      return false;
    }
  }
}

}  // namespace

Regex::Regex(std::unique_ptr<Program> program) : program_(std::move(program)) {}
Regex::Regex(Regex&&) noexcept = default;
Regex& Regex::operator=(Regex&&) noexcept = default;
Regex::~Regex() = default;

const std::string& Regex::pattern() const { return program_->pattern; }

Result<Regex> Regex::Compile(std::string_view pattern) {
  auto prog = std::make_unique<Program>();
  prog->pattern = std::string(pattern);
  if (ValidUtf8Prefix(pattern) != pattern.size()) {
    return Unsupported("regular expression is not valid UTF-8");
  }
  Parser parser(pattern, prog->sets);
  REEL_ASSIGN_OR_RETURN(NodePtr root, parser.Parse());
  Compiler compiler(*prog);
  REEL_RETURN_IF_ERROR(compiler.CompileSub(*root, prog->main));
  MarkJoinPoints(*prog);
  prog->nullable = FirstBytes(*root, prog->sets, prog->first_bytes);
  return Regex(std::move(prog));
}

bool Regex::Search(std::string_view text, size_t from, size_t& start, size_t& end) const {
  Matcher m(*program_, text, Memo::kAuto);
  return SearchWith(*program_, m, text, from, start, end);
}

void Regex::FindAll(std::string_view text, std::vector<std::pair<size_t, size_t>>& out, Memo memo,
                    Stats* stats) const {
  // One matcher for the whole text: the failures it remembers hold for every search in it.
  Matcher m(*program_, text, memo);
  struct Report {
    const Matcher& m;
    Stats* stats;
    ~Report() {
      if (stats != nullptr) *stats = {m.steps(), m.memoized()};
    }
  } report{m, stats};
  size_t last_end = 0;
  bool have_last = false;
  size_t last_match_end = 0;
  while (last_end <= text.size()) {
    size_t s, e;
    if (!SearchWith(*program_, m, text, last_end, s, e)) return;
    if (e == s && have_last && last_match_end == e) {
      last_end +=
          last_end < text.size()
              ? static_cast<size_t>(SequenceLength(static_cast<unsigned char>(text[last_end])))
              : 1;
      continue;
    }
    last_end = e;
    have_last = true;
    last_match_end = e;
    out.emplace_back(s, e);
  }
}

}  // namespace reel::llm::internal
