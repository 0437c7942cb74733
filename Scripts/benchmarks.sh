#!/usr/bin/env bash
# Allocation thresholds of the package-benchmark suites in Benchmarks/.
#
#   bash Scripts/benchmarks.sh check    run every suite and fail if an allocation count regressed (CI runs this)
#   bash Scripts/benchmarks.sh update   run every suite and rewrite Benchmarks/Thresholds/ (allocations only)
#
# Only allocation counts are committed and checked: they are repeatable on any machine, while times depend on
# the machine and its load, so times are reported (Docs/Benchmarks.md), never asserted.
set -euo pipefail
cd "$(dirname "$0")/../Benchmarks"
mode=${1:-check}
benchmark() { swift package --disable-sandbox --allow-writing-to-package-directory benchmark "$@" --no-progress; }

case "$mode" in
update)
    benchmark thresholds update
    # Keep only the allocation metric in each committed file. The tool writes names with spaces turned into
    # underscores but looks them up with spaces (package-benchmark 1.38.1), so the names are turned back; no
    # benchmark name here contains an underscore of its own.
    python3 - <<'PY'
import json, pathlib
for path in pathlib.Path("Thresholds").glob("*_*.json"):
    data = json.loads(path.read_text())
    path.unlink()
    target = path.with_name(path.name.replace("_", " "))
    # Subscribers that read are woken as the scheduler pleases, so their allocation count is not repeatable.
    if "subscribers reading" in target.name:
        continue
    target.write_text(json.dumps({"mallocCountTotal": data["mallocCountTotal"]}, indent=2, sort_keys=True) + "\n")
    print(f"{target.name}: mallocCountTotal {data['mallocCountTotal']}")
PY
    ;;
check)
    status=0
    log=$(mktemp)
    benchmark thresholds check 2>&1 | tee "$log" || status=${PIPESTATUS[0]}
    # Through the package plugin, package-benchmark 1.38.1 exits 1 for improvements too (its own code, 4, is lost):
    # the error it names tells them apart. Better than a threshold is not a failure.
    if [ "$status" != 0 ] && grep -aq "benchmarkThresholdImprovement" "$log" && ! grep -aq "benchmarkThresholdRegression" "$log"; then
        status=4
    fi
    rm -f "$log"
    case "$status" in
    0) echo "allocation thresholds: all within tolerance" ;;
    4) echo "allocation thresholds: improvements only (run 'bash Scripts/benchmarks.sh update' to lock them in)" ;;
    *) echo "allocation thresholds: regression (exit $status)" >&2; exit 1 ;;
    esac
    ;;
*)
    echo "usage: $0 [check|update]" >&2
    exit 2
    ;;
esac
