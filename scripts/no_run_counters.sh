#!/usr/bin/env bash
# Fails when a tracked file dates work by a counter of work periods (the word for a
# period followed by its number, or "this", "next", "last" before it): figures are
# dated by their commit, machine and command, and the history of the work is git's.
# Spark sessions are not counted ("the session's SparkContext" does not match).
set -euo pipefail
cd "$(dirname "$0")/.."
pattern='(this|next|last|previous|earlier) session\b|\bsessions? [0-9]|\bsession [0-9]|session'"'"'s (run|build|profile|runs)'
if git grep -n -I -i -E "$pattern" -- . ':!scripts/no_run_counters.sh'; then
    echo "run counters found (above): date a figure by its commit, machine and command" >&2
    exit 1
fi
