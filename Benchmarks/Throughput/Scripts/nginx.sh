#!/usr/bin/env bash
# Sourced by throughput.sh and instructions.sh: starts nginx (one worker, keep-alive, no access log) on a free port of
# 127.0.0.1, serving the 221-byte JSON file the benchmarks fetch as /item.json; sets $port, and stops nginx (by the
# PID in its pid file) and removes its directory when the sourcing script exits. With COURIER_THROUGHPUT_CACHE_CONTROL
# set (say max-age=60), every response carries that Cache-Control field.
command -v nginx >/dev/null || { echo "nginx is missing (COURIER_INSTALL=1 Scripts/install-test-tools.sh)" >&2; exit 1; }

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
        ${COURIER_THROUGHPUT_CACHE_CONTROL:+add_header Cache-Control "$COURIER_THROUGHPUT_CACHE_CONTROL";}
    }
}
CONF
nginx -p "$prefix/" -c "$prefix/nginx.conf"
