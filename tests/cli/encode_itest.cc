// `reel make-test-weights` and `reel encode` end to end.
#include <cmath>
#include <cstring>

#include "tests/cli/cli_test_util.h"

namespace reel::testing {
namespace {

namespace fs = std::filesystem;

struct Npy {
  std::vector<int64_t> shape;
  std::vector<float> values;
};

// Reads a float32 .npy written by `reel encode` (format 1.0, C order).
Npy ReadNpy(const std::string& path) {
  std::string bytes = ReadText(path);
  Npy npy;
  EXPECT_GE(bytes.size(), 10u);
  if (bytes.size() < 10) return npy;
  EXPECT_EQ(bytes.substr(0, 6), "\x93NUMPY");
  const size_t header_len = static_cast<uint8_t>(bytes[8]) | static_cast<uint8_t>(bytes[9]) << 8;
  EXPECT_EQ((10 + header_len) % 64, 0u);
  const std::string header = bytes.substr(10, header_len);
  EXPECT_NE(header.find("'descr': '<f4'"), std::string::npos) << header;
  const size_t open = header.find("'shape': (");
  const size_t close = header.find(')', open);
  std::string dims = header.substr(open + 10, close - open - 10);
  size_t pos = 0;
  while (pos < dims.size()) {
    size_t comma = dims.find(',', pos);
    if (comma == std::string::npos) comma = dims.size();
    std::string item = dims.substr(pos, comma - pos);
    if (item.find_first_of("0123456789") != std::string::npos)
      npy.shape.push_back(std::stoll(item));
    pos = comma + 1;
  }
  const size_t count = (bytes.size() - 10 - header_len) / 4;
  npy.values.resize(count);
  std::memcpy(npy.values.data(), bytes.data() + 10 + header_len, count * 4);
  return npy;
}

class EncodeCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ScratchDir("EncodeCommand");
    weights_ = dir_ + "/weights";
    CommandResult made = Reel("make-test-weights --config tiny " + ShellQuote(weights_));
    ASSERT_EQ(made.exit_code, 0) << made.err;
    ASSERT_TRUE(fs::exists(weights_ + "/config.json"));
    ASSERT_TRUE(fs::exists(weights_ + "/model.safetensors"));
  }
  std::string dir_, weights_;
};

TEST_F(EncodeCommandTest, ImageToTokensAndPooled) {
  const std::string image = dir_ + "/still.png";
  ASSERT_EQ(RunCommand("ffmpeg -loglevel error -y -f lavfi -i testsrc2=s=200x120 -frames:v 1 " +
                       ShellQuote(image))
                .exit_code,
            0);
  // 200x120 -> smart resize -> 196x112 = 14x8 patches of 14 px: 7x4 = 28 windows, 1 pair.
  CommandResult tokens = Reel("encode --weights " + ShellQuote(weights_) + " " + ShellQuote(image) +
                              " -o " + ShellQuote(dir_ + "/tokens.npy"));
  ASSERT_EQ(tokens.exit_code, 0) << tokens.err;
  EXPECT_NE(tokens.out.find("1 frame of 196x112 -> 1 pair of 8x14 patches -> tokens [28, 48]"),
            std::string::npos)
      << tokens.out;
  EXPECT_NE(tokens.out.find("encoded in"), std::string::npos);
  Npy t = ReadNpy(dir_ + "/tokens.npy");
  EXPECT_EQ(t.shape, (std::vector<int64_t>{28, 48}));
  ASSERT_EQ(t.values.size(), 28u * 48u);
  double sum = 0;
  for (float v : t.values) {
    ASSERT_TRUE(std::isfinite(v));
    sum += std::fabs(v);
  }
  EXPECT_GT(sum, 0);

  CommandResult pooled = Reel("encode --pooled --weights " + ShellQuote(weights_) + " " +
                              ShellQuote(image) + " -o " + ShellQuote(dir_ + "/pooled.npy"));
  ASSERT_EQ(pooled.exit_code, 0) << pooled.err;
  Npy p = ReadNpy(dir_ + "/pooled.npy");
  EXPECT_EQ(p.shape, (std::vector<int64_t>{1, 64}));

  // Both backends give the same tokens.
  CommandResult blas = Reel("encode --backend openblas --weights " + ShellQuote(weights_) + " " +
                            ShellQuote(image) + " -o " + ShellQuote(dir_ + "/blas.npy"));
  ASSERT_EQ(blas.exit_code, 0) << blas.err;
  Npy b = ReadNpy(dir_ + "/blas.npy");
  ASSERT_EQ(b.values.size(), t.values.size());
  double max_diff = 0, max_ref = 0;
  for (size_t i = 0; i < t.values.size(); ++i) {
    max_diff = std::max(max_diff, std::fabs(static_cast<double>(b.values[i]) - t.values[i]));
    max_ref = std::max(max_ref, std::fabs(static_cast<double>(t.values[i])));
  }
  EXPECT_LT(max_diff / max_ref, 1e-5);
}

TEST_F(EncodeCommandTest, VideoFramesInPairs) {
  const std::string clip = SmallClip(3, "320x180");
  ASSERT_FALSE(clip.empty());
  // --count 5: 5 frames -> 3 pairs (the last frame repeated); 320x180 -> 308x168 -> 22x12 patches.
  CommandResult r = Reel("encode --count 5 --pooled --weights " + ShellQuote(weights_) + " " +
                         ShellQuote(clip) + " -o " + ShellQuote(dir_ + "/video.npy"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("5 frames of 308x168 -> 3 pairs of 12x22 patches -> pooled [3, 64]"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(ReadNpy(dir_ + "/video.npy").shape, (std::vector<int64_t>{3, 64}));
}

TEST_F(EncodeCommandTest, ErrorsNameTheFileAndReason) {
  const std::string image = dir_ + "/still.png";
  ASSERT_EQ(RunCommand("ffmpeg -loglevel error -y -f lavfi -i testsrc2=s=64x64 -frames:v 1 " +
                       ShellQuote(image))
                .exit_code,
            0);
  CommandResult missing =
      Reel("encode --weights " + ShellQuote(dir_ + "/nowhere") + " " + ShellQuote(image));
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find(dir_ + "/nowhere: no such file or directory"), std::string::npos)
      << missing.err;

  // A checkpoint with a tensor of the wrong shape: the message names it.
  WriteText(weights_ + "/config.json", R"({"vision_config": {"hidden_size": 96,
      "num_attention_heads": 2, "num_hidden_layers": 2, "intermediate_size": 128},
      "projector_hidden_size": 80, "text_config": {"hidden_size": 48}})");
  CommandResult shape = Reel("encode --weights " + ShellQuote(weights_) + " " + ShellQuote(image));
  EXPECT_EQ(shape.exit_code, 1);
  EXPECT_NE(shape.err.find("model.safetensors: tensor "
                           "'vision_tower.vision_model.embeddings.patch_embedding.weight' has "
                           "shape [64, 3, 2, 14, 14], expected [96, 3, 2, 14, 14]"),
            std::string::npos)
      << shape.err;

  // A config that asks for a layer the checkpoint lacks: the message names the missing tensor.
  WriteText(weights_ + "/config.json", R"({"vision_config": {"hidden_size": 64,
      "num_attention_heads": 2, "num_hidden_layers": 3, "intermediate_size": 128},
      "projector_hidden_size": 80, "text_config": {"hidden_size": 48}})");
  CommandResult absent = Reel("encode --weights " + ShellQuote(weights_) + " " + ShellQuote(image));
  EXPECT_EQ(absent.exit_code, 1);
  EXPECT_NE(absent.err.find("no tensor 'vision_tower.vision_model.encoder.layers.2."),
            std::string::npos)
      << absent.err;

  // A truncated checkpoint.
  const std::string bad = dir_ + "/bad";
  fs::create_directories(bad);
  std::string bytes = ReadText(weights_ + "/model.safetensors");
  WriteText(bad + "/model.safetensors", bytes.substr(0, bytes.size() / 2));
  CommandResult truncated = Reel("encode --weights " + ShellQuote(bad) + " " + ShellQuote(image));
  EXPECT_EQ(truncated.exit_code, 1);
  EXPECT_NE(truncated.err.find(bad + "/model.safetensors: tensor '"), std::string::npos)
      << truncated.err;

  CommandResult not_media = Reel("encode --weights " + ShellQuote(weights_) + " " +
                                 ShellQuote(weights_ + "/config.json"));
  EXPECT_EQ(not_media.exit_code, 1);
  EXPECT_NE(not_media.err.find("config.json"), std::string::npos) << not_media.err;
}

}  // namespace
}  // namespace reel::testing
