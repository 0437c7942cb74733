import Foundation

/// One byte range a request asks for (`Range: bytes=…`, RFC 9110 §14.1.2), before it meets a representation.
///
/// Only a single range of unit `bytes` is understood: a cache answers nothing else from storage (a multi-range
/// answer would need `multipart/byteranges`), and such requests go to the server as they are.
enum ByteRangeSpec: Equatable, Sendable {
    /// `first-last` or `first-` (`last` is `nil`).
    case from(Int, through: Int?)
    /// `-length`: the last `length` bytes.
    case suffix(Int)

    /// Parses a `Range` field value; `nil` for anything but one well-formed byte range.
    init?(_ value: String) {
        let text = value.trimmingCharacters(in: .whitespaces)
        guard text.lowercased().hasPrefix("bytes="), !text.contains(",") else { return nil }
        let spec = text.dropFirst("bytes=".count).trimmingCharacters(in: .whitespaces)
        let parts = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        let first = ByteRangeSpec.number(parts[0])
        let last = ByteRangeSpec.number(parts[1])
        switch (parts[0].isEmpty, parts[1].isEmpty) {
        case (true, false):
            guard let last, last > 0 else { return nil }
            self = .suffix(last)
        case (false, true):
            guard let first else { return nil }
            self = .from(first, through: nil)
        case (false, false):
            guard let first, let last, first <= last else { return nil }
            self = .from(first, through: last)
        case (true, true):
            return nil
        }
    }

    /// The bytes this spec selects from a representation of `length` bytes (§14.1.2): `nil` when none (the
    /// range is unsatisfiable, and only the server may say so with a `416`).
    func resolved(length: Int) -> Range<Int>? {
        switch self {
        case .suffix(let count):
            return length > 0 ? max(0, length - count)..<length : nil
        case .from(let first, let last):
            guard first < length else { return nil }
            return first..<(min(last ?? (length - 1), length - 1) + 1)
        }
    }

    /// Digits only, saturating well below overflow; `nil` for anything else.
    private static func number(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
            return nil
        }
        var value = 0
        for byte in text.utf8 { value = min(value * 10 + Int(byte - UInt8(ascii: "0")), Int(Int32.max)) }
        return value
    }
}

/// The part of a representation a `206` carries (`Content-Range: bytes first-last/length`, RFC 9110 §14.4).
struct ContentRange: Equatable, Sendable {
    /// The byte positions carried.
    var bytes: Range<Int>
    /// The length of the whole representation.
    var length: Int

    /// Parses a `Content-Range` value; `nil` unless it names a range within a known complete length.
    init?(_ value: String) {
        let text = value.trimmingCharacters(in: .whitespaces)
        guard text.lowercased().hasPrefix("bytes ") else { return nil }
        let rest = text.dropFirst("bytes ".count)
        let halves = rest.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard halves.count == 2 else { return nil }
        let ends = halves[0].split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard ends.count == 2, let first = ByteRangeSpec(String("bytes=\(ends[0])-\(ends[1])")),
            case .from(let start, let last?) = first, let length = Int(halves[1]), last < length
        else { return nil }
        self.bytes = start..<(last + 1)
        self.length = length
    }

    init(bytes: Range<Int>, length: Int) {
        self.bytes = bytes
        self.length = length
    }

    /// The field value.
    var fieldValue: String { "bytes \(bytes.lowerBound)-\(bytes.upperBound - 1)/\(length)" }

    /// Whether the whole representation is here.
    var isComplete: Bool { bytes == 0..<length }
}
