#include "tests/support/test_environment.h"

#include <cstdlib>
#include <filesystem>

#include "tests/support/test_media.h"

namespace reel::testing {

void IsolateTestEnvironment() {
  const char* user_home = std::getenv("HOME");
  if (std::getenv("REEL_TEST_USER_HOME") == nullptr && user_home != nullptr) {
    ::setenv("REEL_TEST_USER_HOME", user_home, 1);
  }
  const std::string home = ScratchDir("home");
  for (const char* sub : {".local/share", ".config", ".cache"}) {
    std::error_code ec;
    std::filesystem::create_directories(home + "/" + sub, ec);
  }
  ::setenv("HOME", home.c_str(), 1);
  ::setenv("XDG_DATA_HOME", (home + "/.local/share").c_str(), 1);
  ::setenv("XDG_CONFIG_HOME", (home + "/.config").c_str(), 1);
  ::setenv("XDG_CACHE_HOME", (home + "/.cache").c_str(), 1);
  for (const char* name :
       {"REEL_DB", "REEL_MODEL_URL", "REEL_MODEL", "REEL_API_KEY", "REEL_TOKENIZER",
        "REEL_SHARD_COUNT", "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_MIN",
        "JOB_COMPLETION_INDEX"}) {
    ::unsetenv(name);
  }
}

std::string UserHome() {
  const char* home = std::getenv("REEL_TEST_USER_HOME");
  return home != nullptr ? home : "";
}

bool ReferenceRequired(Reference reference) {
  if (reference == Reference::kSharedMedia) return false;
  const char* value = std::getenv("REEL_REQUIRE_REFERENCES");
  return value != nullptr && *value != '\0' && std::string(value) != "0";
}

const char* ReferenceName(Reference reference) {
  switch (reference) {
    case Reference::kSharedMedia:
      return "shared-media";
    case Reference::kDebianPackage:
      return "debian";
    case Reference::kNpm:
      return "npm";
    case Reference::kProgram:
      return "program";
  }
  return "?";
}

std::string MissingReferencePrefix(Reference reference) {
  const std::string name = ReferenceName(reference);
  if (ReferenceRequired(reference)) {
    return "required reference missing (" + name + "; REEL_REQUIRE_REFERENCES=1): ";
  }
  return "missing reference (" + name + "): ";
}

}  // namespace reel::testing
