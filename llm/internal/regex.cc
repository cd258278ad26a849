#include "llm/internal/regex.h"

#include <bitset>
#include <cctype>

#include "llm/internal/unicode.h"
#include "llm/internal/utf8.h"

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
};

}  // namespace

struct Regex::Program {
  std::string pattern;
  std::vector<CharSet> sets;
  std::vector<std::vector<Inst>> subs;
  uint32_t main = 0;  // the whole pattern's sub-program
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

struct Backtrack {
  uint32_t pc;
  uint32_t pos;
  int32_t count;  // kRepeat*: repetitions matched so far
  uint8_t kind;   // 0 plain, 1 greedy repeat, 2 lazy repeat
};

class Matcher {
 public:
  Matcher(const Regex::Program& prog, std::string_view text) : prog_(prog), text_(text) {}

  bool Exec(uint32_t sub, size_t pos, size_t& end) {
    const std::vector<Inst>& code = prog_.subs[sub];
    size_t base = stack_.size();
    uint32_t pc = 0;
    while (true) {
      const Inst& in = code[pc];
      bool ok = true;
      switch (in.op) {
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
          stack_.push_back({in.b, static_cast<uint32_t>(pos), 0, 0});
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
        case Op::kRepeatAny: {
          int count = 0;
          size_t p = pos;
          int want = in.greed == Greed::kLazy ? in.min : in.max;
          while ((want < 0 || count < want) && p < text_.size() && ItemMatches(in, p)) {
            Advance(p);
            ++count;
          }
          if (count < in.min) {
            ok = false;
            break;
          }
          if (in.greed == Greed::kGreedy && count > in.min) {
            stack_.push_back({pc, static_cast<uint32_t>(p), count, 1});
          } else if (in.greed == Greed::kLazy && (in.max < 0 || count < in.max)) {
            stack_.push_back({pc, static_cast<uint32_t>(p), count, 2});
          }
          pos = p;
          ++pc;
          break;
        }
        case Op::kMatch:
          end = pos;
          stack_.resize(base);
          return true;
      }
      if (ok) continue;
      // Backtrack.
      while (true) {
        if (stack_.size() == base) return false;
        Backtrack bt = stack_.back();
        stack_.pop_back();
        if (bt.kind == 0) {
          pc = bt.pc;
          pos = bt.pos;
          break;
        }
        const Inst& rep = code[bt.pc];
        if (bt.kind == 1) {  // give back one character
          size_t p = bt.pos;
          PrevCodePoint(text_, p);
          int count = bt.count - 1;
          if (count > rep.min) stack_.push_back({bt.pc, static_cast<uint32_t>(p), count, 1});
          pos = p;
          pc = bt.pc + 1;
          break;
        }
        // Lazy: take one more character, if it matches.
        size_t p = bt.pos;
        if (p < text_.size() && ItemMatches(rep, p)) {
          Advance(p);
          int count = bt.count + 1;
          if (rep.max < 0 || count < rep.max) {
            stack_.push_back({bt.pc, static_cast<uint32_t>(p), count, 2});
          }
          pos = p;
          pc = bt.pc + 1;
          break;
        }
      }
    }
  }

 private:
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
};

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
  prog->nullable = FirstBytes(*root, prog->sets, prog->first_bytes);
  return Regex(std::move(prog));
}

bool Regex::Search(std::string_view text, size_t from, size_t& start, size_t& end) const {
  Matcher m(*program_, text);
  const Program& p = *program_;
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

void Regex::FindAll(std::string_view text, std::vector<std::pair<size_t, size_t>>& out) const {
  size_t last_end = 0;
  bool have_last = false;
  size_t last_match_end = 0;
  while (last_end <= text.size()) {
    size_t s, e;
    if (!Search(text, last_end, s, e)) return;
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
