#!/usr/bin/env bash
# Instructions per request against nginx on loopback, counted with valgrind's callgrind: the throughput benchmark's
# contenders (raw AsyncHTTPClient on the transport's configuration and on its own defaults, Courier over
# AsyncHTTPClientTransport with and without its cache, Courier over URLSessionTransport, raw URLSession), each alone, 100 requests in flight over distinct keys. Instruction counts
# repeat to within about 1 % from run to run on this machine, where the throughput's rounds of one contender vary by
# up to 2x; they count the client's whole process (event loops, URLSession's threads), never nginx.
#
#   bash Benchmarks/Throughput/Scripts/instructions.sh [--repeat K] [NAME ...]     (default: every contender)
#   COURIER_THROUGHPUT_BINARY=/path/to/CourierAHCThroughput ...   (a build kept from before a change)
#
# With --repeat K the contenders run K times over, interleaved (A B A B ...), and the table gives each repetition and
# the median. The whole-process count moves by a few percent from one sitting to the next (how often the event loops
# and the task pool wake each other), so compare contenders only within one run: the ratio rows do that, per
# repetition, against the first contender.
#
# Method: each contender runs twice under callgrind with the same 1,200-request warm-up (which also fills Courier's
# cache past its 1,000 entries, so every store evicts, as in a long run) and N = 300 or 1,300 measured requests;
# (total(1,300) - total(300)) / 1,000 is one request with start-up, warm-up and shutdown cancelled out. The binary
# valgrind runs is a copy without debug information, which valgrind 3.19 cannot read for this toolchain. About
# 10 minutes for all six contenders (callgrind runs ~50x slower than native).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -d /opt/swift/usr/bin ]; then export PATH="/opt/swift/usr/bin:$PATH"; fi
export PATH="$PATH:/usr/sbin:/sbin"
command -v valgrind >/dev/null || { echo "valgrind is missing: apt-get install -y valgrind" >&2; exit 1; }
source Scripts/nginx.sh
binary="$prefix/CourierAHCThroughput"
if [ -n "${COURIER_THROUGHPUT_BINARY:-}" ]; then
    # A build kept from before a change, for an A/B run in one sitting.
    objcopy --strip-debug "$COURIER_THROUGHPUT_BINARY" "$binary"
else
    swift build -c release --product CourierAHCThroughput >&2
    objcopy --strip-debug "$(swift build -c release --show-bin-path)/CourierAHCThroughput" "$binary"
fi

repeat=1
if [ "${1:-}" = "--repeat" ]; then
    repeat=${2:?--repeat takes a count}
    [[ "$repeat" =~ ^[1-9][0-9]*$ ]] || { echo "--repeat takes a positive count" >&2; exit 2; }
    shift 2
fi
if [ $# -eq 0 ]; then
    set -- "raw AsyncHTTPClient" "raw AsyncHTTPClient, its defaults" "Courier + AsyncHTTPClientTransport" \
        "Courier + AsyncHTTPClientTransport, no cache" \
        "raw URLSession" "Courier + URLSessionTransport"
fi
export SWIFT_DETERMINISTIC_HASHING=1
run() {
    local name=$1 count=$2 out="$prefix/callgrind.$RANDOM"
    valgrind --tool=callgrind --callgrind-out-file="$out" "$binary" --url "http://127.0.0.1:$port/item.json" \
        --only "$name" --single "$count" --concurrency 100 >"$out.log" 2>&1 || { cat "$out.log" >&2; return 1; }
    awk '/^(summary|totals):/ { print $2; exit }' "$out"
}
declare -A counts
for ((round = 1; round <= repeat; round++)); do
    for name in "$@"; do
        small=$(run "$name" 300)
        large=$(run "$name" 1300)
        counts["$name,$round"]=$(( (large - small) / 1000 ))
    done
done
median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
if [ "$repeat" -eq 1 ]; then
    echo "| contender | instructions per request |"
    echo "|---|---:|"
    for name in "$@"; do printf '| %s | %s |\n' "$name" "${counts["$name,1"]}"; done
    exit 0
fi
printf '| contender |'; for ((round = 1; round <= repeat; round++)); do printf ' run %d |' "$round"; done; echo ' median |'
printf '|---|'; for ((round = 0; round <= repeat; round++)); do printf -- '---:|'; done; echo
for name in "$@"; do
    values=()
    printf '| %s |' "$name"
    for ((round = 1; round <= repeat; round++)); do
        values+=("${counts["$name,$round"]}")
        printf ' %s |' "${counts["$name,$round"]}"
    done
    printf ' %s |\n' "$(median "${values[@]}")"
done
first=$1
shift
for name in "$@"; do
    ratios=()
    printf '| ratio: %s / %s |' "$first" "$name"
    for ((round = 1; round <= repeat; round++)); do
        ratio=$(awk -v a="${counts["$first,$round"]}" -v b="${counts["$name,$round"]}" 'BEGIN { printf "%.3f", a / b }')
        ratios+=("$ratio")
        printf ' %s |' "$ratio"
    done
    printf ' %s |\n' "$(printf '%s\n' "${ratios[@]}" | sort -n | awk '{ v[NR] = $1 } END { printf "%.3f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')"
done
