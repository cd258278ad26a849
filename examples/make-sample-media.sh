#!/usr/bin/env bash
# Generates the quickstart's input, examples/media/sample.mp4: 10 seconds of ffmpeg's test
# pattern with a moving counter, 640x360 at 25 fps, H.264. Idempotent; needs ffmpeg.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$here/media/sample.mp4"
mkdir -p "$here/media"
if [ -f "$out" ] && [ "${1:-}" != "--force" ]; then
  echo "exists: $out (--force to rebuild)"
  exit 0
fi
ffmpeg -y -hide_banner -loglevel error \
  -f lavfi -i "testsrc2=size=640x360:rate=25:duration=10" \
  -c:v libx264 -pix_fmt yuv420p -movflags +faststart "$out"
echo "wrote $out"
