#!/usr/bin/env bash
# Runs Courier's interop tests (Tests/CourierTests/InteropTests.swift, InteropFleetTests.swift) against a real
# nginx on 127.0.0.1.
#
# Installs nginx with apt-get when it is missing (as root, non-interactively), starts it with
# Scripts/interop/nginx.conf in a temporary prefix (document root, pid file and logs all live there),
# runs the interop suites with the server's address in the environment, and always stops
# nginx and removes the prefix on exit. Exits non-zero when anything fails.
#
#   bash Scripts/interop.sh            # uses port 18080, or the next free one
#   COURIER_INTEROP_PORT=19000 bash Scripts/interop.sh
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -d /opt/swift/usr/bin ]; then export PATH="/opt/swift/usr/bin:$PATH"; fi
export PATH="$PATH:/usr/sbin:/sbin"

log() { printf 'interop: %s\n' "$*" >&2; }

if ! command -v nginx >/dev/null 2>&1; then
    log "nginx is missing; installing it with apt-get"
    sudo=""
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null || { log "not root and no sudo: install nginx first"; exit 1; }
        sudo="sudo -n"
    fi
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends nginx
fi
nginx -v

port_is_free() {
    # Nothing accepts a connection on the port.
    ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

port="${COURIER_INTEROP_PORT:-18080}"
for _ in $(seq 1 50); do
    port_is_free "$port" && break
    port=$((port + 1))
done
port_is_free "$port" || { log "no free port found from ${COURIER_INTEROP_PORT:-18080}"; exit 1; }

prefix=$(mktemp -d "${TMPDIR:-/tmp}/courier-interop.XXXXXX")
nginx_pid=""
cleanup() {
    status=$?
    if [ -n "$nginx_pid" ] && kill -0 "$nginx_pid" 2>/dev/null; then
        kill -QUIT "$nginx_pid" 2>/dev/null || true
        for _ in $(seq 1 50); do kill -0 "$nginx_pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$nginx_pid" 2>/dev/null || true
        wait "$nginx_pid" 2>/dev/null || true
    fi
    if [ "$status" -ne 0 ] && [ -f "$prefix/logs/error.log" ]; then
        log "nginx error log:"; cat "$prefix/logs/error.log" >&2
    fi
    rm -rf "$prefix"
    exit "$status"
}
trap cleanup EXIT INT TERM

# nginx workers may run as an unprivileged user: the prefix must be readable by them.
chmod 755 "$prefix"
mkdir -p "$prefix/logs" "$prefix/tmp" "$prefix/html/etag" "$prefix/html/gated" "$prefix/html/slow" \
    "$prefix/html/later" "$prefix/html/origin"
sed "s/__PORT__/$port/" Scripts/interop/nginx.conf >"$prefix/nginx.conf"
printf '{"id":1,"name":"etag"}' >"$prefix/html/etag/resource.json"
printf '{"token":"secret-interop-new"}' >"$prefix/html/gated/me.json"
printf '{"ready":true}' >"$prefix/html/later/status.json"
# 256 KiB at 400 KiB/s: each download takes more than half a second.
head -c 262144 /dev/zero | tr '\0' 'x' >"$prefix/html/slow/big.bin"
# The fleet test's origin resource: 2 KiB, sent at 1 KiB/s behind the shared cache at /fleet/.
head -c 2048 /dev/zero | tr '\0' 'f' >"$prefix/html/origin/item.json"
chmod -R a+rX "$prefix/html"

nginx -t -q -p "$prefix/" -c "$prefix/nginx.conf"
nginx -p "$prefix/" -c "$prefix/nginx.conf" &
nginx_pid=$!

base="http://127.0.0.1:$port"
for _ in $(seq 1 100); do
    if ! port_is_free "$port"; then break; fi
    kill -0 "$nginx_pid" 2>/dev/null || { log "nginx exited at start"; exit 1; }
    sleep 0.05
done
port_is_free "$port" && { log "nginx did not start listening on $port"; exit 1; }
log "nginx $nginx_pid serves $base from $prefix"

COURIER_INTEROP_BASE_URL="$base" \
    COURIER_INTEROP_ROOT="$prefix/html" \
    COURIER_INTEROP_ACCESS_LOG="$prefix/logs/access.log" \
    swift test --filter "Interop(Fleet)?Tests" "$@"

requests=$(wc -l <"$prefix/logs/access.log")
log "passed; nginx logged $requests requests"
