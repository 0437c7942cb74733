#!/usr/bin/env bash
# Builds the DocC documentation as a static site in Docs/site with the toolchain's own `docc`, and fails on any
# warning. No plugin: the symbol graph comes straight from the compiler.
#
#   1. Checks that every Swift code block of the articles is a snippet of
#      Tests/CourierTests/DocumentationSnippetTests.swift (which compiles and runs them), or of an integration
#      package's Tests/*/DocumentationSnippetTests.swift for snippets that need other packages, and the other way
#      round.
#   2. Builds the Courier target with -emit-symbol-graph, in its own scratch path (.build-docs) so that it never
#      invalidates the main build.
#   3. Runs `docc convert --transform-for-static-hosting --warnings-as-errors`, and also fails if docc printed a
#      warning line anyway.
#   4. Checks that the site has its index page and a page for the module and for every article.
#
# Open the result with any static file server, for example:
#   python3 -m http.server --directory Docs/site 8000   then   http://localhost:8000/documentation/courier
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -d /opt/swift/usr/bin ]; then export PATH="/opt/swift/usr/bin:$PATH"; fi

catalog=Sources/Courier/Courier.docc
snippets=Tests/CourierTests/DocumentationSnippetTests.swift
# Snippets that need other packages (Hummingbird, swift-log…) compile in the integration package that has them.
snippet_files=("$snippets")
for file in Integrations/*/Tests/*/DocumentationSnippetTests.swift; do
    [ -e "$file" ] && snippet_files+=("$file")
done
output=Docs/site
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() {
    echo "docs.sh: $*" >&2
    exit 1
}

# --- 1. Article code blocks and compiled snippets match -----------------------------------------------------------

mkdir -p "$work/snippets" "$work/blocks"

# Every `// Snippet: Article.md, ...` ... `// End snippet` block of the test file, dedented, one file per snippet
# named `<n>.<Article>.md`.
awk -v dir="$work/snippets" '
    function flush(   i, indent, min, line) {
        min = -1
        for (i = 1; i <= count; i++) {
            if (lines[i] ~ /^[[:space:]]*$/) continue
            match(lines[i], /^ */)
            if (min < 0 || RLENGTH < min) min = RLENGTH
        }
        for (i = 1; i <= count; i++) {
            line = lines[i]
            if (line ~ /^[[:space:]]*$/) line = ""; else line = substr(line, min + 1)
            print line > file
        }
        close(file)
    }
    FNR == 1 && inside { print "unterminated snippet at the end of a file" > "/dev/stderr"; exit 1 }
    /^[[:space:]]*\/\/ End snippet$/ { if (inside) flush(); inside = 0; next }
    /^[[:space:]]*\/\/ Snippet: / {
        if (inside) { print "unterminated snippet before line " NR > "/dev/stderr"; exit 1 }
        article = $0; sub(/.*\/\/ Snippet: /, "", article); sub(/\.md.*/, ".md", article)
        file = dir "/" (++n) "." article; count = 0; inside = 1; next
    }
    inside { lines[++count] = $0 }
    END { if (inside) { print "unterminated snippet at the end" > "/dev/stderr"; exit 1 } }
' "${snippet_files[@]}"

# Every ```swift block of every article, without its `import` lines and the blank lines that follow them.
for article in "$catalog"/*.md; do
    name=$(basename "$article")
    awk -v dir="$work/blocks" -v article="$name" '
        /^```swift[[:space:]]*$/ { inside = 1; file = dir "/" (++n) "." article; started = 0; next }
        /^```[[:space:]]*$/ && inside { inside = 0; close(file); next }
        inside {
            if (!started && ($0 ~ /^import / || $0 ~ /^[[:space:]]*$/)) next
            started = 1; print > file
        }
    ' "$article"
done

mismatches=0
check_each() { # $1: directory of files to find, $2: directory to find them in, $3: what is missing
    local file article candidate found
    for file in "$1"/*; do
        [ -e "$file" ] || continue
        article=${file##*/}
        article=${article#*.}
        found=0
        for candidate in "$2"/*."$article"; do
            if [ -e "$candidate" ] && cmp -s "$file" "$candidate"; then found=1 && break; fi
        done
        if [ "$found" = 0 ]; then
            mismatches=$((mismatches + 1))
            echo "docs.sh: $3 ($article):" >&2
            sed 's/^/    /' "$file" >&2
        fi
    done
}
check_each "$work/blocks" "$work/snippets" "a Swift code block of the article is not a snippet of ${snippet_files[*]}"
check_each "$work/snippets" "$work/blocks" "a snippet of ${snippet_files[*]} is not a code block of its article"
[ "$mismatches" = 0 ] || fail "$mismatches code blocks and snippets differ; edit the article and the test together"
echo "docs.sh: $(ls "$work/blocks" | wc -l | tr -d ' ') article code blocks match the compiled snippets"

# --- 2. Symbol graph ---------------------------------------------------------------------------------------------

# A fixed directory keeps the compiler flags the same from run to run, so an unchanged target is not rebuilt.
symbols=.build-docs/symbol-graphs
mkdir -p "$symbols"
swift build --target Courier --scratch-path .build-docs \
    -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$symbols" 2>&1 | tee "$work/build.log"
if grep -E '(^|: )warning: ' "$work/build.log" >/dev/null; then fail "the build printed warnings"; fi
[ -s "$symbols/Courier.symbols.json" ] || fail "no symbol graph was produced"

# --- 3. The site -------------------------------------------------------------------------------------------------

rm -rf "$output"
docc convert "$catalog" \
    --additional-symbol-graph-dir "$symbols" \
    --transform-for-static-hosting \
    --output-path "$output" \
    --fallback-display-name Courier \
    --fallback-bundle-identifier dev.courier.Courier \
    --warnings-as-errors 2>&1 | tee "$work/docc.log" || fail "docc convert failed"
if grep -Ei '(^|[^a-z])(warning|error):' "$work/docc.log" >/dev/null; then fail "docc printed diagnostics"; fi

# --- 4. What must be in it ---------------------------------------------------------------------------------------

expected=("$output/index.html" "$output/documentation/courier/index.html" "$output/data/documentation/courier.json")
for article in "$catalog"/*.md; do
    name=$(basename "$article" .md | tr '[:upper:]' '[:lower:]')
    [ "$name" = courier ] && continue
    expected+=("$output/data/documentation/courier/$name.json" "$output/documentation/courier/$name/index.html")
done
for path in "${expected[@]}"; do
    [ -s "$path" ] || fail "the site has no $path"
done
echo "docs.sh: built $output (${#expected[@]} pages checked); open $output/documentation/courier/index.html"
