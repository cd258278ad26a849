#include "llm/tokenizer/pre_tokenizer.h"

#include <nlohmann/json.hpp>

#include "llm/tokenizer/byte_level.h"
#include "llm/tokenizer/json_util.h"
#include "llm/tokenizer/split_pattern.h"
#include "llm/tokenizer/utf8.h"

namespace reel::llm::internal {

using nlohmann::json;

Split SplitList::Materialize(const Split& s) {
  if (!s.byte_level) return s;
  std::string mapped;
  AppendByteLevel(Text(s), mapped);
  return {Append(mapped), static_cast<uint32_t>(mapped.size()), false};
}

uint32_t SplitList::Append(std::string_view bytes) {
  auto offset = static_cast<uint32_t>(buffer.size());
  buffer.append(bytes);
  return offset;
}

namespace {

enum class Behavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };

Result<Behavior> ParseBehavior(const json& config, const std::string& what) {
  REEL_ASSIGN_OR_RETURN(std::string b, GetString(config, "behavior", what));
  if (b == "Removed") return Behavior::kRemoved;
  if (b == "Isolated") return Behavior::kIsolated;
  if (b == "MergedWithPrevious") return Behavior::kMergedWithPrevious;
  if (b == "MergedWithNext") return Behavior::kMergedWithNext;
  if (b == "Contiguous") return Behavior::kContiguous;
  return Unsupported(what + ": unknown behavior \"" + b + "\"");
}

// NormalizedString::split of the library: matches and gaps turned into pieces by `behavior`.
void SplitByPattern(const SplitPattern& pattern, Behavior behavior, bool invert, SplitList& list,
                    std::vector<Split>& out) {
  static thread_local std::vector<PatternMatch> matches;
  static thread_local std::vector<std::pair<PatternMatch, bool>> pieces;  // (span, remove)
  for (const Split& original : list.splits) {
    Split split = list.Materialize(original);
    std::string_view text = list.Text(split);
    matches.clear();
    pattern.FindMatches(text, matches);
    if (invert) {
      for (PatternMatch& m : matches) m.is_match = !m.is_match;
    }
    pieces.clear();
    switch (behavior) {
      case Behavior::kIsolated:
        for (const PatternMatch& m : matches) pieces.push_back({m, false});
        break;
      case Behavior::kRemoved:
        for (const PatternMatch& m : matches) pieces.push_back({m, m.is_match});
        break;
      case Behavior::kContiguous: {
        bool previous = false;
        for (const PatternMatch& m : matches) {
          if (m.is_match == previous && !pieces.empty()) {
            pieces.back().first.end = m.end;
          } else {
            pieces.push_back({m, false});
          }
          previous = m.is_match;
        }
        break;
      }
      case Behavior::kMergedWithPrevious: {
        bool previous = false;
        for (const PatternMatch& m : matches) {
          if (m.is_match && !previous && !pieces.empty()) {
            pieces.back().first.end = m.end;
          } else {
            pieces.push_back({m, false});
          }
          previous = m.is_match;
        }
        break;
      }
      case Behavior::kMergedWithNext: {
        bool previous = false;
        for (size_t k = matches.size(); k-- > 0;) {
          const PatternMatch& m = matches[k];
          if (m.is_match && !previous && !pieces.empty()) {
            pieces.back().first.start = m.start;
          } else {
            pieces.push_back({m, false});
          }
          previous = m.is_match;
        }
        std::reverse(pieces.begin(), pieces.end());
        break;
      }
    }
    for (const auto& [m, remove] : pieces) {
      if (remove || m.end == m.start) continue;
      out.push_back({split.offset + m.start, m.end - m.start, false});
    }
  }
}

class SplitPreTokenizer : public PreTokenizer {
 public:
  // `literal`: the pattern when it was a String.
  SplitPreTokenizer(std::unique_ptr<SplitPattern> pattern, Behavior behavior, bool invert,
                    std::string literal = "")
      : pattern_(std::move(pattern)),
        behavior_(behavior),
        invert_(invert),
        literal_(std::move(literal)) {}
  bool KeepsWhole(uint32_t absent) const override {
    if (literal_.empty() || (behavior_ == Behavior::kRemoved && invert_)) return false;
    std::string c;
    AppendUtf8(c, absent);
    return literal_.find(c) != std::string::npos;
  }
  void Apply(SplitList& list) const override {
    std::vector<Split> out;
    out.reserve(list.splits.size() * 4);
    SplitByPattern(*pattern_, behavior_, invert_, list, out);
    list.splits.swap(out);
  }
  // Isolated keeps matches and gaps as pieces; Removed keeps the gaps, or (inverted) the matches.
  bool Isolated() const { return behavior_ == Behavior::kIsolated; }
  const SplitPattern* pattern() const { return pattern_.get(); }
  bool Fused(FusedSplit& out) const override {
    if (behavior_ == Behavior::kIsolated) {
      out = {pattern_.get(), true, true, false};
      return true;
    }
    if (behavior_ == Behavior::kRemoved) {
      out = {pattern_.get(), invert_, !invert_, false};
      return true;
    }
    return false;
  }

 private:
  std::unique_ptr<SplitPattern> pattern_;
  Behavior behavior_;
  bool invert_;
  std::string literal_;
};

class ByteLevelPreTokenizer : public PreTokenizer {
 public:
  ByteLevelPreTokenizer(bool add_prefix_space, std::unique_ptr<SplitPattern> gpt2)
      : add_prefix_space_(add_prefix_space), gpt2_(std::move(gpt2)) {}
  void Apply(SplitList& list) const override {
    if (add_prefix_space_) {
      for (Split& s : list.splits) {
        s = list.Materialize(s);
        std::string_view text = list.Text(s);
        if (text.empty() || text[0] != ' ') {
          std::string prefixed = " ";
          prefixed.append(text);
          s = {list.Append(prefixed), static_cast<uint32_t>(prefixed.size()), false};
        }
      }
    }
    if (gpt2_ != nullptr) {
      std::vector<Split> out;
      out.reserve(list.splits.size() * 4);
      SplitByPattern(*gpt2_, Behavior::kIsolated, false, list, out);
      list.splits.swap(out);
    }
    for (Split& s : list.splits) {
      s = list.Materialize(s);
      s.byte_level = true;
    }
  }
  bool Fused(FusedSplit& out) const override {
    if (add_prefix_space_ || gpt2_ == nullptr) return false;
    out = {gpt2_.get(), true, true, true};
    return true;
  }
  bool PlainMapping() const { return !add_prefix_space_ && gpt2_ == nullptr; }

 private:
  bool add_prefix_space_;
  std::unique_ptr<SplitPattern> gpt2_;
};

// Isolated splits in a row, as one pattern: every piece (match or gap) of the first pattern cut
// by the second, and so on. Every span it gives is a match (Isolated keeps all of them).
class ChainedPattern : public SplitPattern {
 public:
  explicit ChainedPattern(std::vector<const SplitPattern*> parts) : parts_(std::move(parts)) {}
  void FindMatches(std::string_view text, std::vector<PatternMatch>& out) const override {
    Refine(0, text, 0, out);
  }
  const char* Name() const override { return "chained splits"; }

 private:
  void Refine(size_t level, std::string_view text, uint32_t base,
              std::vector<PatternMatch>& out) const {
    if (level + 1 == parts_.size()) {
      size_t first = out.size();
      parts_[level]->FindMatches(text, out);
      size_t kept = first;
      for (size_t i = first; i < out.size(); ++i) {
        if (out[i].end == out[i].start) continue;
        out[kept++] = {out[i].start + base, out[i].end + base, true};
      }
      out.resize(kept);
      return;
    }
    // One list per level, sized before any is used (so that none moves while a lower level
    // runs).
    static thread_local std::vector<std::vector<PatternMatch>> scratch;
    if (scratch.size() < parts_.size()) scratch.resize(parts_.size());
    std::vector<PatternMatch>& spans = scratch[level];
    spans.clear();
    parts_[level]->FindMatches(text, spans);
    for (size_t i = 0; i < spans.size(); ++i) {
      const PatternMatch m = spans[i];
      if (m.end == m.start) continue;
      Refine(level + 1, text.substr(m.start, m.end - m.start), base + m.start, out);
    }
  }

  std::vector<const SplitPattern*> parts_;
};

class SequencePreTokenizer : public PreTokenizer {
 public:
  explicit SequencePreTokenizer(std::vector<std::unique_ptr<PreTokenizer>> parts)
      : parts_(std::move(parts)) {
    // Several Isolated splits followed by the plain ByteLevel mapping (DeepSeek V3): fused as
    // one chained pattern.
    if (parts_.size() < 3) return;
    auto* byte_level = dynamic_cast<const ByteLevelPreTokenizer*>(parts_.back().get());
    if (byte_level == nullptr || !byte_level->PlainMapping()) return;
    std::vector<const SplitPattern*> patterns;
    for (size_t i = 0; i + 1 < parts_.size(); ++i) {
      auto* split = dynamic_cast<const SplitPreTokenizer*>(parts_[i].get());
      if (split == nullptr || !split->Isolated()) return;
      patterns.push_back(split->pattern());
    }
    chained_ = std::make_unique<ChainedPattern>(std::move(patterns));
  }
  void Apply(SplitList& list) const override {
    for (const auto& p : parts_) p->Apply(list);
  }
  bool KeepsWhole(uint32_t absent) const override {
    for (const auto& p : parts_) {
      if (!p->KeepsWhole(absent)) return false;
    }
    return true;
  }
  // [Split, ByteLevel without prefix or regex], [Isolated Split..., ByteLevel without prefix or
  // regex], or a single fused part.
  bool Fused(FusedSplit& out) const override {
    if (chained_ != nullptr) {
      out = {chained_.get(), true, true, true};
      return true;
    }
    if (parts_.size() == 1) return parts_[0]->Fused(out);
    if (parts_.size() != 2) return false;
    auto* byte_level = dynamic_cast<const ByteLevelPreTokenizer*>(parts_[1].get());
    if (byte_level == nullptr || !byte_level->PlainMapping()) return false;
    FusedSplit first;
    if (dynamic_cast<const SplitPreTokenizer*>(parts_[0].get()) == nullptr ||
        !parts_[0]->Fused(first)) {
      return false;
    }
    out = first;
    out.byte_level = true;
    return true;
  }

 private:
  std::vector<std::unique_ptr<PreTokenizer>> parts_;
  std::unique_ptr<ChainedPattern> chained_;
};

}  // namespace

Result<std::unique_ptr<PreTokenizer>> MakePreTokenizer(const json& config, bool allow_fast) {
  REEL_ASSIGN_OR_RETURN(std::string type, TypeOf(config, "pre_tokenizer"));
  const std::string what = "pre_tokenizer " + type;
  if (type == "Sequence") {
    auto it = config.find("pretokenizers");
    if (it == config.end() || !it->is_array()) {
      return Unsupported(what + " without a \"pretokenizers\" list");
    }
    std::vector<std::unique_ptr<PreTokenizer>> parts;
    for (const json& part : *it) {
      REEL_ASSIGN_OR_RETURN(auto p, MakePreTokenizer(part, allow_fast));
      parts.push_back(std::move(p));
    }
    return std::unique_ptr<PreTokenizer>(new SequencePreTokenizer(std::move(parts)));
  }
  if (type == "Split") {
    REEL_ASSIGN_OR_RETURN(Behavior behavior, ParseBehavior(config, what));
    REEL_ASSIGN_OR_RETURN(bool invert, GetBool(config, "invert", what));
    auto pattern = config.find("pattern");
    std::string source, literal;
    if (pattern != config.end() && pattern->is_object()) {
      if (auto s = pattern->find("String"); s != pattern->end() && s->is_string()) {
        if (s->get<std::string>().empty()) {
          return Unsupported(what + ": an empty string pattern");
        }
        literal = s->get<std::string>();
        source = EscapeRegex(literal);
      } else if (auto r = pattern->find("Regex"); r != pattern->end() && r->is_string()) {
        source = r->get<std::string>();
      }
    }
    if (source.empty()) {
      return Unsupported(what + ": \"pattern\" must be {\"String\": ...} or {\"Regex\": ...}");
    }
    auto p = MakeRegexPattern(source, allow_fast);
    if (!p.ok()) return p.status().WithPrefix(what);
    return std::unique_ptr<PreTokenizer>(
        new SplitPreTokenizer(std::move(p).value(), behavior, invert, std::move(literal)));
  }
  if (type == "ByteLevel") {
    REEL_ASSIGN_OR_RETURN(bool prefix, GetBool(config, "add_prefix_space", what));
    REEL_ASSIGN_OR_RETURN(bool use_regex, GetOptionalBool(config, "use_regex", true, what));
    std::unique_ptr<SplitPattern> gpt2;
    if (use_regex) {
      auto p = MakeRegexPattern(kGpt2Pattern, allow_fast);
      if (!p.ok()) return p.status().WithPrefix(what);
      gpt2 = std::move(p).value();
    }
    return std::unique_ptr<PreTokenizer>(new ByteLevelPreTokenizer(prefix, std::move(gpt2)));
  }
  if (type == "Digits") {
    REEL_ASSIGN_OR_RETURN(bool individual, GetBool(config, "individual_digits", what));
    return std::unique_ptr<PreTokenizer>(
        new SplitPreTokenizer(MakeCharPattern(CharClassPattern::kNumeric),
                              individual ? Behavior::kIsolated : Behavior::kContiguous, false));
  }
  if (type == "WhitespaceSplit") {
    return std::unique_ptr<PreTokenizer>(new SplitPreTokenizer(
        MakeCharPattern(CharClassPattern::kWhitespace), Behavior::kRemoved, false));
  }
  return Unsupported(what +
                     " is not supported (supported: Split, ByteLevel, Digits, WhitespaceSplit, "
                     "Sequence)");
}

}  // namespace reel::llm::internal
