#!/usr/bin/env bash
# Fails when a tracked file dates work by a counter of work periods ("session 24's run",
# "this session", "sessions 26-33"): figures are dated by their commit, machine and
# command, and the history of the work is git's. Spark sessions are not counted
# ("the session's SparkContext" does not match).
set -euo pipefail
cd "$(dirname "$0")/.."
pattern='(this|next|last|previous|earlier) session\b|\bsessions? [0-9]|\bsession [0-9]|session'"'"'s (run|build|profile|runs)'
if git grep -n -I -i -E "$pattern" -- . ':!scripts/no_run_counters.sh'; then
    echo "run counters found (above): date a figure by its commit, machine and command" >&2
    exit 1
fi
