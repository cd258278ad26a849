// main() of every test executable: the test environment first (test_environment.h), then
// GoogleTest.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/test_environment.h"

int main(int argc, char** argv) {
  reel::testing::IsolateTestEnvironment();
  ::testing::InitGoogleMock(&argc, argv);
  return RUN_ALL_TESTS();
}
