#!/usr/bin/env bash
# Seeds for the frames_json target: the same as probe_json's. Writes into "$1".
exec bash "$(dirname "$0")/probe_json.sh" "$@"
