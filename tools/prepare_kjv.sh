#!/usr/bin/env bash
# Writes the King James Bible as plain text (Debian's bible-kjv-text, read with the `bible` program
# from bible-kjv) with verse numbers stripped, then converts it with text_to_hdf5 into a
# character-level dataset (T = 64, the last 5% of the text as the test split).
#   tools/prepare_kjv.sh OUTPUT.h5 [BUILD_DIR] [MAX_BYTES]
# MAX_BYTES keeps only the start of the text (small datasets for tests).
set -euo pipefail
out=${1:?usage: prepare_kjv.sh OUTPUT.h5 [BUILD_DIR] [MAX_BYTES]}
build=${2:-$(dirname "${BASH_SOURCE[0]}")/../build}
max_bytes=${3:-0}
command -v bible >/dev/null || { echo "error: 'bible' not found: apt-get install bible-kjv bible-kjv-text" >&2; exit 2; }
[[ -x "$build/text_to_hdf5" ]] || { echo "error: $build/text_to_hdf5 is not built" >&2; exit 2; }
text=$(mktemp "${TMPDIR:-/tmp}/kjv.XXXXXX.txt")
trap 'rm -f "$text"' EXIT
# `bible` prints "Genesis 1" headings and "  12 verse text" lines wrapped at 80 columns.
bible "Gen1:1-Rev22:21" | sed -E 's/^ +[0-9]+ //' >"$text"
if ((max_bytes > 0)); then head -c "$max_bytes" "$text" >"$text.cut" && mv "$text.cut" "$text"; fi
"$build/text_to_hdf5" --input "$text" --output "$out" --seq-len 64 --test-fraction 0.05 \
  --source "King James Bible (Debian bible-kjv-text, verse numbers stripped), first ${max_bytes/#0/all} bytes, converted by text_to_hdf5"
