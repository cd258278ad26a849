#include "llm/tokenizer/tokenizer_json.h"

#include <cstring>

#include "llm/tokenizer/utf8.h"

namespace reel::llm::internal {
namespace {

class Scanner {
 public:
  explicit Scanner(std::string_view s) : s_(s) {}

  std::string_view text() const { return s_; }
  size_t pos() const { return i_; }
  // Back to `pos`, the error forgotten (to read a value again another way).
  void Rewind(size_t pos) {
    i_ = pos;
    error_.clear();
  }
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }

  void SkipWs() {
    while (i_ < s_.size() &&
           (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t')) {
      ++i_;
    }
  }
  bool Peek(char c) {
    SkipWs();
    return i_ < s_.size() && s_[i_] == c;
  }
  bool Expect(char c) {
    SkipWs();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    Fail(std::string("expected '") + c + "'");
    return false;
  }
  void Fail(const std::string& what) {
    if (error_.empty()) error_ = what + " at byte " + std::to_string(i_);
  }

  // Reads a string (the scanner is at its opening quote), unescaping it.
  bool ReadString(std::string& out) {
    out.clear();
    if (!Expect('"')) return false;
    while (true) {
      size_t start = i_;
      while (i_ < s_.size() && s_[i_] != '"' && s_[i_] != '\\' &&
             static_cast<unsigned char>(s_[i_]) >= 0x20) {
        ++i_;
      }
      out.append(s_.data() + start, i_ - start);
      if (i_ >= s_.size()) {
        Fail("unterminated string");
        return false;
      }
      char c = s_[i_++];
      if (c == '"') return true;
      if (c != '\\') {
        Fail("control character in a string");
        return false;
      }
      if (i_ >= s_.size()) {
        Fail("unterminated escape");
        return false;
      }
      char e = s_[i_++];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out.push_back(e);
          break;
        case 'b':
          out.push_back('\b');
          break;
        case 'f':
          out.push_back('\f');
          break;
        case 'n':
          out.push_back('\n');
          break;
        case 'r':
          out.push_back('\r');
          break;
        case 't':
          out.push_back('\t');
          break;
        case 'u': {
          uint32_t cp;
          if (!Hex4(cp)) return false;
          if (cp >= 0xD800 && cp < 0xDC00) {
            uint32_t lo;
            if (i_ + 1 < s_.size() && s_[i_] == '\\' && s_[i_ + 1] == 'u') {
              i_ += 2;
              if (!Hex4(lo)) return false;
              if (lo < 0xDC00 || lo > 0xDFFF) {
                Fail("bad surrogate pair");
                return false;
              }
              cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            } else {
              Fail("lone surrogate");
              return false;
            }
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            Fail("lone surrogate");
            return false;
          }
          AppendUtf8(out, cp);
          break;
        }
        default:
          Fail("bad escape");
          return false;
      }
    }
  }

  bool ReadUnsigned(uint64_t& v) {
    SkipWs();
    size_t start = i_;
    v = 0;
    while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') {
      v = v * 10 + static_cast<uint64_t>(s_[i_] - '0');
      if (v > 0xFFFFFFFFull) {
        Fail("number too large");
        return false;
      }
      ++i_;
    }
    if (i_ == start) {
      Fail("expected a non-negative integer");
      return false;
    }
    if (i_ < s_.size() && (s_[i_] == '.' || s_[i_] == 'e' || s_[i_] == 'E')) {
      Fail("expected an integer");
      return false;
    }
    return true;
  }

  // Skips one value of any kind.
  bool SkipValue(int depth = 0) {
    if (depth > 256) {
      Fail("nesting too deep");
      return false;
    }
    SkipWs();
    if (i_ >= s_.size()) {
      Fail("unexpected end");
      return false;
    }
    char c = s_[i_];
    if (c == '"') {
      ++i_;
      while (i_ < s_.size()) {
        const void* q = std::memchr(s_.data() + i_, '"', s_.size() - i_);
        if (q == nullptr) break;
        size_t at = static_cast<size_t>(static_cast<const char*>(q) - s_.data());
        size_t backslashes = 0;
        while (at - backslashes > i_ && s_[at - backslashes - 1] == '\\') ++backslashes;
        i_ = at + 1;
        if (backslashes % 2 == 0) return true;
      }
      Fail("unterminated string");
      return false;
    }
    if (c == '{' || c == '[') {
      char close = c == '{' ? '}' : ']';
      ++i_;
      if (Peek(close)) {
        ++i_;
        return true;
      }
      while (true) {
        if (c == '{') {
          SkipWs();
          if (!SkipValue(depth + 1)) return false;  // the key
          if (!Expect(':')) return false;
        }
        if (!SkipValue(depth + 1)) return false;
        SkipWs();
        if (i_ < s_.size() && s_[i_] == ',') {
          ++i_;
          continue;
        }
        return Expect(close);
      }
    }
    // A literal or a number: up to the next delimiter.
    while (i_ < s_.size() && s_[i_] != ',' && s_[i_] != '}' && s_[i_] != ']' && s_[i_] != ' ' &&
           s_[i_] != '\n' && s_[i_] != '\r' && s_[i_] != '\t') {
      ++i_;
    }
    return true;
  }

 private:
  bool Hex4(uint32_t& v) {
    v = 0;
    for (int k = 0; k < 4; ++k) {
      if (i_ >= s_.size()) {
        Fail("bad \\u escape");
        return false;
      }
      char h = s_[i_++];
      v <<= 4;
      if (h >= '0' && h <= '9') {
        v |= static_cast<uint32_t>(h - '0');
      } else if (h >= 'a' && h <= 'f') {
        v |= static_cast<uint32_t>(h - 'a' + 10);
      } else if (h >= 'A' && h <= 'F') {
        v |= static_cast<uint32_t>(h - 'A' + 10);
      } else {
        Fail("bad \\u escape");
        return false;
      }
    }
    return true;
  }

  std::string_view s_;
  size_t i_ = 0;
  std::string error_;
};

bool ScanVocab(Scanner& sc, VocabAndMerges& out) {
  if (!sc.Expect('{')) return false;
  if (sc.Peek('}')) return sc.Expect('}');
  std::string key;
  while (true) {
    sc.SkipWs();
    if (!sc.ReadString(key)) return false;
    if (!sc.Expect(':')) return false;
    uint64_t id;
    if (!sc.ReadUnsigned(id)) return false;
    out.vocab.emplace_back(key, static_cast<uint32_t>(id));
    if (sc.Peek(',')) {
      sc.Expect(',');
      continue;
    }
    return sc.Expect('}');
  }
}

bool ScanMerges(Scanner& sc, VocabAndMerges& out) {
  if (!sc.Expect('[')) return false;
  if (sc.Peek(']')) return sc.Expect(']');
  std::string a, b;
  while (true) {
    if (sc.Peek('"')) {
      if (!sc.ReadString(a)) return false;
      if (!out.merges.empty() && !out.legacy_merges) {
        sc.Fail("merges mix the \"a b\" and [\"a\", \"b\"] forms");
        return false;
      }
      out.legacy_merges = true;
      out.merges.emplace_back(std::move(a), std::string());
    } else {
      if (!sc.Expect('[')) return false;
      sc.SkipWs();
      if (!sc.ReadString(a) || !sc.Expect(',')) return false;
      sc.SkipWs();
      if (!sc.ReadString(b) || !sc.Expect(']')) return false;
      if (out.legacy_merges) {
        sc.Fail("merges mix the \"a b\" and [\"a\", \"b\"] forms");
        return false;
      }
      out.merges.emplace_back(std::move(a), std::move(b));
    }
    if (sc.Peek(',')) {
      sc.Expect(',');
      continue;
    }
    return sc.Expect(']');
  }
}

// The fast scanner stopped inside model.vocab or model.merges (the value starting at `start`):
// valid JSON in a shape it does not take (a one-part merge, an id that is not a whole number)
// is read the ordinary way, which says what is wrong with which entry; text that is not JSON
// is reported as such.
Status ReadTableSlowly(Scanner& sc, size_t start, const char* name, VocabAndMerges& out) {
  const std::string scan_error = sc.error();
  sc.Rewind(start);
  if (!sc.SkipValue()) return CorruptData("not valid JSON: " + scan_error);
  const nlohmann::json value =
      nlohmann::json::parse(sc.text().substr(start, sc.pos() - start), nullptr, false);
  if (value.is_discarded()) return CorruptData("not valid JSON: " + scan_error);
  VocabAndMerges slow;
  REEL_RETURN_IF_ERROR(ReadVocabAndMerges(nlohmann::json{{name, value}}, slow));
  if (std::string_view(name) == "vocab") {
    out.vocab = std::move(slow.vocab);
  } else {
    out.merges = std::move(slow.merges);
    out.legacy_merges = slow.legacy_merges;
  }
  return Status::Ok();
}

}  // namespace

Result<ParsedTokenizerJson> ParseTokenizerJson(std::string_view text) {
  ParsedTokenizerJson parsed;
  // Find model.vocab and model.merges; everything else is copied for the ordinary parser.
  Scanner sc(text);
  std::vector<std::pair<size_t, size_t>> cut;  // byte ranges replaced by null
  auto corrupt = [&]() { return CorruptData("not valid JSON: " + sc.error()); };
  if (!sc.Expect('{')) return corrupt();
  if (!sc.Peek('}')) {
    std::string key, inner;
    while (true) {
      sc.SkipWs();
      if (!sc.ReadString(key) || !sc.Expect(':')) return corrupt();
      if (key == "model" && sc.Peek('{')) {
        sc.Expect('{');
        if (!sc.Peek('}')) {
          while (true) {
            sc.SkipWs();
            if (!sc.ReadString(inner) || !sc.Expect(':')) return corrupt();
            sc.SkipWs();
            size_t start = sc.pos();
            if (inner == "vocab" && sc.Peek('{')) {
              if (!ScanVocab(sc, parsed.model_tables)) {
                REEL_RETURN_IF_ERROR(ReadTableSlowly(sc, start, "vocab", parsed.model_tables));
              }
              parsed.model_tables.has_vocab = true;
              cut.emplace_back(start, sc.pos());
            } else if (inner == "merges" && sc.Peek('[')) {
              if (!ScanMerges(sc, parsed.model_tables)) {
                REEL_RETURN_IF_ERROR(ReadTableSlowly(sc, start, "merges", parsed.model_tables));
              }
              parsed.model_tables.has_merges = true;
              cut.emplace_back(start, sc.pos());
            } else if (!sc.SkipValue()) {
              return corrupt();
            }
            if (sc.Peek(',')) {
              sc.Expect(',');
              continue;
            }
            if (!sc.Expect('}')) return corrupt();
            break;
          }
        } else {
          sc.Expect('}');
        }
      } else if (!sc.SkipValue()) {
        return corrupt();
      }
      if (sc.Peek(',')) {
        sc.Expect(',');
        continue;
      }
      if (!sc.Expect('}')) return corrupt();
      break;
    }
  }
  std::string rest;
  rest.reserve(text.size() - [&] {
    size_t n = 0;
    for (auto [a, b] : cut) n += b - a;
    return n;
  }() + 16);
  size_t last = 0;
  for (auto [a, b] : cut) {
    rest.append(text.substr(last, a - last));
    rest.append("null");
    last = b;
  }
  rest.append(text.substr(last));
  parsed.root = nlohmann::json::parse(rest, nullptr, /*allow_exceptions=*/false);
  if (parsed.root.is_discarded()) return CorruptData("not valid JSON");
  return parsed;
}

Status ReadVocabAndMerges(const nlohmann::json& model, VocabAndMerges& out) {
  if (auto v = model.find("vocab"); v != model.end() && v->is_object()) {
    out.has_vocab = true;
    for (auto it = v->begin(); it != v->end(); ++it) {
      if (!it.value().is_number_unsigned() || it.value().get<uint64_t>() > 0xFFFFFFFFull) {
        return Unsupported("model BPE: the id of \"" + it.key() + "\" (" +
                           it.value()
                               .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                               .substr(0, 40) +
                           ") is not a valid token id (a whole number from 0 to 4294967295)");
      }
      out.vocab.emplace_back(it.key(), it.value().get<uint32_t>());
    }
  }
  if (auto m = model.find("merges"); m != model.end() && m->is_array()) {
    out.has_merges = true;
    size_t index = 0;
    for (const auto& e : *m) {
      ++index;
      if (e.is_string()) {
        out.legacy_merges = true;
        out.merges.emplace_back(e.get<std::string>(), std::string());
      } else if (e.is_array() && e.size() == 2 && e[0].is_string() && e[1].is_string()) {
        out.merges.emplace_back(e[0].get<std::string>(), e[1].get<std::string>());
      } else {
        std::string shape = e.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        if (shape.size() > 60) shape = shape.substr(0, 57) + "...";
        const std::string why = e.is_array() && e.size() < 2
                                    ? " has " + std::string(e.empty() ? "no parts" : "one part")
                                : e.is_array() && e.size() > 2
                                    ? " has " + std::to_string(e.size()) + " parts"
                                : e.is_array() ? " has a part that is not a string"
                                               : " is not a string or a list";
        return Unsupported("model BPE: merge " + std::to_string(index) + " (" + shape + ")" + why +
                           ": a merge is \"a b\" or [\"a\", \"b\"]");
      }
    }
    if (out.legacy_merges) {
      for (const auto& e : *m) {
        if (!e.is_string()) {
          return Unsupported("model BPE: merges mix the \"a b\" and [\"a\", \"b\"] forms");
        }
      }
    }
  }
  return Status::Ok();
}

}  // namespace reel::llm::internal
