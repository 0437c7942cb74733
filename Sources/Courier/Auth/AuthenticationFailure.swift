/// Why a ``TokenRefresher`` could not provide a credential, carried by ``APIError/authenticationFailed(_:)``.
///
/// Descriptions never contain a token.
public enum AuthenticationFailure: Sendable, CustomStringConvertible {
    /// The refresh closure threw. Carries its error.
    ///
    /// When the server rejected the credential (a `401`), or there was none, the refresher stays failed: every
    /// caller gets this failure without a new refresh until ``TokenRefresher/setCredential(_:)`` installs a new
    /// one. When the credential had only expired, nothing says the failure is final (the token endpoint may have
    /// been down for a moment): the waiters get it, and the next caller starts a new refresh, within the
    /// refresher's limit on refreshes per window. A failed early renewal of a credential that has not expired is
    /// not reported this way: the credential is kept, and renewed again later.
    case refreshThrew(any Error)
    /// The credential was refreshed `count` times within `window` already, the most allowed, so it is
    /// not refreshed again until the oldest of those refreshes leaves the window. This usually means
    /// that the server rejects every new token.
    case tooManyRefreshes(count: Int, window: Duration)
    /// The credential was cleared (signed out) while the caller waited for a refresh; the refresh's
    /// result was discarded.
    case signedOut
    /// The credential's identity changed while the request was in flight (another user signed in), so
    /// the request was not sent with the new identity's credential.
    case identityChanged
    /// The refresh did not finish within the refresher's `refreshTimeout` (measured on its clock), so it
    /// was cancelled and its result, should it still come, is discarded.
    ///
    /// Unlike ``refreshThrew(_:)`` this does not stick: the next caller that needs a credential starts a
    /// new refresh, within the refresher's limit on refreshes per window.
    case refreshTimedOut(after: Duration)
    /// The refresh closure asked its own refresher for a credential (``TokenRefresher/validCredential()``
    /// or ``TokenRefresher/refresh(rejected:)``) when that call would have to wait for a refresh: it would
    /// wait for itself forever. The closure receives the credential to renew as its argument; use that.
    case reentrantRefresh

    /// The error the refresh closure threw, for ``refreshThrew(_:)``.
    public var underlyingError: (any Error)? {
        if case .refreshThrew(let error) = self { return error }
        return nil
    }

    /// The reason as a phrase.
    public var description: String {
        switch self {
        case .refreshThrew(let error):
            "the credential could not be refreshed (\(error))"
        case .tooManyRefreshes(let count, let window):
            "the credential was refreshed \(count) times within \(window.formattedSeconds), the most allowed, "
                + "so it was not refreshed again (the server may be rejecting every new token)"
        case .signedOut:
            "the credential was cleared (signed out) while the request waited for a refresh"
        case .identityChanged:
            "the credential's identity changed while the request was in flight, "
                + "so it was not sent with another identity's credential"
        case .refreshTimedOut(let timeout):
            "the credential's refresh did not finish within \(timeout.formattedSeconds), so it was cancelled "
                + "(the next request tries again)"
        case .reentrantRefresh:
            "the refresh closure asked its own refresher for a credential, which would wait for that same "
                + "refresh forever (use the credential the closure receives)"
        }
    }
}
