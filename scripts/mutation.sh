#!/usr/bin/env bash
# Mutation testing of the money and physics core (docs/testing.md). Not run in CI: minutes per module.
#
#   scripts/mutation.sh                     every module below, one after the other
#   scripts/mutation.sh money tco           the named modules only
#   scripts/mutation.sh --named             the twenty hand-made mutations (scripts/named_mutations.tsv)
#
# Each module runs mutmut 3 (pip install 'mutmut>=3,<4', a dev tool, not in the test extra) in a scratch copy
# of the working tree (uncommitted changes included; the checkout itself is never modified), with only that
# module mutated and only the tests that cover it selected. Survivors, with their diffs, and the score go to
# mutation-report/<module>.txt, and one line per module to mutation-report/summary.txt.
# JOBS (default 1) sets mutmut's --max-children; keep 1 on a shared 2-core machine.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
REPORT=${REPORT:-$ROOT/mutation-report}
JOBS=${JOBS:-1}
mkdir -p "$REPORT"

# module -> what mutmut mutates (glob, relative to the repo root)
declare -A MUTATE=(
  [money]="finops/money.py"
  [reconcile]="finops/reconcile/*"
  [tco]="finops/tco/*"
  # --- tco/, one line per file (tco)
  [tco-owned]="finops/tco/owned.py"
  [tco-cloud]="finops/tco/cloud.py"
  [tco-compare]="finops/tco/compare.py"
  [tco-from_sizing]="finops/tco/from_sizing.py"
  [tco-levers]="finops/tco/levers.py"
  [tco-reference]="finops/tco/reference.py"
  [tco-unit_cost]="finops/tco/unit_cost.py"
  [tco-inputs]="finops/tco/_inputs.py"  # __init__.py has no function body to mutate
  # --- end tco/
  # one file of reconcile/ with the tests that cover it (a run in minutes, not an hour)
  [reconcile-forecast]="finops/reconcile/forecast.py"
  [reconcile-fingerprint]="finops/reconcile/fingerprint.py"
  [reconcile-dialects]="finops/reconcile/dialects.py"
  [reconcile-plan]="finops/reconcile/plan.py"
  [reconcile-result]="finops/reconcile/result.py"
  [reconcile-parquet_check]="finops/reconcile/parquet_check.py"
  # --- reconcile/ bills, history, commitment schedule, fleet bill, sample bills
  [reconcile-bills]="finops/reconcile/bills.py"
  [reconcile-history]="finops/reconcile/history.py"
  [reconcile-commitment_schedule]="finops/reconcile/commitment_schedule.py"
  [reconcile-fleet_bill]="finops/reconcile/fleet_bill.py"
  [reconcile-sample_bills]="finops/reconcile/sample_bills.py"
  # --- end reconcile/ bills ...
  # --- reconcile/ engine, aggregation, mapping
  [reconcile-aggregation]="finops/reconcile/aggregation.py"
  [reconcile-mapping]="finops/reconcile/mapping.py"
  [reconcile-engine]="finops/reconcile/engine.py"
  # --- end reconcile/ engine ...
  # --- sizing/
  [memory]="finops/sizing/memory.py"
  [performance]="finops/sizing/performance.py"
  [engine_constants]="finops/sizing/engine_constants.py"
  [kernels]="finops/sizing/kernels.py"
  [vendor_efficiency]="finops/sizing/vendor_efficiency.py"
  # --- end sizing/
  # --- mix/
  [mix]="finops/mix/*"
  # one file of mix/ with the fast tests that check its figures
  [mix-_csv]="finops/mix/_csv.py"
  [mix-demand_units]="finops/mix/demand_units.py"
  [mix-dispatch]="finops/mix/dispatch.py"
  [mix-duration_curve]="finops/mix/duration_curve.py"
  [mix-ladder]="finops/mix/ladder.py"
  [mix-levers]="finops/mix/levers.py"
  [mix-lp]="finops/mix/lp.py"
  [mix-optimize]="finops/mix/optimize.py"
  [mix-options]="finops/mix/options.py"
  [mix-price_options]="finops/mix/price_options.py"
  [mix-profile]="finops/mix/profile.py"
  [mix-recommenders]="finops/mix/recommenders.py"
  [mix-result]="finops/mix/result.py"
  [mix-scenarios]="finops/mix/scenarios.py"
  [mix-usage]="finops/mix/usage.py"
  # --- end mix/
)
# module -> the tests that cover it (pytest arguments; doctests of the module included)
declare -A TESTS=(
  [money]="tests/core/test_registry_money.py tests/core/test_money_contract.py tests/core/test_money_edges.py tests/tco/test_annuity.py tests/reconcile/test_totals.py tests/reconcile/test_real_shaped_bills.py finops/money.py"
  [reconcile]="tests/reconcile finops/reconcile"
  [tco]="tests/tco finops/tco"
  # --- tco/, one line per file (tco)
  [tco-owned]="tests/tco/test_owned_figures.py tests/tco/test_owned_basis_names.py tests/tco/test_annuity.py tests/tco/test_tco.py tests/tco/test_depreciation.py finops/tco/owned.py"
  [tco-cloud]="tests/tco/test_cloud_figures.py tests/tco/test_input_checks.py tests/tco/test_tco.py finops/tco/cloud.py"
  [tco-compare]="tests/tco/test_compare_figures.py tests/tco/test_input_checks.py tests/tco/test_tco.py finops/tco/compare.py"
  [tco-from_sizing]="tests/tco/test_from_sizing_figures.py tests/tco/test_from_sizing.py finops/tco/from_sizing.py"
  [tco-levers]="tests/tco/test_lever_figures.py tests/tco/test_input_checks.py tests/tco/test_tco.py finops/tco/levers.py"
  [tco-reference]="tests/tco/test_reference_cases.py tests/tco/test_reference_file.py tests/tco/test_tco.py finops/tco/reference.py"
  [tco-unit_cost]="tests/tco/test_unit_cost_figures.py tests/tco/test_input_checks.py tests/tco/test_average_load_cost.py tests/tco/test_tco.py finops/tco/unit_cost.py"
  [tco-inputs]="tests/tco/test_input_checks.py tests/tco/test_tco.py finops/tco/_inputs.py"
  # --- end tco/
  [reconcile-forecast]="tests/reconcile/test_forecast_figures.py finops/reconcile/forecast.py"
  [reconcile-fingerprint]="tests/reconcile/test_fingerprint_figures.py tests/reconcile/test_same_bill_twice.py finops/reconcile/fingerprint.py"
  [reconcile-dialects]="tests/reconcile/test_remote_figures.py tests/reconcile/test_dialects.py tests/reconcile/test_commitment_balances.py::test_a_remote_engine_carries_the_same_balances finops/reconcile/dialects.py"
  [reconcile-plan]="tests/reconcile/test_plan_values.py finops/reconcile/plan.py"
  [reconcile-result]="tests/reconcile/test_result_views.py tests/reconcile/test_prepaid_roll_forward.py finops/reconcile/result.py"
  [reconcile-parquet_check]="tests/reconcile/test_parquet_check_messages.py tests/reconcile/test_speed_parquet_check.py tests/fuzz/test_parquet_damage.py finops/reconcile/parquet_check.py"
  # --- reconcile/ bills, history, commitment schedule, fleet bill, sample bills
  [reconcile-bills]="tests/reconcile/test_scan_checks.py tests/reconcile/test_bill_file_checks.py tests/reconcile/test_bill_file_edges.py tests/reconcile/test_focus_versions.py tests/reconcile/test_fingerprint_figures.py finops/reconcile/bills.py"
  [reconcile-history]="tests/reconcile/test_history_records.py tests/reconcile/test_fixed_cost.py finops/reconcile/history.py"
  [reconcile-commitment_schedule]="tests/reconcile/test_commitment_schedule_figures.py tests/reconcile/test_partial_upfront.py finops/reconcile/commitment_schedule.py"
  [reconcile-fleet_bill]="tests/reconcile/test_fleet_bill_shape.py finops/reconcile/fleet_bill.py"
  [reconcile-sample_bills]="tests/reconcile/test_sample_bill_files.py finops/reconcile/sample_bills.py"
  # --- end reconcile/ bills ...
  # --- reconcile/ engine, aggregation, mapping
  [reconcile-aggregation]="tests/reconcile/test_aggregation_sums.py tests/reconcile/test_scan_checks.py finops/reconcile/aggregation.py"
  [reconcile-mapping]="tests/reconcile/test_mapping_rules.py tests/reconcile/test_mapping.py::test_globs_agree_with_fnmatch tests/reconcile/test_aggregation_sums.py finops/reconcile/mapping.py"
  [reconcile-engine]="tests/reconcile/test_scan_checks.py tests/reconcile/test_engine_figures.py tests/reconcile/test_engine_scan.py tests/reconcile/test_engine.py finops/reconcile/engine.py"
  # --- end reconcile/ engine ...
  # --- sizing/
  [memory]="tests/sizing/test_memory.py tests/sizing/test_memory_contract.py tests/sizing/test_physics_pins.py finops/sizing/memory.py"
  [performance]="tests/sizing/test_vendor_efficiency.py tests/sizing/test_roofline_by_hand.py tests/sizing/test_performance_arguments.py tests/sizing/test_kernel_composition.py tests/sizing/test_moe_kernels.py tests/sizing/test_performance.py tests/sizing/test_physics_pins.py tests/sizing/test_client_latency.py finops/sizing/performance.py"
  [engine_constants]="tests/sizing/test_vendor_efficiency.py tests/sizing/test_performance_arguments.py tests/sizing/test_performance.py tests/sizing/test_support.py tests/sizing/test_measured_pins.py finops/sizing/engine_constants.py"
  [kernels]="tests/sizing/test_kernels.py tests/sizing/test_kernel_composition.py tests/sizing/test_kernel_formulas.py tests/sizing/test_moe_kernels.py finops/sizing/kernels.py"
  [vendor_efficiency]="tests/sizing/test_vendor_efficiency.py tests/sizing/test_performance_arguments.py finops/sizing/vendor_efficiency.py"
  # --- end sizing/
  # --- mix/
  [mix]="--ignore=tests/mix/test_api.py tests/mix finops/mix"
  [mix-_csv]="tests/mix/test_inputs.py tests/mix/test_csv_figures.py finops/mix/_csv.py"
  [mix-demand_units]="tests/mix/test_inputs.py tests/mix/test_demand_units_figures.py finops/mix/demand_units.py"
  [mix-dispatch]="tests/mix/test_dispatch_figures.py tests/mix/test_duration_curve.py finops/mix/dispatch.py"
  [mix-duration_curve]="tests/mix/test_duration_curve_figures.py tests/mix/test_duration_curve.py finops/mix/duration_curve.py"
  [mix-ladder]="tests/mix/test_ladder_figures.py tests/mix/test_plans.py finops/mix/ladder.py"
  [mix-levers]="tests/mix/test_plans.py tests/mix/test_levers_figures.py finops/mix/levers.py"
  [mix-lp]="tests/mix/test_lp_figures.py tests/mix/test_lp.py tests/mix/test_pool_inputs.py finops/mix/lp.py"
  [mix-optimize]="tests/mix/test_duration_curve.py tests/mix/test_dispatch_figures.py finops/mix/optimize.py"
  [mix-options]="tests/mix/test_inputs.py tests/mix/test_options_figures.py tests/mix/test_cud_kind.py finops/mix/options.py"
  [mix-price_options]="tests/mix/test_cud_kind.py tests/mix/test_price_options_figures.py finops/mix/price_options.py"
  [mix-profile]="tests/mix/test_inputs.py tests/mix/test_profile_figures.py finops/mix/profile.py"
  [mix-recommenders]="tests/mix/test_plans.py tests/mix/test_recommenders_figures.py finops/mix/recommenders.py"
  [mix-result]="tests/mix/test_result_figures.py tests/mix/test_duration_curve.py finops/mix/result.py"
  [mix-scenarios]="tests/mix/test_plans.py tests/mix/test_scenarios_figures.py finops/mix/scenarios.py"
  [mix-usage]="tests/mix/test_usage.py finops/mix/usage.py"
  # --- end mix/
)
ORDER=(money reconcile tco memory performance engine_constants mix)

scratch_copy() {  # the working tree's tracked and untracked (not ignored) files, in a new folder
  local dest
  dest=$(mktemp -d "${TMPDIR:-/tmp}/finops-mutation.XXXXXX")
  git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do
    [ -e "$f" ] && printf '%s\0' "$f"
  done | xargs -0 cp --parents -t "$dest"
  echo "$dest"
}

run_module() {
  local module=$1 work out
  [ -n "${MUTATE[$module]:-}" ] || { echo "unknown module $module (one of: ${ORDER[*]})" >&2; exit 2; }
  work=$(scratch_copy)
  out="$REPORT/$module.txt"
  cat > "$work/setup.cfg" <<EOF
[mutmut]
source_paths = finops
only_mutate = ${MUTATE[$module]}
also_copy = examples
    NOTICE
pytest_add_cli_args_test_selection = ${TESTS[$module]// /
    }
EOF
  echo "== $module: mutating ${MUTATE[$module]} against ${TESTS[$module]} (in $work)"
  (cd "$work" && mutmut run --max-children "$JOBS" >"$work/mutmut-run.log" 2>&1) || true
  (cd "$work" && mutmut export-cicd-stats >/dev/null 2>&1) || true
  python3 - "$work" "$module" "$out" "$REPORT/summary.txt" <<'EOF'
import json, subprocess, sys
from pathlib import Path
work, module, out, summary = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4])
stats_file = work / "mutants" / "mutmut-cicd-stats.json"
if not stats_file.exists():
    out.write_text("mutmut did not finish; its log:\n" + (work / "mutmut-run.log").read_text()[-4000:])
    line = f"{module}: mutmut did not finish (see {out})"
else:
    stats = json.loads(stats_file.read_text())
    listed = subprocess.run(["mutmut", "results"], cwd=work, capture_output=True, text=True).stdout
    survivors = [l.split(":")[0].strip() for l in listed.splitlines() if l.strip().endswith(("survived", "no tests"))]
    body = [f"{module}: {json.dumps(stats)}", ""]
    for name in survivors:
        shown = subprocess.run(["mutmut", "show", name], cwd=work, capture_output=True, text=True).stdout
        body += [f"--- {name}", shown.strip(), ""]
    out.write_text("\n".join(body) + "\n")
    decided = stats.get("killed", 0) + stats.get("survived", 0) + stats.get("no_tests", 0)
    score = stats.get("killed", 0) / decided if decided else 0.0
    line = (f"{module}: {stats.get('killed', 0)} killed, {stats.get('survived', 0)} survived, "
            f"{stats.get('no_tests', 0)} without tests, {stats.get('timeout', 0)} timeouts, "
            f"{stats.get('suspicious', 0)} suspicious of {stats.get('total', decided)}; score {score:.1%}")
print(line)
with summary.open("a") as handle:
    handle.write(line + "\n")
EOF
  [ -n "${KEEP:-}" ] || rm -rf "$work"
}

run_named() {  # each hand-made mutation: apply in a scratch copy, run its tests, say whether they caught it
  local out="$REPORT/named.txt" work id file sed_expr tests what result
  : > "$out"
  while IFS=$'\t' read -r id file sed_expr tests what; do
    [[ -z "$id" || "$id" == \#* ]] && continue
    work=$(scratch_copy)
    cp "$work/$file" "$work/$file.orig"
    sed -i -e "$sed_expr" "$work/$file"
    if cmp -s "$work/$file" "$work/$file.orig"; then
      result="NOT APPLIED (the line is gone: update scripts/named_mutations.tsv)"
    else
      rm "$work/$file.orig"
      local present=() arg
      for arg in $tests; do [ -e "$work/$arg" ] && present+=("$arg"); done  # an older tree lacks newer tests
      if (cd "$work" && python -m pytest -q -x -p no:randomly -p no:cacheprovider "${present[@]}" >/dev/null 2>&1); then
        result="SURVIVED"
      else
        result="caught"
      fi
    fi
    printf '%-3s %-9s %s  (%s; %s)\n' "$id" "${result%% *}" "$what" "$file" "$tests" | tee -a "$out"
    [[ "$result" == NOT* ]] && echo "    $result" | tee -a "$out"
    rm -rf "$work"
  done < "$ROOT/scripts/named_mutations.tsv"
}

if [ "${1:-}" = "--named" ]; then
  run_named
  exit 0
fi
command -v mutmut >/dev/null || { echo "mutmut is missing: pip install 'mutmut>=3,<4'" >&2; exit 2; }
modules=("$@")
[ ${#modules[@]} -gt 0 ] || modules=("${ORDER[@]}")
for module in "${modules[@]}"; do
  run_module "$module"
done
