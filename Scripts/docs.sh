#!/usr/bin/env bash
# Builds the DocC documentation as a static site in Docs/site with the toolchain's own `docc`, and fails on any
# warning. No plugin: the symbol graph comes straight from the compiler. (Scripts/snippets.sh compiles the articles'
# code blocks.)
#
#   bash Scripts/docs.sh [BASE]   BASE is the path the site is served under: /courier/ by default, as on a project
#                                 page (https://OWNER.github.io/courier/); `/` to serve it from a server's root.
#   bash Scripts/docs.sh --serve [PORT]   builds it for `/` and serves it on http://127.0.0.1:PORT/ (8000) until ^C.
#
#   1. Builds the Courier target with -emit-symbol-graph, in its own scratch path (.build-docs) so that it never
#      invalidates the main build.
#   2. Runs `docc convert --transform-for-static-hosting --warnings-as-errors`, and also fails if docc printed a
#      warning line anyway.
#   3. Checks that the site has its index page and a page for the module and for every article.
#
#   4. Makes the site's root redirect to the documentation, names the navigator "Courier", and makes code lines
#      wider than the page wrap instead of being cut off.
#
# The script ends by printing the command that serves the site locally (a file:// URL renders a blank page: the
# site loads its pages with fetch).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -d /opt/swift/usr/bin ]; then export PATH="/opt/swift/usr/bin:$PATH"; fi

serve=""
if [ "${1:-}" = --serve ]; then
    serve=${2:-8000}
    set -- /
fi
base=${1:-/courier/}
case "$base" in /*) ;; *) base="/$base" ;; esac
case "$base" in */) ;; *) base="$base/" ;; esac
catalog=Sources/Courier/Courier.docc
output=Docs/site
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() {
    echo "docs.sh: $*" >&2
    exit 1
}

# --- 1. Symbol graph ---------------------------------------------------------------------------------------------

# A fixed directory keeps the compiler flags the same from run to run, so an unchanged target is not rebuilt.
symbols=.build-docs/symbol-graphs
mkdir -p "$symbols"
swift build --target Courier --scratch-path .build-docs \
    -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$symbols" 2>&1 | tee "$work/build.log"
if grep -E '(^|: )warning: ' "$work/build.log" >/dev/null; then fail "the build printed warnings"; fi
[ -s "$symbols/Courier.symbols.json" ] || fail "no symbol graph was produced"

# --- 2. The site -------------------------------------------------------------------------------------------------

rm -rf "$output"
docc convert "$catalog" \
    --additional-symbol-graph-dir "$symbols" \
    --transform-for-static-hosting \
    --hosting-base-path "$base" \
    --output-path "$output" \
    --fallback-display-name Courier \
    --fallback-bundle-identifier dev.courier.Courier \
    --warnings-as-errors 2>&1 | tee "$work/docc.log" || fail "docc convert failed"
if grep -Ei '(^|[^a-z])(warning|error):' "$work/docc.log" >/dev/null; then fail "docc printed diagnostics"; fi

# --- 3. What must be in it ---------------------------------------------------------------------------------------

expected=("$output/index.html" "$output/documentation/courier/index.html" "$output/data/documentation/courier.json")
for article in "$catalog"/*.md; do
    name=$(basename "$article" .md | tr '[:upper:]' '[:lower:]')
    [ "$name" = courier ] && continue
    expected+=("$output/data/documentation/courier/$name.json" "$output/documentation/courier/$name/index.html")
done
for path in "${expected[@]}"; do
    [ -s "$path" ] || fail "the site has no $path"
done

# --- 4. The root and the navigator ----------------------------------------------------------------------------------

# docc's own index.html at the root is an app that shows "page not found" for `/`: send readers to the module page.
cat >"$output/index.html" <<HTML
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Courier</title>
<meta http-equiv="refresh" content="0; url=${base}documentation/courier/">
<link rel="canonical" href="${base}documentation/courier/">
</head>
<body><p>The documentation is at <a href="${base}documentation/courier/">${base}documentation/courier/</a>.</p></body>
</html>
HTML
# The navigator's header is the renderer's English string "Documentation" (docc has no option for it; its
# theme-settings.json does not reach it): the site's copy of the renderer says "Courier" instead. Fails if the string
# moved, so that a new docc is noticed rather than silently showing "Documentation" again.
renderer=$(grep -l '"documentation":{"title":"Documentation"' "$output"/js/index.*.js || true)
[ -n "$renderer" ] && [ "$(grep -o '"documentation":{"title":"Documentation"' "$renderer" | wc -l)" = 1 ] ||
    fail "the renderer's navigator title moved; update docs.sh"
sed -i 's/"documentation":{"title":"Documentation"/"documentation":{"title":"Courier"/' "$renderer"
# Code listings scroll sideways in the renderer, so a long line (a one-line `observe(...)`) is cut off at the page's
# edge in print and in screenshots: wrap them instead. Every page of the static site is a copy of one index.html.
wrap='<style>.code-listing pre, .code-listing code { white-space: pre-wrap; overflow-wrap: anywhere; }</style>'
find "$output/documentation" -name index.html -exec sed -i "s#</head>#${wrap}</head>#" {} +

if [ -n "$serve" ]; then
    echo "docs.sh: built $output; serving it on http://127.0.0.1:$serve/ (^C to stop)"
    exec python3 -m http.server --bind 127.0.0.1 --directory "$output" "$serve"
fi
echo "docs.sh: built $output for $base (${#expected[@]} pages checked). Serve it locally with:"
if [ "$base" = / ]; then
    echo "    bash Scripts/docs.sh --serve    (builds for / and serves on http://127.0.0.1:8000/), or"
    echo "    python3 -m http.server --bind 127.0.0.1 --directory $output 8000    then open http://127.0.0.1:8000/"
else
    # The site's links start with $base, so the server must serve it under that path: a link to it in a folder.
    echo "    serve=\$(mktemp -d) && mkdir -p \"\$serve$(dirname "$base")\" && ln -s \"$PWD/$output\" \"\$serve${base%/}\" &&" \
        "python3 -m http.server --bind 127.0.0.1 --directory \"\$serve\" 8000"
    echo "    then open http://127.0.0.1:8000$base   (or in one command: bash Scripts/docs.sh --serve)"
fi
