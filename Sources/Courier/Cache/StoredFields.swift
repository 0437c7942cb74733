/// The header fields a stored response is read by, gathered in one pass over its fields.
///
/// Reading each one by name scanned every field again, about ten times per stored response, retaining each field's
/// strings on every visit: it was the largest part of storing a response. The values are what ``HeaderFields``'s
/// subscript and ``HeaderFields/values(for:)`` give for the same names: several lines of one single-valued field are
/// joined by `", "`, list fields keep their lines.
struct StoredFields {
    var cacheControl: [String] = []
    var age: [String] = []
    var vary: [String] = []
    var date: String?
    var lastModified: String?
    var expires: String?
    var etag: String?
    var contentRange: String?

    init(_ headers: HeaderFields) {
        for index in headers.fields.indices { gather(headers.fields[index]) }
    }

    private init() {}

    /// The fields `headers` keeps when it is stored (``CachedResponse/storedHeaders(_:credentials:)``), and those
    /// fields gathered, in one pass over them: as two passes (the fields to remove, then the fields to read), each
    /// field was visited three times, with its strings retained and released on each visit, about a fifth of storing
    /// a response.
    static func stored(_ headers: HeaderFields, credentials: CredentialPolicy) -> (HeaderFields, StoredFields) {
        let fields = headers.fields
        var gathered = StoredFields()
        var kept: [HeaderFields.Field] = []
        var removesAny = false
        for index in fields.indices {
            guard CachedResponse.isRemoved(fields[index].canonicalName, credentials) else {
                if removesAny { kept.append(fields[index]) }
                gathered.gather(fields[index])
                continue
            }
            // A `Connection` that lists fields (other than `keep-alive`, which is never stored) removes them wherever
            // they are, before or after it: the fields are then filtered first and gathered after.
            if fields[index].hasName("connection"), !CachedResponse.isKeepAlive(fields[index].value) {
                let stored = CachedResponse.storedHeaders(headers, credentials: credentials)
                return (stored, StoredFields(stored))
            }
            if !removesAny {
                removesAny = true
                kept.reserveCapacity(fields.count - 1)
                kept.append(contentsOf: fields[..<index])
            }
        }
        return (removesAny ? HeaderFields(fields: kept) : headers, gathered)
    }

    /// Takes `field`'s value if it is one of the fields gathered.
    @inline(__always)
    private mutating func gather(_ field: HeaderFields.Field) {
        switch Name(field.canonicalName) {
        case .cacheControl: cacheControl.append(field.value)
        case .age: age.append(field.value)
        case .vary: vary.append(field.value)
        case .date: Self.add(field.value, to: &date)
        case .lastModified: Self.add(field.value, to: &lastModified)
        case .expires: Self.add(field.value, to: &expires)
        case .etag: Self.add(field.value, to: &etag)
        case .contentRange: Self.add(field.value, to: &contentRange)
        case nil: break
        }
    }

    /// The fields gathered, named by their canonical (lower-case) name.
    private enum Name {
        case cacheControl, age, vary, date, lastModified, expires, etag, contentRange

        /// Matched by length first, then by name: a `switch` over the string literals alone compared each field's
        /// name with each literal in turn, about 45 comparisons for nginx's eight fields. (A tuple pattern checks its
        /// elements in order, so a name is compared only with the literals of its length.)
        init?(_ name: String) {
            switch (name.utf8.count, name) {
            case (3, "age"): self = .age
            case (4, "date"): self = .date
            case (4, "etag"): self = .etag
            case (4, "vary"): self = .vary
            case (7, "expires"): self = .expires
            case (13, "cache-control"): self = .cacheControl
            case (13, "last-modified"): self = .lastModified
            case (13, "content-range"): self = .contentRange
            default: return nil
            }
        }
    }

    /// The members of the `Vary` lines, trimmed and lower-cased, as ``CachedResponse/listValues(_:_:)`` gives them.
    var varyNames: [String] {
        vary.isEmpty ? [] : CachedResponse.listMembers(vary)
    }

    private static func add(_ value: String, to field: inout String?) {
        field = field.map { $0 + ", " + value } ?? value
    }
}
