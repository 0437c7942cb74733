import Foundation

/// Which of a response's fields a cache stores, forwards and replaces, and how list-valued fields are read.
extension CachedResponse {
    // The field lists below match canonical (lower-case) names by their length first, then against the one or two
    // names of that length: every stored response asks about each of its fields, and most fields have a length no
    // listed name has. (A `switch` over the string literals compared the name with each literal in turn, about 300
    // instructions a field; a `static let` set hashes the name and is read through `swift_once`, see `ByteSet`.)

    /// Whether a cache does not store or forward this field: it is hop-by-hop (RFC 9110 §7.6.1, RFC 9111 §3.1).
    /// `name` is canonical (lower case); see ``StoredFields/Role``, which lists the names.
    static func isHopByHop(_ name: String) -> Bool {
        StoredFields.Role(name) == .hopByHop
    }

    /// Whether this field is removed before a response is stored: hop-by-hop; a field that hands a credential to
    /// the one caller who received it (RFC 6265 §3: a cookie is set for that user agent's session), so a stored
    /// response never replays it to another caller; or a field between a client and a proxy (RFC 9111 §3.1), which
    /// concerns the connection through a proxy, not the resource. `name` is canonical (lower case).
    static func isNeverStored(_ name: String) -> Bool {
        switch StoredFields.Role(name) {
        case .hopByHop, .perRecipient: true
        case .read, .other: false
        }
    }

    /// Whether `other` holds the same stored response as this entry, received at the same time: the same entry,
    /// read back from the disk tier. Compares bodies: for the unusual path of a `304` that finds its entry on disk.
    func isSameStoredResponse(as other: CachedResponse) -> Bool {
        responseTime == other.responseTime && requestTime == other.requestTime && response == other.response
    }

    /// Whether a `304` never replaces this stored field (§3.2): framing and content coding describe the stored body.
    static func isKeptOnUpdate(_ name: String) -> Bool {
        let describesTheBody =
            switch name.utf8.count {
            case 13: name == "content-range"
            case 14: name == "content-length"
            case 16: name == "content-encoding"
            default: false
            }
        return describesTheBody || isHopByHop(name)
    }

    /// `stored` updated with `newer` (§3.2): each field `newer` has replaces the stored ones of that name, except
    /// framing fields; the stored `Age` goes (see ``updated(with:request:requestTime:responseTime:)``).
    static func updatedFields(_ stored: HeaderFields, with newer: HeaderFields) -> HeaderFields {
        var headers = stored
        let replaced = Set(newer.lazy.map(\.canonicalName).filter { !isKeptOnUpdate($0) })
        for name in replaced.union(["age"]) where headers.contains(name) { headers.remove(name: name) }
        for field in newer where replaced.contains(field.canonicalName) {
            headers.add(name: field.name, value: field.value)
        }
        return headers
    }

    /// The comma-separated elements of every `name` field, trimmed and lowercased, empty ones dropped.
    static func listValues(_ headers: HeaderFields, _ name: String) -> [String] {
        listMembers(headers.values(for: name))
    }

    /// The members of list-valued field lines, trimmed and lower-cased, empty members dropped.
    static func listMembers(_ lines: [String]) -> [String] {
        var members: [String] = []
        for line in lines { appendListMembers(of: line, to: &members) }
        return members
    }

    /// Appends the members of one list-valued line, read over its bytes: splitting it into substrings, trimming and
    /// lower-casing each cost about 6,000 instructions for `Connection: keep-alive`, which nearly every response has.
    /// A line with a byte outside ASCII is lower-cased as Unicode text, as before.
    fileprivate static func appendListMembers(of line: String, to members: inout [String]) {
        var line = line
        let isASCII = line.withUTF8 { bytes in
            guard bytes.allSatisfy({ $0 < 0x80 }) else { return false }
            var start = 0
            for end in 0...bytes.count where end == bytes.count || bytes[end] == UInt8(ascii: ",") {
                var lower = start
                var upper = end
                while lower < upper, bytes[lower] == 0x20 || bytes[lower] == 0x09 { lower += 1 }
                while upper > lower, bytes[upper - 1] == 0x20 || bytes[upper - 1] == 0x09 { upper -= 1 }
                if lower < upper { members.append(lowercased(UnsafeBufferPointer(rebasing: bytes[lower..<upper]))) }
                start = end + 1
            }
            return true
        }
        guard !isASCII else { return }
        for member in line.split(separator: ",") {
            let trimmed = member.trimmingOptionalWhitespace
            if !trimmed.isEmpty { members.append(trimmed.lowercased()) }
        }
    }

    /// Whether every `Connection` field of `headers` is `keep-alive` (in any case, with optional whitespace around).
    fileprivate static func namesOnlyKeepAlive(_ headers: HeaderFields) -> Bool {
        for index in headers.fields.indices where headers.fields[index].hasName("connection") {
            guard isKeepAlive(headers.fields[index].value) else { return false }
        }
        return true
    }

    /// Whether a `Connection` line names `keep-alive` alone, which lists no field to remove.
    static func isKeepAlive(_ connection: String) -> Bool {
        // As servers write it: two small strings compared as two words, where trimming and comparing the bytes cost
        // about 480 instructions.
        if connection == "keep-alive" { return true }
        let keepAlive = "keep-alive".utf8
        // Of the same length, containing it is being it.
        let value = connection.trimmingOptionalWhitespace.utf8
        return value.count == keepAlive.count && value.containsIgnoringASCIICase(keepAlive)
    }

    /// ASCII `bytes` as a lower-case string, copied as they are when they are lower case already (the usual case).
    fileprivate static func lowercased(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        guard bytes.contains(where: { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }) else {
            return String(decoding: bytes, as: UTF8.self)
        }
        return String(unsafeUninitializedCapacity: bytes.count) { buffer in
            for index in bytes.indices { buffer[index] = ASCII.lowercased(bytes[index]) }
            return bytes.count
        }
    }

    /// `headers` without the fields a cache never stores: hop-by-hop and per-recipient fields, those the
    /// `Connection` field names, and every field `credentials` names (a token a server hands out in `X-Auth-Token`
    /// belongs to the caller who received it, as a cookie does, and must not reach the disk). Most responses carry
    /// none of them beyond `Connection` itself, and are copied only when there is something to remove.
    static func storedHeaders(_ headers: HeaderFields, credentials: CredentialPolicy = .standard) -> HeaderFields {
        let fields = headers.fields
        // `Connection` is itself never stored, so a response without any such field names nothing to remove either:
        // one check per field settles the common case. The policy's filter rules out nearly every field a response
        // carries without hashing its name.
        guard let first = fields.firstIndex(where: { isRemoved($0.canonicalName, credentials) }) else { return headers }
        // `Connection: keep-alive`, which nearly every HTTP/1.1 server sends, names only a field that is never stored
        // anyway: nothing to list then.
        let listed = namesOnlyKeepAlive(headers) ? [] : listValues(headers, "connection")
        // The fields kept are kept as they are: rebuilding them from name and value lower-cased every name again.
        // Those before the first removed one were checked already (but not against what `Connection` lists).
        var kept: [HeaderFields.Field] = []
        kept.reserveCapacity(fields.count - 1)
        for field in fields[..<first] where listed.isEmpty || !listed.contains(field.canonicalName) {
            kept.append(field)
        }
        for field in fields[(first + 1)...]
        where !isRemoved(field.canonicalName, credentials) && !listed.contains(field.canonicalName) {
            kept.append(field)
        }
        return HeaderFields(fields: kept)
    }

    /// Whether ``storedHeaders(_:credentials:)`` leaves the field named `name` out.
    @inline(__always)
    static func isRemoved(_ name: String, _ credentials: CredentialPolicy) -> Bool {
        isNeverStored(name) || credentials.contains(canonicalName: name)
    }

    /// A request header's value for `Vary` matching (§4.1), normalised as far as RFC 9110 allows so that
    /// equivalent requests select one variant: lines combined, list members trimmed of the whitespace around them
    /// (§5.6.1) and joined by `,`; tokens lowercased in fields whose values are case-insensitive (`Accept*`), and
    /// members sorted in `Accept-Encoding` and `Accept-Language`, whose order carries no meaning (preference is in
    /// their `q` weights). Commas inside quoted strings do not split.
    static func normalizedValue(of name: String, in headers: HeaderFields) -> String? {
        guard let value = headers[name] else { return nil }
        let field = name.lowercased()
        var members = listMembers(value)
        if caseInsensitiveFields.contains(field) { members = members.map { $0.lowercased() } }
        if unorderedFields.contains(field) { members.sort() }
        return members.joined(separator: ",")
    }

    /// Request fields whose list members are case-insensitive tokens (RFC 9110 §12.5).
    static let caseInsensitiveFields: Set<String> = ["accept", "accept-charset", "accept-encoding", "accept-language"]
    /// Request fields whose member order means nothing (RFC 9110 §12.5.3, §12.5.4).
    static let unorderedFields: Set<String> = ["accept-encoding", "accept-language"]

    /// The members of a comma-separated list, trimmed of spaces and tabs, empty ones dropped; commas within
    /// quoted strings (with their escapes) belong to the member.
    static func listMembers(_ value: String) -> [String] {
        var members: [String] = []
        var current: [UInt8] = []
        var inQuotes = false
        var escaped = false
        func finish() {
            let trimmed = current.drop { $0 == 0x20 || $0 == 0x09 }.reversed().drop { $0 == 0x20 || $0 == 0x09 }
            if !trimmed.isEmpty { members.append(String(decoding: trimmed.reversed(), as: UTF8.self)) }
            current.removeAll(keepingCapacity: true)
        }
        for byte in value.utf8 {
            if escaped {
                escaped = false
            } else if inQuotes, byte == UInt8(ascii: "\\") {
                escaped = true
            } else if byte == UInt8(ascii: "\"") {
                inQuotes.toggle()
            } else if byte == UInt8(ascii: ","), !inQuotes {
                finish()
                continue
            }
            current.append(byte)
        }
        finish()
        return members
    }
}
