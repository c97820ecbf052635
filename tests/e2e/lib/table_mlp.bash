# A small MLP for a table of features and the template deck (inputs/own_data_example.toml) set up
# to train it: what the tabular tests share. Sourced after common.bash.

table_mlp_model() {  # file name features classes hidden
  cat >"$1" <<TOML
[model]
name = "$2"
input = [$3]
classes = $4

[[layer]]
name = "fc1"
type = "linear"
out_features = $5

[[layer]]
name = "relu1"
type = "relu"

[[layer]]
name = "fc2"
type = "linear"
out_features = $4

[[layer]]
name = "loss"
type = "softmax_xent"
TOML
}

# The template deck reading `model` (relative to the deck) for `epochs` epochs at global batch
# 32; data.path as the template has it unless `data` is given.
table_mlp_deck() {  # deck model epochs [data]
  sed -e "s|^file = .*|file = \"$2\"|" -e 's|^global_batch = .*|global_batch = 32|' \
    -e "s|^epochs = .*|epochs = $3|" -e 's|^warmup_steps = .*|warmup_steps = 20|' \
    ${4:+-e "s|^path = .*|path = \"$4\"|"} "$WT_SOURCE_DIR/inputs/own_data_example.toml" >"$1"
}
