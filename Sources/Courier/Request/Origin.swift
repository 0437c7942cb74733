import Foundation

/// The origin of a URL (RFC 6454): scheme, host and port, with the scheme's default port filled in.
///
/// Credentials are sent only to trusted origins (see ``APIClient/Configuration/trustedOrigins``), a redirect to
/// another origin loses them, and an unsafe request invalidates cached responses of its own origin only.
struct Origin: Hashable, Sendable {
    let scheme: String
    let host: String
    let port: Int

    /// `nil` when `url` has no scheme or host.
    init?(_ url: URL) {
        guard let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased(), !host.isEmpty else {
            return nil
        }
        self.scheme = scheme
        self.host = host
        port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : -1)
    }

    /// Whether both URLs have an origin and it is the same.
    static func same(_ lhs: URL, _ rhs: URL) -> Bool {
        guard let origin = Origin(lhs) else { return false }
        return origin == Origin(rhs)
    }
}
