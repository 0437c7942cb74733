#!/usr/bin/env bash
# Peak resident memory of a 1 GiB download to a file and a 1 GiB upload from a file through Courier, over
# URLSessionTransport and over AsyncHTTPClientTransport (the AsyncHTTPClient trait), against a loopback
# server (Python's standard library, started here). Each transfer runs in a process of its own (so that one's freed
# memory cannot hide in the next one's baseline), RUNS times. Prints a Markdown table for Docs/Benchmarks.md. Linux
# only (it reads /proc/self/status). Takes a few minutes plus a release build of SwiftNIO and AsyncHTTPClient.
#
#   bash Scripts/streaming-memory.sh [bytes]      default 1073741824 (1 GiB)
#   TRANSPORTS="urlsession asynchttpclient"       which transports (both by default)
#   MODES="download upload"                       which transfers (both by default)
#   RUNS=3                                        processes per transport and transfer
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-1073741824}
port=${PORT:-18080}
swift build -c release --package-path Benchmarks/StreamingMemory >&2
python3 - "$port" <<'PY' &
import http.server, socketserver, sys, urllib.parse
block = bytes(range(256)) * 4096  # 1 MiB
class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        query = urllib.parse.parse_qs(urllib.parse.urlparse(self.path).query)
        size = int(query.get("size", ["1048576"])[0])
        self.send_response(200)
        self.send_header("Content-Length", str(size))
        self.end_headers()
        left = size
        while left > 0:
            chunk = block[:min(left, len(block))]
            self.wfile.write(chunk)
            left -= len(chunk)
    def do_PUT(self):
        total = 0
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    self.rfile.readline()
                    break
                left = size
                while left > 0:
                    left -= len(self.rfile.read(min(left, 1 << 20)))
                total += size
                self.rfile.readline()
        else:
            left = int(self.headers.get("Content-Length", "0"))
            while left > 0:
                got = len(self.rfile.read(min(left, 1 << 20)))
                left -= got
                total += got
        body = str(total).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
socketserver.ThreadingTCPServer.allow_reuse_address = True
with socketserver.ThreadingTCPServer(("127.0.0.1", int(sys.argv[1])), Handler) as server:
    server.serve_forever()
PY
server=$!
trap 'kill $server' EXIT
sleep 1
binary=$(swift build -c release --package-path Benchmarks/StreamingMemory --show-bin-path)/StreamingMemory
echo "| transport | transfer | size | baseline RSS | peak RSS | peak over baseline | time | rate |"
echo "|---|---|---|---|---|---|---|---|"
for transport in ${TRANSPORTS:-urlsession asynchttpclient}; do
    for mode in ${MODES:-download upload}; do
        for _ in $(seq 1 "${RUNS:-3}"); do
            "$binary" "http://127.0.0.1:$port" "$size" "$mode" "$transport" | grep -v -e '^| transport' -e '^|---'
        done
    done
done
