import Foundation

/// Who a file in the disk tier belongs to: read first, and kept in memory for every file, so that lookups,
/// removals and `Vary` matching need no file reads.
struct DiskRecord: Sendable, Equatable {
    /// The normalized URL (see ``RequestKey``).
    var url: String
    /// The SHA-256 of the partition (see ``CachePartition/digest``): identities never reach the disk.
    var partition: String
    /// The `Vary` names and the request's normalized values for them, as ``CachedResponse`` keeps them.
    var varyNames: [String]
    var varyValues: [String?]

    /// Whether a request with `headers` selects this file's response (RFC 9111 §4.1).
    func matches(_ headers: HeaderFields) -> Bool {
        zip(varyNames, varyValues).allSatisfy { CachedResponse.normalizedValue(of: $0, in: headers) == $1 }
    }

    /// The file name: the digest of everything that tells one stored variant from another, so that storing a
    /// variant again replaces its file.
    var fileName: String {
        var key = Array("\(url)\u{0}\(partition)".utf8)
        for (name, value) in zip(varyNames, varyValues) {
            key += Array("\u{0}\(name)\u{1}\(value.map { "=" + $0 } ?? "")".utf8)
        }
        return SHA256.hex(key) + DiskEntryCodec.fileExtension
    }
}

/// The layout of one file of the disk tier, versioned and checksummed:
///
/// ```
/// "CRCA" | version (1) | CRC-32 of the rest (4) | record length (4) | record | entry
/// record: URL, partition digest, count (4), then per Vary name: name, present (1), value
/// entry:  request time, response time (8 each, Float64 bits), default freshness present (1) + value (8),
///         status (4), header count (4) + name/value pairs, body length (8) + body
/// strings: length (4) + UTF-8; integers big-endian
/// ```
///
/// Decoding checks every length against what is left, so a torn or corrupted file is rejected, never trusted.
enum DiskEntryCodec {
    static let fileExtension = ".entry"
    private static let magic = Array("CRCA".utf8)
    private static let version: UInt8 = 1
    /// Bytes before the record: magic, version, checksum, record length.
    static let prefixLength = 4 + 1 + 4 + 4
    /// The largest record read when indexing a directory (a URL is far shorter in practice).
    static let maxRecordLength = 1 << 20

    /// The file's bytes for `entry`.
    static func encode(_ entry: CachedResponse, record: DiskRecord) -> Data {
        var recordBytes = Writer()
        recordBytes.string(record.url)
        recordBytes.string(record.partition)
        recordBytes.integer(UInt32(record.varyNames.count))
        for (name, value) in zip(record.varyNames, record.varyValues) {
            recordBytes.string(name)
            recordBytes.bytes.append(value == nil ? 0 : 1)
            recordBytes.string(value ?? "")
        }
        var rest = Writer()
        rest.integer(UInt32(recordBytes.bytes.count))
        rest.bytes += recordBytes.bytes
        rest.integer(entry.requestTime.timeIntervalSince1970.bitPattern)
        rest.integer(entry.responseTime.timeIntervalSince1970.bitPattern)
        rest.bytes.append(entry.defaultFreshness == nil ? 0 : 1)
        rest.integer((entry.defaultFreshness ?? 0).bitPattern)
        rest.integer(UInt32(truncatingIfNeeded: entry.response.statusCode))
        rest.integer(UInt32(entry.response.headers.fields.count))
        for field in entry.response.headers.fields {
            rest.string(field.name)
            rest.string(field.value)
        }
        rest.integer(UInt64(entry.response.body.count))
        var file = Data(magic)
        file.append(version)
        let head = rest.bytes.withUnsafeBytes { CRC32.checksum($0) }
        let checksum = entry.response.body.withUnsafeBytes { CRC32.checksum($0, continuing: head) }
        file.append(contentsOf: Writer.bigEndian(checksum))
        file.append(contentsOf: rest.bytes)
        file.append(entry.response.body)
        return file
    }

    /// The record length a file's first ``prefixLength`` bytes announce, or `nil` when they are not this format.
    static func recordLength(prefix: Data) -> Int? {
        guard prefix.count >= prefixLength, prefix.prefix(4).elementsEqual(magic),
            prefix[prefix.startIndex + 4] == version
        else { return nil }
        var reader = Reader(prefix.dropFirst(9))
        guard let length = reader.integer(UInt32.self).map(Int.init), length <= maxRecordLength else { return nil }
        return length
    }

    /// The record of a file whose first bytes are `head` (at least the prefix and the record), unverified: the
    /// checksum is checked when the whole file is read.
    static func record(head: Data) -> DiskRecord? {
        guard let length = recordLength(prefix: head), head.count >= prefixLength + length else { return nil }
        var reader = Reader(head.dropFirst(prefixLength).prefix(length))
        return reader.record()
    }

    /// The record and the entry in a whole file, or `nil` when it is torn, corrupted or of another version.
    static func decode(_ file: Data) -> (DiskRecord, CachedResponse)? {
        guard let length = recordLength(prefix: file.prefix(prefixLength)) else { return nil }
        var reader = Reader(file.dropFirst(prefixLength))
        guard let recordBytes = reader.take(length) else { return nil }
        var recordReader = Reader(recordBytes)
        guard let record = recordReader.record(), recordReader.isAtEnd,
            let requestTime = reader.integer(UInt64.self).map({ Date(timeIntervalSince1970: Double(bitPattern: $0)) }),
            let responseTime = reader.integer(UInt64.self).map({ Date(timeIntervalSince1970: Double(bitPattern: $0)) }),
            let hasDefault = reader.take(1)?.first, let defaultBits = reader.integer(UInt64.self),
            let status = reader.integer(UInt32.self), let headerCount = reader.integer(UInt32.self)
        else { return nil }
        var headers = HeaderFields()
        for _ in 0..<headerCount {
            guard let name = reader.string(), let value = reader.string() else { return nil }
            headers.add(name: name, value: value)
        }
        guard let bodyLength = reader.integer(UInt64.self), let body = reader.take(Int(clamping: bodyLength)),
            reader.isAtEnd
        else { return nil }
        let restStart = file.startIndex + 9
        let bodyStart = file.endIndex - body.count
        let head = file[restStart..<bodyStart].withUnsafeBytes { CRC32.checksum($0) }
        let checksum = body.withUnsafeBytes { CRC32.checksum($0, continuing: head) }
        guard file[(file.startIndex + 5)..<restStart].elementsEqual(Writer.bigEndian(checksum)) else { return nil }
        var request = TransportRequest(url: URL(string: record.url) ?? URL(fileURLWithPath: "/"))
        for (name, value) in zip(record.varyNames, record.varyValues) {
            if let value { request.headers.add(name: name, value: value) }
        }
        let entry = CachedResponse(
            response: TransportResponse(statusCode: Int(status), headers: headers, body: Data(body)), request: request,
            requestTime: requestTime, responseTime: responseTime,
            defaultFreshness: hasDefault == 1 ? Double(bitPattern: defaultBits) : nil)
        return (record, entry)
    }

    private struct Writer {
        var bytes: [UInt8] = []

        static func bigEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
            (0..<(T.bitWidth / 8)).reversed().map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) }
        }

        mutating func integer<T: FixedWidthInteger>(_ value: T) { bytes += Self.bigEndian(value) }

        mutating func string(_ value: String) {
            integer(UInt32(value.utf8.count))
            bytes += value.utf8
        }
    }

    private struct Reader {
        var data: Data.SubSequence

        init(_ data: Data.SubSequence) { self.data = data }

        var isAtEnd: Bool { data.isEmpty }

        mutating func take(_ count: Int) -> Data.SubSequence? {
            guard count >= 0, data.count >= count else { return nil }
            defer { data = data.dropFirst(count) }
            return data.prefix(count)
        }

        mutating func integer<T: FixedWidthInteger>(_: T.Type) -> T? {
            take(T.bitWidth / 8).map { $0.reduce(T.zero) { $0 << 8 | T($1) } }
        }

        mutating func string() -> String? {
            guard let length = integer(UInt32.self), let bytes = take(Int(length)) else { return nil }
            return String(decoding: bytes, as: UTF8.self)
        }

        mutating func record() -> DiskRecord? {
            guard let url = string(), let partition = string(), let count = integer(UInt32.self),
                count <= CachedResponse.maxVaryNames
            else { return nil }
            var names: [String] = []
            var values: [String?] = []
            for _ in 0..<count {
                guard let name = string(), let present = take(1)?.first, let value = string() else { return nil }
                names.append(name)
                values.append(present == 1 ? value : nil)
            }
            return DiskRecord(url: url, partition: partition, varyNames: names, varyValues: values)
        }
    }
}
