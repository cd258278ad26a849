#include "llm/tokenizer/normalizer.h"

#include <optional>

#include <nlohmann/json.hpp>

#include "llm/tokenizer/byte_level.h"
#include "llm/tokenizer/json_util.h"
#include "llm/tokenizer/regex.h"
#include "llm/tokenizer/unicode.h"
#include "llm/tokenizer/utf8.h"

namespace reel::llm::internal {
namespace {

using nlohmann::json;

class UnicodeNormalizer : public Normalizer {
 public:
  explicit UnicodeNormalizer(NormalizationForm form) : form_(form) {}
  bool Normalize(std::string_view in, std::string& out) const override {
    return NormalizeChanged(in, form_, out);
  }

 private:
  NormalizationForm form_;
};

class LowercaseNormalizer : public Normalizer {
 public:
  bool Normalize(std::string_view in, std::string& out) const override {
    out.clear();
    out.reserve(in.size());
    size_t i = 0;
    while (i < in.size()) AppendLowercase(out, NextCodePoint(in, i));
    return true;
  }
};

// Strip: removes leading and/or trailing characters for which Rust's char::is_whitespace holds.
class StripNormalizer : public Normalizer {
 public:
  StripNormalizer(bool left, bool right) : left_(left), right_(right) {}
  bool Normalize(std::string_view in, std::string& out) const override {
    size_t b = 0, e = in.size();
    if (left_) {
      while (b < e) {
        size_t j = b;
        if (!IsWhiteSpace(NextCodePoint(in, j))) break;
        b = j;
      }
    }
    if (right_) {
      while (e > b) {
        size_t j = e;
        if (!IsWhiteSpace(PrevCodePoint(in, j))) break;
        e = j;
      }
    }
    if (b == 0 && e == in.size()) return false;
    out.assign(in.substr(b, e - b));
    return true;
  }

 private:
  bool left_, right_;
};

// Replace: every match of a pattern (a literal string or an Oniguruma regex) becomes `content`.
class ReplaceNormalizer : public Normalizer {
 public:
  // `literal`: the pattern when it was a String (not a Regex).
  ReplaceNormalizer(Regex regex, std::string content, std::optional<std::string> literal)
      : regex_(std::move(regex)), content_(std::move(content)), literal_(std::move(literal)) {}
  bool Substitution(CharSubstitution& out) const override {
    if (!literal_ || literal_->empty() || content_.empty()) return false;
    if (ValidUtf8Prefix(*literal_) != literal_->size()) return false;
    if (ValidUtf8Prefix(content_) != content_.size()) return false;
    if (CodePointCount(*literal_) != 1 || CodePointCount(content_) != 1) return false;
    size_t i = 0, j = 0;
    out = {NextCodePoint(*literal_, i), NextCodePoint(content_, j), ""};
    return out.from != out.to;
  }
  bool Normalize(std::string_view in, std::string& out) const override {
    if (in.empty()) return false;
    std::vector<std::pair<size_t, size_t>> matches;
    regex_.FindAll(in, matches);
    if (matches.empty()) return false;
    out.clear();
    size_t last = 0;
    for (const auto& [s, e] : matches) {
      out.append(in.substr(last, s - last));
      out.append(content_);
      last = e;
    }
    out.append(in.substr(last));
    return true;
  }

 private:
  Regex regex_;
  std::string content_;
  std::optional<std::string> literal_;
};

class PrependNormalizer : public Normalizer {
 public:
  explicit PrependNormalizer(std::string prefix) : prefix_(std::move(prefix)) {}
  const std::string& prefix() const { return prefix_; }
  bool Normalize(std::string_view in, std::string& out) const override {
    if (in.empty()) return false;
    out.assign(prefix_);
    out.append(in);
    return true;
  }

 private:
  std::string prefix_;
};

class ByteLevelNormalizer : public Normalizer {
 public:
  bool Normalize(std::string_view in, std::string& out) const override {
    if (in.empty()) return false;
    out.clear();
    AppendByteLevel(in, out);
    return true;
  }
};

// Nmt: drops some control characters and maps a few others to a space.
class NmtNormalizer : public Normalizer {
 public:
  bool Normalize(std::string_view in, std::string& out) const override {
    out.clear();
    size_t i = 0;
    while (i < in.size()) {
      uint32_t c = NextCodePoint(in, i);
      if ((c >= 0x01 && c <= 0x08) || c == 0x0B || (c >= 0x0E && c <= 0x1F) || c == 0x7F ||
          c == 0x8F || c == 0x9F) {
        continue;
      }
      if (c == 0x09 || c == 0x0A || c == 0x0C || c == 0x0D || c == 0x1680 ||
          (c >= 0x200B && c <= 0x200F) || c == 0x2028 || c == 0x2029 || c == 0x2581 ||
          c == 0xFEFF || c == 0xFFFD) {
        c = ' ';
      }
      AppendUtf8(out, c);
    }
    return true;
  }
};

class SequenceNormalizer : public Normalizer {
 public:
  explicit SequenceNormalizer(std::vector<std::unique_ptr<Normalizer>> parts)
      : parts_(std::move(parts)) {}
  bool Normalize(std::string_view in, std::string& out) const override {
    bool changed = false;
    std::string current, next;
    for (const auto& part : parts_) {
      std::string_view view = changed ? std::string_view(current) : in;
      if (part->Normalize(view, next)) {
        current.swap(next);
        changed = true;
      }
    }
    if (changed) out.swap(current);
    return changed;
  }
  bool Substitution(CharSubstitution& out) const override {
    const Normalizer* replace = nullptr;
    const PrependNormalizer* prepend = nullptr;
    for (const auto& part : parts_) {
      if (auto* p = dynamic_cast<const PrependNormalizer*>(part.get())) {
        if (prepend != nullptr) return false;
        prepend = p;
      } else {
        if (replace != nullptr) return false;
        replace = part.get();
      }
    }
    if (replace == nullptr || !replace->Substitution(out)) return false;
    if (prepend != nullptr) {
      if (!out.prefix.empty()) return false;  // (a Prepend in a Sequence inside too)
      // (Without the replaced character, the prefix is the same before and after the
      // replacement.)
      std::string from;
      AppendUtf8(from, out.from);
      if (prepend->prefix().find(from) != std::string::npos) return false;
      out.prefix = prepend->prefix();
    }
    return true;
  }

 private:
  std::vector<std::unique_ptr<Normalizer>> parts_;
};

}  // namespace

Result<std::unique_ptr<Normalizer>> MakeNormalizer(const json& config) {
  REEL_ASSIGN_OR_RETURN(std::string type, TypeOf(config, "normalizer"));
  if (type == "NFC")
    return std::unique_ptr<Normalizer>(new UnicodeNormalizer(NormalizationForm::kNfc));
  if (type == "NFD")
    return std::unique_ptr<Normalizer>(new UnicodeNormalizer(NormalizationForm::kNfd));
  if (type == "NFKC") {
    return std::unique_ptr<Normalizer>(new UnicodeNormalizer(NormalizationForm::kNfkc));
  }
  if (type == "NFKD") {
    return std::unique_ptr<Normalizer>(new UnicodeNormalizer(NormalizationForm::kNfkd));
  }
  if (type == "Lowercase") return std::unique_ptr<Normalizer>(new LowercaseNormalizer());
  if (type == "Nmt") return std::unique_ptr<Normalizer>(new NmtNormalizer());
  if (type == "ByteLevel") return std::unique_ptr<Normalizer>(new ByteLevelNormalizer());
  if (type == "Strip") {
    REEL_ASSIGN_OR_RETURN(bool left, GetBool(config, "strip_left", "normalizer Strip"));
    REEL_ASSIGN_OR_RETURN(bool right, GetBool(config, "strip_right", "normalizer Strip"));
    return std::unique_ptr<Normalizer>(new StripNormalizer(left, right));
  }
  if (type == "Prepend") {
    REEL_ASSIGN_OR_RETURN(std::string prefix, GetString(config, "prepend", "normalizer Prepend"));
    return std::unique_ptr<Normalizer>(new PrependNormalizer(std::move(prefix)));
  }
  if (type == "Replace") {
    REEL_ASSIGN_OR_RETURN(Regex regex, PatternRegex(config, "normalizer Replace"));
    REEL_ASSIGN_OR_RETURN(std::string content, GetString(config, "content", "normalizer Replace"));
    std::optional<std::string> literal;
    if (auto p = config.find("pattern"); p != config.end() && p->is_object()) {
      if (auto s = p->find("String"); s != p->end() && s->is_string()) {
        literal = s->get<std::string>();
      }
    }
    return std::unique_ptr<Normalizer>(
        new ReplaceNormalizer(std::move(regex), std::move(content), std::move(literal)));
  }
  if (type == "Sequence") {
    auto it = config.find("normalizers");
    if (it == config.end() || !it->is_array()) {
      return Unsupported("normalizer Sequence without a \"normalizers\" list");
    }
    std::vector<std::unique_ptr<Normalizer>> parts;
    for (const json& part : *it) {
      if (part.is_null()) continue;
      REEL_ASSIGN_OR_RETURN(auto n, MakeNormalizer(part));
      parts.push_back(std::move(n));
    }
    return std::unique_ptr<Normalizer>(new SequenceNormalizer(std::move(parts)));
  }
  return Unsupported("normalizer " + type +
                     " is not supported (supported: NFC, NFD, NFKC, NFKD, Lowercase, Strip, "
                     "Replace, Prepend, ByteLevel, Nmt, Sequence)");
}

}  // namespace reel::llm::internal
