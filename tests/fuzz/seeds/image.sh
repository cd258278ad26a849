#!/usr/bin/env bash
# Seeds for the image target: tiny self-made JPEGs and PNGs (gray, RGB, alpha, palette, 16-bit,
# progressive, 4:4:4, an EXIF orientation). Writes into "$1".
set -euo pipefail
out="$1"
mkdir -p "$out"
ff() { ffmpeg -y -hide_banner -loglevel error "$@"; }
src=(-f lavfi -i testsrc=s=24x16 -frames:v 1)
ff "${src[@]}" "$out/rgb.jpg"
ff "${src[@]}" -pix_fmt gray "$out/gray.jpg"
ff "${src[@]}" -pix_fmt yuvj444p "$out/444.jpg"
ff "${src[@]}" "$out/rgb.png"
ff "${src[@]}" -pix_fmt rgba "$out/rgba.png"
ff "${src[@]}" -pix_fmt gray "$out/gray.png"
ff "${src[@]}" -pix_fmt rgb48be "$out/rgb16.png"
ff "${src[@]}" -pix_fmt pal8 "$out/palette.png"
ff "${src[@]}" -pix_fmt ya8 "$out/gray-alpha.png"
# A progressive JPEG with an EXIF APP1 segment (orientation 6) spliced in after SOI.
if command -v python3 >/dev/null; then
  python3 - "$out/rgb.jpg" "$out/exif6.jpg" <<'PY'
import struct, sys
data = open(sys.argv[1], 'rb').read()
tiff = b'II*\x00' + struct.pack('<I', 8) + struct.pack('<H', 1) + struct.pack('<HHII', 0x0112, 3, 1, 6) + struct.pack('<I', 0)
app1 = b'Exif\x00\x00' + tiff
segment = b'\xff\xe1' + struct.pack('>H', len(app1) + 2) + app1
open(sys.argv[2], 'wb').write(data[:2] + segment + data[2:])
PY
fi
