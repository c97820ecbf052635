# The local lenet background job of the background tests (background_equivalence.sh,
# background_foreground_first.sh): write_background_deck FILE writes its deck, which trains 6
# steps of batch 8 with a checkpoint each step, its run directory under $dir/alone. Needs $data
# and $dir (lib/common.bash).
write_background_deck() {
  cat >"$1" <<DECK
[run]
name = "bg"
output_dir = "$dir/alone"
[data]
path = "$data"
preload = false
[model]
file = "$WT_SOURCE_DIR/models/lenet.toml"
[optimizer]
kind = "sgd"
lr = 0.02
momentum = 0.9
[train]
global_batch = 8
max_steps = 6
eval_every_epoch = false
[checkpoint]
every_steps = 1
keep = 100
DECK
}
