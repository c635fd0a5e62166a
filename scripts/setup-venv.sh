#!/usr/bin/env bash
# Create .venv (if missing) and install taskdsl into it, editable, with the test extra when asked.
set -euo pipefail
cd "$(dirname "$0")/.."
extra=${1:-}
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
  .venv/bin/python -m pip install -q --upgrade pip
fi
spec="."
[ -n "$extra" ] && spec=".[${extra}]"
.venv/bin/python -m pip install -q -e "$spec" 2>&1 | grep -v '^WARNING: Location' || true
.venv/bin/python -c "import taskdsl" # fail loudly if the install did not work
