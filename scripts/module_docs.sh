#!/usr/bin/env bash
# Fails when a module does not open with its doc line saying what it is for: every Rust
# file of the crates (`//!`) and every module of the Python package (a docstring).
set -euo pipefail
cd "$(dirname "$0")/.."
missing=0
while IFS= read -r f; do
  if ! head -1 "$f" | grep -q '^//!'; then echo "$f: no //! doc line first"; missing=1; fi
done < <(find neardup/src neardup-cli/src python/src -name '*.rs' | sort)
while IFS= read -r f; do
  if ! head -1 "$f" | grep -q '^"""'; then echo "$f: no docstring first"; missing=1; fi
done < <(find python/neardup -name '*.py' | sort)
exit $missing
