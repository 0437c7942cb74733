#!/usr/bin/env bash
# The integrations, as users install them: products of this package behind package traits.
#   1. Builds the package with every trait on (.build-traits) and runs the integrations' tests. Warnings are errors.
#   2. Installs Courier as a user would, into throwaway consumer packages that depend on this checkout:
#      with no traits it must resolve and fetch no package at all; each trait alone resolves only its own
#      dependencies; with every trait a small program that uses each integration builds and runs.
#   3. Builds and tests every example package under Examples/ (each its own Package.swift).
# Prints how long each part took: the trait build compiles SwiftNIO, AsyncHTTPClient and Hummingbird from scratch.
#   bash Scripts/integrations.sh               all of it
#   bash Scripts/integrations.sh traits|consumers|examples
# The tests get COURIER_INTEGRATION_TEST_SECONDS (900 by default; they take under 2 minutes): a test that hangs fails
# the run with a clear message instead of running into CI's hard limit.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
if [ -d /opt/swift/usr/bin ]; then export PATH="/opt/swift/usr/bin:$PATH"; fi
parts=("${@:-traits consumers examples}")
limit=${COURIER_INTEGRATION_TEST_SECONDS:-900}

fail() {
    echo "integrations.sh: $*" >&2
    exit 1
}

# Fails when a build log shows a warning in this repository's own sources (dependencies' warnings are theirs).
check_warnings() {
    if grep -E ': warning: ' "$1" | grep -v '/\.build[^/]*/' >/dev/null; then
        grep -E ': warning: ' "$1" | grep -v '/\.build[^/]*/' >&2
        fail "$2 printed warnings"
    fi
}

# Runs a command with the test time limit; timeout signals the whole process group, so test runners go too.
bounded() {
    local status=0
    timeout --kill-after=30 "$limit" "$@" || status=$?
    if [ "$status" = 124 ] || [ "$status" = 137 ]; then fail "$* did not finish within $limit s"; fi
    return "$status"
}

traits() {
    local start log
    start=$(date +%s)
    log=$(mktemp)
    bash Scripts/install-test-tools.sh
    printf '\n--- every trait: build ---\n'
    swift build --build-tests --enable-all-traits --scratch-path .build-traits 2>&1 | tee "$log"
    check_warnings "$log" "the build with every trait"
    rm -f "$log"
    printf '\n--- every trait: the integrations'"'"' tests ---\n'
    bounded swift test --skip-build --enable-all-traits --scratch-path .build-traits \
        --filter 'CourierAsyncHTTPClientTests|CourierObservabilityTests|CourierHTTPTypesTests|CourierOpenAPITests'
    echo "integrations.sh: traits passed in $(($(date +%s) - start)) s"
}

# Writes a consumer package into $1 that depends on this checkout (as `courier`) with the traits $2 (a Swift array
# literal) and whose program imports the modules $3.
consumer() {
    local dir=$1 traits=$2 modules=$3 products="" imports="" module
    mkdir -p "$dir/Sources/Consumer"
    ln -sfn "$root" "$dir/courier"
    for module in $modules; do
        products+=".product(name: \"$module\", package: \"courier\"), "
        imports+="import $module"$'\n'
    done
    cat >"$dir/Package.swift" <<MANIFEST
// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "Consumer",
    platforms: [.macOS(.v15)],
    dependencies: [.package(path: "courier", traits: $traits)],
    targets: [.executableTarget(name: "Consumer", dependencies: [$products])],
    swiftLanguageModes: [.v6]
)
MANIFEST
    printf '%s' "$imports" >"$dir/Sources/Consumer/main.swift"
}

# The packages a consumer in $1 resolved, one identity per line (courier itself is a path dependency, never pinned).
resolved() {
    (cd "$1" && swift package resolve >/dev/null 2>&1 && swift package show-dependencies --format json) |
        python3 -c '
import json, sys
def walk(node):
    for dependency in node.get("dependencies", []):
        print(dependency["identity"])
        walk(dependency)
walk(json.load(sys.stdin))' | sort -u | grep -vx courier || true
}

consumers() {
    local start work found
    start=$(date +%s)
    work=$(mktemp -d "${TMPDIR:-/tmp}/courier-consumers.XXXXXX")
    trap 'rm -rf "$work"' RETURN

    printf '\n--- a consumer with no traits resolves no package ---\n'
    consumer "$work/plain" '[]' "Courier CourierTesting"
    cat >>"$work/plain/Sources/Consumer/main.swift" <<'SWIFT'
let client = APIClient(baseURL: URL(string: "https://api.example.com")!)
print("Courier alone:", type(of: client))
SWIFT
    sed -i '1i import Foundation' "$work/plain/Sources/Consumer/main.swift"
    found=$(resolved "$work/plain")
    [ -z "$found" ] || fail "a consumer with no traits resolved packages: $(echo "$found" | paste -sd ' ')"
    (cd "$work/plain" && swift run 2>&1 | tail -1) | grep -q "Courier alone: APIClient" || fail "the plain consumer did not run"
    [ -z "$(ls "$work/plain/.build/checkouts" 2>/dev/null)" ] || fail "a consumer with no traits fetched packages"
    echo "integrations.sh: no traits: no package resolved or fetched"

    # Each trait alone resolves only the packages of its own integration (and theirs).
    local trait expected
    for trait in AsyncHTTPClient Observability OpenAPI; do
        consumer "$work/$trait" "[\"$trait\"]" "Courier"
        found=$(resolved "$work/$trait" | paste -sd ' ')
        case $trait in
            AsyncHTTPClient) expected=async-http-client ;;
            Observability) expected=swift-log ;;
            OpenAPI) expected=swift-openapi-runtime ;;
        esac
        echo "$found" | grep -qw "$expected" || fail "the $trait trait did not resolve $expected: $found"
        echo "$found" | grep -qw hummingbird && fail "the $trait trait resolved Hummingbird, which only Courier's tests use"
        echo "integrations.sh: trait $trait resolves: $found"
    done

    printf '\n--- a consumer with every trait builds and runs a program that uses each integration ---\n'
    consumer "$work/all" '["AsyncHTTPClient", "Observability", "OpenAPI"]' \
        "Courier CourierAsyncHTTPClient CourierObservability CourierHTTPTypes CourierOpenAPI"
    cat >>"$work/all/Sources/Consumer/main.swift" <<'SWIFT'
import Foundation

let transport = AsyncHTTPClientTransport()
let observer = CourierObservability()
var configuration = APIClient.Configuration(transport: transport)
configuration.observers = [observer]
let client = APIClient(baseURL: URL(string: "https://api.example.com")!, configuration: configuration)
let openAPITransport = APIClientTransport(client: client)
print("every integration:", type(of: openAPITransport))
try await transport.shutdown()
SWIFT
    (cd "$work/all" && swift build 2>&1 | tail -3) || fail "the consumer with every trait does not build"
    (cd "$work/all" && swift run 2>&1 | tail -1) | grep -q "every integration: APIClientTransport" ||
        fail "the consumer with every trait did not run"
    echo "integrations.sh: consumers passed in $(($(date +%s) - start)) s"
}

examples() {
    local manifest dir start log
    for manifest in Examples/*/Package.swift; do
        [ -e "$manifest" ] || continue
        dir=$(dirname "$manifest")
        start=$(date +%s)
        log=$(mktemp)
        printf '\n--- %s: build ---\n' "$dir"
        (cd "$dir" && swift build --build-tests) 2>&1 | tee "$log"
        check_warnings "$log" "$dir"
        rm -f "$log"
        printf '\n--- %s: test ---\n' "$dir"
        (cd "$dir" && bounded swift test)
        echo "integrations.sh: $dir passed in $(($(date +%s) - start)) s"
    done
}

for part in ${parts[*]}; do
    case $part in
        traits | consumers | examples) "$part" ;;
        *) fail "unknown part: $part (traits, consumers or examples)" ;;
    esac
done
