#!/usr/bin/env bash
# Generates the quickstart's input, examples/media/sample.mp4: 10 seconds of ffmpeg's test
# pattern with a moving counter, 640x360 at 25 fps, H.264. Idempotent; needs ffmpeg.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$here/media/sample.mp4"
mkdir -p "$here/media"
# A side-car subtitle file (same stem) and a notes document go with it.
cat > "$here/media/sample.srt" <<'SRT'
1
00:00:00,500 --> 00:00:03,000
The test pattern starts scrolling.

2
00:00:05,000 --> 00:00:08,500
Halfway through, the counter passes five seconds.
SRT
cat > "$here/media/notes.md" <<'MD'
# Notes on the sample clip

The clip is ffmpeg's testsrc2 pattern: colour bars, a moving gradient and a frame counter.

It lasts ten seconds at 25 frames per second.
MD
if [ -f "$out" ] && [ "${1:-}" != "--force" ]; then
  echo "exists: $out (--force to rebuild)"
  exit 0
fi
ffmpeg -y -hide_banner -loglevel error \
  -f lavfi -i "testsrc2=size=640x360:rate=25:duration=10" \
  -c:v libx264 -pix_fmt yuv420p -movflags +faststart "$out"
echo "wrote $out"
