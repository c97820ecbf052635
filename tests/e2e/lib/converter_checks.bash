# Checks shared by the converter tests (sourced after common.bash, in the scratch directory $dir).
PY=${WT_PYTHON:-/usr/bin/python3}
tools="$WT_SOURCE_DIR/tools"

converts() {  # name tool args...: must exit 0; its output in name.out, name.err
  local name=$1 tool=$2
  shift 2
  "$PY" "$tools/$tool" "$@" >"$name.out" 2>"$name.err" || { cat "$name.err"; fail "$name: exit status $?"; }
  cat "$name.out"
}

# name pattern tool args...: run with --output $dir/name.h5, it must exit 2 with one line on
# stderr matching pattern (no traceback) and leave neither that file nor a temporary in $dir.
refuses() {
  local name=$1 pattern=$2 tool=$3
  shift 3
  set +e
  "$PY" "$tools/$tool" "$@" --output "$dir/$name.h5" >"$name.out" 2>"$name.err"
  local rc=$?
  set -e
  one_line_error "$name" "$rc" "$pattern"
  [[ ! -e $dir/$name.h5 ]] || fail "$name: left $name.h5 behind"
  no_temporary "$name" "$dir"
}

one_line_error() {  # name status pattern: status 2, name.err one line matching pattern
  [[ $2 == 2 ]] || { cat "$1.err"; fail "$1: exit status $2, expected 2"; }
  [[ $(wc -l <"$1.err") == 1 ]] || { cat "$1.err"; fail "$1: not one line"; }
  grep -qE -- "$3" "$1.err" || { cat "$1.err"; fail "$1: message lacks '$3'"; }
  echo "ok $1: $(cat "$1.err")"
}

no_temporary() {  # name folder: no converter temporary (*.tmp.<pid>) left in folder
  ! compgen -G "$2/*.tmp.*" >/dev/null || fail "$1: left a temporary: $(ls "$2"/*.tmp.*)"
}
