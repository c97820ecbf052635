#!/usr/bin/env bash
# schedule.kind = "auto" against every candidate measured side by side (bench/auto_choice.py).
#   bash bench/auto_choice.sh [--decks "..."] [--steps N] [--reps R] [--memory-limit BYTES]
exec /usr/bin/python3 "$(dirname "$0")/auto_choice.py" "$@"
