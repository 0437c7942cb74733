/// An HTTP request method, such as `GET` or `POST`.
///
/// Methods are case-sensitive tokens (RFC 9110 §9.1); the common ones are provided as static members,
/// and any other token can be written as a string literal:
///
/// ```swift
/// let purge: RequestMethod = "PURGE"
/// ```
///
/// Any string makes a method, so that literals stay simple; ``APIClient`` checks it is a token before sending and
/// fails with ``InvalidRequestReason/invalidMethod(_:)`` otherwise: a space or a line break in a method would let
/// it rewrite the request line or smuggle a second request.
public struct RequestMethod: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The method token as it is sent on the wire.
    public let rawValue: String

    /// Creates a method from its token, for example `"PROPFIND"`.
    ///
    /// - Parameter rawValue: The method token, case-sensitive. It is not checked here: a request with a method that
    ///   is not a token fails when it is sent, before anything reaches the network.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// Creates a method from a string literal.
    public init(stringLiteral value: String) {
        self.init(rawValue: value)
    }

    /// The method token.
    public var description: String { rawValue }

    /// `GET`: transfer a current representation of the target resource.
    public static let get: RequestMethod = "GET"
    /// `HEAD`: like `GET`, but the server sends no body.
    public static let head: RequestMethod = "HEAD"
    /// `POST`: perform resource-specific processing on the request body.
    public static let post: RequestMethod = "POST"
    /// `PUT`: replace the target resource with the request body.
    public static let put: RequestMethod = "PUT"
    /// `PATCH`: apply partial modifications to the target resource.
    public static let patch: RequestMethod = "PATCH"
    /// `DELETE`: remove the target resource.
    public static let delete: RequestMethod = "DELETE"
    /// `OPTIONS`: describe the communication options for the target resource.
    public static let options: RequestMethod = "OPTIONS"
    /// `TRACE`: perform a message loop-back test.
    public static let trace: RequestMethod = "TRACE"
    /// `CONNECT`: establish a tunnel to the server.
    public static let connect: RequestMethod = "CONNECT"

    /// Whether the method is safe (RFC 9110 §9.2.1): it is read-only from the client's point of view.
    public var isSafe: Bool {
        self == .get || self == .head || self == .options || self == .trace
    }

    /// Whether the method is idempotent (RFC 9110 §9.2.2): sending it twice has the same effect as once,
    /// so a failed attempt may be retried without asking the caller.
    public var isIdempotent: Bool {
        isSafe || self == .put || self == .delete
    }
}
