#!/usr/bin/env bash
# Seeds for the probe_json target: the media seeds, each behind a file-name line (some names with
# bytes that are not UTF-8). Writes into "$1".
set -euo pipefail
out="$1"
media="$(mktemp -d)"
trap 'rm -rf "$media"' EXIT
bash "$(dirname "$0")/media.sh" "$media"
names=("clip.mp4" "$(printf 'caf\xe9.mkv')" "$(printf '\xff\xfename')" 'back\xslash.avi' "v.ts")
i=0
for f in "$media"/*; do
  name="${names[$((i % ${#names[@]}))]}"
  { printf '%s\n' "$name"; cat "$f"; } >"$out/$(basename "$f")"
  i=$((i + 1))
done
