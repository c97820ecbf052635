#!/usr/bin/env bash
# wavetrain's burst planner with burst.cost_model = "deeppool" against DeepPool's own planner
# (parallelizationPlanner.py searchBestSplitsV3 at commit cf496d7, run here through
# bench/deeppool_reference.py), both on DeepPool's published A100 VGG-16 profile
# (profile/A100_vgg.prof) and network constants (2.66e5 bytes/us, 40 us:
# bench/devices/deeppool_a100.toml). For every configuration: the GPU count of each of DeepPool's
# 37 layers must be the same, and the predicted iteration time within 1%.
#
# Two readings of the profile: "published" looks layers up as DeepPool's VGG at cf496d7 does (its
# ReLUs are built inplace=false, the profile's keys say inplace=true, so every ReLU costs its 1 us
# fallback); "measured" gives the ReLUs their profiled times (both sides read the same keys).
#
#   bench/deeppool_planner.sh DEEPPOOL [build dir]
# DEEPPOOL: a DeepPool git clone (commit cf496d7 is read from it with git archive) or a source tree
# at that commit. Needs /usr/bin/python3 with torch, h5py and numpy. Exit status 1 if any
# configuration differs.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
[[ $# -ge 1 ]] || { echo "usage: bench/deeppool_planner.sh DEEPPOOL [build dir]" >&2; exit 2; }
deeppool="$1"
wavetrain="${2:-$here/build}/wavetrain"
python=/usr/bin/python3
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
if git -C "$deeppool" rev-parse --verify -q cf496d7 >/dev/null 2>&1; then
  mkdir "$scratch/deeppool"
  git -C "$deeppool" archive cf496d7 parallelizationPlanner.py gpuProfiler.py jobDescription.py \
    examples/vgg.py profile/ | tar -x -C "$scratch/deeppool"
  deeppool="$scratch/deeppool"
fi
[[ -f "$deeppool/profile/A100_vgg.prof" ]] || { echo "$deeppool: no profile/A100_vgg.prof" >&2; exit 2; }

gpus="1 2 4 8 1024"
batches="16 32"
limits="1.5 2 4 99"
failures=0
echo "| profile read | GPUs | batch | amp_limit | DeepPool: layers on GPUs | DeepPool ms | wavetrain: same plan | wavetrain ms | difference |"
echo "|---|---:|---:|---:|---|---:|---|---:|---:|"
for reading in published measured; do
  if [[ $reading == published ]]; then
    convert=(--relu-inplace false --missing 1us) reference=()
  else
    convert=() reference=(--relu-measured)
  fi
  $python "$here/tools/deeppool_prof_to_profile.py" "$deeppool/profile/A100_vgg.prof" \
    "$here/models/vgg16_sim.toml" -o "$scratch/vgg16_$reading.h5" "${convert[@]}" >/dev/null
  # shellcheck disable=SC2086
  $python "$here/bench/deeppool_reference.py" --deeppool "$deeppool" --gpus $gpus \
    --batch $batches --amp-limit $limits "${reference[@]}" >"$scratch/reference_$reading.txt"
  for g in $gpus; do
    for b in $batches; do
      for limit in $limits; do
        "$wavetrain" "$here/inputs/vgg16_sim.toml" --show-plan --ranks "$g" \
          --device "$here/bench/devices/deeppool_a100.toml" --profile "$scratch/vgg16_$reading.h5" \
          --set burst.cost_model=deeppool --set "train.global_batch=$b" \
          --set "burst.amp_limit=$limit" >"$scratch/ours.txt"
        row=$($python - "$scratch/reference_$reading.txt" "$scratch/ours.txt" "$here/models/vgg16_sim.toml" \
          "$g" "$b" "$limit" "$reading" <<'EOF'
import re, sys, tomllib
reference, ours, model, g, b, limit, reading = sys.argv[1:]
blocks, current = {}, None
for line in open(reference):
    f = line.split()
    if f[0] == "config":
        current = blocks.setdefault((int(f[1]), int(f[2]), float(f[3])), {"layers": []})
    elif f[0] == "layer":
        current["layers"].append(int(f[3]))
    elif f[0] == "time_ms":
        current["ms"] = float(f[1])
theirs = blocks[(int(g), int(b), float(limit))]
text = open(ours).read()
ms = float(re.search(r"^predicted step ([0-9.]+) ms", text, re.M).group(1))
per_node = []
for first, last, count in re.findall(r"\[(\d+)\.\.(\d+)\] on (\d+)", re.search(r"^segments:(.*)$", text, re.M).group(1)):
    per_node += [int(count)] * (int(last) - int(first) + 1)
kinds = [layer["type"] for layer in tomllib.load(open(model, "rb"))["layer"]]
mine = [c for c, k in zip(per_node, kinds) if k not in ("dropout", "softmax_xent")]  # DeepPool's 37 layers
def runs(counts):
    out = []
    for c in counts:
        if out and out[-1][1] == c: out[-1][0] += 1
        else: out.append([1, c])
    return " ".join(f"{n}x{c}" for n, c in out)
diff = 100 * (ms - theirs["ms"]) / theirs["ms"]
same = mine == theirs["layers"]
ok = same and abs(diff) <= 1.0
print(("ok" if ok else "DIFFERS") + f"||| {reading} | {g} | {b} | {limit} | {runs(theirs['layers'])} | {theirs['ms']:.3f} | "
      f"{'yes' if same else runs(mine)} | {ms:.3f} | {diff:+.2f}% |")
EOF
        )
        echo "${row#*||}"
        [[ ${row%%||*} == ok ]] || failures=$((failures + 1))
      done
    done
  done
done
echo
echo "$failures configuration(s) differ"
[[ $failures == 0 ]]
