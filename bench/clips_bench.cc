// Many short clips, the shape of a typical archive, against the ffmpeg command line in the same
// run on the same machine. Ratio = ffmpeg time / Reel time (above 1: Reel is faster).
//
//   frames: `reel frames CLIP --fps 1 -o DIR` once per clip vs `ffmpeg -i CLIP -vf fps=1,scale=WxH
//           DIR/%04d.jpg` once per clip, both `nproc` processes at a time (xargs -P): the same
//           JPEGs at the same size.
//   run:    `reel run JOB.yaml` over all clips (hash, probe, sample at 1 fps, thumbnails and
//           perceptual hashes, every row in SQLite, one worker per core) vs the same ffmpeg loop.
//   rerun:  a second `reel run` (everything up to date) vs the same ffmpeg loop.
//
// Usage: clips_bench [--media-dir DIR] [--clips N] [--runs N]
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_util.h"

namespace {

namespace fs = std::filesystem;
using reel::bench::Clock;
using reel::bench::FirstLineOf;
using reel::bench::Median;
using reel::bench::ShellQuote;

struct Settings {
  fs::path media_dir;
  fs::path reel;
  int clips = 60;
  int runs = 3;
};

// Runs a shell command; returns its wall-clock seconds, or a negative value if it failed.
double Timed(const std::string& command) {
  const Clock::time_point start = Clock::now();
  const int rc = std::system(command.c_str());
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (rc != 0) {
    std::fprintf(stderr, "clips_bench: failed (%d): %s\n", rc, command.c_str());
    return -1;
  }
  return seconds;
}

// N different 20-second 640x360 30 fps clips (x264 defaults, keyframe every 2 s), made once.
bool EnsureClips(const Settings& s, const fs::path& dir) {
  fs::create_directories(dir);
  for (int i = 0; i < s.clips; ++i) {
    char name[32];
    std::snprintf(name, sizeof(name), "clip%03d.mp4", i);
    const fs::path clip = dir / name;
    if (fs::exists(clip)) continue;
    const fs::path partial = dir / (std::string(name) + ".part.mp4");
    // A different start in the test pattern per clip, so no two clips share content.
    const std::string command =
        "ffmpeg -nostdin -hide_banner -loglevel error -y -f lavfi -i "
        "testsrc2=s=640x360:r=30:d=20,noise=alls=4:allf=t,hue=h=" +
        std::to_string(i * 7) + " -c:v libx264 -preset veryfast -g 60 -pix_fmt yuv420p " +
        ShellQuote(partial.string()) + " && mv " + ShellQuote(partial.string()) + " " +
        ShellQuote(clip.string());
    if (Timed(command) < 0) return false;
  }
  return true;
}

bool ParseArgs(int argc, char** argv, Settings& s) {
  s.reel = fs::absolute(fs::path(argv[0])).parent_path().parent_path() / "jobs" / "reel";
  s.media_dir = fs::absolute(fs::path(argv[0])).parent_path().parent_path() / "bench-media";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const char* next = i + 1 < argc ? argv[i + 1] : nullptr;
    if (a == "--media-dir" && next) {
      s.media_dir = fs::absolute(next);
      ++i;
    } else if (a == "--clips" && next) {
      s.clips = std::max(1, std::atoi(next));
      ++i;
    } else if (a == "--runs" && next) {
      s.runs = std::max(1, std::atoi(next));
      ++i;
    } else {
      std::fprintf(stderr, "usage: clips_bench [--media-dir DIR] [--clips N] [--runs N]\n");
      return false;
    }
  }
  return true;
}

void Report(const char* name, const std::vector<double>& reel, const std::vector<double>& ffmpeg,
            const std::string& what) {
  const double r = Median(reel), f = Median(ffmpeg);
  std::printf("%-7s reel %6.2f s, ffmpeg %6.2f s, ratio %.2fx   (%s)\n", name, r, f, f / r,
              what.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  Settings s;
  if (!ParseArgs(argc, argv, s)) return 2;
  if (!fs::exists(s.reel)) {
    std::fprintf(stderr, "clips_bench: %s not built\n", s.reel.c_str());
    return 1;
  }
  const fs::path clips = s.media_dir / ("clips_" + std::to_string(s.clips));
  std::printf("making %d clips in %s (once)\n", s.clips, clips.c_str());
  std::fflush(stdout);
  if (!EnsureClips(s, clips)) return 1;
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const fs::path work = s.media_dir / "clips_out";
  fs::remove_all(work);
  fs::create_directories(work);

  // The model size Reel gives these clips, for ffmpeg's scale.
  const std::string probe_dir = (work / "probe").string();
  if (Timed(ShellQuote(s.reel.string()) + " frames " +
            ShellQuote((clips / "clip000.mp4").string()) + " --count 1 -o " +
            ShellQuote(probe_dir) + " > /dev/null") < 0) {
    return 1;
  }
  auto field = [&](const char* key) {
    return FirstLineOf("grep -o '\"" + std::string(key) + "\": [0-9]*' " + ShellQuote(probe_dir) +
                       "/frames.json | head -1 | grep -o '[0-9]*$'");
  };
  const std::string width = field("width"), height = field("height");
  if (width.empty() || height.empty()) {
    std::fprintf(stderr, "clips_bench: cannot read the frame size from frames.json\n");
    return 1;
  }
  const std::string size = width + "x" + height;
  std::string scale = size;
  std::replace(scale.begin(), scale.end(), 'x', ':');

  const std::string list = "ls " + ShellQuote(clips.string()) + "/clip*.mp4";
  const std::string parallel = " | xargs -P " + std::to_string(cores) + " -I{} sh -c ";
  const std::string ffmpeg_loop =
      list + parallel +
      ShellQuote(
          "d=" + (work / "ffmpeg").string() +
          "/$(basename {} .mp4); mkdir -p $d && ffmpeg -nostdin -hide_banner -loglevel error "
          "-y -i {} -vf fps=1,scale=" +
          scale + ":flags=bicubic -q:v 2 $d/%04d.jpg");
  const std::string reel_frames_loop =
      list + parallel +
      ShellQuote(s.reel.string() + " frames {} --fps 1 -o " + (work / "reel").string() +
                 "/$(basename {} .mp4) > /dev/null 2>&1");
  const fs::path job = work / "job.yaml";
  std::ofstream(job) << "name: clips\ninputs:\n  - " << clips.string()
                     << "/*.mp4\nsampling:\n  policy: fps\n  fps: 1\nstorage:\n  database: "
                     << (work / "clips.db").string() << "\n";
  const std::string reel_run = ShellQuote(s.reel.string()) + " run " + ShellQuote(job.string());

  std::printf("machine: %u cores; ffmpeg: %s\n", cores,
              FirstLineOf("ffmpeg -version | head -1").c_str());
  std::printf("clips: %d x 20 s 640x360 30 fps H.264 (keyframe every 2 s); frames at %s\n", s.clips,
              size.c_str());
  std::printf("median of %d runs, alternating; ratio = ffmpeg time / Reel time\n\n", s.runs);
  std::vector<double> frames_reel, frames_ffmpeg, run_reel, rerun_reel;
  for (int r = 0; r < s.runs; ++r) {
    fs::remove_all(work / "reel");
    fs::remove_all(work / "ffmpeg");
    for (const char* f : {"clips.db", "clips.db-wal", "clips.db-shm"}) fs::remove(work / f);
    const double a = Timed(reel_frames_loop);
    const double b = Timed(ffmpeg_loop);
    const double c = Timed(reel_run + " > /dev/null 2>&1");
    const double d = Timed(reel_run + " > /dev/null 2>&1");
    if (a < 0 || b < 0 || c < 0 || d < 0) return 1;
    frames_reel.push_back(a);
    frames_ffmpeg.push_back(b);
    run_reel.push_back(c);
    rerun_reel.push_back(d);
  }
  const std::string reel_jpegs =
      FirstLineOf("find " + ShellQuote((work / "reel").string()) + " -name '*.jpg' | wc -l");
  const std::string ffmpeg_jpegs =
      FirstLineOf("find " + ShellQuote((work / "ffmpeg").string()) + " -name '*.jpg' | wc -l");
  const std::string stored = FirstLineOf(ShellQuote(s.reel.string()) + " query --db " +
                                         ShellQuote((work / "clips.db").string()) +
                                         " \"SELECT count(*) FROM frames\" --format csv | tail -1");
  const std::string loop_text =
      "ffmpeg -vf fps=1,scale per clip, " + std::to_string(cores) + " at a time";
  Report("frames", frames_reel, frames_ffmpeg,
         "reel frames per clip, " + std::to_string(cores) + " at a time, vs " + loop_text);
  Report("run", run_reel, frames_ffmpeg, "reel run into SQLite vs " + loop_text);
  Report("rerun", rerun_reel, frames_ffmpeg, "second reel run (all up to date) vs " + loop_text);
  std::printf("JPEGs: reel frames %s, ffmpeg %s; frames stored by reel run: %s\n",
              reel_jpegs.c_str(), ffmpeg_jpegs.c_str(), stored.c_str());
  std::printf("(M3's rule keeps the last frame too: 21 per clip, ffmpeg's fps filter writes 20)\n");
  fs::remove_all(work);
  return 0;
}
