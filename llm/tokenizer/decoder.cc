#include "llm/tokenizer/decoder.h"

#include <nlohmann/json.hpp>

#include "llm/tokenizer/byte_level.h"
#include "llm/tokenizer/json_util.h"
#include "llm/tokenizer/regex.h"
#include "llm/tokenizer/utf8.h"

namespace reel::llm::internal {

using nlohmann::json;

std::string Utf8Lossy(const std::string& bytes) {
  if (ValidUtf8Prefix(bytes) == bytes.size()) return bytes;
  return ToValidUtf8(bytes);
}

namespace {

// ByteLevel: every token whose characters all stand for bytes becomes those bytes (others stay
// as they are); the whole becomes one string, invalid UTF-8 replaced.
class ByteLevelDecoder : public Decoder {
 public:
  void DecodeChain(std::vector<std::string>& tokens) const override {
    std::string bytes;
    for (const std::string& t : tokens) {
      std::string mapped;
      bool ok = true;
      size_t i = 0;
      while (i < t.size()) {
        int b = CharToByte(NextCodePoint(t, i));
        if (b < 0) {
          ok = false;
          break;
        }
        mapped.push_back(static_cast<char>(b));
      }
      bytes.append(ok ? mapped : t);
    }
    tokens.assign(1, Utf8Lossy(bytes));
  }
};

// ByteFallback: runs of <0xXX> tokens become their bytes when those are valid UTF-8, else one
// U+FFFD per byte.
class ByteFallbackDecoder : public Decoder {
 public:
  void DecodeChain(std::vector<std::string>& tokens) const override {
    std::vector<std::string> out;
    std::string pending;
    auto flush = [&]() {
      if (pending.empty()) return;
      if (ValidUtf8Prefix(pending) == pending.size()) {
        out.push_back(pending);
      } else {
        for (size_t i = 0; i < pending.size(); ++i) out.push_back("\xEF\xBF\xBD");
      }
      pending.clear();
    };
    for (std::string& t : tokens) {
      int byte = -1;
      if (t.size() == 6 && t.compare(0, 3, "<0x") == 0 && t[5] == '>' &&
          std::isxdigit(static_cast<unsigned char>(t[3])) &&
          std::isxdigit(static_cast<unsigned char>(t[4]))) {
        byte = std::stoi(t.substr(3, 2), nullptr, 16);
      }
      if (byte >= 0) {
        pending.push_back(static_cast<char>(byte));
      } else {
        flush();
        out.push_back(std::move(t));
      }
    }
    flush();
    tokens.swap(out);
  }
};

class FuseDecoder : public Decoder {
 public:
  void DecodeChain(std::vector<std::string>& tokens) const override {
    std::string all;
    for (const std::string& t : tokens) all += t;
    tokens.assign(1, all);
  }
};

class StripDecoder : public Decoder {
 public:
  StripDecoder(uint32_t content, size_t start, size_t stop)
      : content_(content), start_(start), stop_(stop) {}
  void DecodeChain(std::vector<std::string>& tokens) const override {
    for (std::string& t : tokens) {
      std::vector<uint32_t> chars;
      size_t i = 0;
      while (i < t.size()) chars.push_back(NextCodePoint(t, i));
      size_t start_cut = 0;
      for (size_t k = 0; k < start_ && k < chars.size(); ++k) {
        if (chars[k] != content_) break;
        start_cut = k + 1;
      }
      size_t stop_cut = chars.size();
      for (size_t k = 0; k < stop_ && k < chars.size(); ++k) {
        size_t index = chars.size() - k - 1;
        if (chars[index] != content_) break;
        stop_cut = index;
      }
      std::string out;
      for (size_t k = start_cut; k < stop_cut; ++k) AppendUtf8(out, chars[k]);
      t.swap(out);
    }
  }

 private:
  uint32_t content_;
  size_t start_, stop_;
};

class ReplaceDecoder : public Decoder {
 public:
  ReplaceDecoder(Regex regex, std::string content)
      : regex_(std::move(regex)), content_(std::move(content)) {}
  void DecodeChain(std::vector<std::string>& tokens) const override {
    std::vector<std::pair<size_t, size_t>> matches;
    for (std::string& t : tokens) {
      matches.clear();
      regex_.FindAll(t, matches);
      if (matches.empty()) continue;
      std::string out;
      size_t last = 0;
      for (const auto& [s, e] : matches) {
        out.append(t, last, s - last);
        out.append(content_);
        last = e;
      }
      out.append(t, last, std::string::npos);
      t.swap(out);
    }
  }

 private:
  Regex regex_;
  std::string content_;
};

class SequenceDecoder : public Decoder {
 public:
  explicit SequenceDecoder(std::vector<std::unique_ptr<Decoder>> parts)
      : parts_(std::move(parts)) {}
  void DecodeChain(std::vector<std::string>& tokens) const override {
    for (const auto& p : parts_) p->DecodeChain(tokens);
  }

 private:
  std::vector<std::unique_ptr<Decoder>> parts_;
};

}  // namespace

Result<std::unique_ptr<Decoder>> MakeDecoder(const json& config) {
  REEL_ASSIGN_OR_RETURN(std::string type, TypeOf(config, "decoder"));
  const std::string what = "decoder " + type;
  if (type == "ByteLevel") return std::unique_ptr<Decoder>(new ByteLevelDecoder());
  if (type == "ByteFallback") return std::unique_ptr<Decoder>(new ByteFallbackDecoder());
  if (type == "Fuse") return std::unique_ptr<Decoder>(new FuseDecoder());
  if (type == "Strip") {
    REEL_ASSIGN_OR_RETURN(std::string content, GetString(config, "content", what));
    size_t i = 0;
    if (content.empty() || (NextCodePoint(content, i), i != content.size())) {
      return Unsupported(what + ": \"content\" must be one character");
    }
    auto start = config.find("start");
    auto stop = config.find("stop");
    if (start == config.end() || !start->is_number_unsigned() || stop == config.end() ||
        !stop->is_number_unsigned()) {
      return Unsupported(what + ": \"start\" and \"stop\" must be counts");
    }
    i = 0;
    return std::unique_ptr<Decoder>(
        new StripDecoder(NextCodePoint(content, i), start->get<size_t>(), stop->get<size_t>()));
  }
  if (type == "Replace") {
    REEL_ASSIGN_OR_RETURN(Regex regex, PatternRegex(config, what));
    REEL_ASSIGN_OR_RETURN(std::string content, GetString(config, "content", what));
    return std::unique_ptr<Decoder>(new ReplaceDecoder(std::move(regex), std::move(content)));
  }
  if (type == "Sequence") {
    auto it = config.find("decoders");
    if (it == config.end() || !it->is_array()) {
      return Unsupported(what + " without a \"decoders\" list");
    }
    std::vector<std::unique_ptr<Decoder>> parts;
    for (const json& part : *it) {
      REEL_ASSIGN_OR_RETURN(auto d, MakeDecoder(part));
      parts.push_back(std::move(d));
    }
    return std::unique_ptr<Decoder>(new SequenceDecoder(std::move(parts)));
  }
  return Unsupported(what +
                     " is not supported (supported: ByteLevel, ByteFallback, Fuse, Strip, "
                     "Replace, Sequence)");
}

}  // namespace reel::llm::internal
