#!/usr/bin/env bash
# Seeds for the media target: tiny self-made clips (a few KB each) in the containers and codecs
# Reel meets most, some with subtitle streams and tags that are not UTF-8. Writes into "$1".
set -euo pipefail
out="$1"
mkdir -p "$out"
ff() { ffmpeg -y -hide_banner -loglevel error "$@"; }
src=(-f lavfi -i testsrc=s=32x24:r=5:d=1)
srt="$out/.cues.srt"
printf '1\n00:00:00,000 --> 00:00:00,500\nUn caf\xe9 <i>cr\xe8me</i>\n\n2\n00:00:00,500 --> 00:00:01,000\n&amp; ok\n\n' >"$srt"

ff "${src[@]}" -c:v libx264 -g 3 -bf 2 -pix_fmt yuv420p "$out/h264.mp4"
ff "${src[@]}" -i "$srt" -map 0 -map 1 -c:v mpeg4 -c:s copy -metadata "title=caf$(printf '\xe9')" \
  -metadata:s:v:0 "language=fr$(printf '\xe9')" "$out/latin1.mkv"
ff "${src[@]}" -sub_charenc windows-1252 -i "$srt" -map 0 -map 1 -c:v libx264 -pix_fmt yuv420p \
  -c:s mov_text "$out/movtext.mp4"
ff "${src[@]}" -c:v mjpeg -metadata "title=t$(printf '\xe9')te" "$out/mjpeg.avi"
ff "${src[@]}" -c:v mpeg2video "$out/mpeg2.ts"
ff "${src[@]}" -c:v libvpx -b:v 50k "$out/vp8.webm"
ff "${src[@]}" -vf transpose=1 -c:v libx264 -pix_fmt yuv420p -metadata:s:v:0 rotate=90 \
  "$out/rotated.mov"
ff "${src[@]}" -c:v ffv1 "$out/ffv1.mkv"
ff -f lavfi -i "testsrc=s=32x24:r=5:d=1" -vf "setpts=PTS+2/TB" -c:v libx264 -pix_fmt yuv420p \
  "$out/offset.mkv"
rm -f "$srt"
