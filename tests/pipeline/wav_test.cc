// WAV files in memory: the encoder's exact bytes, and the reader's errors on damaged files.
#include <gtest/gtest.h>

#include "pipeline/audio/wav.h"

namespace reel::pipeline {
namespace {

TEST(WavTest, EncodesACanonicalHeaderAndReadsItBack) {
  const std::vector<int16_t> samples = {0, 1, -1, 32767, -32768, 1234};
  const std::string wav = EncodeWav(samples.data(), samples.size(), 16000);
  ASSERT_EQ(wav.size(), 44u + 12);
  EXPECT_EQ(wav.substr(0, 4), "RIFF");
  EXPECT_EQ(wav.substr(8, 8), "WAVEfmt ");
  EXPECT_EQ(wav.substr(36, 4), "data");
  // RIFF size, byte rate and data size, little-endian.
  EXPECT_EQ(static_cast<uint8_t>(wav[4]), 36 + 12);
  EXPECT_EQ(static_cast<uint8_t>(wav[28]) | static_cast<uint8_t>(wav[29]) << 8, 32000 & 0xffff);
  EXPECT_EQ(static_cast<uint8_t>(wav[40]), 12);
  EXPECT_EQ(static_cast<uint8_t>(wav[44 + 6]), 0xff);  // 32767 low byte
  Result<WavAudio> back = ParseWav(wav, "x.wav");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->sample_rate, 16000);
  EXPECT_EQ(back->channels, 1);
  EXPECT_EQ(back->samples, samples);
}

TEST(WavTest, SkipsUnknownChunksAndPadding) {
  std::string wav = EncodeWav(nullptr, 0, 8000);
  std::string list = std::string("LIST") + std::string("\x03\x00\x00\x00", 4) + "abc" + '\0';
  wav.insert(36, list);  // before "data"
  const int16_t s[2] = {5, -5};
  wav += std::string(reinterpret_cast<const char*>(s), 4);
  wav[40 + list.size()] = 4;  // data size
  Result<WavAudio> back = ParseWav(wav, "x.wav");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->samples, (std::vector<int16_t>{5, -5}));
}

TEST(WavTest, DamagedFilesAreNamedErrors) {
  const int16_t s[4] = {1, 2, 3, 4};
  const std::string good = EncodeWav(s, 4, 16000);
  struct Case {
    std::string bytes;
    const char* says;
  };
  std::string not_pcm = good;
  not_pcm[20] = 3;  // IEEE float
  std::string bits8 = good;
  bits8[34] = 8;
  std::string long_data = good;
  long_data[40] = 100;
  const Case cases[] = {
      {"", "not a RIFF/WAVE file"},
      {good.substr(0, 12), "no fmt chunk"},
      {good.substr(0, 36), "no data chunk"},
      {not_pcm, "not 16-bit PCM"},
      {bits8, "not 16-bit PCM"},
      {long_data, "runs past the end"},
      {good.substr(0, 20), "runs past the end"},
  };
  for (const Case& c : cases) {
    Result<WavAudio> r = ParseWav(c.bytes, "bad.wav");
    ASSERT_FALSE(r.ok()) << c.says;
    EXPECT_EQ(r.status().code(), ErrorCode::kCorruptData);
    EXPECT_NE(r.status().message().find("bad.wav"), std::string::npos);
    EXPECT_NE(r.status().message().find(c.says), std::string::npos) << r.status().message();
  }
}

}  // namespace
}  // namespace reel::pipeline
