#!/usr/bin/env bash
# Mutation testing of the guard modules (mutmut): a guard module's mutants, run against the tests
# that hold it (tests/security and the shell tests). Usage:
#   bash scripts/mutation.sh [module.py …]     (default: the reading guard)
# Figures and the surviving mutants are printed; docs/security.md reports the last run.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
py="${PY:-$here/.venv/bin/python}"
"$py" -m pip install -q 'mutmut>=3.8,<4'
modules=("$@")
[ ${#modules[@]} -gt 0 ] || modules=(server/taskdsl/support/reading.py)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp -r "$here/server" "$here/tests" "$here/pyproject.toml" "$work/"
cd "$work"
{
  echo "[mutmut]"
  echo "source_paths=server"
  echo "only_mutate=$(IFS=,; echo "${modules[*]}")"
  echo "tests_dir=tests/security/,tests/test_security_shell.py"
} > setup.cfg
PYTHONPATH="$work/mutants/server:$work/server" "$(dirname "$py")/mutmut" run --max-children "${CHILDREN:-2}" || true
"$(dirname "$py")/mutmut" results || true
