// Audio in: decoding, downmixing and resampling against the ffmpeg command line, the choice of
// stream, time ranges, gaps in the timestamps, files without audio or speech, damaged files.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>

#include "pipeline/audio/audio_reader.h"
#include "pipeline/audio/speech_audio.h"
#include "tests/support/speech_media.h"
#include "tests/support/subprocess.h"
#include "tests/support/test_media.h"

namespace reel::pipeline {
namespace {

using reel::testing::DecodeWithFfmpeg;
using reel::testing::GeneratedMedia;
using reel::testing::ScratchDir;

struct AudioRead {
  Status status;
  AudioTrack track;
  AudioReadStats stats;
  std::vector<int16_t> samples;
};

AudioRead ReadAudio(const std::string& path, AudioReadOptions options = {}) {
  AudioRead out;
  Result<std::unique_ptr<AudioReader>> reader = AudioReader::Open(path, options);
  if (!reader.ok()) {
    out.status = reader.status();
    return out;
  }
  while (true) {
    Result<size_t> n = (*reader)->Read(&out.samples);
    if (!n.ok()) {
      out.status = n.status();
      break;
    }
    if (*n == 0) break;
  }
  out.track = (*reader)->track();
  out.stats = (*reader)->stats();
  return out;
}

// The tone's frequency from zero crossings over [from, to) seconds.
double Frequency(const std::vector<int16_t>& s, double from, double to) {
  int crossings = 0;
  const size_t a = static_cast<size_t>(from * 16000), b = static_cast<size_t>(to * 16000);
  for (size_t i = a + 1; i < b && i < s.size(); ++i) {
    if ((s[i - 1] < 0) != (s[i] < 0)) ++crossings;
  }
  return crossings / 2.0 / (to - from);
}

double Rms(const std::vector<int16_t>& s, double from, double to) {
  double sum = 0;
  size_t n = 0;
  for (size_t i = static_cast<size_t>(from * 16000);
       i < static_cast<size_t>(to * 16000) && i < s.size(); ++i, ++n) {
    sum += double(s[i]) * s[i];
  }
  return n ? std::sqrt(sum / n) : 0;
}

TEST(AudioReaderTest, SamplesAreWhatFfmpegGivesForMonoSixteenKilohertz) {
  const std::string sources[] = {
      // Stereo 44.1 kHz FLAC: different tones left and right, so the downmix shows.
      GeneratedMedia("two_tones.flac",
                     "-f lavfi -i sine=frequency=440:duration=6 -f lavfi -i "
                     "sine=frequency=1000:duration=6 -filter_complex amerge=inputs=2 -ar 44100 "
                     "-c:a flac"),
      // 5.1 AAC at 48 kHz in MP4 with a video stream.
      GeneratedMedia("surround.mp4",
                     "-f lavfi -i testsrc2=s=160x120:r=10:d=5 -f lavfi -i "
                     "sine=frequency=300:duration=5 -ac 6 -ar 48000 -c:v mpeg4 -c:a aac"),
      // 8 kHz mono G.711 in WAV (upsampled).
      GeneratedMedia("mulaw.wav",
                     "-f lavfi -i sine=frequency=700:duration=3 -ar 8000 -c:a pcm_mulaw"),
  };
  for (const std::string& path : sources) {
    ASSERT_FALSE(path.empty());
    const std::vector<int16_t> want = DecodeWithFfmpeg(path);
    ASSERT_FALSE(want.empty()) << path;
    const AudioRead got = ReadAudio(path);
    ASSERT_TRUE(got.status.ok()) << got.status.message();
    EXPECT_TRUE(got.track.has_audio);
    // The same length (within one source frame at the end) and the same samples.
    ASSERT_NEAR(static_cast<double>(got.samples.size()), static_cast<double>(want.size()), 400)
        << path;
    int max_diff = 0;
    for (size_t i = 0; i < std::min(got.samples.size(), want.size()); ++i) {
      max_diff = std::max(max_diff, std::abs(got.samples[i] - want[i]));
    }
    EXPECT_LE(max_diff, 1) << path;
    EXPECT_EQ(got.stats.decode_errors, 0);
    EXPECT_EQ(got.stats.silence_filled_s, 0);
  }
}

TEST(AudioReaderTest, TheStreamInTheLanguageElseTheDefaultElseTheFirst) {
  const std::string path = GeneratedMedia(
      "three_languages.mkv",
      "-f lavfi -i sine=frequency=400:duration=2 -f lavfi -i sine=frequency=800:duration=2 "
      "-f lavfi -i sine=frequency=1600:duration=2 -map 0 -map 1 -map 2 -c:a flac "
      "-metadata:s:a:0 language=eng -metadata:s:a:1 language=ger -metadata:s:a:2 language=fre "
      "-disposition:a:0 0 -disposition:a:1 default -disposition:a:2 0");
  struct Case {
    const char* language;
    int stream;
    double hz;
  };
  for (const Case& c : {Case{"en", 0, 400}, Case{"deu", 1, 800}, Case{"French", 2, 1600},
                        Case{"ja", 1, 800}, Case{"", 1, 800}}) {
    AudioReadOptions options;
    options.language = c.language;
    const AudioRead got = ReadAudio(path, options);
    ASSERT_TRUE(got.status.ok()) << got.status.message();
    EXPECT_EQ(got.track.stream.index, c.stream) << c.language << ": " << got.track.stream.reason;
    EXPECT_NEAR(Frequency(got.samples, 0.5, 1.5), c.hz, 5) << c.language;
  }
  AudioReadOptions explicit_stream;
  explicit_stream.stream_index = 2;
  EXPECT_NEAR(Frequency(ReadAudio(path, explicit_stream).samples, 0.5, 1.5), 1600, 5);
  const std::string video =
      GeneratedMedia("video_only.mp4", "-f lavfi -i testsrc2=s=160x120:r=10:d=2 -c:v mpeg4");
  explicit_stream.stream_index = 0;
  AudioRead bad = ReadAudio(video, explicit_stream);
  EXPECT_EQ(bad.status.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(bad.status.message().find("video_only"), std::string::npos);
}

TEST(AudioReaderTest, ARangeStartsAndEndsAtItsSamples) {
  const std::string path = GeneratedMedia(
      "chirp.flac", "-f lavfi -i aevalsrc='0.5*sin(2*PI*(200+40*t)*t)':s=44100:d=20 -c:a flac");
  const std::vector<int16_t> whole = DecodeWithFfmpeg(path);
  ASSERT_GT(whole.size(), 19u * 16000);
  AudioReadOptions options;
  options.start_s = 7.25;
  options.end_s = 12.5;
  const AudioRead got = ReadAudio(path, options);
  ASSERT_TRUE(got.status.ok()) << got.status.message();
  EXPECT_DOUBLE_EQ(got.track.origin_s, 7.25);
  EXPECT_EQ(got.samples.size(), static_cast<size_t>(5.25 * 16000));
  // The same samples as the whole file's at that place (away from the resampler's edges).
  const size_t offset = static_cast<size_t>(7.25 * 16000);
  int max_diff = 0;
  for (size_t i = 200; i + 200 < got.samples.size(); ++i) {
    max_diff = std::max(max_diff, std::abs(got.samples[i] - whole[offset + i]));
  }
  EXPECT_LE(max_diff, 2);
  // A range past the end: no samples, not an error.
  options.start_s = 30;
  options.end_s = 40;
  const AudioRead past = ReadAudio(path, options);
  EXPECT_TRUE(past.status.ok());
  EXPECT_TRUE(past.samples.empty());
}

TEST(AudioReaderTest, GapsInTheTimestampsKeepLaterAudioAtItsTime) {
  // The tone jumps 2 s forward at 3 s: its second half plays from 5 s.
  const std::string gap = GeneratedMedia(
      "gap.mkv",
      "-f lavfi -i sine=frequency=500:duration=6 -af asetpts='if(gte(T\\,3)\\,PTS+2/TB\\,PTS)' "
      "-c:a flac");
  const AudioRead got = ReadAudio(gap);
  ASSERT_TRUE(got.status.ok()) << got.status.message();
  EXPECT_NEAR(got.samples.size() / 16000.0, 8.0, 0.1);
  EXPECT_NEAR(got.stats.silence_filled_s, 2.0, 0.1);
  EXPECT_GT(Rms(got.samples, 0.5, 2.8), 1000);
  EXPECT_LT(Rms(got.samples, 3.2, 4.8), 1);
  EXPECT_GT(Rms(got.samples, 5.2, 7.8), 1000);
  EXPECT_NEAR(Frequency(got.samples, 5.2, 7.8), 500, 5);

  // Audio that starts 2.5 s into the video: sample 0 is at 2.5 s.
  const std::string late =
      GeneratedMedia("late_audio.mkv",
                     "-f lavfi -i testsrc2=s=160x120:r=10:d=6 -itsoffset 2.5 -f lavfi -i "
                     "sine=frequency=500:duration=3 -c:v mpeg4 -c:a flac");
  const AudioRead l = ReadAudio(late);
  ASSERT_TRUE(l.status.ok()) << l.status.message();
  EXPECT_NEAR(l.track.origin_s, 2.5, 0.03);
}

TEST(AudioReaderTest, NoAudioOrOnlySilenceIsNotAnErrorButANote) {
  const std::string video =
      GeneratedMedia("video_only.mp4", "-f lavfi -i testsrc2=s=160x120:r=10:d=2 -c:v mpeg4");
  const std::string silent = GeneratedMedia(
      "silent.mp4",
      "-f lavfi -i testsrc2=s=160x120:r=10:d=5 -f lavfi -i anullsrc=r=48000:cl=stereo:d=5 "
      "-c:v mpeg4 -c:a aac -shortest");
  const std::string hum =
      GeneratedMedia("hum.mkv", "-f lavfi -i anoisesrc=color=brown:amplitude=0.01:d=5 -c:a flac");
  int chunks = 0;
  auto count = [&](SpeechChunk) {
    ++chunks;
    return Status::Ok();
  };
  Result<SpeechAudio> none = ReadSpeechChunks(video, {}, count);
  ASSERT_TRUE(none.ok()) << none.status().message();
  EXPECT_FALSE(none->track.has_audio);
  ASSERT_EQ(none->notes.size(), 1u);
  EXPECT_EQ(none->notes[0], "no audio stream: nothing to transcribe");
  for (const std::string& path : {silent, hum}) {
    Result<SpeechAudio> quiet = ReadSpeechChunks(path, {}, count);
    ASSERT_TRUE(quiet.ok()) << quiet.status().message();
    EXPECT_TRUE(quiet->track.has_audio);
    EXPECT_NEAR(quiet->audio_s, 5.0, 0.1);
    ASSERT_FALSE(quiet->notes.empty());
    EXPECT_NE(quiet->notes[0].find("no speech found in 5.0 s of audio stream #"), std::string::npos)
        << quiet->notes[0];
  }
  EXPECT_EQ(chunks, 0);
}

TEST(AudioReaderTest, DamagedFilesGiveWhatCanBeReadOrANamedError) {
  const std::string dir = ScratchDir("AudioDamage");
  const std::string mp3 = GeneratedMedia(
      "tone.mp3", "-f lavfi -i sine=frequency=600:duration=8 -c:a libmp3lame -b:a 64k");
  std::ifstream in(mp3, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), {});
  auto write = [&](const std::string& name, const std::string& data) {
    const std::string path = dir + "/" + name;
    std::ofstream(path, std::ios::binary) << data;
    return path;
  };
  // Cut in half: the first half, no error.
  AudioRead cut = ReadAudio(write("cut.mp3", bytes.substr(0, bytes.size() / 2)));
  ASSERT_TRUE(cut.status.ok()) << cut.status.message();
  EXPECT_NEAR(cut.samples.size() / 16000.0, 4.0, 0.3);
  // Garbage in the middle: skipped (counted), the rest kept.
  std::string spoiled = bytes;
  for (size_t i = spoiled.size() / 3; i < spoiled.size() / 3 + 3000; ++i) spoiled[i] = '\xff';
  AudioRead hurt = ReadAudio(write("spoiled.mp3", spoiled));
  ASSERT_TRUE(hurt.status.ok()) << hurt.status.message();
  EXPECT_GT(hurt.samples.size() / 16000.0, 6.0);
  EXPECT_GT(Rms(hurt.samples, 6.5, 7.5), 1000) << "audio after the damage is lost";
  // Not media at all, and no file.
  std::string noise(20000, '\0');
  for (size_t i = 0; i < noise.size(); ++i) noise[i] = static_cast<char>(i * 7919 % 251);
  AudioRead junk = ReadAudio(write("junk.mp3", noise));
  EXPECT_EQ(junk.status.code(), ErrorCode::kCorruptData);
  EXPECT_NE(junk.status.message().find("junk.mp3"), std::string::npos);
  AudioRead missing = ReadAudio(dir + "/missing.wav");
  EXPECT_EQ(missing.status.code(), ErrorCode::kNotFound);
  EXPECT_NE(missing.status.message().find("missing.wav"), std::string::npos);
}

}  // namespace
}  // namespace reel::pipeline

namespace reel::pipeline {
namespace {

TEST(AudioReaderTest, TheTimeLimitBoundsReadingNotTheCallersWork) {
  const reel::testing::SpeechVideo video = reel::testing::ToneBurstVideo();
  ASSERT_FALSE(video.path.empty());
  SpeechAudioOptions options;
  options.read.limits.time_limit_s = 2;
  int chunks = 0;
  Result<SpeechAudio> r = ReadSpeechChunks(video.path, options, [&](SpeechChunk) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));  // a slow backend
    ++chunks;
    return Status::Ok();
  });
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(chunks, 7);
}

}  // namespace
}  // namespace reel::pipeline
