#!/usr/bin/env bash
# FOCUS 1.2 conformance of what the connectors write, checked by the FinOps Foundation's own validator.
#
#   scripts/focus_conformance.sh [OUT]          (default OUT: build/focus-conformance)
#
# 1. Creates a virtual environment for focus-validator 2.2.1 (it needs Python 3.12 or newer: the first of
#    $FOCUS_VALIDATOR_PYTHON, python3.12/3.13 on PATH, ~/.pyenv/versions/3.1[2-9]*; it pins numpy 1.26, so
#    pyarrow<21 is installed beside it) in $FOCUS_VALIDATOR_VENV (default .venv-focus-validator), once.
# 2. Writes the FOCUS Parquet file of every bill fixture with the connectors (scripts/focus_conformance.py
#    write, run with $PYTHON, default python: the project's environment).
# 3. Runs the validator on each (FOCUS 1.2.0.1 rules shipped with it, no download, or the rule set named by
#    $FOCUS_RULES_VERSION, one already in its rules folder: 2.2.1 ships 1.2.0.1 only, docs/focus.md; the applicability
#    criteria of AWS and GCP) and writes OUT/<file>.txt, then OUT/report.txt: the failing rules per file,
#    split into the validator's own bugs (docs/focus.md) and ours.
# Exit status: 0 when only validator bugs fail, 1 when a rule fails because of our rows, 3 when Python 3.12
# or the validator cannot be had (nothing checked).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$(mkdir -p "${1:-$ROOT/build/focus-conformance}" && cd "${1:-$ROOT/build/focus-conformance}" && pwd)
VENV=${FOCUS_VALIDATOR_VENV:-$ROOT/.venv-focus-validator}
PYTHON=${PYTHON:-python}
CRITERIA=ACCOUNT_NAMING_SUPPORTED,AVAILABILITY_ZONE_SUPPORTED,CAPACITY_RESERVATION_SUPPORTED,COMMITMENT_DISCOUNT_SUPPORTED,MULTIPLE_PRICING_CATEGORIES_SUPPORTED,MULTIPLE_SUB_ACCOUNT_TYPES_SUPPORTED,NEGOTIATED_PRICING_SUPPORTED,PUBLIC_PRICE_LIST_SUPPORTED,USAGE_MEASUREMENT_SUPPORTED,UNIT_PRICING_SUPPORTED,SUB_ACCOUNT_SUPPORTED,BILLING_BASED_ON_PROVISIONED_RESOURCES_SUPPORTED,RESOURCE_TYPE_ASSIGNMENT_SUPPORTED,REGION_SUPPORTED,TAGGING_SUPPORTED

if [ ! -x "$VENV/bin/focus-validator" ]; then
  PY312=${FOCUS_VALIDATOR_PYTHON:-}
  for candidate in $(command -v python3.13 python3.12 2>/dev/null) ~/.pyenv/versions/3.1[2-9]*/bin/python; do
    [ -n "$PY312" ] && break
    [ -x "$candidate" ] && PY312=$candidate
  done
  if [ -z "$PY312" ]; then
    echo "focus_conformance: no Python 3.12 or newer (set FOCUS_VALIDATOR_PYTHON); nothing checked" >&2
    exit 3
  fi
  "$PY312" -m venv "$VENV" && "$VENV/bin/pip" install -q "focus-validator==2.2.1" "pyarrow<21" >&2 || {
    echo "focus_conformance: cannot install focus-validator 2.2.1 into $VENV; nothing checked" >&2
    exit 3
  }
fi

mkdir -p "$OUT/files"
"$PYTHON" "$ROOT/scripts/focus_conformance.py" write "$OUT/files" > /dev/null
# the validator opens its currency list by a path relative to its package folder (its bug): run it from there
PACKAGES=$("$VENV/bin/python" -c 'import focus_validator, os; print(os.path.dirname(os.path.dirname(focus_validator.__file__)))')
reports=()
for file in "$OUT"/files/*.parquet; do
  report="$OUT/$(basename "${file%.parquet}").txt"
  (cd "$PACKAGES" && "$VENV/bin/focus-validator" --data-file "$file" --validate-version "${FOCUS_RULES_VERSION:-1.2.0.1}" --block-download \
     --output-type console --applicability-criteria "$CRITERIA" --show-violations) > "$report" 2>&1
  reports+=("$report")
done
set +e
"$PYTHON" "$ROOT/scripts/focus_conformance.py" check "${reports[@]}" | tee "$OUT/report.txt"
exit "${PIPESTATUS[0]}"
