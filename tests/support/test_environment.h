// The environment every test runs in, and references that tests may skip without.
//
// Isolation: main() (test_main.cc) calls IsolateTestEnvironment() before any test, so each test
// process has its own HOME and XDG folders and no user setting of Reel's (REEL_DB,
// REEL_MODEL_URL, ...): a test can neither read nor change the files of the person running it,
// and `reel` started by a test inherits the same. ctest runs every test case as its own process,
// so every test case has its own HOME.
//
// References: a test that needs something from outside the repository (a file from a Debian
// package, the npm tokenizer reference, chromium, the shared media corpus) skips when it cannot
// be had, through REEL_SKIP_WITHOUT_REFERENCE. With REEL_REQUIRE_REFERENCES=1 (set by CI) such a
// skip is a failure instead, except for the shared media corpus, which CI does not have.
#pragma once

#include <gtest/gtest.h>

#include <string>

namespace reel::testing {

// Gives this process a fresh HOME inside the build tree (removed with the scratch folders),
// XDG_DATA_HOME, XDG_CONFIG_HOME and XDG_CACHE_HOME inside it, and unsets REEL_DB,
// REEL_MODEL_URL, REEL_MODEL, REEL_API_KEY, REEL_TOKENIZER, REEL_SHARD_COUNT and the batch
// schedulers' shard variables. The user's HOME is kept in REEL_TEST_USER_HOME (for tools whose
// configuration lives there, e.g. npm's registry settings for the tokenizer reference).
void IsolateTestEnvironment();

// The HOME of the person running the tests ("" if unknown).
std::string UserHome();

// What a test may skip without.
enum class Reference {
  kSharedMedia,    // ../shared/media: never required (CI has no copy)
  kDebianPackage,  // a file out of a Debian package (scripts/fetch-deb-file)
  kNpm,            // the tokenizer reference from the npm registry
  kProgram,        // a program from a Debian package (chromium)
};

// True when REEL_REQUIRE_REFERENCES is set (not "0") and `reference` is not kSharedMedia.
bool ReferenceRequired(Reference reference);

// "debian", "npm", "program", "shared-media".
const char* ReferenceName(Reference reference);

// The start of the skip or failure message: "missing reference (npm): " or "required reference
// missing (npm; REEL_REQUIRE_REFERENCES=1): ". scripts/test counts skips by this prefix.
std::string MissingReferencePrefix(Reference reference);

// True in the AddressSanitizer build (scripts/test --sanitize), whose `reel` is built the same way.
// ASan reserves terabytes of address space and pads every allocation, so an address-space limit
// (RLIMIT_AS) cannot hold a child and peak-RSS bounds do not apply: tests of those skip their
// checks here, saying so.
constexpr bool kUnderAddressSanitizer =
#if defined(__SANITIZE_ADDRESS__)
    true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    true;
#else
    false;
#endif
#else
    false;
#endif

}  // namespace reel::testing

// Skips the current test (or fails it, when the reference is required), with a message:
//   if (path.empty()) REEL_SKIP_WITHOUT_REFERENCE(kDebianPackage) << "opencv-doc cannot be
//   fetched";
// Like GTEST_SKIP(), it returns from the current function.
#define REEL_SKIP_WITHOUT_REFERENCE(kind)                                         \
  return ::testing::internal::AssertHelper(                                       \
             ::reel::testing::ReferenceRequired(::reel::testing::Reference::kind) \
                 ? ::testing::TestPartResult::kFatalFailure                       \
                 : ::testing::TestPartResult::kSkip,                              \
             __FILE__, __LINE__,                                                  \
             "") = ::testing::Message()                                           \
                   << ::reel::testing::MissingReferencePrefix(::reel::testing::Reference::kind)
