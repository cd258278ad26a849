#include "llm/client/body_source.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

namespace reel::llm {
namespace {

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("reel_body_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

// Reads the whole source in pieces of `step` bytes, through a new reader.
std::string ReadInSteps(const BodySource& s, size_t step) {
  std::string out;
  std::string buffer(step, '\0');
  std::unique_ptr<BodyReader> reader = s.Open();
  while (true) {
    Result<size_t> n = reader->Read(buffer.data(), step);
    EXPECT_TRUE(n.ok()) << n.status().ToString();
    if (!n.ok() || *n == 0) break;
    out.append(buffer.data(), *n);
  }
  return out;
}

std::string RandomBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

TEST(Base64Test, Rfc4648Vectors) {
  EXPECT_EQ(Base64Encode(""), "");
  EXPECT_EQ(Base64Encode("f"), "Zg==");
  EXPECT_EQ(Base64Encode("fo"), "Zm8=");
  EXPECT_EQ(Base64Encode("foo"), "Zm9v");
  EXPECT_EQ(Base64Encode("foob"), "Zm9vYg==");
  EXPECT_EQ(Base64Encode("fooba"), "Zm9vYmE=");
  EXPECT_EQ(Base64Encode("foobar"), "Zm9vYmFy");
  EXPECT_EQ(Base64Encode(std::string("\xff\xfe\xfd", 3)), "//79");
  for (int64_t n = 0; n < 10; ++n) {
    EXPECT_EQ(Base64Length(n), static_cast<int64_t>(Base64Encode(std::string(n, 'x')).size()));
  }
}

TEST(BodySourceTest, StringBodyReadsAgainFromEachReader) {
  StringBody b("hello world");
  EXPECT_EQ(b.Size(), 11);
  EXPECT_EQ(ReadInSteps(b, 3), "hello world");
  EXPECT_EQ(ReadInSteps(b, 100), "hello world");
}

// A chat body with text, a nested source, base64 of bytes and of a file (larger than one
// 48 KiB chunk and not a multiple of 3), and a raw file: the size is exact, and every reader
// gives the same bytes however it reads them.
TEST(BodySourceTest, ComposedBodyIsExactForEveryReader) {
  const std::string file_bytes = RandomBytes(200001, 1);
  const std::string path = TempPath("frame.jpg");
  WriteFile(path, file_bytes);
  auto memory = std::make_shared<const std::string>(RandomBytes(70000, 2));

  ComposedBody b;
  b.AddText("{\"messages\":");
  b.AddSource(std::make_shared<StringBody>("[1,2,3]"));
  b.AddText(",\"a\":\"");
  b.AddBase64(memory);
  b.AddText("\",\"b\":\"");
  ASSERT_TRUE(b.AddBase64OfFile(path).ok());
  b.AddText("\",\"raw\":\"");
  ASSERT_TRUE(b.AddFile(path).ok());
  b.AddText("\"}");

  const std::string expected = "{\"messages\":[1,2,3],\"a\":\"" + Base64Encode(*memory) +
                               "\",\"b\":\"" + Base64Encode(file_bytes) + "\",\"raw\":\"" +
                               file_bytes + "\"}";
  EXPECT_EQ(b.Size(), static_cast<int64_t>(expected.size()));
  for (size_t step : {1u, 7u, 4096u, 65536u, 1u << 20}) {
    EXPECT_EQ(ReadInSteps(b, step), expected) << "step " << step;
  }
  std::filesystem::remove(path);
}

// One source read by several readers at once, from several threads (the same context sent in
// concurrent requests): each gets every byte.
TEST(BodySourceTest, ConcurrentReadersOfOneSource) {
  const std::string path = TempPath("shared.jpg");
  WriteFile(path, RandomBytes(300000, 9));
  auto shared = std::make_shared<ComposedBody>();
  shared->AddText("[");
  ASSERT_TRUE(shared->AddBase64OfFile(path).ok());
  shared->AddText("]");
  ComposedBody outer;
  outer.AddText("{\"messages\":");
  outer.AddSource(shared);
  outer.AddText("}");
  const std::string expected = *ReadAll(outer);
  std::vector<std::thread> threads;
  std::atomic<int> same{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] { same += ReadInSteps(outer, 1000 + 37 * t) == expected; });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(same.load(), 8);
  std::filesystem::remove(path);
}

TEST(BodySourceTest, MissingFileFailsWhenAdded) {
  ComposedBody b;
  Status s = b.AddBase64OfFile(TempPath("does-not-exist.jpg"));
  EXPECT_EQ(s.code(), ErrorCode::kNotFound);
  EXPECT_NE(s.message().find("does-not-exist.jpg"), std::string::npos);
}

// A file that shrinks between building the body and sending it fails the read with a message
// naming it (never a short, corrupt body).
TEST(BodySourceTest, FileThatShrinksFailsTheRead) {
  const std::string path = TempPath("shrinks.jpg");
  WriteFile(path, RandomBytes(100000, 3));
  ComposedBody b;
  ASSERT_TRUE(b.AddBase64OfFile(path).ok());
  WriteFile(path, "tiny");
  char buffer[4096];
  Status failure;
  std::unique_ptr<BodyReader> reader = b.Open();
  while (true) {
    Result<size_t> n = reader->Read(buffer, sizeof(buffer));
    if (!n.ok()) {
      failure = n.status();
      break;
    }
    if (*n == 0) break;
  }
  EXPECT_FALSE(failure.ok());
  EXPECT_NE(failure.message().find("shrinks.jpg"), std::string::npos) << failure.message();
  std::filesystem::remove(path);
}

TEST(BodySourceTest, ReadAllCollectsEverything) {
  ComposedBody b;
  b.AddText("ab");
  b.AddBase64(std::make_shared<const std::string>("foobar"));
  Result<std::string> all = ReadAll(b);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(*all, "abZm9vYmFy");
}

}  // namespace
}  // namespace reel::llm
