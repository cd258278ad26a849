#include "llm/tokenizer/post_processor.h"

#include <nlohmann/json.hpp>

#include "llm/tokenizer/json_util.h"

namespace reel::llm::internal {

using nlohmann::json;

namespace {

// A template: fixed ids, with the encoded text where the sequence goes.
class TemplatePostProcessor : public PostProcessor {
 public:
  struct Piece {
    bool sequence;
    std::vector<uint32_t> ids;
  };
  explicit TemplatePostProcessor(std::vector<Piece> pieces) : pieces_(std::move(pieces)) {}
  void Process(std::vector<uint32_t>& ids) const override {
    std::vector<uint32_t> out;
    out.reserve(ids.size() + 8);
    for (const Piece& p : pieces_) {
      if (p.sequence) {
        out.insert(out.end(), ids.begin(), ids.end());
      } else {
        out.insert(out.end(), p.ids.begin(), p.ids.end());
      }
    }
    ids.swap(out);
  }

 private:
  std::vector<Piece> pieces_;
};

class NoOpPostProcessor : public PostProcessor {
 public:
  void Process(std::vector<uint32_t>&) const override {}
};

class SequencePostProcessor : public PostProcessor {
 public:
  explicit SequencePostProcessor(std::vector<std::unique_ptr<PostProcessor>> parts)
      : parts_(std::move(parts)) {}
  void Process(std::vector<uint32_t>& ids) const override {
    for (const auto& p : parts_) p->Process(ids);
  }

 private:
  std::vector<std::unique_ptr<PostProcessor>> parts_;
};

Result<uint32_t> TokenPairId(const json& config, const char* key, const std::string& what) {
  auto it = config.find(key);
  if (it == config.end() || !it->is_array() || it->size() != 2 || !(*it)[1].is_number_unsigned()) {
    return Unsupported(what + ": \"" + key + "\" must be [token, id]");
  }
  return (*it)[1].get<uint32_t>();
}

}  // namespace

Result<std::unique_ptr<PostProcessor>> MakePostProcessor(const json& config) {
  REEL_ASSIGN_OR_RETURN(std::string type, TypeOf(config, "post_processor"));
  const std::string what = "post_processor " + type;
  if (type == "ByteLevel") return std::unique_ptr<PostProcessor>(new NoOpPostProcessor());
  if (type == "BertProcessing" || type == "RobertaProcessing") {
    REEL_ASSIGN_OR_RETURN(uint32_t cls, TokenPairId(config, "cls", what));
    REEL_ASSIGN_OR_RETURN(uint32_t sep, TokenPairId(config, "sep", what));
    std::vector<TemplatePostProcessor::Piece> pieces{{false, {cls}}, {true, {}}, {false, {sep}}};
    return std::unique_ptr<PostProcessor>(new TemplatePostProcessor(std::move(pieces)));
  }
  if (type == "TemplateProcessing") {
    auto single = config.find("single");
    auto specials = config.find("special_tokens");
    if (single == config.end() || !single->is_array()) {
      return Unsupported(what + ": \"single\" must be a list");
    }
    std::vector<TemplatePostProcessor::Piece> pieces;
    for (const json& piece : *single) {
      if (piece.contains("Sequence")) {
        pieces.push_back({true, {}});
        continue;
      }
      auto st = piece.find("SpecialToken");
      if (st == piece.end() || !st->contains("id") || !(*st)["id"].is_string()) {
        return Unsupported(what + ": a template piece is neither Sequence nor SpecialToken");
      }
      std::string name = (*st)["id"].get<std::string>();
      if (specials == config.end() || !specials->contains(name) ||
          !(*specials)[name].contains("ids") || !(*specials)[name]["ids"].is_array()) {
        return Unsupported(what + ": special token \"" + name + "\" has no ids");
      }
      std::vector<uint32_t> ids;
      for (const json& id : (*specials)[name]["ids"]) {
        if (!id.is_number_unsigned()) return Unsupported(what + ": bad id for \"" + name + "\"");
        ids.push_back(id.get<uint32_t>());
      }
      pieces.push_back({false, std::move(ids)});
    }
    return std::unique_ptr<PostProcessor>(new TemplatePostProcessor(std::move(pieces)));
  }
  if (type == "Sequence") {
    auto it = config.find("processors");
    if (it == config.end() || !it->is_array()) {
      return Unsupported(what + " without a \"processors\" list");
    }
    std::vector<std::unique_ptr<PostProcessor>> parts;
    for (const json& part : *it) {
      REEL_ASSIGN_OR_RETURN(auto p, MakePostProcessor(part));
      parts.push_back(std::move(p));
    }
    return std::unique_ptr<PostProcessor>(new SequencePostProcessor(std::move(parts)));
  }
  return Unsupported(what +
                     " is not supported (supported: TemplateProcessing, BertProcessing, "
                     "RobertaProcessing, ByteLevel, Sequence)");
}

}  // namespace reel::llm::internal
