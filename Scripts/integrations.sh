#!/usr/bin/env bash
# The integrations, as users install them: products of this package behind package traits.
#   1. Builds the package with every trait on (.build-traits), checks every module's Apple availability against the
#      declared platforms (Scripts/availability.sh, from that build's index) and runs the integrations' tests.
#      Warnings are errors.
#   2. Installs Courier as a user would, into throwaway consumer packages that depend on this checkout:
#      with no traits it must resolve and fetch no package at all; with each trait alone it resolves only that
#      integration's dependencies, and a small program that uses the integration builds and runs.
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
work=""
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
    printf '\n--- every module: Apple API no newer than the declared platforms (Scripts/availability.sh) ---\n'
    bash Scripts/availability.sh --index-store .build-traits/debug/index/store
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
        imports+="import $module"$'\n'
        [ "$module" = Foundation ] || products+=".product(name: \"$module\", package: \"courier\"), "
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
    local start found
    start=$(date +%s)
    work=$(mktemp -d "${TMPDIR:-/tmp}/courier-consumers.XXXXXX")
    trap 'rm -rf "$work"' EXIT

    printf '\n--- a consumer with no traits resolves no package ---\n'
    consumer "$work/plain" '[]' "Foundation Courier CourierTesting"
    printf '%s\n' 'print("Courier alone:", type(of: APIClient(baseURL: URL(string: "https://api.example.com")!)))' \
        >>"$work/plain/Sources/Consumer/main.swift"
    found=$(resolved "$work/plain")
    [ -z "$found" ] || fail "a consumer with no traits resolved packages: $(echo "$found" | paste -sd ' ')"
    (cd "$work/plain" && swift run 2>&1 | tail -1) | grep -q "Courier alone: APIClient" || fail "the plain consumer did not run"
    [ -z "$(ls "$work/plain/.build/checkouts" 2>/dev/null)" ] || fail "a consumer with no traits fetched packages"
    echo "integrations.sh: no traits: no package resolved or fetched"

    # Each trait alone resolves only the packages of its own integration (never Hummingbird, which only Courier's
    # tests use), and a program that uses the integration builds and runs.
    local trait modules expected program
    for trait in Observability OpenAPI AsyncHTTPClient; do
        case $trait in
            Observability)
                modules="Courier CourierObservability" expected=swift-log
                program='var configuration = APIClient.Configuration()
configuration.observers = [CourierObservability()]
print("integration:", type(of: configuration.observers[0]))' ;;
            OpenAPI)
                modules="Courier CourierHTTPTypes CourierOpenAPI" expected=swift-openapi-runtime
                program='let client = APIClient(baseURL: URL(string: "https://api.example.com")!)
print("integration:", type(of: APIClientTransport(client: client)))' ;;
            AsyncHTTPClient)
                modules="Courier CourierAsyncHTTPClient" expected=async-http-client
                program='let transport = AsyncHTTPClientTransport()
print("integration:", type(of: APIClient.Configuration(transport: transport).transport))
try await transport.shutdown()' ;;
        esac
        printf '\n--- a consumer with the trait %s ---\n' "$trait"
        consumer "$work/$trait" "[\"$trait\"]" "Foundation $modules"
        printf '%s\n' "$program" >>"$work/$trait/Sources/Consumer/main.swift"
        found=$(resolved "$work/$trait" | paste -sd ' ')
        echo "$found" | grep -qw "$expected" || fail "the $trait trait did not resolve $expected: $found"
        if echo "$found" | grep -qw hummingbird; then fail "the $trait trait resolved Hummingbird: $found"; fi
        echo "integrations.sh: trait $trait resolves: $found"
        (cd "$work/$trait" && swift build 2>&1 | tail -3) || fail "a consumer with the $trait trait does not build"
        (cd "$work/$trait" && swift run 2>/dev/null | tail -1) | grep -q "^integration: " ||
            fail "the consumer with the $trait trait did not run"
    done
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
