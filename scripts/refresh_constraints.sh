#!/usr/bin/env bash
# Moves the test environment to the newest release of every dependency, on purpose: builds a new virtual
# environment from `.[test]` with no constraints, runs the whole suite and the lint in it, and only when both
# pass writes the exact versions to constraints/test.txt (the file the README's test command installs from).
# `pip install .` for the main job is never pinned: the constraints hold the tests' environment only.
#
#   scripts/refresh_constraints.sh            # refresh, test, write
#   scripts/refresh_constraints.sh --check    # refresh and test; leave constraints/test.txt as it is
set -euo pipefail
cd "$(dirname "$0")/.."
venv=$(mktemp -d)/venv
python3 -m venv "$venv"
. "$venv/bin/activate"
pip install -q --upgrade pip
pip install -q --upgrade -e '.[test]' ruff
ruff check finops connectors addin templates
python -m pytest -n 2
if [ "${1:-}" != "--check" ]; then
    {
        echo "# The test environment, as last verified by scripts/refresh_constraints.sh on $(date -u +%F)"
        echo "# (Python $(python -c 'import platform; print(platform.python_version())')): the suite and the lint passed with exactly these."
        pip freeze --exclude-editable | grep -v '^-e '
    } > constraints/test.txt
    echo "constraints/test.txt written"
fi
