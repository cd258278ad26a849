#include "storage/sha256.h"

#include <gtest/gtest.h>

#include <string>

#include "base/file_util.h"
#include "tests/support/subprocess.h"
#include "tests/support/test_media.h"

namespace reel::storage {
namespace {

struct Vector {
  std::string input;
  std::string hex;
};

TEST(Sha256Test, KnownVectors) {
  const Vector kVectors[] = {
      {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
      {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
      {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
      {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmn"
       "opqrsmnopqrstnopqrstu",
       "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
      {std::string(1000000, 'a'),
       "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"},
  };
  for (const Vector& v : kVectors) {
    EXPECT_EQ(Sha256Hex(v.input), v.hex) << "input of " << v.input.size() << " bytes";
  }
}

TEST(Sha256Test, StreamingMatchesOneShotAtEveryBlockBoundary) {
  std::string data;
  for (int i = 0; i < 300; ++i) data.push_back(static_cast<char>(i * 7 + 3));
  for (size_t split = 0; split <= data.size(); split += 1) {
    Sha256 hash;
    hash.Update(std::string_view(data).substr(0, split));
    hash.Update(std::string_view(data).substr(split));
    ASSERT_EQ(Sha256::ToHex(hash.Finish()), Sha256Hex(data)) << "split at " << split;
  }
  // Lengths around the padding boundary (55, 56, 63, 64 bytes) differ from one another.
  EXPECT_NE(Sha256Hex(std::string(55, 'x')), Sha256Hex(std::string(56, 'x')));
  EXPECT_EQ(Sha256Hex(std::string(64, 'x')),
            Sha256Hex(std::string(64, 'x')));  // Finish resets; reuse is deterministic
}

TEST(Sha256Test, AgreesWithSha256sum) {
  std::string dir = testing::ScratchDir("Sha256Test");
  for (size_t size : {0u, 1u, 55u, 56u, 64u, 1000u, 123457u}) {
    std::string data;
    uint32_t x = 12345 + static_cast<uint32_t>(size);
    for (size_t i = 0; i < size; ++i) {
      x = x * 1103515245u + 12345u;
      data.push_back(static_cast<char>(x >> 24));
    }
    std::string path = dir + "/data" + std::to_string(size);
    ASSERT_TRUE(WriteFileAtomically(path, data).ok());
    testing::CommandResult r = testing::RunCommand("sha256sum " + testing::ShellQuote(path));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out.substr(0, 64), Sha256Hex(data)) << size << " bytes";
  }
}

}  // namespace
}  // namespace reel::storage
