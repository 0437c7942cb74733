#!/usr/bin/env bash
# Compiles every Swift code block of README.md and of the DocC catalog (Sources/Courier/Courier.docc) exactly as
# written, imports included, and runs the ones that are tests. Warnings are errors.
#
#   1. Scripts/snippets.py writes each block into a throwaway package in .build-snippets/package, which depends on
#      this one by path: a block that starts with `import` starts a program (an executable target), the blocks
#      after it on the same page continue it; blocks marked `<!-- snippet: test -->` form its test target.
#   2. Builds that package (the programs are compiled, never run: they talk to api.example.com) and runs its tests.
#   3. Checks each block marked `<!-- snippet: manifest -->` with `swift package dump-package`.
#   Blocks marked `<!-- snippet: package DIR -->` need another package: snippets.py checks that a source file of DIR
#   holds them verbatim, and Scripts/integrations.sh builds and tests DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -d /opt/swift/usr/bin ]; then export PATH="/opt/swift/usr/bin:$PATH"; fi

output=.build-snippets
fail() {
    echo "snippets.sh: $*" >&2
    exit 1
}

# Sources from an earlier run must not linger: a block that was removed from a page must not still compile here.
rm -rf "$output/package/Sources" "$output/package/Tests" "$output/manifests"
mkdir -p "$output"
summary=$(python3 Scripts/snippets.py . "$output") || fail "could not extract the code blocks"
echo "$summary"

log=$(mktemp)
trap 'rm -f "$log"' EXIT
swift build --build-tests --package-path "$output/package" 2>&1 | tee "$log" || fail "a code block does not compile"
if grep -E ': warning: ' "$log" | grep -v '/\.build/' >/dev/null; then
    fail "a code block compiles with warnings"
fi
swift test --package-path "$output/package" || fail "a test shown in the documentation fails"

while read -r kind directory where; do
    [ "$kind" = manifest ] || continue
    swift package dump-package --package-path "$directory" >/dev/null || fail "the manifest at $where does not compile"
    echo "snippets.sh: the manifest at $where compiles"
done <<<"$summary"
echo "snippets.sh: every Swift code block of README.md and the DocC catalog compiles"
