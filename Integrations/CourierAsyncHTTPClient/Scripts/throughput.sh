#!/usr/bin/env bash
# Throughput against nginx on loopback: starts nginx (one worker, keep-alive, no access log) serving a 221-byte JSON
# file, builds CourierAHCThroughput in release and runs it: raw AsyncHTTPClient, Courier over
# AsyncHTTPClientTransport, Courier over URLSessionTransport and raw URLSession, interleaved, in one run. Prints a
# Markdown table (Docs/Benchmarks.md has the last one). Stops nginx on exit.
#
#   bash Integrations/CourierAsyncHTTPClient/Scripts/throughput.sh [--requests 10000] [--rounds 5] [--only NAME] ...
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -d /opt/swift/usr/bin ]; then export PATH="/opt/swift/usr/bin:$PATH"; fi
export PATH="$PATH:/usr/sbin:/sbin"
command -v nginx >/dev/null || { echo "throughput.sh: nginx is missing (COURIER_INSTALL=1 Scripts/prepare.sh)" >&2; exit 1; }

port_is_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
port="${COURIER_THROUGHPUT_PORT:-18190}"
for _ in $(seq 1 50); do port_is_free "$port" && break; port=$((port + 1)); done

prefix=$(mktemp -d "${TMPDIR:-/tmp}/courier-throughput.XXXXXX")
chmod 755 "$prefix"
cleanup() {
    if [ -f "$prefix/nginx.pid" ]; then kill -QUIT "$(cat "$prefix/nginx.pid")" 2>/dev/null || true; fi
    rm -rf "$prefix"
}
trap cleanup EXIT INT TERM
mkdir -p "$prefix/logs" "$prefix/html"
printf '%s' '{"id":1,"name":"Ada Lovelace","email":"ada.lovelace@example.com","role":"administrator","createdAt":"2026-11-21T12:00:00Z","tags":["mathematics","engines","poetry"],"score":97.5,"isActive":true,"team":"analytical-engine"}' \
    >"$prefix/html/item.json"
chmod -R a+rX "$prefix/html"
cat >"$prefix/nginx.conf" <<CONF
daemon on;
master_process on;
worker_processes 1;
pid nginx.pid;
error_log logs/error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    keepalive_requests 1000000;
    default_type application/json;
    client_body_temp_path tmp_body;
    proxy_temp_path tmp_proxy;
    fastcgi_temp_path tmp_fastcgi;
    uwsgi_temp_path tmp_uwsgi;
    scgi_temp_path tmp_scgi;
    server {
        listen 127.0.0.1:$port;
        root html;
    }
}
CONF
nginx -p "$prefix/" -c "$prefix/nginx.conf"
swift build -c release --product CourierAHCThroughput >&2
# COURIER_THROUGHPUT_WRAP runs the benchmark under a profiler: COURIER_THROUGHPUT_WRAP="perf record -g -o perf.data"
${COURIER_THROUGHPUT_WRAP:-} "$(swift build -c release --show-bin-path)/CourierAHCThroughput" --url "http://127.0.0.1:$port/item.json" "$@"
