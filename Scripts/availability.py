#!/usr/bin/env python3
"""Checks that the package's sources use no Apple API newer than the platform floors Package.swift declares.

Runs on Linux, where the compiler never checks Apple availability:
  1. the floors come from `swift package dump-package` (`platforms`; an undeclared platform gets SwiftPM's default);
  2. the Apple availability of the toolchain's modules (Swift, _Concurrency, Synchronization, Foundation, ...) comes
     from `swift-symbolgraph-extract` (extracted into a temporary directory per run); a member with no entry of its
     own for a platform inherits its enclosing type's (`memberOf`, several levels);
  3. what the code uses comes from the index store of a debug `swift build` (libIndexStore through ctypes): every
     reference occurrence in a unit whose main file is in a checked module under `Sources/`;
  4. a use needing a version above a floor is a finding unless it is guarded, decided lexically on the source file:
     an enclosing `{ ... }` whose header has `if #available(...)`, `@available(...)` (or an attribute line above the
     declaration), the `else` of `if #unavailable(...)`, the body of `guard #unavailable(...) else`, the rest of a
     scope after `guard #available(...) else { ... }`, or the signature of an `@available` declaration; code in an
     `#if` branch no Apple platform compiles (`canImport(FoundationNetworking)`, `canImport(Glibc)`, `os(Linux)`,
     ...) is skipped, and its `#else` is checked.

Output: `path:line:col: error: NAME needs macOS X (declared floor macOS Y)`, one line per (file, line, symbol), and a
summary. Exits 1 on a finding, 2 when the check cannot run (no index store, no unit for the sources, no symbol
graph). `--self-test` runs the embedded cases of the lexical guard logic.

Limits (lexical, not a compiler):
  * Code in `#if` branches that Linux does not compile (`#if canImport(Darwin)`, the `#else` of
    `#if canImport(Glibc)`) is not in a Linux index store, so it is not checked; these lines are listed as notes.
  * Comments and string literals are blanked by a small scanner (nested block comments, multi-line and raw strings,
    interpolation blanked with its string); a brace inside a `#if` branch that is unbalanced on its own would confuse
    the brace matching.
  * Availability is only that of the toolchain modules above: API of package dependencies and Apple-only SDK
    frameworks (absent on Linux) is not checked. A guard must name each platform: `#available(iOS 26, *)` is not
    taken to cover visionOS. Availability macros (`SwiftStdlib 6.0`) in guards are ignored.
"""

from __future__ import annotations

import argparse
import ctypes
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

APPLE = ("macOS", "iOS", "tvOS", "watchOS", "visionOS")
DUMP_NAMES = {"macos": "macOS", "ios": "iOS", "tvos": "tvOS", "watchos": "watchOS", "visionos": "visionOS"}
# SwiftPM's deployment targets for a platform the manifest does not declare.
SWIFTPM_DEFAULT_FLOORS = {"macOS": (10, 13), "iOS": (12, 0), "tvOS": (12, 0), "watchOS": (4, 0), "visionOS": (1, 0)}
TOOLCHAIN_MODULES = ("Swift", "_Concurrency", "Synchronization", "FoundationEssentials", "Foundation",
                     "FoundationNetworking", "Dispatch", "_StringProcessing")
TRIPLE = "x86_64-unknown-linux-gnu"
INFINITE = (10**9,)  # "unavailable here": guards everything on that platform

Version = tuple


def vstr(v: Version) -> str:
    if v == INFINITE:
        return "unavailable"
    parts = list(v) + [0] * (2 - len(v))
    while len(parts) > 2 and parts[-1] == 0:
        parts.pop()
    return ".".join(str(p) for p in parts)


def vparse(s: str) -> Version:
    return tuple(int(p) for p in s.strip().split(".") if p.isdigit())


def vnorm(v: Version) -> Version:
    v = list(v)
    while len(v) > 1 and v[-1] == 0:
        v.pop()
    return tuple(v)


def die(msg: str, code: int = 2):
    print(f"availability: error: {msg}", file=sys.stderr)
    sys.exit(code)


# ----------------------------------------------------------------------------------------------------------------------
# Lexical analysis of a Swift source file


def blank_comments_and_strings(src: str) -> str:
    """The source with comments and string-literal contents replaced by spaces (newlines kept): same length, same
    line and column of every code character."""
    out = list(src)
    n = len(src)
    i = 0

    def blank(a, b):
        for k in range(a, min(b, n)):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
        elif src.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if src.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif src.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            blank(i, j)
            i = j
        elif c == '"' or (c == "#" and re.match(r'#+"', src[i:i + 8] or "")):
            hashes = 0
            while src[i + hashes] == "#":
                hashes += 1
            start = i + hashes
            multi = src.startswith('"""', start)
            delim = ('"""' if multi else '"') + "#" * hashes
            j = start + (3 if multi else 1)
            escape = "\\" + "#" * hashes
            while j < n:
                if src.startswith(escape, j):
                    j += len(escape) + 1
                    if src[j - 1] == "(":  # interpolation: skip to the matching parenthesis
                        depth = 1
                        while j < n and depth:
                            depth += {"(": 1, ")": -1}.get(src[j], 0)
                            j += 1
                    continue
                if src.startswith(delim, j):
                    j += len(delim)
                    break
                if src[j] == "\n" and not multi:
                    break
                j += 1
            blank(i + 1, j - 1)
            i = j
        else:
            i += 1
    return "".join(out)


# --- #if conditions, evaluated three-valued (True, False, None = unknown) for "some Apple platform" and for Linux ----

LINUX_ONLY_MODULES = {"Glibc", "Musl", "FoundationNetworking", "FoundationXML", "Android", "Bionic", "WinSDK", "ucrt",
                      "CRT", "WASILibc", "wasi_pthread"}
APPLE_ONLY_MODULES = {"Darwin", "ObjectiveC", "UIKit", "AppKit", "WatchKit", "SwiftUI", "Combine", "Network", "os",
                      "CryptoKit", "Security", "CoreServices", "MachO", "XCTest_Darwin"}


def _atom(name: str, arg: str | None, target: str):
    arg = (arg or "").strip()
    if name == "os":
        if target == "apple":
            return None if arg in APPLE or arg == "Darwin" else False
        return arg == "Linux"
    if name == "canImport":
        mod = arg.split(",")[0].strip()
        if target == "apple":
            if mod in LINUX_ONLY_MODULES:
                return False
            return True if mod in ("Darwin", "ObjectiveC") else None
        if mod in APPLE_ONLY_MODULES:
            return False
        return True if mod in ("Glibc", "FoundationNetworking") else None
    if name == "_runtime":
        return (target == "apple") if arg == "_ObjC" else None
    if name == "true" and arg is None:
        return True
    if name == "false":
        return False
    return None  # DEBUG, compiler(), swift(), arch(), targetEnvironment(), hasFeature(), custom flags


def eval_condition(cond: str, target: str):
    """Three-valued value of a `#if` condition on `target` ("apple": some Apple platform, or "linux")."""
    tokens = re.findall(r"&&|\|\||!|\(|\)|[A-Za-z_][A-Za-z0-9_]*\s*\([^()]*\)|[A-Za-z_][A-Za-z0-9_.]*|\S", cond)
    pos = 0

    def peek():
        return tokens[pos] if pos < len(tokens) else None

    def take():
        nonlocal pos
        pos += 1
        return tokens[pos - 1]

    def primary():
        t = take() if peek() is not None else None
        if t == "!":
            v = primary()
            return None if v is None else not v
        if t == "(":
            v = disj()
            if peek() == ")":
                take()
            return v
        if t is None:
            return None
        m = re.match(r"([A-Za-z_][A-Za-z0-9_]*)\s*\((.*)\)$", t, re.S)
        if m:
            return _atom(m.group(1), m.group(2), target)
        return _atom(t, None, target) if t in ("true", "false") else None

    def conj():
        v = primary()
        while peek() == "&&":
            take()
            w = primary()
            v = False if (v is False or w is False) else (True if (v and w) else None)
        return v

    def disj():
        v = conj()
        while peek() == "||":
            take()
            w = conj()
            v = True if (v is True or w is True) else (False if (v is False and w is False) else None)
        return v

    try:
        return disj()
    except Exception:
        return None


def conditional_lines(code_lines: list[str]) -> tuple[list[bool], list[bool]]:
    """Per line (0-based): could it be compiled for some Apple platform; could it be compiled on Linux."""
    apple_ok, linux_ok = [], []
    stack = []  # per #if group: {target: (parent_live, branch_live, some_earlier_branch_true)}
    for raw in code_lines:
        s = raw.strip()
        m = re.match(r"#(if|elseif|else|endif)\b(.*)", s)
        if m:
            kind, cond = m.group(1), m.group(2).strip()
            if kind == "if":
                frame = {}
                for t in ("apple", "linux"):
                    parent = stack[-1][t][0] and stack[-1][t][1] if stack else True
                    v = eval_condition(cond, t)
                    frame[t] = [parent, v is not False, v is True]
                stack.append(frame)
            elif stack and kind in ("elseif", "else"):
                for t in ("apple", "linux"):
                    f = stack[-1][t]
                    v = eval_condition(cond, t) if kind == "elseif" else True
                    f[1] = (not f[2]) and v is not False
                    f[2] = f[2] or v is True
            elif stack and kind == "endif":
                stack.pop()
            apple_ok.append(False)
            linux_ok.append(False)
            continue
        apple_ok.append(all(f["apple"][0] and f["apple"][1] for f in stack))
        linux_ok.append(all(f["linux"][0] and f["linux"][1] for f in stack))
    return apple_ok, linux_ok


# --- availability attributes and guards ------------------------------------------------------------------------------

PLATFORM_ALIASES = {p.lower(): p for p in APPLE}
PLATFORM_ALIASES.update({"macosx": "macOS", "osx": "macOS"})


def _split_top(args: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in args:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return [p.strip() for p in parts if p.strip()]


def _balanced_args(text: str, open_paren: int) -> str:
    depth, j = 0, open_paren
    while j < len(text):
        if text[j] == "(":
            depth += 1
        elif text[j] == ")":
            depth -= 1
            if depth == 0:
                return text[open_paren + 1:j]
        j += 1
    return text[open_paren + 1:]


def parse_availability_args(args: str, attribute: bool) -> dict[str, Version]:
    """Platform -> version the guard or attribute promises (INFINITE: the code never runs there)."""
    parts = _split_top(args)
    out: dict[str, Version] = {}
    if not parts:
        return out
    first = parts[0].split()
    if attribute and parts[0] == "*":  # @available(*, unavailable) / @available(*, deprecated, ...)
        if any(p == "unavailable" for p in parts[1:]):
            out.update({p: INFINITE for p in APPLE})
        return out
    if attribute and len(first) == 1 and first[0].lower() in PLATFORM_ALIASES:  # long form
        plat = PLATFORM_ALIASES[first[0].lower()]
        for p in parts[1:]:
            if p == "unavailable":
                out[plat] = INFINITE
            m = re.match(r"introduced\s*:\s*([\d.]+)", p)
            if m:
                out[plat] = vparse(m.group(1))
        return out
    for p in parts:  # short form: `macOS 26, iOS 26.1, *`
        m = re.match(r"([A-Za-z]+)\s+([\d.]+)$", p)
        if m and m.group(1).lower() in PLATFORM_ALIASES:
            out[PLATFORM_ALIASES[m.group(1).lower()]] = vparse(m.group(2))
    return out


def merge_max(a: dict, b: dict) -> dict:
    out = dict(a)
    for k, v in b.items():
        if k not in out or v > out[k]:
            out[k] = v
    return out


AVAIL_RE = re.compile(r"(@available|#available|#unavailable)\s*\(")


def availability_in(text: str, upto: int | None = None) -> list[tuple[str, dict, int]]:
    """(kind, versions, end offset) of every availability attribute/condition in text (starting before upto)."""
    found = []
    for m in AVAIL_RE.finditer(text):
        if upto is not None and m.start() >= upto:
            break
        args = _balanced_args(text, m.end() - 1)
        found.append((m.group(1), parse_availability_args(args, m.group(1) == "@available"),
                      m.end() + len(args) + 1))
    return found


CONTINUATION_START = re.compile(r"^(\.|,|\)|\]|->|&&|\|\||where\b|else\b|throws\b|async\b|rethrows\b|:|=|\?|[+\-*/%<>|&])")
CONTINUATION_END = re.compile(r"(,|\(|\[|->|&&|\|\||=|\.|[+\-*/%<>|&])$")


def is_attribute_line(text: str) -> bool:
    """Only attributes (`@available(macOS 15, *)`, `@MainActor @Sendable`), no declaration after them."""
    i, n = 0, len(text)
    while True:
        while i < n and text[i].isspace():
            i += 1
        if i == n:
            return True
        m = re.compile(r"@[A-Za-z_][A-Za-z0-9_.]*").match(text, i)
        if not m:
            return False
        i = m.end()
        j = i
        while j < n and text[j] in " \t":
            j += 1
        if j < n and text[j] == "(":
            i = j + len(_balanced_args(text, j)) + 2


def last_statement_start(code: str, start: int, end: int) -> int:
    """Offset in [start, end) where the last statement or declaration (with its attribute lines) of code[start:end]
    begins: logical lines are joined inside parentheses and across continuation lines; attribute lines above a
    declaration belong to it."""
    # logical lines: split at newlines outside parentheses/brackets
    lines, depth, ls = [], 0, start
    for k in range(start, end):
        ch = code[k]
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth = max(0, depth - 1)
        elif ch == "\n" and depth == 0:
            lines.append((ls, k))
            ls = k + 1
    lines.append((ls, end))
    lines = [(a, b) for a, b in lines if code[a:b].strip()]
    if not lines:
        return end
    i = len(lines) - 1
    while i > 0:
        cur = code[lines[i][0]:lines[i][1]].strip()
        prev = code[lines[i - 1][0]:lines[i - 1][1]].strip()
        if is_attribute_line(prev) or CONTINUATION_START.match(cur) or CONTINUATION_END.search(prev):
            i -= 1
            continue
        break
    return lines[i][0]


@dataclass
class Block:
    open: int
    close: int  # offset of the matching '}' (len(code) when unclosed)
    header_start: int
    parent: int  # index of the enclosing block, -1 for the file
    own: dict = field(default_factory=dict)  # versions promised inside the block
    guards: list = field(default_factory=list)  # (from offset, versions): `guard #available` in this block


class GuardAnalyzer:
    """Answers: at this offset of a source file, which versions of each Apple platform are guaranteed."""

    def __init__(self, src: str):
        self.src = src
        self.code = blank_comments_and_strings(src)
        lines = self.code.split("\n")
        self.line_starts = []
        off = 0
        for ln in lines:
            self.line_starts.append(off)
            off += len(ln) + 1
        self.apple_ok, self.linux_ok = conditional_lines(lines)
        # `#if` directive lines are no statement boundary for header text, but must not contribute text either
        code = list(self.code)
        for i, ln in enumerate(lines):
            if re.match(r"\s*#(if|elseif|else|endif)\b", ln):
                for k in range(self.line_starts[i], self.line_starts[i] + len(ln)):
                    code[k] = " "
        self.code = "".join(code)
        self._parse_blocks()

    def _parse_blocks(self):
        code = self.code
        self.blocks: list[Block] = []
        self.top_guards: list = []
        stack: list[int] = []
        boundary = 0  # just after the last '{', '}' or ';'
        last_closed_sibling: dict[int, int] = {}  # parent -> index of the block last closed in it
        for k, ch in enumerate(code):
            if ch == "{":
                parent = stack[-1] if stack else -1
                self.blocks.append(Block(k, len(code), boundary, parent))
                stack.append(len(self.blocks) - 1)
                boundary = k + 1
            elif ch == "}":
                if stack:
                    b = stack.pop()
                    self.blocks[b].close = k
                    last_closed_sibling[self.blocks[b].parent] = b
                    self._classify(b, last_closed_sibling)
                boundary = k + 1
            elif ch == ";":
                boundary = k + 1
        for b in stack:  # unclosed (unbalanced source): classify anyway
            self._classify(b, last_closed_sibling)

    def _classify(self, b: int, last_closed: dict):
        blk = self.blocks[b]
        hs = last_statement_start(self.code, blk.header_start, blk.open)
        header = self.code[hs:blk.open].strip()
        blk.header_start = hs
        found = availability_in(header)
        if re.match(r"guard\b", header):
            for kind, versions, _ in found:
                if kind == "#available":  # the rest of the enclosing scope, after the else block
                    target = self.blocks[blk.parent].guards if blk.parent >= 0 else self.top_guards
                    target.append((blk.close, versions))
                elif kind == "#unavailable":  # the else block runs only where it is available
                    blk.own = merge_max(blk.own, versions)
            for kind, versions, _ in found:
                if kind == "@available":
                    blk.own = merge_max(blk.own, versions)
            return
        for kind, versions, _ in found:
            if kind in ("#available", "@available"):
                blk.own = merge_max(blk.own, versions)
        if re.fullmatch(r"else", header):
            # `else` of `if #unavailable(...)` (the preceding sibling block) runs where the API is available
            siblings = [i for i in range(b - 1, -1, -1)
                        if self.blocks[i].parent == blk.parent and self.blocks[i].close < blk.open]
            if siblings:
                prev = self.blocks[siblings[0]]
                prev_header = self.code[prev.header_start:prev.open]
                for kind, versions, _ in availability_in(prev_header):
                    if kind == "#unavailable" and re.match(r"\s*(else\s+)?if\b", prev_header):
                        blk.own = merge_max(blk.own, versions)

    def offset(self, line: int, utf8_col: int) -> int:
        """Offset of 1-based line and 1-based UTF-8 column."""
        start = self.line_starts[line - 1]
        end = self.line_starts[line] - 1 if line < len(self.line_starts) else len(self.src)
        text = self.src[start:end]
        prefix = text.encode("utf-8")[:max(0, utf8_col - 1)].decode("utf-8", "ignore")
        return start + len(prefix)

    def guaranteed(self, pos: int) -> dict[str, Version]:
        """Platform -> version at least guaranteed at pos by the enclosing guards."""
        out: dict[str, Version] = {}
        # enclosing blocks, innermost first
        inner = -1
        for i, blk in enumerate(self.blocks):
            if blk.open < pos <= blk.close:
                inner = i  # blocks are in opening order, so the last match is the innermost
        chain = []
        b = inner
        while b >= 0:
            chain.append(b)
            b = self.blocks[b].parent
        for b in chain:
            blk = self.blocks[b]
            out = merge_max(out, blk.own)
            for frm, versions in blk.guards:
                if frm < pos:
                    out = merge_max(out, versions)
        for frm, versions in self.top_guards:
            if frm < pos:
                out = merge_max(out, versions)
        # the statement the occurrence is in: a signature of an `@available` declaration, or the conditions after an
        # `#available` in an `if`/`guard`
        boundary = max(self.code.rfind(c, 0, pos) for c in "{};") + 1
        s = last_statement_start(self.code, boundary, pos)
        for kind, versions, end in availability_in(self.code[s:pos]):
            if kind == "@available" or (kind == "#available" and s + end <= pos):
                out = merge_max(out, versions)
        return out

    def line_is_apple_code(self, line: int) -> bool:
        return self.apple_ok[line - 1] if 0 < line <= len(self.apple_ok) else True


def apple_only_ranges(an: GuardAnalyzer) -> list[tuple[int, int]]:
    """1-based line ranges compiled for Apple but not on Linux (so absent from a Linux index store)."""
    lines = an.code.split("\n")
    ranges, start = [], None
    for i, ln in enumerate(lines):
        hit = an.apple_ok[i] and not an.linux_ok[i] and ln.strip() != ""
        if hit and start is None:
            start = i + 1
        if not an.apple_ok[i] or an.linux_ok[i]:
            if start is not None:
                ranges.append((start, last))
                start = None
        if hit:
            last = i + 1
    if start is not None:
        ranges.append((start, last))
    return ranges


# ----------------------------------------------------------------------------------------------------------------------
# Self test of the lexical logic

SELF_TEST_SOURCE = '''import Synchronization
#if canImport(FoundationNetworking)
    import FoundationNetworking
    let linuxOnly = Task.immediate { }                      // L4: Linux only
#else
    let appleToo = Task.immediate { }                       // L6: Apple code
#endif
func plain() {
    Task.immediate { }                                      // L9: unguarded
    if #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) {
        Task.immediate { print("}") }                       // L11: guarded everywhere
    } else {
        Task.detached { }                                   // L13: the else branch: not guarded
    }
    if #available(macOS 26, *) {
        Task.immediate { }                                  // L16: guarded on macOS only
    }
}
@available(macOS 15, iOS 18, *)
final class Counter {
    let value = Atomic(0)                                   // L21: guarded to macOS 15 / iOS 18
    func f() -> Int { value.load(ordering: .relaxed) }      // L22: same
}
func early() {
    guard #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) else {
        Task.detached { }                                   // L26: the else: not guarded
        return
    }
    Task.immediate { }                                      // L29: guarded by the guard
}
func after() { Task.immediate { } }                         // L31: not guarded (other scope)
/* if #available(macOS 26, *) { */ func commented() { Task.immediate { } }   // L32: comment: not guarded
func unav() {
    if #unavailable(macOS 26) {
        Task.detached { }                                   // L35: not guarded
    } else {
        Task.immediate { }                                  // L37: guarded on macOS
    }
}
@available(macOS, introduced: 26.0)
func long(
    x: Int
) -> Int {
    Task.immediate { }                                      // L44: guarded on macOS 26
    return x
}
@available(macOS 15, *)
func sig(_ m: Mutex<Int>) { }                               // L48: signature of an @available func
#if canImport(Glibc) && !DEBUG
    let a = Mutex(0)                                        // L50: Linux only
#elseif canImport(Glibc)
    let b = 1                                               // L52: Linux only
#else
    let c = Mutex(0)                                        // L54: Apple only: not in a Linux index
#endif
@available(*, unavailable)
extension Counter {
    func g() { Task.immediate { } }                         // L58: in an unavailable declaration
}
let s = "{ if #available(macOS 26, *) {"; func str() { Task.immediate { } }  // L60: string: not guarded
struct Q {
    @available(macOS 26, *) typealias T = Int
    func h() { Task.immediate { } }                         // L63: an attribute of the line above: not guarded
    func k() {
        if #available(macOS 26, *), let t = Task.immediate({ }) { }   // L65: condition after #available
        switch 1 {
        case 1:
            guard #available(macOS 26, *) else { return }
            Task.immediate { }                              // L69: guarded by the guard after a case label
        default: break
        }
        Task.immediate { }                                  // L72: the guard's scope has ended
    }
}
'''

SELF_TEST_CASES = [  # (line, column of the needle, platform -> expected guaranteed version or None, Apple code?)
    (4, "Task", {}, False),
    (6, "Task", {"macOS": None}, True),
    (9, "Task", {"macOS": None, "iOS": None}, True),
    (11, "Task", {"macOS": (26,), "iOS": (26,), "visionOS": (26,)}, True),
    (13, "Task", {"macOS": None}, True),
    (16, "Task", {"macOS": (26,), "iOS": None}, True),
    (21, "Atomic", {"macOS": (15,), "iOS": (18,), "tvOS": None}, True),
    (22, "load", {"macOS": (15,), "iOS": (18,)}, True),
    (26, "Task", {"macOS": None}, True),
    (29, "Task", {"macOS": (26,), "watchOS": (26,)}, True),
    (31, "Task", {"macOS": None}, True),
    (32, "Task", {"macOS": None}, True),
    (35, "Task", {"macOS": None}, True),
    (37, "Task", {"macOS": (26,), "iOS": None}, True),
    (44, "Task", {"macOS": (26, 0), "iOS": None}, True),
    (48, "Mutex", {"macOS": (15,), "iOS": None}, True),
    (50, "Mutex", {}, False),
    (52, "b", {}, False),
    (54, "Mutex", {"macOS": None}, True),
    (58, "Task", {"macOS": INFINITE, "visionOS": INFINITE}, True),
    (60, "Task", {"macOS": None}, True),
    (63, "Task", {"macOS": None}, True),
    (65, "Task", {"macOS": (26,)}, True),
    (69, "Task", {"macOS": (26,)}, True),
    (72, "Task", {"macOS": None}, True),
]


def self_test() -> int:
    an = GuardAnalyzer(SELF_TEST_SOURCE)
    lines = SELF_TEST_SOURCE.split("\n")
    failures = 0
    for line, needle, expect, apple in SELF_TEST_CASES:
        text = lines[line - 1]
        col = len(text[:text.index(needle)].encode()) + 1
        g = an.guaranteed(an.offset(line, col))
        problems = []
        if an.line_is_apple_code(line) != apple:
            problems.append(f"Apple code: got {an.line_is_apple_code(line)}, want {apple}")
        for plat, want in expect.items():
            if g.get(plat) != want:
                problems.append(f"{plat}: got {g.get(plat)}, want {want}")
        status = "ok  " if not problems else "FAIL"
        failures += bool(problems)
        print(f"{status} L{line} {needle}: {text.strip()[:60]}" + ("" if not problems else "  -- " + "; ".join(problems)))
    ranges = apple_only_ranges(an)
    if ranges != [(6, 6), (54, 54)]:
        failures += 1
        print(f"FAIL Apple-only ranges: got {ranges}, want [(6, 6), (54, 54)]")
    else:
        print("ok   Apple-only ranges not indexed on Linux: lines 6, 54")
    cond_cases = [("canImport(FoundationNetworking)", "apple", False), ("os(Linux) || os(Android)", "apple", False),
                  ("!canImport(Darwin)", "apple", False), ("canImport(Glibc) && !DEBUG", "apple", False),
                  ("canImport(Darwin) || DEBUG", "apple", True), ("DEBUG", "apple", None),
                  ("canImport(FoundationEssentials)", "apple", None), ("os(macOS) || os(iOS)", "linux", False)]
    for cond, target, want in cond_cases:
        got = eval_condition(cond, target)
        ok = got is want
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'} #if {cond} on {target}: {got}" + ("" if ok else f", want {want}"))
    print(f"self-test: {len(SELF_TEST_CASES) + 1 + len(cond_cases) - failures} passed, {failures} failed")
    return 1 if failures else 0


# ----------------------------------------------------------------------------------------------------------------------
# libIndexStore


class StringRef(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("length", ctypes.c_size_t)]

    def str(self) -> str:
        return ctypes.string_at(self.data, self.length).decode("utf-8", "replace") if self.length else ""


ROLE_DECLARATION, ROLE_DEFINITION, ROLE_REFERENCE, ROLE_IMPLICIT = 1 << 0, 1 << 1, 1 << 2, 1 << 8
DEPENDENCY_RECORD = 2


class IndexStore:
    def __init__(self, lib_path: str, store_path: str):
        V = ctypes.c_void_p
        lib = ctypes.CDLL(lib_path)
        self.lib = lib
        for name in ("indexstore_unit_reader_get_main_file", "indexstore_unit_reader_get_module_name",
                     "indexstore_unit_dependency_get_name", "indexstore_unit_dependency_get_filepath",
                     "indexstore_symbol_get_usr", "indexstore_symbol_get_name"):
            getattr(lib, name).restype = StringRef
            getattr(lib, name).argtypes = [V]
        for name in ("indexstore_store_create",):
            getattr(lib, name).restype = V
            getattr(lib, name).argtypes = [ctypes.c_char_p, ctypes.POINTER(V)]
        for name in ("indexstore_unit_reader_create", "indexstore_record_reader_create"):
            getattr(lib, name).restype = V
            getattr(lib, name).argtypes = [V, ctypes.c_char_p, ctypes.POINTER(V)]
        for name in ("indexstore_store_dispose", "indexstore_unit_reader_dispose", "indexstore_record_reader_dispose",
                     "indexstore_error_dispose"):
            getattr(lib, name).restype = None
            getattr(lib, name).argtypes = [V]
        lib.indexstore_error_get_description.restype = ctypes.c_char_p
        lib.indexstore_error_get_description.argtypes = [V]
        self.UNIT_CB = ctypes.CFUNCTYPE(ctypes.c_bool, V, StringRef)
        self.PTR_CB = ctypes.CFUNCTYPE(ctypes.c_bool, V, V)
        lib.indexstore_store_units_apply_f.restype = ctypes.c_bool
        lib.indexstore_store_units_apply_f.argtypes = [V, ctypes.c_uint, V, self.UNIT_CB]
        lib.indexstore_unit_reader_dependencies_apply_f.restype = ctypes.c_bool
        lib.indexstore_unit_reader_dependencies_apply_f.argtypes = [V, V, self.PTR_CB]
        lib.indexstore_record_reader_occurrences_apply_f.restype = ctypes.c_bool
        lib.indexstore_record_reader_occurrences_apply_f.argtypes = [V, V, self.PTR_CB]
        lib.indexstore_unit_dependency_get_kind.restype = ctypes.c_int
        lib.indexstore_unit_dependency_get_kind.argtypes = [V]
        lib.indexstore_unit_reader_get_modification_time.restype = None
        lib.indexstore_unit_reader_get_modification_time.argtypes = [V, ctypes.POINTER(ctypes.c_int64),
                                                                     ctypes.POINTER(ctypes.c_int64)]
        lib.indexstore_occurrence_get_symbol.restype = V
        lib.indexstore_occurrence_get_symbol.argtypes = [V]
        lib.indexstore_occurrence_get_roles.restype = ctypes.c_uint64
        lib.indexstore_occurrence_get_roles.argtypes = [V]
        lib.indexstore_occurrence_get_line_col.restype = None
        lib.indexstore_occurrence_get_line_col.argtypes = [V, ctypes.POINTER(ctypes.c_uint),
                                                           ctypes.POINTER(ctypes.c_uint)]
        err = V()
        self.store = lib.indexstore_store_create(store_path.encode(), ctypes.byref(err))
        if not self.store:
            die(f"cannot open the index store {store_path}: {self._error(err)}")

    def _error(self, err) -> str:
        if not err:
            return "unknown error"
        msg = self.lib.indexstore_error_get_description(err)
        self.lib.indexstore_error_dispose(err)
        return (msg or b"").decode()

    def units(self) -> list[str]:
        names = []

        def cb(_ctx, name):
            names.append(name.str())
            return True

        self.lib.indexstore_store_units_apply_f(self.store, 0, None, self.UNIT_CB(cb))
        return names

    def unit(self, name: str):
        """(main file, module name, [(record name, file path)], modification time)"""
        err = ctypes.c_void_p()
        reader = self.lib.indexstore_unit_reader_create(self.store, name.encode(), ctypes.byref(err))
        if not reader:
            print(f"availability: warning: cannot read unit {name}: {self._error(err)}", file=sys.stderr)
            return None
        try:
            main = self.lib.indexstore_unit_reader_get_main_file(reader).str()
            module = self.lib.indexstore_unit_reader_get_module_name(reader).str()
            records = []

            def cb(_ctx, dep):
                if self.lib.indexstore_unit_dependency_get_kind(dep) == DEPENDENCY_RECORD:
                    records.append((self.lib.indexstore_unit_dependency_get_name(dep).str(),
                                    self.lib.indexstore_unit_dependency_get_filepath(dep).str()))
                return True

            self.lib.indexstore_unit_reader_dependencies_apply_f(reader, None, self.PTR_CB(cb))
            sec, nsec = ctypes.c_int64(), ctypes.c_int64()
            self.lib.indexstore_unit_reader_get_modification_time(reader, ctypes.byref(sec), ctypes.byref(nsec))
            return main, module, records, (sec.value, nsec.value)
        finally:
            self.lib.indexstore_unit_reader_dispose(reader)

    def references(self, record: str) -> list[tuple[str, str, int, int, int]]:
        """(usr, name, line, column, roles) of every reference occurrence of a record."""
        err = ctypes.c_void_p()
        reader = self.lib.indexstore_record_reader_create(self.store, record.encode(), ctypes.byref(err))
        if not reader:
            print(f"availability: warning: cannot read record {record}: {self._error(err)}", file=sys.stderr)
            return []
        out = []
        lib = self.lib
        line, col = ctypes.c_uint(), ctypes.c_uint()

        def cb(_ctx, occ):
            roles = lib.indexstore_occurrence_get_roles(occ)
            # Implicit references are the compiler's own choice, made for the deployment target on Apple platforms
            # (`for await` calls `next(isolation:)` only where it is available, `next()` elsewhere); an accessor's
            # implicit call comes with an explicit reference to its property.
            if roles & ROLE_REFERENCE and not roles & (ROLE_DECLARATION | ROLE_DEFINITION | ROLE_IMPLICIT):
                sym = lib.indexstore_occurrence_get_symbol(occ)
                lib.indexstore_occurrence_get_line_col(occ, ctypes.byref(line), ctypes.byref(col))
                out.append((lib.indexstore_symbol_get_usr(sym).str(), lib.indexstore_symbol_get_name(sym).str(),
                            line.value, col.value, roles))
            return True

        try:
            lib.indexstore_record_reader_occurrences_apply_f(reader, None, self.PTR_CB(cb))
        finally:
            lib.indexstore_record_reader_dispose(reader)
        return out


# ----------------------------------------------------------------------------------------------------------------------
# Symbol graphs


@dataclass
class Symbol:
    name: str
    module: str
    introduced: dict  # platform -> version, own entries
    parent: str | None = None
    default_implementations: list = field(default_factory=list)  # for a protocol requirement


def extract_symbol_graphs(out_dir: str) -> list[str]:
    extracted = []
    for module in TOOLCHAIN_MODULES:
        before = set(glob.glob(os.path.join(out_dir, "*.symbols.json")))
        proc = subprocess.run(["swift-symbolgraph-extract", "-module-name", module, "-target", TRIPLE,
                               "-output-dir", out_dir, "-minimum-access-level", "public",
                               "-skip-synthesized-members"], capture_output=True, text=True)
        after = set(glob.glob(os.path.join(out_dir, "*.symbols.json")))
        if proc.returncode == 0:
            extracted.append(module)
        elif after == before:
            first = (proc.stderr.strip().splitlines() or ["?"])[0]
            print(f"availability: note: no symbol graph for {module}: {first}", file=sys.stderr)
    return extracted


def load_symbol_graphs(graph_dir: str) -> dict[str, Symbol]:
    symbols: dict[str, Symbol] = {}
    parents: dict[str, str] = {}
    defaults: list[tuple[str, str]] = []
    for path in sorted(glob.glob(os.path.join(graph_dir, "*.symbols.json"))):
        with open(path) as f:
            graph = json.load(f)
        module = graph.get("module", {}).get("name", "?")
        for s in graph.get("symbols", []):
            usr = s["identifier"]["precise"]
            intro = {}
            for a in s.get("availability") or []:
                dom = a.get("domain")
                if dom in APPLE and "introduced" in a:
                    i = a["introduced"]
                    intro[dom] = vnorm((i.get("major", 0), i.get("minor", 0), i.get("patch", 0)))
            name = ".".join(s.get("pathComponents") or [s["names"]["title"]])
            if usr in symbols:
                symbols[usr].introduced = merge_max(symbols[usr].introduced, intro)
            else:
                symbols[usr] = Symbol(name, module, intro)
        for r in graph.get("relationships", []):
            if r.get("kind") == "memberOf":
                parents.setdefault(r["source"], r["target"])
            elif r.get("kind") == "defaultImplementationOf":
                defaults.append((r["source"], r["target"]))
    for usr, parent in parents.items():
        if usr in symbols:
            symbols[usr].parent = parent
    for implementation, requirement in defaults:
        if requirement in symbols and implementation in symbols:
            symbols[requirement].default_implementations.append(implementation)
    return symbols


def _inherited(symbols: dict[str, Symbol], usr: str) -> dict:
    out, seen, cur = {}, set(), usr
    while cur in symbols and cur not in seen and len(seen) < 8:
        seen.add(cur)
        out = merge_max(out, symbols[cur].introduced)
        cur = symbols[cur].parent
    return out


def effective_introduced(symbols: dict[str, Symbol], usr: str, cache: dict) -> dict:
    """A symbol's introduction per platform: the latest of its own and its enclosing types' (memberOf chain). A
    protocol requirement with a default implementation is needed only from the earlier of the two: the index names
    the requirement (`FixedWidthInteger.&*`, a requirement since Swift 6), where a compiler for an older deployment
    target calls the older default implementation."""
    if usr in cache:
        return cache[usr]
    out = _inherited(symbols, usr)
    for implementation in symbols[usr].default_implementations:
        alt = _inherited(symbols, implementation)
        out = {p: min(v, alt[p]) for p, v in out.items() if p in alt}
    cache[usr] = out
    return out


ACCESSOR_RE = re.compile(r"([vi])(g|s|M|r|w|W|x|l|a|u|d|i|y|Y)(Z?)$")


def lookup(symbols: dict[str, Symbol], usr: str) -> str | None:
    """The symbol-graph USR of an index USR: an accessor (getter `...vg`) maps to its property (`...vp`)."""
    if usr in symbols:
        return usr
    m = ACCESSOR_RE.search(usr)
    if m:
        prop = usr[:m.start()] + m.group(1) + "p" + m.group(3)
        if prop in symbols:
            return prop
    return None


# ----------------------------------------------------------------------------------------------------------------------
# Package


def read_package(root: str) -> dict:
    try:
        proc = subprocess.run(["swift", "package", "dump-package"], cwd=root, capture_output=True, text=True,
                              timeout=300)
    except FileNotFoundError:
        die("`swift` is not on PATH")
    if proc.returncode != 0:
        die(f"`swift package dump-package` failed in {root}:\n{proc.stderr.strip()}")
    return json.loads(proc.stdout)


def floors_of(package: dict) -> tuple[dict, set]:
    floors, declared = dict(SWIFTPM_DEFAULT_FLOORS), set()
    for p in package.get("platforms") or []:
        plat = DUMP_NAMES.get(p.get("platformName", "").lower())
        if plat:
            floors[plat] = vnorm(vparse(p["version"]))
            declared.add(plat)
    return {k: vnorm(v) for k, v in floors.items()}, declared


def source_modules(package: dict, root: str) -> dict[str, str]:
    """Module name -> absolute source directory, for every target whose sources are under Sources/."""
    sources = os.path.realpath(os.path.join(root, "Sources"))
    out = {}
    for t in package.get("targets", []):
        if t.get("type") in ("test", "plugin", "binary", "system"):
            continue
        path = t.get("path") or os.path.join("Sources", t["name"])
        full = os.path.realpath(os.path.join(root, path))
        if full == sources or full.startswith(sources + os.sep):
            out[t["name"]] = full
    return out


def default_index_store(root: str) -> str:
    link = os.path.join(root, ".build", "debug")
    if os.path.isdir(link):
        return os.path.join(os.path.realpath(link), "index", "store")
    proc = subprocess.run(["swift", "build", "--show-bin-path"], cwd=root, capture_output=True, text=True)
    if proc.returncode != 0:
        die(f"`swift build --show-bin-path` failed:\n{proc.stderr.strip()}")
    return os.path.join(proc.stdout.strip(), "index", "store")


# ----------------------------------------------------------------------------------------------------------------------


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("package_root", nargs="?", default=".", help="the package's root (default: .)")
    ap.add_argument("--index-store", help="index store of a debug build (default: the package's "
                                          ".build/debug/index/store, or `swift build --show-bin-path`/index/store)")
    ap.add_argument("--module", action="append", default=[], metavar="NAME",
                    help="a module to check (repeatable; default: every module under Sources/)")
    ap.add_argument("--source-root-in-store", metavar="DIR",
                    help="the package root as the index store recorded it, when it differs from package_root")
    ap.add_argument("--symbol-graphs", metavar="DIR",
                    help="read already extracted *.symbols.json from DIR instead of extracting them")
    ap.add_argument("--libindexstore", default=None, help="path of libIndexStore.so")
    ap.add_argument("--self-test", action="store_true", help="run the lexical guard logic's embedded cases and exit")
    args = ap.parse_args(argv)

    if args.self_test:
        return self_test()

    started = time.monotonic()
    root = os.path.realpath(args.package_root)
    if not os.path.isfile(os.path.join(root, "Package.swift")):
        die(f"{root} has no Package.swift")
    package = read_package(root)
    floors, declared = floors_of(package)
    modules = source_modules(package, root)
    if args.module:
        unknown = [m for m in args.module if m not in modules]
        if unknown:
            die(f"not a module under Sources/: {', '.join(unknown)} (modules: {', '.join(sorted(modules))})")
        modules = {m: modules[m] for m in args.module}
    if not modules:
        die("the package has no module under Sources/")

    store_path = args.index_store or default_index_store(root)
    if not os.path.isdir(store_path):
        die(f"no index store at {store_path}: run a debug `swift build` first (it writes the index store)")
    store_root = os.path.realpath(args.source_root_in_store) if args.source_root_in_store else root

    def to_local(path: str) -> str:
        path = os.path.normpath(path)
        if path == store_root or path.startswith(store_root + os.sep):
            return root + path[len(store_root):]
        return path

    # --- what the code uses -------------------------------------------------------------------------------------------
    lib_path = args.libindexstore or next(
        (p for p in (os.path.join(os.path.dirname(shutil.which("swift") or "/opt/swift/usr/bin/swift"), "..", "lib",
                                  "libIndexStore.so"), "/opt/swift/usr/lib/libIndexStore.so") if os.path.exists(p)),
        None)
    if not lib_path:
        die("libIndexStore.so not found (pass --libindexstore)")
    store = IndexStore(os.path.realpath(lib_path), store_path)
    unit_names = store.units()
    if not unit_names:
        die(f"the index store {store_path} has no unit: run a debug `swift build` first")
    files: dict[str, tuple[str, set, tuple]] = {}  # local path -> (module, record names, unit time)
    module_units: dict[str, int] = {m: 0 for m in modules}
    for name in unit_names:
        unit = store.unit(name)
        if not unit:
            continue
        main_file, module, records, mtime = unit
        if module not in modules or not main_file:
            continue
        local = to_local(main_file)
        if not local.startswith(modules[module] + os.sep):
            continue
        if not os.path.isfile(local):
            print(f"availability: warning: stale unit {name}: {local} no longer exists", file=sys.stderr)
            continue
        module_units[module] += 1
        if local in files and files[local][2] >= mtime:  # several units of one file: the newest one's records
            continue
        files[local] = (module, {r for r, f in records if not f or os.path.normpath(to_local(f)) == local}, mtime)
    if not files:
        die(f"the index store {store_path} has no unit for the sources of {', '.join(sorted(modules))} under "
            f"{store_root}/Sources (build with `swift build` first, or pass --source-root-in-store)")
    missing_modules = sorted(m for m, n in module_units.items() if n == 0)
    if missing_modules:
        msg = f"no unit in the index store for {', '.join(missing_modules)}"
        if args.module:
            die(msg)
        print(f"availability: warning: {msg} (not built, e.g. behind a package trait): not checked", file=sys.stderr)

    # --- Apple availability of the toolchain's symbols ----------------------------------------------------------------
    tmp = None
    if args.symbol_graphs:
        graph_dir = args.symbol_graphs
    else:
        tmp = tempfile.mkdtemp(prefix="availability-graphs-")
        graph_dir = tmp
        extract_symbol_graphs(graph_dir)
    try:
        symbols = load_symbol_graphs(graph_dir)
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    if not symbols:
        die("no symbol graph could be extracted (is swift-symbolgraph-extract on PATH?)")
    if not any(s.introduced for s in symbols.values()):
        die("the symbol graphs have no Apple availability at all")

    # --- findings -----------------------------------------------------------------------------------------------------
    findings: dict[tuple[str, int, str], dict] = {}
    intro_cache: dict = {}
    occurrences = 0
    referenced, with_availability, known = set(), set(), set()
    notes = []
    for path in sorted(files):
        module, records, _ = files[path]
        rel = os.path.relpath(path, root)
        try:
            with open(path, encoding="utf-8") as f:
                src = f.read()
        except OSError as e:
            die(f"cannot read {path} (indexed as a source of {module}): {e}")
        if args.source_root_in_store:
            original = os.path.join(store_root, os.path.relpath(path, root))
            if os.path.isfile(original) and original != path:
                with open(original, encoding="utf-8") as f:
                    if f.read() != src:
                        print(f"availability: warning: {rel} differs from {original}, which the index store "
                              "indexed: lines may be off", file=sys.stderr)
        an = GuardAnalyzer(src)
        for a, b in apple_only_ranges(an):
            notes.append(f"{rel}:{a}: note: lines {a}-{b} are compiled only for Apple platforms, so they are "
                         "not in a Linux index store and were not checked")
        nlines = len(an.line_starts)
        for record in sorted(records):
            for usr, _name, line, col, _roles in store.references(record):
                occurrences += 1
                referenced.add(usr)
                sg = lookup(symbols, usr)
                if not sg:
                    continue
                known.add(usr)
                needed = effective_introduced(symbols, sg, intro_cache)
                if not needed:
                    continue
                with_availability.add(usr)
                late = {p: v for p, v in needed.items() if v > floors[p]}
                if not late or line < 1 or line > nlines or not an.line_is_apple_code(line):
                    continue
                guaranteed = an.guaranteed(an.offset(line, col))
                late = {p: v for p, v in late.items() if guaranteed.get(p, ()) < v}
                if not late:
                    continue
                key = (rel, line, sg)
                if key not in findings or col < findings[key]["col"]:
                    findings[key] = {"col": col, "late": late, "name": symbols[sg].name,
                                     "module": symbols[sg].module}

    for note in notes:
        print(note)
    for (rel, line, _usr), f in sorted(findings.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[1]["col"])):
        order = sorted(f["late"], key=APPLE.index)
        first, rest = order[0], order[1:]

        def floor_text(p):
            return f"{'declared' if p in declared else 'SwiftPM default'} floor {p} {vstr(floors[p])}"

        msg = f"{f['name']} needs {first} {vstr(f['late'][first])} ({floor_text(first)})"
        if rest:
            msg += "; also " + ", ".join(
                f"{p} {vstr(f['late'][p])} ({'' if p in declared else 'default '}floor {vstr(floors[p])})" for p in rest)
        print(f"{rel}:{line}:{f['col']}: error: {msg}")
    floor_list = ", ".join(f"{p} {vstr(floors[p])}{'' if p in declared else ' (default)'}" for p in APPLE)
    print(f"availability: {len(modules) - len(missing_modules)} modules "
          f"({', '.join(m for m in sorted(modules) if m not in missing_modules)}), {len(files)} files, "
          f"{occurrences} reference occurrences of {len(referenced)} symbols checked against {floor_list}; "
          f"{len(known)} of the referenced symbols are toolchain API and {len(with_availability)} of those have "
          f"Apple availability; {len(findings)} finding(s) in {time.monotonic() - started:.1f} s")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
