#!/usr/bin/env bash
# Throughput against nginx on loopback: starts nginx (one worker, keep-alive, no access log) serving a 221-byte JSON
# file, builds CourierAHCThroughput in release and runs it: raw AsyncHTTPClient, Courier over
# AsyncHTTPClientTransport, Courier over URLSessionTransport and raw URLSession, interleaved, in one run. Prints a
# Markdown table (Docs/Benchmarks.md has the last one). Stops nginx on exit.
#
#   bash Benchmarks/Throughput/Scripts/throughput.sh [--requests 10000] [--rounds 5] [--only NAME] ...
#   COURIER_THROUGHPUT_BINARY=/path/to/CourierAHCThroughput ...   (a build kept from before a change, for an A/B run)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -d /opt/swift/usr/bin ]; then export PATH="/opt/swift/usr/bin:$PATH"; fi
export PATH="$PATH:/usr/sbin:/sbin"
# Starts nginx on a free loopback port ($port) and stops it on exit.
source Scripts/nginx.sh
binary="${COURIER_THROUGHPUT_BINARY:-}"
if [ -z "$binary" ]; then
    swift build -c release --product CourierAHCThroughput >&2
    binary="$(swift build -c release --show-bin-path)/CourierAHCThroughput"
fi
# COURIER_THROUGHPUT_WRAP runs the benchmark under a profiler: COURIER_THROUGHPUT_WRAP="perf record -g -o perf.data"
${COURIER_THROUGHPUT_WRAP:-} "$binary" --url "http://127.0.0.1:$port/item.json" "$@"
