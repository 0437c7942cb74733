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

    /// A response as the cache keeps it, and its fields gathered: `received` is the response the entry keeps (the one
    /// received, or rarely one of the fields kept); bit `i` of `removed` set means `received.headers.fields[i]` is not
    /// stored (see ``CachedResponse/Fields/removed``); `headerBytes` is `Σ (name.utf8.count + value.utf8.count)` over
    /// the fields stored. A tuple, so that a caller takes it apart without copying its parts.
    typealias Gathered = (received: TransportResponse, removed: UInt64, headerBytes: Int, fields: StoredFields)

    /// The fields of `response` that a cache stores (``CachedResponse/storedHeaders(_:credentials:)``), marked in one
    /// pass over them, and those fields gathered and counted in the same pass. A response whose fields left out are
    /// all hop-by-hop (`Connection: keep-alive`, which nearly every server sends) is kept as it is, with those fields
    /// marked: a list of the fields kept is built only when the stored response is read.
    ///
    /// As two passes (the fields to remove, then the fields to read), each field was visited three times, with its
    /// strings retained and released on each visit, about a fifth of storing a response.
    static func gathered(_ response: TransportResponse, credentials: CredentialPolicy) -> Gathered {
        let headers = response.headers
        let fields = headers.fields
        var gathered = StoredFields()
        var removed: UInt64 = 0
        var bytes = 0
        // A mark per field: a longer list (never seen from a real server) is filtered at once.
        guard fields.count <= UInt64.bitWidth else { return filtered(response, credentials: credentials) }
        for index in fields.indices {
            // The name is read once, and a field is looked up among those gathered first: none of them is ever left
            // out but as a credential, so for them only the policy is asked.
            let name = fields[index].canonicalName
            if let gatheredName = Name(name) {
                guard credentials.contains(canonicalName: name) else {
                    gathered.take(fields[index].value, as: gatheredName)
                    bytes += fields[index].name.utf8.count + fields[index].value.utf8.count
                    continue
                }
            } else if !CachedResponse.isRemoved(name, credentials) {
                bytes += fields[index].name.utf8.count + fields[index].value.utf8.count
                continue
            }
            // Only a hop-by-hop field is marked and left in the response kept: a cookie or a credential the server
            // handed to one caller is not held by the cache at all, so the response is filtered. So is one whose
            // `Connection` lists fields (other than `keep-alive`, which is never stored), since it removes them
            // wherever they are, before or after it: the fields are then filtered first and gathered after.
            if !CachedResponse.isHopByHop(name) || credentials.contains(canonicalName: name)
                || (fields[index].hasName("connection") && !CachedResponse.isKeepAlive(fields[index].value))
            {
                return filtered(response, credentials: credentials)
            }
            removed |= 1 << UInt64(index)
        }
        return (received: response, removed: removed, headerBytes: bytes, fields: gathered)
    }

    /// ``gathered(_:credentials:)`` for the unusual response: its stored fields filtered into a new response first.
    @inline(never)
    private static func filtered(_ response: TransportResponse, credentials: CredentialPolicy) -> Gathered {
        let headers = CachedResponse.storedHeaders(response.headers, credentials: credentials)
        let bytes = headers.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count }
        return (
            received: TransportResponse(statusCode: response.statusCode, headers: headers, body: response.body),
            removed: 0, headerBytes: bytes, fields: StoredFields(headers)
        )
    }

    /// Takes `field`'s value if it is one of the fields gathered.
    @inline(__always)
    private mutating func gather(_ field: HeaderFields.Field) {
        if let name = Name(field.canonicalName) { take(field.value, as: name) }
    }

    /// Takes `value`, the value of a field named `name`.
    @inline(__always)
    private mutating func take(_ value: String, as name: Name) {
        switch name {
        case .cacheControl: cacheControl.append(value)
        case .age: age.append(value)
        case .vary: vary.append(value)
        case .date: Self.add(value, to: &date)
        case .lastModified: Self.add(value, to: &lastModified)
        case .expires: Self.add(value, to: &expires)
        case .etag: Self.add(value, to: &etag)
        case .contentRange: Self.add(value, to: &contentRange)
        }
    }

    /// The fields gathered, named by their canonical (lower-case) name.
    private enum Name {
        case cacheControl, age, vary, date, lastModified, expires, etag, contentRange

        /// Matched by length first, then by name: a `switch` over the string literals alone compared each field's
        /// name with each literal in turn, about 45 comparisons for nginx's eight fields. (A tuple pattern checks its
        /// elements in order, so a name is compared only with the literals of its length.) Names of 13 bytes are
        /// told apart by their first byte first: `accept-ranges`, which nginx sends, failed three comparisons of about
        /// 80 instructions each. (A canonical name is lower case, as the literals are.)
        init?(_ name: String) {
            switch (name.utf8.count, name) {
            case (3, "age"): self = .age
            case (4, "date"): self = .date
            case (4, "etag"): self = .etag
            case (4, "vary"): self = .vary
            case (7, "expires"): self = .expires
            case (13, _): self.init(thirteenBytes: name)
            default: return nil
            }
        }

        private init?(thirteenBytes name: String) {
            switch name.utf8.first {
            case UInt8(ascii: "l") where name == "last-modified": self = .lastModified
            case UInt8(ascii: "c") where name == "cache-control": self = .cacheControl
            case UInt8(ascii: "c") where name == "content-range": self = .contentRange
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
