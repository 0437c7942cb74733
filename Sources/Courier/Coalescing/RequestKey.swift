import Foundation

/// What makes two requests "the same" for coalescing: they would get the same response.
///
/// A key is made of the method, the normalized URL (scheme and host lower-cased, default port dropped,
/// fragment removed), every header field the request carries (names compared ignoring case, in any order between
/// names, the values of one name in their order, RFC 9110 §5.3) except the ones declared irrelevant, the body bytes
/// when there is a body, and the request's credentials: the values of every header its
/// ``TransportRequest/credentials`` policy names. A header that can change the response therefore splits flights
/// whoever set it: `X-Tenant: acme` and `X-Tenant: globex`, or two `POST`s of the same bytes with different
/// `Content-Type`s, never share. Two users never share a response either: requests with different
/// `Authorization`, `Cookie` or `X-API-Key` values get different keys, and so do URLs with different secret query
/// values or user information. A credential field is never ignored, whatever the ignored names say.
///
/// The key's ``description`` and mirror never show a credential value.
public struct RequestKey: Hashable, Sendable, CustomStringConvertible, CustomReflectable {
    /// The header names whose values always take part in the key.
    public static let representationHeaders = ["accept", "accept-encoding", "accept-language", "range"]
    /// Conditional header names: a conditional request gets a different answer (such as `304`), so it never
    /// shares a flight with an unconditional one.
    static let conditionalHeaders = [
        "if-none-match", "if-modified-since", "if-match", "if-unmodified-since", "if-range",
    ]
    /// Representation and conditional headers together, built once rather than on every request.
    static let standardVaryingHeaders = representationHeaders + conditionalHeaders

    /// Header names that tracing and request-id schemes set per call or per attempt, which never change the
    /// response: the default of ``APIClient/Configuration/coalescingIgnoredHeaders``. W3C Trace Context
    /// (`traceparent`, `tracestate`) and Baggage, B3 (`b3`, `x-b3-*`), `x-amzn-trace-id`, and the request-id fields
    /// (`x-request-id`, `request-id`, `x-correlation-id`). A ``CallObserver`` adds its fields after the key is made,
    /// so they never enter it; these names cover the same fields when a request or an adapter sets them itself.
    public static let perCallHeaders: Set<String> = [
        "traceparent", "tracestate", "baggage", "b3", "x-b3-traceid", "x-b3-spanid", "x-b3-parentspanid",
        "x-b3-sampled", "x-b3-flags", "x-amzn-trace-id", "x-request-id", "request-id", "x-correlation-id",
    ]

    /// The request method.
    public var method: RequestMethod { parts?.method ?? bareRequest.method }
    /// The normalized URL, credentials included (use ``description`` to print it).
    public var url: String { urlText.text }
    /// `name: value` for each header field in the key other than a credential, names lower-cased, sorted by name
    /// (the values of one name keep their order).
    public var varyingHeaders: [String] { parts?.varyingHeaders ?? [] }
    /// The request body, when there is one.
    public var body: Data? { parts?.body }
    /// An identity that partitions keys, such as a user id; `nil` when the request is anonymous.
    public var partition: String? { parts?.partition }
    /// The credential header values, compared but never printed.
    private var credentials: [String] { parts?.credentials ?? [] }
    /// What ``description`` redacts; not part of the key's identity.
    private var policy: CredentialPolicy { parts?.policy ?? bareRequest.credentials }
    /// The normalized URL with its hash.
    private var urlText: URLText { parts?.url ?? bareRequest.urlText }

    /// The key's parts behind one reference: a ``Parts``, or the storage of a request keyed by itself
    /// (``TransportRequest/keyReference``).
    ///
    /// One reference and nothing beside it: a key sits in the frames and closures of every caller that waits on a
    /// flight, and a joiner's fit in one slab of task memory with a few bytes to spare (a stored hash beside the
    /// reference made the key 16 bytes, and a joiner took a second slab: a malloc per joiner). And one reference of
    /// either class rather than an enum of two: a `RequestKey?` of a two-case enum was copied through the runtime's
    /// generic `Optional` witnesses (about 120 instructions per copy, two copies in every call's route), where a copy
    /// of a reference is a retain.
    ///
    /// A request keyed by itself has no header field, no body and no partition (a plain `GET` of a client without
    /// default headers): everything the key compares is in the request, so making its key allocates nothing. Taken
    /// only when the request knows its normalized URL, which is then never computed again.
    private let storage: any AnyObject & Sendable

    /// The parts, unless the key is a request's own.
    @inline(__always) private var parts: Parts? { storage as? Parts }

    /// The request a key without ``parts`` was made from.
    private var bareRequest: TransportRequest { TransportRequest(keyReference: storage) }

    /// The hash of what `==` compares: kept by the parts, computed for a bare key from its method and the hash its URL
    /// text already carries.
    private var hash: Int {
        if let parts { return parts.hash }
        return TransportRequest.methodAndURLHash(ofKeyReference: storage)
    }

    private final class Parts: Sendable {
        let method: RequestMethod
        /// The normalized URL with the hash computed when the client built it: hashing the URL's text again was
        /// about 400 instructions of every key made for a new URL.
        let url: URLText
        let varyingHeaders: [String]
        let body: Data?
        let partition: String?
        let credentials: [String]
        let policy: CredentialPolicy
        /// The hash of what `==` compares, computed once: a flight's key is hashed on every join and finish, and
        /// hashing the URL, header and credential strings each time was a tenth of a coalesced call.
        let hash: Int

        init(
            method: RequestMethod, url: URLText, varyingHeaders: [String], body: Data?, partition: String?,
            credentials: [String], policy: CredentialPolicy
        ) {
            self.method = method
            self.url = url
            self.varyingHeaders = varyingHeaders
            self.body = body
            self.partition = partition
            self.credentials = credentials
            self.policy = policy
            hash = RequestKey.hash(
                method: method, url: url, varyingHeaders: varyingHeaders, body: body, partition: partition,
                credentials: credentials)
        }
    }

    /// The hash of a key's parts, the same for a key of parts and a request keyed by itself.
    fileprivate static func hash(
        method: RequestMethod, url: URLText, varyingHeaders: [String], body: Data?, partition: String?,
        credentials: [String]
    ) -> Int {
        // Most keys are a method and a URL only: mixed from the hash the URL text carries and the method's length,
        // with no pass of the hasher, because a bare key computes it each time it is hashed. Equal keys have equal
        // methods, so the length is enough to keep the rule that equal keys hash alike.
        if varyingHeaders.isEmpty, body == nil, partition == nil, credentials.isEmpty {
            // (``TransportRequest/methodAndURLHash`` computes the same for a bare key.)
            return url.precomputedHash ^ (method.rawValue.utf8.count &* 0x1E37_79B9_7F4A_7C15)
        }
        var hasher = Hasher()
        hasher.combine(method)
        hasher.combine(url)
        hasher.combine(varyingHeaders)
        hasher.combine(body)
        hasher.combine(partition)
        hasher.combine(credentials)
        return hasher.finalize()
    }

    /// Makes the key of a request.
    ///
    /// - Parameters:
    ///   - request: The request as it will be sent (after adapters, before authorization).
    ///   - extraHeaders: Header names whose values distinguish requests even when `ignoredHeaders` names them.
    ///   - ignoredHeaders: Lower-cased header names whose values never change the response (see
    ///     ``perCallHeaders``); a credential field is kept whatever this says.
    ///   - partition: An identity that partitions keys, such as the credential's identity.
    public init(
        _ request: TransportRequest, varyingOn extraHeaders: [String] = [],
        ignoring ignoredHeaders: Set<String> = RequestKey.perCallHeaders, partition: String? = nil
    ) {
        if request.headers.isEmpty, request.body == nil, partition == nil, request.knownURLText != nil {
            storage = request.keyReference
            return
        }
        var varyingHeaders: [String] = []
        var credentials: [String] = []
        // Most requests to an API carry no header of their own before authorization: nothing to look at then.
        if !request.headers.isEmpty {
            let policy = request.credentials
            var lines: [(name: String, line: String)] = []
            lines.reserveCapacity(request.headers.fields.count)
            for field in request.headers.fields {
                let name = field.canonicalName
                if policy.headerNames.contains(name) {
                    credentials.append(name + ": " + field.value)
                } else if !ignoredHeaders.contains(name) || Self.names(extraHeaders, contain: name) {
                    lines.append((name, name + ": " + field.value))
                }
            }
            varyingHeaders = Self.sortedByName(lines)
        }
        storage = Parts(
            method: request.method, url: request.urlText, varyingHeaders: varyingHeaders, body: request.body,
            partition: partition, credentials: credentials, policy: request.credentials)
    }

    /// Whether `names`, in any case, contain the lower-cased `name`.
    private static func names(_ names: [String], contain name: String) -> Bool {
        names.contains { $0.count == name.count && $0.lowercased() == name }
    }

    /// The lines ordered by name, the lines of one name in the order they came: the order between different names
    /// never changes the meaning of a request, the order of one name's values may (RFC 9110 §5.3).
    private static func sortedByName(_ lines: [(name: String, line: String)]) -> [String] {
        guard lines.count > 1 else { return lines.map(\.line) }
        return lines.enumerated()
            .sorted { $0.element.name != $1.element.name ? $0.element.name < $1.element.name : $0.offset < $1.offset }
            .map(\.element.line)
    }

    /// `METHOD url` and the varying headers, with the URL's credentials redacted and credential headers left out.
    public var description: String {
        let redaction = Redaction(policy)
        return ([method.rawValue + " " + redaction.redact(url)] + varyingHeaders.map(redaction.redact))
            .joined(separator: " | ")
    }

    /// What ``description`` shows, field by field: `dump` never shows a credential either.
    public var customMirror: Mirror {
        let redaction = Redaction(policy)
        return Mirror(
            self,
            children: [
                "method": method.rawValue, "url": redaction.redact(url),
                "varyingHeaders": varyingHeaders.map(redaction.redact),
                "body": body.map { "\($0.count) bytes" } ?? "none",
                "partition": partition as Any, "credentials": "\(credentials.count) redacted",
            ],
            displayStyle: .struct)
    }

    /// Keys are equal when everything but the redaction policy is.
    public static func == (lhs: RequestKey, rhs: RequestKey) -> Bool {
        // The same reference: the same parts, or copies of one unchanged request.
        if lhs.storage === rhs.storage { return true }
        switch (lhs.parts, rhs.parts) {
        case (let left?, let right?):
            guard left.hash == right.hash else { return false }
            return left.method == right.method && left.url == right.url && left.varyingHeaders == right.varyingHeaders
                && left.body == right.body && left.partition == right.partition
                && left.credentials == right.credentials
        case (nil, nil):
            let left = lhs.bareRequest
            let right = rhs.bareRequest
            return left.method == right.method && left.urlText == right.urlText
        default:
            return lhs.method == rhs.method && lhs.urlText == rhs.urlText && lhs.varyingHeaders == rhs.varyingHeaders
                && lhs.body == rhs.body && lhs.partition == rhs.partition && lhs.credentials == rhs.credentials
        }
    }

    /// Hashes what `==` compares (through the hash its parts keep, or its URL text carries).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(hash)
    }

    /// What `Set` and `Dictionary` place a key by: the kept hash mixed with the table's seed, with no pass of `Hasher`.
    ///
    /// The kept hash is already a per-process `Hasher` result (the URL text's, or the parts'), so a second keyed pass
    /// adds nothing but cost: the flight table looks a key up twice per call (`enter`, `finish`), and each pass was
    /// about 180 instructions. Multiplying by an odd constant and folding the high half down keeps every bit of the
    /// hash and the seed in the low bits a table indexes by, so a table built from another's order does not cluster.
    /// Equal keys keep equal hashes, so this agrees with `hash(into:)`'s rule.
    public func _rawHashValue(seed: Int) -> Int {
        let mixed = UInt64(truncatingIfNeeded: hash ^ seed) &* 0x9E37_79B9_7F4A_7C15
        return Int(truncatingIfNeeded: mixed ^ (mixed &>> 29))
    }

    /// Lower-cases the scheme and host (never the user information: RFC 3986 §6.2.2.1), drops the default port
    /// and the fragment.
    ///
    /// Works on the URL's bytes rather than through `URLComponents` (which parses the whole URL again) or
    /// Foundation's string search, and returns the text untouched in the common case where it is already
    /// normal: both showed up as the main cost of joining a flight.
    static func normalize(_ url: URL) -> String {
        var text = url.absoluteString
        guard let plan = text.withUTF8({ NormalizationPlan($0) }), plan.changesText else { return text }
        return text.withUTF8 { plan.apply(to: $0) }
    }
}

/// Where a URL's text departs from its normal form, found in one pass over its bytes.
private struct NormalizationPlan {
    let authorityStart: Int
    /// Where the host starts: after the user information's `@`, if any.
    let hostStart: Int
    let authorityEnd: Int
    let defaultPortLength: Int
    let fragmentStart: Int?
    let hasUppercase: Bool

    var changesText: Bool { hasUppercase || defaultPortLength > 0 || fragmentStart != nil }

    /// `nil` when the text has no `scheme://`: such a URL is left as it is.
    ///
    /// Plain loops over the bytes: the generic collection algorithms this was first written with (reversed views,
    /// `allSatisfy` with closures) cost more than the rest of building a key.
    init?(_ bytes: UnsafeBufferPointer<UInt8>) {
        let count = bytes.count
        var colon = 0
        while colon < count, bytes[colon] != UInt8(ascii: ":") { colon += 1 }
        guard colon + 2 < count, bytes[colon + 1] == UInt8(ascii: "/"), bytes[colon + 2] == UInt8(ascii: "/") else {
            return nil
        }
        authorityStart = colon + 3
        var index = authorityStart
        var lastAt: Int?
        while index < count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#") { break }
            if byte == UInt8(ascii: "@") { lastAt = index }
            index += 1
        }
        let end = index
        let host = lastAt.map { $0 + 1 } ?? authorityStart
        authorityEnd = end
        hostStart = host
        while index < count, bytes[index] != UInt8(ascii: "#") { index += 1 }
        fragmentStart = index < count ? index : nil
        var uppercase = false
        for offset in 0..<colon where Self.isUppercase(bytes[offset]) { uppercase = true }
        for offset in host..<end where Self.isUppercase(bytes[offset]) { uppercase = true }
        hasUppercase = uppercase
        func schemeIs(_ name: StaticString) -> Bool {
            guard colon == name.utf8CodeUnitCount else { return false }
            for offset in 0..<colon where bytes[offset] | 0x20 != name.utf8Start[offset] { return false }
            return true
        }
        func authorityEnds(with suffix: StaticString) -> Bool {
            let length = suffix.utf8CodeUnitCount
            guard end - host >= length else { return false }
            for offset in 0..<length where bytes[end - length + offset] != suffix.utf8Start[offset] {
                return false
            }
            return true
        }
        if schemeIs("http"), authorityEnds(with: ":80") {
            defaultPortLength = 3
        } else if schemeIs("https"), authorityEnds(with: ":443") {
            defaultPortLength = 4
        } else {
            defaultPortLength = 0
        }
    }

    private static func isUppercase(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z")
    }

    /// Lower-cases scheme and host, drops the default port and the fragment; the user information keeps its case.
    func apply(to bytes: UnsafeBufferPointer<UInt8>) -> String {
        var output = [UInt8]()
        output.reserveCapacity(bytes.count)
        for (offset, byte) in bytes[0..<(authorityEnd - defaultPortLength)].enumerated() {
            let isUserInfo = offset >= authorityStart && offset < hostStart
            output.append(Self.isUppercase(byte) && !isUserInfo ? byte | 0x20 : byte)
        }
        output.append(contentsOf: bytes[authorityEnd..<(fragmentStart ?? bytes.count)])
        return String(decoding: output, as: UTF8.self)
    }
}
