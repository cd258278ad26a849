// ContextMessages: the messages the model client sends are byte for byte those RequestBodyWriter
// writes for the same segment, with the frames read from files.
#include "llm/context_messages.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "llm/chat_template.h"
#include "llm/context_builder.h"
#include "llm/request_body.h"
#include "llm/token_counter.h"

namespace reel::llm {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class ContextMessagesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("reel_ctxmsg_" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Frame i's "JPEG": distinct bytes of a length that exercises base64 padding.
  std::string FrameBytes(size_t i) const {
    return std::string(1 + i % 3, static_cast<char>('a' + i)) + "\xff\xd8 frame " +
           std::to_string(i);
  }
  std::string FramePath(size_t i) const { return (dir_ / (std::to_string(i) + ".jpg")).string(); }
  void WriteFrames(size_t n) const {
    for (size_t i = 0; i < n; ++i) std::ofstream(FramePath(i), std::ios::binary) << FrameBytes(i);
  }

  static ContextInput Video(int frames) {
    ContextInput in;
    in.item_path = "clip.mp4";
    in.kind = ContextItemKind::kVideo;
    for (int i = 0; i < frames; ++i) {
      ContextFrame f;
      f.sample_index = i;
      f.time_s = 1.5 * i;
      f.width = 1008;
      f.height = 560;
      in.frames.push_back(f);
    }
    in.source_width = 1920;
    in.source_height = 1080;
    in.duration_s = 1.5 * frames;
    in.texts.push_back({"subtitle:0", 0.5, 1.2, "Hello \"quoted\" caf\xc3\xa9"});
    in.texts.push_back({"subtitle:0", 3.2, 4.0, "World"});
    return in;
  }

  // The messages array RequestBodyWriter writes: the text between "messages": and the first
  // request field after it.
  std::string WriterMessages(const Context& ctx, size_t segment, const ContextInput& in,
                             const std::string& file_url = "") const {
    std::string body;
    RequestSettings settings;
    settings.video_file_url = file_url;
    RequestBodyWriter w(ctx, segment, in, settings, [&](std::string_view s) {
      body.append(s);
      return Status::Ok();
    });
    EXPECT_TRUE(w.Begin().ok());
    for (size_t f : w.FramesNeeded()) EXPECT_TRUE(w.AddFrame(FrameBytes(f)).ok());
    EXPECT_TRUE(w.Finish().ok());
    const std::string open = "\"messages\":";
    const size_t from = body.find(open) + open.size();
    const size_t to = body.find(",\"max_completion_tokens\"");
    return body.substr(from, to - from);
  }

  std::string Messages(const Context& ctx, size_t segment, const std::string& file_url = "") {
    auto source = ContextMessages(
        ctx, segment, [&](size_t f) { return FramePath(f); }, file_url);
    EXPECT_TRUE(source.ok()) << source.status().ToString();
    if (!source.ok()) return "";
    auto text = ReadAll(**source);
    EXPECT_TRUE(text.ok());
    EXPECT_EQ(static_cast<int64_t>(text->size()), (*source)->Size());
    return *text;
  }

  ChatTemplate tmpl_ = BuiltInChatTemplate("minimax-m3").value();
  TokenCounter counter_{tmpl_.special_tokens};
  fs::path dir_;
};

TEST_F(ContextMessagesTest, ImagesTransportMatchesTheRequestBodyWriter) {
  ContextInput in = Video(5);
  WriteFrames(5);
  ContextOptions options;
  options.question = "What happens?";
  options.system_prompt = "Be brief.";
  auto ctx = BuildContext(in, options, tmpl_, counter_);
  ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
  const std::string messages = Messages(*ctx, 0);
  EXPECT_EQ(messages, WriterMessages(*ctx, 0, in));
  json j = json::parse(messages);
  EXPECT_EQ(j[0]["role"], "system");
  EXPECT_EQ(j[1]["content"].back()["text"], "What happens?");
  EXPECT_EQ(FramesOfSegment(*ctx, 0).size(), 5u);
}

TEST_F(ContextMessagesTest, VideoTransportSplitSegmentsMatchTheRequestBodyWriter) {
  ContextInput in = Video(12);
  WriteFrames(12);
  ContextOptions options;
  options.question = "What happens?";
  options.transport = Transport::kVideo;
  options.server_num_frames = 4;  // more frames than the server keeps: split
  auto ctx = BuildContext(in, options, tmpl_, counter_);
  ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
  ASSERT_GT(ctx->segments.size(), 1u);
  size_t frames = 0;
  for (size_t s = 0; s < ctx->segments.size(); ++s) {
    EXPECT_EQ(Messages(*ctx, s), WriterMessages(*ctx, s, in)) << "segment " << s;
    frames += FramesOfSegment(*ctx, s).size();
  }
  EXPECT_EQ(frames, 12u);
}

TEST_F(ContextMessagesTest, FileTransportAndDocumentsCarryNoFrames) {
  ContextInput in = Video(3);
  ContextOptions options;
  options.question = "Summarise.";
  options.transport = Transport::kFile;
  auto ctx = BuildContext(in, options, tmpl_, counter_);
  ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
  const std::string url = "file:///media/clip.mp4";
  EXPECT_EQ(Messages(*ctx, 0, url), WriterMessages(*ctx, 0, in, url));

  ContextInput doc;
  doc.item_path = "notes.txt";
  doc.kind = ContextItemKind::kDocument;
  doc.texts.push_back({"document", std::nullopt, std::nullopt, "Line one.\nLine two."});
  auto dctx = BuildContext(doc, options, tmpl_, counter_);
  ASSERT_TRUE(dctx.ok()) << dctx.status().ToString();
  EXPECT_EQ(Messages(*dctx, 0), WriterMessages(*dctx, 0, doc));
  EXPECT_TRUE(FramesOfSegment(*dctx, 0).empty());
}

TEST_F(ContextMessagesTest, AMissingFrameFileIsAnErrorNamingIt) {
  ContextInput in = Video(2);
  ContextOptions options;
  options.question = "What happens?";
  auto ctx = BuildContext(in, options, tmpl_, counter_);
  ASSERT_TRUE(ctx.ok());
  auto source = ContextMessages(*ctx, 0, [&](size_t f) { return FramePath(f); });
  ASSERT_FALSE(source.ok());
  EXPECT_NE(source.status().message().find(FramePath(0)), std::string::npos);
  EXPECT_FALSE(ContextMessages(*ctx, 7, [&](size_t f) { return FramePath(f); }).ok());
}

}  // namespace
}  // namespace reel::llm
