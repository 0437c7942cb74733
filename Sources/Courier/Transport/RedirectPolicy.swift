import Foundation

/// Which redirects a request follows: all of them up to a limit (the default), none, or the ones a closure allows.
///
/// Set it for a client (``APIClient/Configuration/redirectPolicy``) or one request (``APIRequest/redirectPolicy``).
/// A redirect that is not followed is the response: its status (`301`, `302`, `303`, `307`, `308`) and its `Location`
/// reach the caller, who decides (give the client's `acceptableStatusCodes` the 3xx codes to get them as values).
/// ``APIResponse/url`` says where the final response came from.
///
/// A redirect that cannot be followed fails clearly with ``APIError/invalidResponse(reason:underlying:)``: a
/// `Location` that is not an http(s) URL, and a loop (a request sent again to a URL it was already sent to with the
/// same method). Past the limit the call fails with ``APIError/transport(_:underlying:)`` carrying
/// `URLError.httpTooManyRedirects`. Credentials never follow a redirect to another origin, whatever the policy.
///
/// ``URLSessionTransport`` follows this policy; a transport of your own reads it from
/// ``TransportRequest/redirectPolicy``.
public struct RedirectPolicy: Sendable, Hashable {
    /// One redirect the server asked for, for a ``custom(limit:_:)`` policy to decide on.
    public struct Redirect: Sendable, Hashable {
        /// Which redirect of the request this is, from 1.
        public var number: Int
        /// The redirect's status code.
        public var status: Int
        /// The URL that answered with the redirect.
        public var from: URL
        /// Where it leads: its `Location`, resolved against ``from``.
        public var to: URL
        /// The method the next request would use (a `303` turns any method but `HEAD` into `GET`).
        public var method: String
    }

    enum Kind: Sendable, Hashable {
        case follow
        case doNotFollow
        case custom
    }

    /// A custom policy's closure; its identity stands for the closure in `==` and `hash(into:)`.
    final class Custom: Sendable {
        let decide: @Sendable (Redirect) -> Bool
        init(_ decide: @escaping @Sendable (Redirect) -> Bool) { self.decide = decide }
    }

    let kind: Kind
    /// The most redirects followed for one request.
    public let limit: Int
    let custom: Custom?

    private init(_ kind: Kind, limit: Int, custom: Custom? = nil) {
        self.kind = kind
        self.limit = max(0, limit)
        self.custom = custom
    }

    /// Follows every redirect to an http(s) URL, up to `limit` for one request.
    ///
    /// - Parameter limit: The most redirects followed; 20 by default, as browsers.
    public static func follow(limit: Int = 20) -> RedirectPolicy { RedirectPolicy(.follow, limit: limit) }

    /// Follows no redirect: the 3xx response is the response.
    public static let doNotFollow = RedirectPolicy(.doNotFollow, limit: 0)

    /// Follows the redirects `decide` allows, up to `limit` for one request; the first it refuses is the response.
    ///
    /// - Parameters:
    ///   - limit: The most redirects followed; 20 by default.
    ///   - decide: Whether to follow one redirect; called on the transport's queue, so keep it quick.
    public static func custom(limit: Int = 20, _ decide: @escaping @Sendable (Redirect) -> Bool) -> RedirectPolicy {
        RedirectPolicy(.custom, limit: limit, custom: Custom(decide))
    }

    /// ``follow(limit:)`` with its default limit.
    public static let `default` = RedirectPolicy.follow()

    /// Whether two policies are the same: the same kind and limit, and for custom policies the same closure (the one
    /// a single ``custom(limit:_:)`` call made).
    public static func == (lhs: RedirectPolicy, rhs: RedirectPolicy) -> Bool {
        lhs.limit == rhs.limit && lhs.kind == rhs.kind && lhs.custom === rhs.custom
    }

    /// Hashes the kind, the limit and a custom policy's identity.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(kind)
        hasher.combine(limit)
        hasher.combine(custom.map(ObjectIdentifier.init))
    }
}

/// The redirects one request went through, and the policy's rules applied to the next one.
struct RedirectChain {
    let policy: RedirectPolicy
    /// The first request, as a visit: entered into `visited` at the first redirect, since most requests have none and
    /// building the set cost each of them a string and a hash.
    private let first: (url: URL?, method: String)
    private var visited: Set<String> = []

    private func custom(_ redirect: RedirectPolicy.Redirect) -> Bool? { policy.custom?.decide(redirect) }
    private(set) var count = 0

    init(policy: RedirectPolicy, first url: URL?, method: String) {
        self.policy = policy
        self.first = (url, method)
    }

    /// Whether to follow a redirect from `from` to `to` (what the transport resolved `location` to); throws when
    /// following it would loop or leave http(s).
    mutating func follow(status: Int, from: URL, to: URL, location: String?, method: String) throws -> Bool {
        let redirect = RedirectPolicy.Redirect(number: count + 1, status: status, from: from, to: to, method: method)
        switch policy.kind {
        case .doNotFollow: return false
        case .follow: break
        case .custom: if custom(redirect) == false { return false }
        }
        // The Location as sent, too: a resolver may read `mailto:x` as a relative path of the current URL.
        let written = location.flatMap { URL(string: $0)?.scheme }?.lowercased()
        guard ["http", "https"].contains(to.scheme?.lowercased() ?? ""),
            written.map(["http", "https"].contains) ?? true
        else {
            throw APIError.invalidResponse(
                reason: "the \(status) redirect from \(from.absoluteString) leads to \(location ?? to.absoluteString), "
                    + "which is not an http(s) URL", underlying: nil)
        }
        if visited.isEmpty { visited.insert(Self.visit(first.url, first.method)) }
        guard visited.insert(Self.visit(to, method)).inserted else {
            throw APIError.invalidResponse(
                reason: "a redirect loop: \(method) \(to.absoluteString) was redirected to again", underlying: nil)
        }
        count += 1
        guard count <= policy.limit else {
            throw APIError.transport(.other, underlying: URLError(.httpTooManyRedirects))
        }
        return true
    }

    /// Fails when `response` is a redirect the policy would follow but whose `Location` is not a URL (so nothing could
    /// follow it); a redirect without a `Location` is an answer like any other.
    func checkUnfollowable(_ response: TransportResponse, from url: URL?) throws {
        guard [301, 302, 303, 307, 308].contains(response.statusCode), let location = response.headers["Location"]
        else { return }
        if case .doNotFollow = policy.kind { return }
        let resolved = url.flatMap { URL(string: location, relativeTo: $0) }
        guard resolved == nil || !["http", "https"].contains(resolved?.scheme?.lowercased() ?? "") else { return }
        throw APIError.invalidResponse(
            reason: "the \(response.statusCode) redirect's Location \"\(location)\" is not an http(s) URL",
            underlying: nil)
    }

    private static func visit(_ url: URL?, _ method: String) -> String {
        method + " " + (url?.absoluteString ?? "")
    }
}
