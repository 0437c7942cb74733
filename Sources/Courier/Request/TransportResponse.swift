import Foundation

/// An HTTP response as a transport received it: status, header fields and the whole body.
public struct TransportResponse: Sendable, Hashable {
    /// The status code, such as `200` or `404`.
    public var statusCode: Int {
        get { storage.fields.statusCode }
        _modify { yield &uniqueStorage().fields.statusCode }
    }
    /// The header fields.
    public var headers: HeaderFields {
        get { storage.fields.headers }
        _modify { yield &uniqueStorage().fields.headers }
    }
    /// The body; empty when the response had none.
    public var body: Data {
        get { storage.fields.body }
        _modify { yield &uniqueStorage().fields.body }
    }
    /// The URL this response came from, after any redirects the transport followed; `nil` when the transport does
    /// not say (then it is the request's URL).
    public var url: URL? {
        get { storage.fields.url }
        _modify { yield &uniqueStorage().fields.url }
    }

    /// The fields, behind one reference that copies share until one of them changes a field (copy on write): a
    /// response travels through the flight, the cache and every caller that shares it.
    private var storage: Storage

    /// Creates a response.
    ///
    /// - Parameters:
    ///   - statusCode: The status code.
    ///   - headers: The header fields.
    ///   - body: The body; empty for none.
    ///   - url: The URL the response came from after redirects; `nil` for the request's.
    public init(statusCode: Int, headers: HeaderFields = [:], body: Data = Data(), url: URL? = nil) {
        storage = Storage(Fields(statusCode: statusCode, headers: headers, body: body, url: url))
    }

    /// Whether the status is in the 2xx range.
    public var isSuccess: Bool { (200..<300).contains(statusCode) }

    /// The storage, copied first when another response shares it.
    private mutating func uniqueStorage() -> Storage {
        if !isKnownUniquelyReferenced(&storage) { storage = Storage(storage.fields) }
        return storage
    }

    /// Responses are equal when every field is.
    public static func == (lhs: TransportResponse, rhs: TransportResponse) -> Bool {
        lhs.storage === rhs.storage || lhs.storage.fields == rhs.storage.fields
    }

    /// Hashes what `==` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(storage.fields)
    }

    fileprivate struct Fields: Hashable {
        var statusCode: Int
        var headers: HeaderFields
        var body: Data
        var url: URL?
    }

    /// The fields of a response. Changed only through a response that holds the sole reference, which is what makes
    /// sharing it across tasks safe.
    fileprivate final class Storage: @unchecked Sendable {
        // Unchecked: the storage is changed only through `uniqueStorage()`, by its sole owner, so two accesses can
        // never overlap; the run-time check cost about 80 instructions on every read of a field.
        @exclusivity(unchecked) var fields: Fields
        init(_ fields: Fields) { self.fields = fields }
    }
}

extension TransportResponse: CustomStringConvertible {
    /// The status code and body size; headers and body are left out so that nothing secret is printed.
    public var description: String {
        "HTTP \(statusCode) (\(body.count) bytes)"
    }
}
