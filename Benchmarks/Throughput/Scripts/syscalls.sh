#!/usr/bin/env bash
# System calls per request, one request at a time over nginx on loopback, traced with `strace -f -y` (every thread of
# the client's process, never nginx): each contender runs twice with the same 300-request warm-up and N = 500 or
# 1,500 measured requests, and (calls(1,500) - calls(500)) / 1,000 is one request with start-up, warm-up and shutdown
# cancelled out. The calls are sorted by what they do: a write to an eventfd wakes a SwiftNIO event loop, a futex
# wake wakes a thread of the concurrency runtime (or one waiting on a lock), timerfd_settime arms a timer. strace
# slows every call down, so it says how many calls a request makes, not how long they take.
#
#   bash Benchmarks/Throughput/Scripts/syscalls.sh [NAME ...]   (default: raw AsyncHTTPClient, Courier + AHC)
#   COURIER_THROUGHPUT_BINARY=/path/to/CourierAHCThroughput ...   (another build, for an A/B comparison)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -d /opt/swift/usr/bin ]; then export PATH="/opt/swift/usr/bin:$PATH"; fi
export PATH="$PATH:/usr/sbin:/sbin"
command -v strace >/dev/null || { echo "strace is missing: apt-get install -y strace" >&2; exit 1; }
export COURIER_THROUGHPUT_CACHE_CONTROL="${COURIER_THROUGHPUT_CACHE_CONTROL-max-age=60}"
source Scripts/nginx.sh
binary="${COURIER_THROUGHPUT_BINARY:-}"
if [ -z "$binary" ]; then
    swift build -c release --product CourierAHCThroughput >&2
    binary="$(swift build -c release --show-bin-path)/CourierAHCThroughput"
fi
if [ $# -eq 0 ]; then set -- "raw AsyncHTTPClient" "Courier + AsyncHTTPClientTransport"; fi
count() {
    local name=$1 requests=$2 out="$prefix/strace.$RANDOM"
    strace -f -y -o "$out" "$binary" --url "http://127.0.0.1:$port/item.json" --only "$name" --single "$requests" \
        --concurrency 1 --warm-up 300 ${COURIER_THROUGHPUT_ARGS:-} >/dev/null 2>&1
    awk '
        / write\([0-9]+<anon_inode:\[eventfd\]>/ { eventfd++ }
        / write\([0-9]+<socket/ { socket++ }
        / futex\(.*FUTEX_WAKE/ { wake++ }
        / futex\(.*FUTEX_WAIT/ { wait++ }
        / epoll_wait\(/ { epoll++ }
        / timerfd_settime\(/ { timer++ }
        / [a-z_0-9]+\(/ { all++ }
        END { print eventfd + 0, socket + 0, wake + 0, wait + 0, epoll + 0, timer + 0, all + 0 }' "$out"
    rm -f "$out"
}
echo "| contender | eventfd writes (event-loop wake-ups) | socket writes | futex wakes | futex waits | epoll_wait | timerfd_settime | all system calls |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for name in "$@"; do
    read -r -a small <<<"$(count "$name" 500)"
    read -r -a large <<<"$(count "$name" 1500)"
    row="| $name"
    for i in 0 1 2 3 4 5 6; do row+=" | $(awk -v a="${small[$i]}" -v b="${large[$i]}" 'BEGIN { printf "%.2f", (b - a) / 1000 }')"; done
    echo "$row |"
done
