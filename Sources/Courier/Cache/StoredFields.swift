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
            // The name is read and told apart once: what the cache does with the field follows from one match (a
            // field read, one never stored, a hop-by-hop field, any other), then the credential policy is asked.
            let name = fields[index].canonicalName
            switch Role(name) {
            case .read(let gatheredName):
                // A field read is never left out but as a credential.
                guard credentials.contains(canonicalName: name) else {
                    gathered.take(fields[index].value, as: gatheredName)
                    bytes += fields[index].name.utf8.count + fields[index].value.utf8.count
                    continue
                }
                return filtered(response, credentials: credentials)
            case .other:
                guard credentials.contains(canonicalName: name) else {
                    bytes += fields[index].name.utf8.count + fields[index].value.utf8.count
                    continue
                }
                return filtered(response, credentials: credentials)
            case .perRecipient:
                return filtered(response, credentials: credentials)
            case .hopByHop:
                // Only a hop-by-hop field is marked and left in the response kept: a cookie or a credential the server
                // handed to one caller is not held by the cache at all, so the response is filtered. So is one whose
                // `Connection` lists fields (other than `keep-alive`, which is never stored), since it removes them
                // wherever they are, before or after it: the fields are then filtered first and gathered after.
                if credentials.contains(canonicalName: name)
                    || (fields[index].hasName("connection") && !CachedResponse.isKeepAlive(fields[index].value))
                {
                    return filtered(response, credentials: credentials)
                }
                removed |= 1 << UInt64(index)
            }
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
        if case .read(let name) = Role(field.canonicalName) { take(field.value, as: name) }
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

    /// The fields gathered.
    enum Name: Equatable {
        case cacheControl, age, vary, date, lastModified, expires, etag, contentRange
    }

    /// What a cache does with a response field, told from its canonical (lower-case) name: one match answers what
    /// ``StoredFields/Name``, ``CachedResponse/isNeverStored(_:)`` and ``CachedResponse/isHopByHop(_:)`` asked in
    /// turn, each matching the name again (about 110 instructions a field of the eight nginx sends).
    enum Role: Equatable {
        /// A field the cache reads (``StoredFields``).
        case read(Name)
        /// A hop-by-hop field (RFC 9110 §7.6.1, RFC 9111 §3.1): neither stored nor forwarded.
        case hopByHop
        /// A field that hands a credential to the one caller who received it, or concerns a proxy: never stored
        /// (see ``CachedResponse/isNeverStored(_:)``).
        case perRecipient
        /// Any other field: stored as it is.
        case other

        /// Matched by length first, then against the one to three names of that length: most fields have a length no
        /// listed name has. (A `switch` over the string literals alone compared the name with each literal in turn.)
        /// Names of 13 bytes are told apart by their first byte first: `accept-ranges`, which nginx sends, failed
        /// three comparisons of about 80 instructions each.
        @inline(__always)
        init(_ name: String) {
            switch name.utf8.count {
            case 2: self = name == "te" ? .hopByHop : .other
            case 3: self = name == "age" ? .read(.age) : .other
            case 4:
                if name == "date" {
                    self = .read(.date)
                } else if name == "etag" {
                    self = .read(.etag)
                } else {
                    self = name == "vary" ? .read(.vary) : .other
                }
            case 7:
                if name == "expires" {
                    self = .read(.expires)
                } else {
                    self = name == "upgrade" || name == "trailer" ? .hopByHop : .other
                }
            case 10:
                if name == "connection" || name == "keep-alive" {
                    self = .hopByHop
                } else {
                    self = name == "set-cookie" ? .perRecipient : .other
                }
            case 11: self = name == "set-cookie2" ? .perRecipient : .other
            case 13: self = Self(thirteenBytes: name)
            case 16: self = name == "proxy-connection" ? .hopByHop : .other
            case 17: self = name == "transfer-encoding" ? .hopByHop : .other
            case 18: self = name == "proxy-authenticate" ? .perRecipient : .other
            case 19: self = name == "proxy-authorization" ? .perRecipient : .other
            case 25: self = name == "proxy-authentication-info" ? .perRecipient : .other
            default: self = .other
            }
        }

        private init(thirteenBytes name: String) {
            switch name.utf8.first {
            case UInt8(ascii: "l") where name == "last-modified": self = .read(.lastModified)
            case UInt8(ascii: "c") where name == "cache-control": self = .read(.cacheControl)
            case UInt8(ascii: "c") where name == "content-range": self = .read(.contentRange)
            default: self = .other
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
