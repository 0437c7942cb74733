#!/usr/bin/env python3
"""Extracts every ```swift block of README.md and of the DocC catalog into a throwaway package, exactly as written.

Called by Scripts/snippets.sh, which then builds and tests that package. How a block is compiled depends on the
HTML comment on the line before its fence (invisible on GitHub and in DocC):

  (no marker)                    Part of a program. A block that starts with an `import` line starts a new program
                                 (one executable target, its main.swift); a block that does not continues the
                                 previous program of the same page, as a reader who types the page in order would.
  <!-- snippet: test -->         A whole test file (imports included) in the package's test target; it is run.
  <!-- snippet: manifest -->     A whole Package.swift; checked with `swift package dump-package`, and every Courier
                                 product it names must be a product of the root package.
  <!-- snippet: package DIR -->  Code that needs another package (swift-crypto, say): DIR (such as
                                 Examples/SigningWithSwiftCrypto, or a trait's test target such as
                                 Tests/CourierObservabilityTests) is a folder CI builds and tests
                                 (Scripts/integrations.sh), and one of its .swift files must contain the block verbatim.

Usage: snippets.py ROOT OUTPUT   writes OUTPUT/package (the package) and OUTPUT/manifests/N/Package.swift, and
prints one line per manifest directory and `package DIR FILE` per verbatim check still to make; exits non-zero on a
block it cannot place.
"""

import os
import re
import sys

MARKER = re.compile(r"^<!--\s*snippet:\s*(test|manifest|package\s+\S+)\s*-->\s*$")


def pages(root):
    """README.md, then the catalog's articles in name order."""
    catalog = os.path.join(root, "Sources", "Courier", "Courier.docc")
    yield os.path.join(root, "README.md")
    for name in sorted(os.listdir(catalog)):
        if name.endswith(".md"):
            yield os.path.join(catalog, name)


def blocks(path):
    """(first line number, marker or None, text) of every ```swift block of a Markdown file."""
    lines = open(path, encoding="utf-8").read().split("\n")
    found, inside, body, start, marker = [], False, [], 0, None
    for number, line in enumerate(lines, start=1):
        if not inside and re.match(r"^```swift\s*$", line):
            previous = next((l for l in reversed(lines[: number - 1]) if l.strip()), "")
            match = MARKER.match(previous.strip())
            marker = match.group(1) if match else None
            if previous.strip().startswith("<!-- snippet") and not match:
                fail(f"{path}:{number - 1}: unknown snippet marker {previous.strip()!r}")
            inside, body, start = True, [], number + 1
        elif inside and re.match(r"^```\s*$", line):
            found.append((start, marker, "\n".join(body) + "\n"))
            inside = False
        elif inside:
            body.append(line)
    if inside:
        fail(f"{path}:{start - 1}: a ```swift block is never closed")
    return found


def starts_a_program(text):
    code = [l for l in text.split("\n") if l.strip() and not l.strip().startswith("//")]
    return bool(code) and code[0].startswith("import ")


def fail(message):
    print(f"snippets.py: {message}", file=sys.stderr)
    sys.exit(1)


def target_name(page, index):
    return re.sub(r"[^A-Za-z0-9]", "", os.path.splitext(os.path.basename(page))[0]) + f"Snippet{index}"


def main(root, output):
    root = os.path.abspath(root)
    programs, tests, manifests, verbatim = [], [], [], []
    for page in pages(root):
        relative = os.path.relpath(page, root)
        current = None
        for line, marker, text in blocks(page):
            where = f"{relative}:{line}"
            if marker == "test":
                tests.append((target_name(page, len(tests) + 1), where, text))
            elif marker == "manifest":
                manifests.append((where, text))
            elif marker and marker.startswith("package"):
                verbatim.append((marker.split(None, 1)[1], where, text))
            elif starts_a_program(text):
                current = [where, [text]]
                programs.append((target_name(page, len(programs) + 1), current))
            elif current is None:
                fail(f"{where}: the page's first program must start with its imports")
            else:
                current[1].append(text)

    package = os.path.join(output, "package")
    targets = []
    for name, (where, texts) in programs:
        directory = os.path.join(package, "Sources", name)
        os.makedirs(directory, exist_ok=True)
        with open(os.path.join(directory, "main.swift"), "w", encoding="utf-8") as file:
            file.write("\n".join(texts))
        targets.append(f'        // {where}\n        .executableTarget(name: "{name}", dependencies: products),')
    if tests:
        directory = os.path.join(package, "Tests", "SnippetTests")
        os.makedirs(directory, exist_ok=True)
        for name, where, text in tests:
            with open(os.path.join(directory, name + ".swift"), "w", encoding="utf-8") as file:
                file.write(text)
        targets.append('        .testTarget(name: "SnippetTests", dependencies: products),')
    with open(os.path.join(package, "Package.swift"), "w", encoding="utf-8") as file:
        file.write(
            "// swift-tools-version: 6.1\n"
            "// Generated by Scripts/snippets.py from the Swift code blocks of README.md and the DocC catalog.\n"
            "import PackageDescription\n\n"
            "let products: [Target.Dependency] = [\n"
            '    .product(name: "Courier", package: "Courier"),\n'
            '    .product(name: "CourierTesting", package: "Courier"),\n'
            "]\n\n"
            "let package = Package(\n"
            '    name: "DocumentationSnippets",\n'
            "    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11)],\n"
            f'    dependencies: [.package(name: "Courier", path: "{root}")],\n'
            "    targets: [\n" + "\n".join(targets) + "\n    ],\n"
            "    swiftLanguageModes: [.v6]\n"
            ")\n"
        )

    root_products = set(re.findall(r'\.library\(name:\s*"([^"]+)"', open(os.path.join(root, "Package.swift")).read()))
    for index, (where, text) in enumerate(manifests, start=1):
        for product in re.findall(r'\.product\(name:\s*"([^"]+)",\s*package:\s*"courier"\)', text):
            if product not in root_products:
                fail(f"{where}: the manifest names a product Courier does not have: {product}")
        directory = os.path.join(output, "manifests", str(index))
        os.makedirs(directory, exist_ok=True)
        with open(os.path.join(directory, "Package.swift"), "w", encoding="utf-8") as file:
            file.write(text)
        print(f"manifest {directory} {where}")

    for directory, where, text in verbatim:
        sources = os.path.join(root, directory)
        if not os.path.isdir(sources):
            fail(f"{where}: {directory} is not a directory")
        found = None
        for folder, subfolders, files in os.walk(sources):
            subfolders[:] = [s for s in subfolders if not s.startswith(".build")]
            for name in files:
                path = os.path.join(folder, name)
                # A file of a trait's tests is one `#if TRAIT` block, so swift-format indents its code by 4 spaces.
                indented = "\n".join("    " + line if line else line for line in text.split("\n"))
                content = open(path, encoding="utf-8").read() if name.endswith(".swift") else ""
                if text in content or indented in content:
                    found = path
        if found is None:
            fail(f"{where}: no .swift file of {directory} contains this block verbatim:\n{text}")
        print(f"package {directory} {where} {os.path.relpath(found, root)}")

    total = sum(len(texts) for _, (_, texts) in programs) + len(tests) + len(manifests) + len(verbatim)
    print(f"blocks {total} programs {len(programs)} tests {len(tests)} manifests {len(manifests)} "
          f"verbatim {len(verbatim)}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        fail("usage: snippets.py ROOT OUTPUT")
    main(sys.argv[1], sys.argv[2])
