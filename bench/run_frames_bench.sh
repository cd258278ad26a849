#!/bin/sh
# Builds frames_bench in its own Release build directory and runs it. The first run generates the
# 5-minute 1080p test video into <build>/bench-media/ (about 10 minutes on 2 cores); later runs
# reuse it. Extra arguments go to frames_bench (see --help).
#   bench/run_frames_bench.sh                       # all three cases, median of 3
#   bench/run_frames_bench.sh --cases sparse --breakdown
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${REEL_BENCH_BUILD:-$root/build-bench}
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" --target frames_bench -j"$(nproc)"
exec "$build/bench/frames_bench" "$@"
