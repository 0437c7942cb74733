#!/usr/bin/env bash
# Renders the built documentation site (Docs/site, from Scripts/docs.sh) in a real headless browser, Debian's
# chromium, and checks that the landing page and an article render their title text. A site that only works from a
# server's root, or whose scripts fail, renders an empty shell or "page not found", and this fails.
#
#   bash Scripts/docs-browser.sh [BASE]   BASE: the base path the site was built for (/courier/ by default).
#
# Serves the site with `python3 -m http.server` on 127.0.0.1 under BASE, and always stops that server, by its PID.
# Installs chromium with apt-get when it is missing and CI=true.
set -euo pipefail
cd "$(dirname "$0")/.."

base=${1:-/courier/}
site=Docs/site
fail() {
    echo "docs-browser.sh: $*" >&2
    exit 1
}
[ -s "$site/documentation/courier/index.html" ] || fail "no site in $site: run Scripts/docs.sh first"

browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ] && [ "${CI:-}" = true ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    browser=$(command -v chromium)
fi
[ -n "$browser" ] || fail "chromium is not installed (apt-get install chromium)"

serve=$(mktemp -d)
profile=$(mktemp -d)
server=
cleanup() {
    if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; fi
    rm -rf "$serve" "$profile"
}
trap cleanup EXIT
# The site's links start with BASE, so the server serves it under that path: a link to it in an empty folder.
if [ "$base" = / ]; then root=$site; else
    root=$serve
    mkdir -p "$serve$(dirname "$base")"
    ln -s "$PWD/$site" "$serve${base%/}"
fi

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server --bind 127.0.0.1 --directory "$root" "$port" >/dev/null 2>&1 &
server=$!
for _ in $(seq 1 50); do
    if python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port$base')" 2>/dev/null; then break; fi
    sleep 0.1
done

# The DOM after the page's scripts ran: docc's pages are rendered by JavaScript from JSON fetched under BASE.
render() {
    timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --user-data-dir="$profile" \
        --virtual-time-budget=15000 --dump-dom "http://127.0.0.1:$port$1" 2>/dev/null
}
expect() { # $1: path under BASE, $2: text (an extended regex) the rendered page must show, $3: what the page is
    local dom
    dom=$(render "$base$1") || fail "chromium could not render $3 ($base$1)"
    if ! grep -qE -- "$2" <<<"$dom"; then
        echo "$dom" | head -c 2000 >&2
        fail "$3 ($base$1) did not render \"$2\""
    fi
    echo "docs-browser.sh: $3 ($base$1) renders \"$2\""
}
# Titles as the page's scripts render them (the static HTML has only a "requires JavaScript" title): the root redirects
# to the module's page; the navigator is named after the package.
expect "" 'class="title"><span[^>]*>Courier</span></h1>' "the site's root"
expect "documentation/courier/" 'class="title"><span[^>]*>Courier</span></h1>' "the landing page"
expect "documentation/courier/" 'class="nav-title"[^>]*> *Courier *<' "the landing page's navigator"
expect "documentation/courier/gettingstarted" 'class="title"><span[^>]*>Getting Started</span></h1>' "the Getting Started article"
expect "documentation/courier/gettingstarted" "Add the package" "the Getting Started article"
