import Foundation
import Testing

@testable import Courier

/// Tests for `CacheControl` (RFC 9111 §5.2): directive parsing, invalid and duplicate handling, and a seeded fuzz
/// run over directive-like garbage.
@Suite("CacheControl")
struct CacheControlTests {
    /// Field values with the exact expected parse.
    static let cases: [(String, CacheControl)] = [
        ("", CacheControl()),
        ("max-age=3600", CacheControl(maxAge: 3600)),
        ("MAX-AGE=60, Public", CacheControl(maxAge: 60, isPublic: true)),
        ("max-age=\"120\"", CacheControl(maxAge: 120)),  // quoted form accepted (§5.2)
        ("max-age = 60", CacheControl(maxAge: 60)),  // stray whitespace around "="
        (",, ,  max-age=5 ,,\t, ", CacheControl(maxAge: 5)),  // empty list elements
        ("max-age=60, max-age=30", CacheControl(maxAge: 30)),  // duplicates: smallest wins
        ("max-age=30, max-age=60", CacheControl(maxAge: 30)),
        ("max-age=", CacheControl(maxAge: 0)),  // invalid: stale (§4.2.1)
        ("max-age", CacheControl(maxAge: 0)),
        ("max-age=-1", CacheControl(maxAge: 0)),
        ("max-age=abc, public", CacheControl(maxAge: 0, isPublic: true)),
        ("max-age=120, max-age=bogus", CacheControl(maxAge: 0)),
        ("max-age=1.5", CacheControl(maxAge: 0)),
        ("max-age=99999999999999999999999", CacheControl(maxAge: 2_147_483_648)),  // saturates (§1.2.2)
        ("max-age=2147483647", CacheControl(maxAge: 2_147_483_647)),
        ("max-age=60 garbage, public", CacheControl(maxAge: 0, isPublic: true)),
        ("max-age=\"60", CacheControl(maxAge: 0)),  // unterminated quoted-string
        ("max-age=60\0, public", CacheControl(maxAge: 0, isPublic: true)),
        ("s-maxage=10, max-age=20", CacheControl(maxAge: 20, sMaxAge: 10)),
        ("s-maxage=x", CacheControl(sMaxAge: 0)),
        ("no-cache", CacheControl(noCache: true)),
        ("no-cache=\"Set-Cookie\"", CacheControl(noCache: true, noCacheFields: ["set-cookie"])),
        ("no-cache=Set-Cookie", CacheControl(noCache: true, noCacheFields: ["set-cookie"])),
        (
            "no-cache=\"Set-Cookie, X-Foo\", no-cache=\"x-foo,, Authorization\"",
            CacheControl(noCache: true, noCacheFields: ["set-cookie", "x-foo", "authorization"])
        ),
        ("no-cache=\"Set-Cookie\", no-cache", CacheControl(noCache: true)),  // unqualified wins
        ("no-cache, no-cache=\"Set-Cookie\"", CacheControl(noCache: true)),
        ("no-cache=\"\"", CacheControl(noCache: true)),
        ("no-cache=\"a b\"", CacheControl(noCache: true)),  // no valid field name: unqualified
        (
            "no-store, no-transform, only-if-cached, must-revalidate, proxy-revalidate, must-understand, private, "
                + "public, immutable",
            CacheControl(
                noStore: true, noTransform: true, onlyIfCached: true, mustRevalidate: true, proxyRevalidate: true,
                mustUnderstand: true, isPrivate: true, isPublic: true, immutable: true)
        ),
        ("No-Store junk", CacheControl(noStore: true)),  // malformed but still honoured
        ("no-store=1", CacheControl(noStore: true)),
        ("private=\"Set-Cookie\"", CacheControl(isPrivate: true)),
        ("max-stale", CacheControl(maxStale: .any)),
        ("max-stale=30", CacheControl(maxStale: .seconds(30))),
        ("max-stale, max-stale=30", CacheControl(maxStale: .seconds(30))),
        ("max-stale=10, max-stale=30, max-stale", CacheControl(maxStale: .seconds(10))),
        ("max-stale=x", CacheControl()),
        ("max-stale=", CacheControl()),
        ("min-fresh=5, min-fresh=10", CacheControl(minFresh: 10)),  // largest is most restrictive
        ("min-fresh=-5", CacheControl()),
        (
            "stale-while-revalidate=60, stale-if-error=600",
            CacheControl(staleWhileRevalidate: 60, staleIfError: 600)
        ),
        ("stale-if-error=600, stale-if-error=300, stale-while-revalidate=-5", CacheControl(staleIfError: 300)),
        ("foo=\"a,b\\\"c\", max-age=5", CacheControl(maxAge: 5, extensions: ["foo": "a,b\"c"])),
        ("x=\"\\\\\"", CacheControl(extensions: ["x": "\\"])),
        ("community=\"UCI\", Ext, EXT=second", CacheControl(extensions: ["community": "UCI", "ext": String?.none])),
        ("foo=", CacheControl(extensions: ["foo": ""])),
        ("bar baz, public", CacheControl(isPublic: true)),  // malformed extensions are dropped
        ("=60, public", CacheControl(isPublic: true)),
        ("ünïcode, max-age=5", CacheControl(maxAge: 5)),
        ("junk\"quoted, still junk\", max-age=7", CacheControl(maxAge: 7)),  // skip respects quotes
    ]

    /// Each field value parses to exactly the expected directives.
    @Test(arguments: cases)
    func parses(input: String, expected: CacheControl) {
        #expect(CacheControl(parsing: input) == expected)
    }

    /// Multiple field lines combine like a joined value, with the same duplicate rules.
    @Test func mergesFieldLines() {
        let lines = ["max-age=60, no-cache=\"Set-Cookie\"", "max-age=30", "no-cache=\"ETag\", public"]
        let expected = CacheControl(
            maxAge: 30, noCache: true, noCacheFields: ["set-cookie", "etag"], isPublic: true)
        #expect(CacheControl.parse(lines) == expected)
        #expect(CacheControl(parsing: lines.joined(separator: ", ")) == expected)
        #expect(CacheControl.parse([]) == CacheControl())
    }

    /// An unterminated quote on one line cannot swallow directives on the next.
    @Test func unterminatedQuoteStaysOnItsLine() {
        let parsed = CacheControl.parse(["foo=\"abc", "no-store"])
        #expect(parsed == CacheControl(noStore: true))
    }

    /// Substrings are accepted.
    @Test func parsesSubstring() {
        let header = "Cache-Control: max-age=9"
        #expect(CacheControl(parsing: header.dropFirst(15)) == CacheControl(maxAge: 9))
    }

    /// Large pathological inputs finish (single pass), e.g. endless escapes or thousands of directives. A
    /// quadratic parser would blow the time limit; no wall-clock time is asserted.
    @Test(.timeLimit(.minutes(1))) func linearOnPathologicalInput() {
        let inputs = [
            String(repeating: "a=\"\\\"", count: 100_000),
            String(repeating: "\"", count: 300_000),
            (0..<20_000).map { "x\($0)=\($0)" }.joined(separator: ","),
            String(repeating: "max-age=1,", count: 50_000),
        ]
        let parsed = inputs.map { CacheControl(parsing: $0) }
        #expect(parsed[2].extensions.count == 20_000)
        #expect(parsed[3] == CacheControl(maxAge: 1))
    }

    /// 10,000 seeded random strings of directive fragments and random scalars: no crash, deterministic result,
    /// and structural invariants hold.
    @Test func fuzz() {
        let fragments = [
            "max-age", "s-maxage", "max-stale", "min-fresh", "no-cache", "no-store", "private", "immutable",
            "stale-if-error", "=", "\"", "\\", ",", ", ", " ", "\t", "60", "-1", "99999999999999999999", "Set-Cookie",
            "x", ";", "\0", "é", "🙂", "\r\n",
        ]
        var rng = SplitMix64(seed: 0xC0FF_EE00_CAC4_E000)
        for _ in 0..<10_000 {
            var input = ""
            for _ in 0..<(rng.next() % 16) {
                if rng.next() % 5 == 0 {
                    input.unicodeScalars.append(Unicode.Scalar(UInt32(rng.next() % 0xD800)) ?? "?")
                } else {
                    input += fragments[Int(rng.next() % UInt64(fragments.count))]
                }
            }
            let first = CacheControl(parsing: input)
            #expect(first == CacheControl(parsing: input), "\(input.debugDescription)")
            #expect(first == CacheControl.parse([input]), "\(input.debugDescription)")
            for value in [first.maxAge, first.sMaxAge, first.minFresh, first.staleIfError].compactMap({ $0 }) {
                #expect((0...CacheControl.maximumDeltaSeconds).contains(value), "\(input.debugDescription)")
            }
            #expect(first.noCache || first.noCacheFields.isEmpty, "\(input.debugDescription)")
        }
    }
}
