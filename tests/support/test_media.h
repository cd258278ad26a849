// Test media: clips generated with the ffmpeg command line, cached in the build tree, and the
// optional real corpus in ../shared/media.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace reel::testing {

// Returns the path of a clip named after `name` (e.g. "counter_b.mp4", with a hash of the
// arguments added to the stem) inside the build tree's test-media cache, generating it first with
// `ffmpeg -y -hide_banner -loglevel error <ffmpeg_args> <path>` if it is missing. Generation goes
// through a temporary file and a rename, so parallel tests are safe. Fails the calling test
// (ADD_FAILURE) and returns "" if ffmpeg fails.
std::string GeneratedMedia(const std::string& name, const std::string& ffmpeg_args);

// A directory for the calling test's scratch files, created fresh, unique to this process, and
// removed when the process exits with every test passed (kept after a failure, or when
// REEL_KEEP_SCRATCH=1).
std::string ScratchDir(const std::string& test_name);

// The shared real-media corpus (../shared/media beside the project root), or "" if absent.
// Tests that use it call GTEST_SKIP() when this is empty.
std::string SharedMediaDir();

// A small real clip copied out of a Debian package by scripts/fetch-real-media ("real-small.mp4":
// H.264 + AAC camera footage; "real-small.mkv": MPEG-4 part 2 in Matroska without a usable seek
// index), fetched once into the build tree; "" when it cannot be had (offline).
std::string RealMedia(const std::string& name);

// One file out of a Debian package (fetched with `apt-get download`, through
// scripts/fetch-deb-file), cached in the build tree's "debian-media" folder under `name`; a
// `.gz` inside the package is unpacked. Returns "" when it cannot be had (offline, package
// renamed): the caller then calls GTEST_SKIP(). Safe to call from parallel test processes.
//   DebianPackageFile("python3-imageio",
//       "usr/lib/python3/dist-packages/imageio/resources/images/cockatoo.mp4", "cockatoo.mp4")
std::string DebianPackageFile(const std::string& package, const std::string& path_in_package,
                              const std::string& name);

// Several files of one package, as DebianPackageFile, taken out in one pass over the package:
// (path in package, name) each; the cached paths in the same order, "" for each that cannot be had.
std::vector<std::string> DebianPackageFiles(
    const std::string& package, const std::vector<std::pair<std::string, std::string>>& files);

// Ffmpeg arguments for a clip whose every frame shows its own frame number as a pattern of
// black/white blocks (see DecodeCounter). `frames` frames of `width`x`height` at `fps`.
std::string CounterClipArgs(int frames, int width, int height, const std::string& fps);

// Reads the frame number painted by a counter clip back from an RGB24 image, or -1 if the
// pattern is unreadable. The image may be scaled; it must be upright.
int DecodeCounter(const unsigned char* rgb, int width, int height, int stride);

}  // namespace reel::testing
