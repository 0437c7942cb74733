#!/usr/bin/env bash
# Builds and tests every integration package under Integrations/ and every example package under Examples/ (each its own Package.swift, depending
# on the root package by relative path). Warnings are errors. Prints how long each package took, since
# each one builds its dependencies from scratch in CI.
#   bash Scripts/integrations.sh            all packages
#   bash Scripts/integrations.sh DIR...     only these (Integrations/NAME or Examples/NAME)
# Each package's tests get COURIER_INTEGRATION_TEST_SECONDS (900 by default; they take under 2 minutes): a test that
# hangs fails the run with its package's name instead of running into CI's hard limit.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -d /opt/swift/usr/bin ]; then export PATH="/opt/swift/usr/bin:$PATH"; fi

if [ $# -gt 0 ]; then packages=("$@"); else
    packages=()
    for manifest in Integrations/*/Package.swift Examples/*/Package.swift; do
        [ -e "$manifest" ] || continue
        packages+=("$(dirname "$manifest")")
    done
fi

for dir in "${packages[@]}"; do
    dir="${dir%/}"
    name="$dir"
    [ -f "$dir/Package.swift" ] || { echo "integrations.sh: no package at $dir" >&2; exit 1; }
    # A package may need a server or tool installed first (nginx, say): it says so in its own script.
    if [ -x "$dir/Scripts/prepare.sh" ]; then "$dir/Scripts/prepare.sh"; fi
    start=$(date +%s)
    log=$(mktemp)
    printf '\n--- %s: build ---\n' "$name"
    (cd "$dir" && swift build --build-tests) 2>&1 | tee "$log"
    # Warnings in our own sources fail the run; warnings inside dependencies' checkouts are theirs.
    if grep -E ': warning: ' "$log" | grep -v '/\.build/checkouts/' | grep -v '/\.build/' >/dev/null; then
        echo "integrations.sh: $name printed warnings:" >&2
        grep -E ': warning: ' "$log" | grep -v '/\.build/' >&2
        exit 1
    fi
    rm -f "$log"
    printf '\n--- %s: test ---\n' "$name"
    limit=${COURIER_INTEGRATION_TEST_SECONDS:-900}
    status=0
    # timeout signals the whole process group, so the test runner it starts goes too.
    (cd "$dir" && timeout --kill-after=30 "$limit" swift test) || status=$?
    if [ "$status" = 124 ] || [ "$status" = 137 ]; then
        echo "integrations.sh: $name: the tests did not finish within $limit s (COURIER_INTEGRATION_TEST_SECONDS)" >&2
        exit 1
    fi
    [ "$status" = 0 ] || exit "$status"
    echo "integrations.sh: $name passed in $(( $(date +%s) - start )) s"
done
