#!/usr/bin/env bash
# Sequential calls over nginx: CPU time per request (user + system, getrusage of the client's whole process) and
# requests per second, raw AsyncHTTPClient (async and futures APIs) against Courier + AsyncHTTPClientTransport, both
# with AsyncHTTPClientTransport.defaultConfiguration, one request at a time over distinct keys. Interleaved rounds in a
# rotating order, new clients each round, medians (throughput.sh's harness with `--loads sequential`). nginx adds
# `Cache-Control: max-age=60` to every response (the issue-34 setting) unless COURIER_THROUGHPUT_CACHE_CONTROL says
# otherwise (empty: no such field, nginx's Last-Modified only).
#
#   bash Benchmarks/Throughput/Scripts/sequential-cpu.sh [--decoded] [--rounds 5] [--sequential 3000]
set -euo pipefail
export COURIER_THROUGHPUT_CACHE_CONTROL="${COURIER_THROUGHPUT_CACHE_CONTROL-max-age=60}"
exec bash "$(dirname "$0")/throughput.sh" --loads sequential --sequential 3000 \
    --only "raw AsyncHTTPClient" --only "raw AsyncHTTPClient, futures" --only "Courier + AsyncHTTPClientTransport" \
    "$@"
