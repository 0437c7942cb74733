import Foundation

/// An access token, what is needed to renew it, and whose it is.
///
/// A credential is a plain value. A ``TokenRefresher`` holds the current one, hands it to requests
/// and replaces it when it expires or the server rejects it:
///
/// ```swift
/// let refresher = TokenRefresher(
///     credential: Credential(accessToken: token, refreshToken: renewal, expiresAt: expiry, identity: user.id)
/// ) { expired in
///     try await auth.renew(expired)  // returns the next Credential
/// }
/// ```
///
/// Printing a credential never shows a token: ``description``, ``debugDescription`` and the mirror
/// used by `dump` show the identity, the version and the expiry, and `<redacted>` for the tokens.
public struct Credential: Sendable, Hashable {
    /// The token sent with each request, by default as `Authorization: Bearer <accessToken>`.
    public var accessToken: String
    /// The token used to obtain the next access token, when the server issued one.
    public var refreshToken: String?
    /// When the access token stops being accepted, when known. A ``TokenRefresher`` renews the
    /// credential shortly before this date; without it, only a `401` from the server triggers a renewal.
    public var expiresAt: Date?
    /// Whose credential this is, such as a user or tenant id: requests made with different identities
    /// never share an in-flight request or a cached response. Printed in descriptions, so use an id,
    /// never a secret.
    public var identity: String
    /// The order in which credentials were installed in a ``TokenRefresher``: each credential it
    /// installs gets a higher version than the one before.
    ///
    /// The refresher assigns it; a credential you create has version `0` until it is installed.
    /// Versions tell a `401` for the current credential (refresh it) from a `401` for one that was
    /// already replaced (just use the current one).
    public internal(set) var version: Int

    /// Creates a credential.
    ///
    /// - Parameters:
    ///   - accessToken: The token sent with each request.
    ///   - refreshToken: The token used to obtain the next access token, if any.
    ///   - expiresAt: When the access token expires, if known.
    ///   - identity: Whose credential this is, such as a user id; it partitions shared requests and
    ///     cached responses, and it is printed, so it must not be a secret.
    public init(accessToken: String, refreshToken: String? = nil, expiresAt: Date? = nil, identity: String) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.expiresAt = expiresAt
        self.identity = identity
        self.version = 0
    }
}

extension Credential: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The identity, the version and the expiry, never a token:
    /// `Credential(identity: alice, version: 3, expires: 2025-01-01 12:00:00 +0000)`.
    public var description: String {
        let expiry = expiresAt.map { "\($0)" } ?? "unknown"
        return "Credential(identity: \(identity), version: \(version), expires: \(expiry))"
    }

    /// The same text as ``description``: `String(reflecting:)` and debuggers never show a token either.
    public var debugDescription: String { description }

    /// A mirror whose token children read `<redacted>`, so `dump` and reflection-based loggers never
    /// show a token.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "identity": identity,
                "version": version,
                "expiresAt": expiresAt as Any,
                "accessToken": "<redacted>",
                "refreshToken": refreshToken == nil ? "nil" : "<redacted>",
            ],
            displayStyle: .struct)
    }
}
