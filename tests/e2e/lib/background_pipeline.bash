# The 2-rank lenet pipeline foreground (one microbatch, FLOP-balanced cut, global batch 32) of the
# foreground_first tests (background_foreground_first.sh, background_split_backward.sh), and
# their lenet background deck, written to $dir/bg.toml. Needs $dir and $steps (lib/common.bash);
# sets $data and $python.
data=$(fashion_mnist_h5)
python=${WT_PYTHON:-/usr/bin/python3}
source "$(dirname "${BASH_SOURCE[0]}")/background_deck.bash"
write_background_deck "$dir/bg.toml"

run_fg() {  # run name, [background] lines ("" = alone), model (lenet), background deck (bg.toml)
  local bg=""
  [[ -n $2 ]] && bg=$'[background]\nwarmup_steps = 2\n'"deck = \"${4:-bg.toml}\""$'\n'"$2"
  cat >"$dir/$1.toml" <<DECK
[run]
name = "$1"
output_dir = "$dir/runs"
[data]
path = "$data"
[model]
file = "$WT_SOURCE_DIR/models/${3:-lenet}.toml"
[optimizer]
kind = "sgd"
lr = 0.01
[schedule]
kind = "pipeline"
microbatches = 1
balance = "flops"
[train]
global_batch = 32
eval_every_epoch = false
[failure]
stall_seconds = 30
$bg
DECK
  mpirun -np 2 "$WAVETRAIN" "$dir/$1.toml" --steps $steps >"$dir/$1.out" 2>&1 ||
    { cat "$dir/$1.out"; fail "$1 failed"; }
}
ckpt() { printf '%s/checkpoints/step_%08d.h5' "$1" "$2"; }
same_foreground() {  # run name, alone run name (alone)
  local alone=${2:-alone}
  "$python" "$WT_SOURCE_DIR/tests/e2e/lib/same_weights.py" "$(ckpt "$dir/runs/$alone" $steps)" \
    "$(ckpt "$dir/runs/$1" $steps)" >/dev/null || fail "$1: the foreground's weights differ"
  cmp -s <(cut -d, -f1-5 "$dir/runs/$alone/metrics.csv") <(cut -d, -f1-5 "$dir/runs/$1/metrics.csv") ||
    fail "$1: the foreground's losses differ"
}

