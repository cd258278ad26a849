#include "vision/safetensors.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "base/file_util.h"
#include "tests/support/test_media.h"
#include "vision/checkpoint.h"

namespace reel::vision {
namespace {

namespace fs = std::filesystem;

// A file made by hand: the 8-byte length, `header` verbatim, then `data_bytes` bytes.
std::string RawFile(const std::string& header, size_t data_bytes, uint64_t declared = UINT64_MAX) {
  uint64_t n = declared == UINT64_MAX ? header.size() : declared;
  std::string out;
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  out += header;
  out.append(data_bytes, '\x01');
  return out;
}

Result<SafetensorsHeader> Parse(const std::string& file) {
  return ParseSafetensorsHeader({reinterpret_cast<const uint8_t*>(file.data()), file.size()},
                                file.size(), "bad.safetensors");
}

// Expects a parse failure whose message names the file and contains `needle`.
void ExpectError(const std::string& file, const std::string& needle,
                 ErrorCode code = ErrorCode::kCorruptData) {
  auto result = Parse(file);
  ASSERT_FALSE(result.ok()) << "accepted: " << file.substr(8, 200);
  EXPECT_EQ(result.status().code(), code) << result.status().ToString();
  EXPECT_NE(result.status().message().find("bad.safetensors: "), std::string::npos)
      << result.status().message();
  EXPECT_NE(result.status().message().find(needle), std::string::npos)
      << "message: " << result.status().message() << "\nexpected to contain: " << needle;
}

std::vector<uint8_t> Floats(std::initializer_list<float> values) {
  std::vector<uint8_t> bytes(values.size() * 4);
  std::memcpy(bytes.data(), values.begin(), bytes.size());
  return bytes;
}

TEST(SafetensorsTest, RoundTripsTensorsAndMetadata) {
  std::vector<uint8_t> a = Floats({1, 2, 3, 4, 5, 6});
  std::vector<uint8_t> b = {0x80, 0x3f, 0x00, 0x40};  // BF16 1.0, 2.0
  std::vector<uint8_t> empty;
  auto bytes = SerializeSafetensors({{"w.a", DType::kF32, {2, 3}, a},
                                     {"w.b", DType::kBF16, {2}, b},
                                     {"w.empty", DType::kF16, {0, 4}, empty}},
                                    {{"format", "pt"}});
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  EXPECT_EQ((bytes->size() - 8 - a.size() - b.size()) % 8, 0u);  // padded header
  auto header = Parse(*bytes);
  ASSERT_TRUE(header.ok()) << header.status().ToString();
  ASSERT_EQ(header->tensors.size(), 3u);
  EXPECT_EQ(header->tensors[0].name, "w.a");
  EXPECT_EQ(header->tensors[0].shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(header->tensors[0].elements, 6u);
  EXPECT_EQ(header->tensors[1].name, "w.b");
  EXPECT_EQ(header->tensors[1].dtype, DType::kBF16);
  EXPECT_EQ(header->tensors[2].elements, 0u);
  ASSERT_EQ(header->metadata.size(), 1u);
  EXPECT_EQ(header->metadata[0].second, "pt");

  std::string dir = testing::ScratchDir("SafetensorsRoundTrip");
  std::string path = dir + "/t.safetensors";
  ASSERT_TRUE(WriteFileAtomically(path, *bytes).ok());
  auto file = SafetensorsFile::Open(path);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  const TensorInfo* t = file->Find("w.a");
  ASSERT_NE(t, nullptr);
  auto span = file->Bytes(*t);
  ASSERT_EQ(span.size(), a.size());
  EXPECT_EQ(std::memcmp(span.data(), a.data(), a.size()), 0);
  file->Release(*t);  // pages dropped; reading again brings them back from the file
  EXPECT_EQ(std::memcmp(file->Bytes(*t).data(), a.data(), a.size()), 0);
  EXPECT_EQ(file->Find("missing"), nullptr);
}

TEST(SafetensorsTest, RejectsBadLengthsAndHeaders) {
  ExpectError("short", "too short");
  ExpectError(RawFile("{}", 0, 200), "reaches past the end of the file");
  ExpectError(RawFile("{}", 0, 1ull << 40), "larger than the limit", ErrorCode::kLimitExceeded);
  ExpectError(RawFile("[]", 0), "does not start with '{'");
  ExpectError(RawFile("", 0), "does not start with '{'");
  ExpectError(RawFile("{\"a\":", 0), "not valid JSON");
  ExpectError(RawFile("{} x", 0), "not valid JSON");
  ExpectError(RawFile("{\"a\": 1}", 0), "tensor 'a' is a number, not an object");
  ExpectError(RawFile("{\"\": {}}", 0), "empty name");
  ExpectError(RawFile("{\"a\\u0000b\": 1}", 0), "tensor 'a\\x00b'");
  // Invalid UTF-8 inside a name.
  ExpectError(RawFile("{\"a\xff\": 1}", 0), "not valid JSON");
}

TEST(SafetensorsTest, RejectsMalformedTensorEntries) {
  auto entry = [](const std::string& body) { return RawFile("{\"t\": {" + body + "}}", 4); };
  ExpectError(entry(R"("dtype":"F32","shape":[1])"), "tensor 't': missing data_offsets");
  ExpectError(entry(R"("shape":[1],"data_offsets":[0,4])"), "tensor 't': missing dtype");
  ExpectError(entry(R"("dtype":"F32","data_offsets":[0,4])"), "tensor 't': missing shape");
  ExpectError(entry(R"("dtype":"F33","shape":[1],"data_offsets":[0,4])"), "unknown dtype 'F33'");
  ExpectError(entry(R"("dtype":4,"shape":[1],"data_offsets":[0,4])"), "dtype is a number");
  ExpectError(entry(R"("dtype":"F32","shape":[-1],"data_offsets":[0,4])"), "negative");
  ExpectError(entry(R"("dtype":"F32","shape":[1.5],"data_offsets":[0,4])"), "not an integer");
  ExpectError(entry(R"("dtype":"F32","shape":["1"],"data_offsets":[0,4])"), "shape holds a string");
  ExpectError(entry(R"("dtype":"F32","shape":[[1]],"data_offsets":[0,4])"), "shape holds an array");
  ExpectError(entry(R"("dtype":"F32","shape":1,"data_offsets":[0,4])"), "shape is a number");
  ExpectError(entry(R"("dtype":"F32","shape":[1],"data_offsets":[4])"), "must hold 2 values");
  ExpectError(entry(R"("dtype":"F32","shape":[1],"data_offsets":[0,4,8])"), "more than 2");
  ExpectError(entry(R"("dtype":"F32","shape":[1],"data_offsets":[0,99999999999999999999])"),
              "not an integer of at most 64 bits");
  ExpectError(entry(R"("dtype":"F32","dtype":"F32","shape":[1],"data_offsets":[0,4])"),
              "dtype appears twice");
  ExpectError(entry(R"("dtype":"F32","shape":[1],"data_offsets":[0,4],"x":1)"),
              "unknown field 'x'");
  ExpectError(entry(R"("dtype":"F32","shape":[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1],)"
                    R"("data_offsets":[0,4])"),
              "more than 16 dimensions");
  ExpectError(RawFile(R"({"t": {"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                      R"("t": {"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
                      4),
              "tensor 't' appears twice");
  ExpectError(RawFile(R"({"__metadata__": {"a": 1}})", 0), "'a' is a number, not a string");
  ExpectError(RawFile(R"({"__metadata__": {"a": "x", "a": "y"}})", 0), "appears twice");
  ExpectError(RawFile(R"({"__metadata__": "x"})", 0), "__metadata__ is a string");
}

TEST(SafetensorsTest, RejectsBadRanges) {
  // Shape x dtype size must equal the byte range.
  ExpectError(RawFile(R"({"t": {"dtype":"F32","shape":[2],"data_offsets":[0,4]}})", 4),
              "tensor 't': 2 F32 elements need 8 bytes, data_offsets give 4");
  ExpectError(RawFile(R"({"t": {"dtype":"BF16","shape":[3],"data_offsets":[0,4]}})", 4),
              "3 BF16 elements need 6 bytes");
  // Elements overflow 64 bits; and elements fit but bytes do not.
  ExpectError(RawFile(R"({"t": {"dtype":"F32","shape":[4294967296,4294967296],)"
                      R"("data_offsets":[0,4]}})",
                      4),
              "tensor 't': shape has too many elements (overflow)");
  ExpectError(RawFile(R"({"t": {"dtype":"F32","shape":[4611686018427387904],)"
                      R"("data_offsets":[0,4]}})",
                      4),
              "too many bytes (overflow)");
  // Offsets outside the data, reversed.
  ExpectError(RawFile(R"({"t": {"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", 4),
              "reach past the end of the data (4 bytes)");
  ExpectError(RawFile(R"({"t": {"dtype":"F32","shape":[0],"data_offsets":[4,0]}})", 4),
              "end before they begin");
  ExpectError(RawFile(R"({"t": {"dtype":"F32","shape":[1],)"
                      R"("data_offsets":[18446744073709551612,18446744073709551615]}})",
                      4),
              "reach past the end");
  // Overlap, gap, unindexed tail.
  ExpectError(RawFile(R"({"a": {"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                      R"("b": {"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                      8),
              "tensor 'b': bytes [4, 8) overlap tensor 'a'");
  ExpectError(RawFile(R"({"a": {"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                      R"("b": {"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
                      12),
              "bytes [4, 8) of the data belong to no tensor (before 'b')");
  ExpectError(RawFile(R"({"a": {"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", 10),
              "the last 6 bytes of the data belong to no tensor");
  // Two tensors on the same bytes.
  ExpectError(RawFile(R"({"a": {"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                      R"("b": {"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
                      4),
              "overlap");
}

TEST(SafetensorsTest, AcceptsOtherDtypesAndPaddedHeaders) {
  auto header = Parse(RawFile(R"({"q": {"dtype":"F8_E4M3","shape":[3],"data_offsets":[0,3]},)"
                              R"("i": {"dtype":"I64","shape":[],"data_offsets":[3,11]}}   )",
                              11));
  ASSERT_TRUE(header.ok()) << header.status().ToString();
  EXPECT_EQ(header->tensors[0].name, "i");
  EXPECT_EQ(header->tensors[0].elements, 1u);  // a scalar
  EXPECT_FALSE(IsFloatDType(header->tensors[1].dtype));
}

TEST(SafetensorsTest, OpenReportsMissingAndShortFiles) {
  std::string dir = testing::ScratchDir("SafetensorsOpen");
  auto missing = SafetensorsFile::Open(dir + "/none.safetensors");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), ErrorCode::kNotFound);
  ASSERT_TRUE(WriteFileAtomically(dir + "/empty.safetensors", "").ok());
  auto empty = SafetensorsFile::Open(dir + "/empty.safetensors");
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("empty.safetensors: 0 bytes"), std::string::npos);
  ASSERT_TRUE(
      WriteFileAtomically(dir + "/trunc.safetensors", RawFile(R"({"t": {"dtype":"F32","shape":[4],)"
                                                              R"("data_offsets":[0,16]}})",
                                                              8))
          .ok());
  auto trunc = SafetensorsFile::Open(dir + "/trunc.safetensors");
  ASSERT_FALSE(trunc.ok());
  EXPECT_NE(trunc.status().message().find("trunc.safetensors: tensor 't'"), std::string::npos)
      << trunc.status().message();
}

// --- Checkpoints -------------------------------------------------------------------------------

Status WriteShard(const std::string& path, const std::vector<std::string>& names) {
  static const std::vector<uint8_t> kData = Floats({1, 2});
  std::vector<TensorToWrite> tensors;
  for (const std::string& n : names) tensors.push_back({n, DType::kF32, {2}, kData});
  return WriteSafetensors(path, tensors);
}

TEST(CheckpointTest, ShardedIndexOpensOnlyTheShardsItNeeds) {
  std::string dir = testing::ScratchDir("CheckpointSharded");
  ASSERT_TRUE(WriteShard(dir + "/model-00001-of-00003.safetensors", {"vision.a", "vision.b"}).ok());
  ASSERT_TRUE(WriteShard(dir + "/model-00002-of-00003.safetensors", {"llm.x"}).ok());
  // The third shard is damaged: it must never be read when only vision tensors are asked for.
  ASSERT_TRUE(WriteFileAtomically(dir + "/model-00003-of-00003.safetensors", "garbage").ok());
  ASSERT_TRUE(WriteFileAtomically(dir + "/model.safetensors.index.json", R"({
    "metadata": {"total_size": 24},
    "weight_map": {"vision.a": "model-00001-of-00003.safetensors",
                   "vision.b": "model-00001-of-00003.safetensors",
                   "llm.x": "model-00002-of-00003.safetensors",
                   "llm.y": "model-00003-of-00003.safetensors",
                   "vision.c": "model-00002-of-00003.safetensors"}})")
                  .ok());
  auto checkpoint = Checkpoint::Open(dir);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status().ToString();
  EXPECT_EQ(checkpoint->tensor_count(), 5u);
  EXPECT_TRUE(checkpoint->OpenedShards().empty());
  auto a = checkpoint->Find("vision.a");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->bytes.size(), 8u);
  ASSERT_TRUE(checkpoint->Find("vision.b").ok());
  EXPECT_EQ(checkpoint->OpenedShards(),
            std::vector<std::string>{"model-00001-of-00003.safetensors"});

  auto absent = checkpoint->Find("vision.zzz");
  ASSERT_FALSE(absent.ok());
  EXPECT_EQ(absent.status().code(), ErrorCode::kNotFound);
  EXPECT_NE(absent.status().message().find("no tensor 'vision.zzz'"), std::string::npos);

  auto misplaced = checkpoint->Find("vision.c");  // the index lies about its shard
  ASSERT_FALSE(misplaced.ok());
  EXPECT_NE(misplaced.status().message().find("puts tensor 'vision.c' in model-00002"),
            std::string::npos)
      << misplaced.status().message();

  auto damaged = checkpoint->Find("llm.y");
  ASSERT_FALSE(damaged.ok());
  EXPECT_NE(damaged.status().message().find("model-00003-of-00003.safetensors: "),
            std::string::npos)
      << damaged.status().message();
}

TEST(CheckpointTest, RejectsBadIndexes) {
  std::string dir = testing::ScratchDir("CheckpointBadIndex");
  auto open_with = [&](const std::string& text) {
    EXPECT_TRUE(WriteFileAtomically(dir + "/model.safetensors.index.json", text).ok());
    return Checkpoint::Open(dir);
  };
  auto escape = open_with(R"({"weight_map": {"a": "../../etc/passwd"}})");
  ASSERT_FALSE(escape.ok());
  EXPECT_NE(escape.status().message().find("not a file beside the index"), std::string::npos);
  EXPECT_FALSE(open_with(R"({"weight_map": {"a": ".."}})").ok());
  EXPECT_FALSE(open_with(R"({"weight_map": {"a": 3}})").ok());
  EXPECT_FALSE(open_with(R"({"weight_map": []})").ok());
  EXPECT_FALSE(open_with(R"({"metadata": {}})").ok());
  EXPECT_FALSE(open_with("{not json").ok());
  auto missing_shard = open_with(R"({"weight_map": {"a": "gone.safetensors"}})");
  ASSERT_TRUE(missing_shard.ok());
  auto a = missing_shard->Find("a");
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), ErrorCode::kNotFound);
  EXPECT_NE(a.status().message().find("gone.safetensors"), std::string::npos);
}

TEST(CheckpointTest, SingleFilesAndDirectoriesWithoutIndex) {
  std::string dir = testing::ScratchDir("CheckpointSingle");
  ASSERT_TRUE(WriteShard(dir + "/a.safetensors", {"x"}).ok());
  ASSERT_TRUE(WriteShard(dir + "/b.safetensors", {"y"}).ok());
  auto both = Checkpoint::Open(dir);
  ASSERT_TRUE(both.ok()) << both.status().ToString();
  EXPECT_TRUE(both->Contains("x"));
  EXPECT_TRUE(both->Contains("y"));
  auto one = Checkpoint::Open(dir + "/b.safetensors");
  ASSERT_TRUE(one.ok());
  EXPECT_FALSE(one->Contains("x"));
  EXPECT_TRUE(one->Find("y").ok());
  ASSERT_TRUE(WriteShard(dir + "/c.safetensors", {"x"}).ok());
  auto duplicate = Checkpoint::Open(dir);
  ASSERT_FALSE(duplicate.ok());
  EXPECT_NE(duplicate.status().message().find("'x' is in both a.safetensors and c.safetensors"),
            std::string::npos)
      << duplicate.status().message();
  std::string empty_dir = testing::ScratchDir("CheckpointEmpty");
  auto nothing = Checkpoint::Open(empty_dir);
  ASSERT_FALSE(nothing.ok());
  EXPECT_EQ(nothing.status().code(), ErrorCode::kNotFound);
}

}  // namespace
}  // namespace reel::vision
