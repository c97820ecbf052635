#!/usr/bin/env bash
# --show-schedule draws Wavelet's Figure 10 for waves on 4 ranks: at forward cycle c rank i runs
# stage c on batch (i - c) mod 4 ("Fc.b"); the backward cycles 4..7 mirror it in reverse stage
# order. Nothing is trained; the table comes from the generated program run with unit-time compute.
source "$(dirname "$0")/lib/common.bash"
"$WAVETRAIN" "$WT_SOURCE_DIR/inputs/fashion_mlp.toml" --set 'schedule.kind="waves"' \
  --show-schedule --ranks 4 > "$dir/out.txt"
cat "$dir/out.txt" | head -12
awk 'BEGIN { n = 4; bad = 0; rows = 0 }
     $1 == "cycle" && $2 == "r0" { table = 1; next }
     table && $1 ~ /^[0-9]+$/ {
       c = $1; rows++
       for (i = 0; i < n; i++) {
         s = c < n ? c : 2 * n - 1 - c
         want = (c < n ? "F" : "B") s "." (((i - s) % n + n) % n)
         if ($(i + 2) != want) { print "cycle " c " rank " i ": " $(i + 2) ", want " want; bad = 1 }
       }
       next }
     table { table = 0 }
     END { if (rows != 2 * n) { print "expected " 2 * n " cycles, got " rows; bad = 1 }; exit bad }' \
  "$dir/out.txt" || fail "the cycle table is not Wavelet's round-robin"
# Every rank's stream is listed with its instructions grouped by cycle.
for r in 0 1 2 3; do grep -q "^rank $r stream 0:" "$dir/out.txt" || fail "rank $r missing"; done
grep -q "^  cycle 7:" "$dir/out.txt" || fail "no per-cycle instruction groups"
