#!/usr/bin/env bash
# Checks that the package's sources use no Apple API newer than the platform floors Package.swift declares
# (`platforms:`), although the package is built here only on Linux, where the compiler never checks Apple availability.
#
# How: Scripts/availability.py reads the floors from `swift package dump-package`, the Apple availability of the
# toolchain's modules (Swift, _Concurrency, Synchronization, Foundation, FoundationEssentials, FoundationNetworking,
# Dispatch, _StringProcessing) from `swift-symbolgraph-extract`, and every symbol the modules under Sources/ reference
# from the index store of the debug build (libIndexStore). A reference to a symbol introduced after a floor is an
# error unless it sits in code that `if #available`, `guard #available` or `@available` covers (decided lexically)
# or in an `#if` branch no Apple platform compiles (`#if canImport(FoundationNetworking)`, `os(Linux)`, ...).
#
# Run it right after a debug `swift build` (which writes .build/debug/index/store). Exits 1 on a finding, 2 when it
# cannot check (no index store, no unit for the sources). Arguments go to the script: `--index-store PATH`,
# `--module NAME` (repeatable), `--source-root-in-store DIR`, `--self-test` (the lexical guard logic's own cases).
set -euo pipefail
cd "$(dirname "$0")/.."

export PATH=/opt/swift/usr/bin:$PATH

python3 Scripts/availability.py . "$@"
