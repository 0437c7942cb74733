import Foundation

extension APIClient {
    /// How one call is authorized: which refresher provides its credentials, which identity they must
    /// belong to, and whether the call has used the one refresh-and-resend a `401` earns it.
    ///
    /// Lives inside the call's flight (`sendWithRetries(_:first:)`), so joiners of a
    /// coalesced flight never cause refreshes of their own.
    struct Authorization: Sendable {
        let refresher: TokenRefresher
        /// The identity the call's flight is partitioned by. Every attempt must carry a credential of
        /// this identity: a flight shared by one user's callers is never sent with another's token.
        let identity: String
        /// The credential the last attempt was sent with.
        private var used: Credential?
        /// The credential for the next attempt when it is already known: the one taken when the call
        /// started (so the first attempt does not ask the refresher twice), or the one a refresh produced.
        private var replacement: Credential?
        /// Whether the call already refreshed once; a second `401` is then final.
        private var hasRefreshed = false

        init(refresher: TokenRefresher, credential: Credential) {
            self.refresher = refresher
            self.identity = credential.identity
            self.replacement = credential
        }

        /// Applies the credential for the next attempt to `request`, after the adapters ran.
        @inline(never)
        mutating func authorize(
            _ request: inout TransportRequest, using apply: (inout TransportRequest, Credential) -> Void
        ) async throws {
            let credential: Credential
            if let replacement {
                credential = replacement
                self.replacement = nil
            } else {
                credential = try await refresher.validCredential()
            }
            guard credential.identity == identity else { throw APIError.authenticationFailed(.identityChanged) }
            apply(&request, credential)
            // Validation errors name the header, never its value, so a malformed token is not printed.
            try request.headers.validate()
            used = credential
        }

        /// Handles a `401`: obtains the credential for the one resend a call gets, or, when the call has
        /// already refreshed, fails with ``APIError/unauthorized(_:)``. Never loops.
        @inline(never)
        mutating func prepareResend(after response: TransportResponse) async throws {
            guard !hasRefreshed, let used else { throw APIError.unauthorized(response) }
            hasRefreshed = true
            replacement = try await refresher.refresh(rejected: used)
        }
    }

    /// How `request` is authorized, or `nil` when it is sent without a credential: it does not require
    /// authentication, the client has no authenticator, or the current task is the authenticator's own
    /// refresh (its requests must not wait for the refresh they are part of: that would deadlock).
    ///
    /// Takes a valid credential first, refreshing if needed, because its identity partitions the
    /// coalescing key: two users never share a flight.
    ///
    /// The wait for a refresh ends by the caller's own deadline (``CallLimits/nextWait(now:)``): the caller then
    /// leaves with ``APIError/timedOut(_:)`` and the refresh goes on for the others.
    nonisolated(nonsending) func authorization(for request: APIRequest<Data>, within limits: CallLimits) async throws
        -> Authorization?
    {
        guard request.requiresAuthentication, let refresher = configuration.authenticator,
            !refresher.isRefreshingInCurrentTask
        else { return nil }
        let limit = TokenRefresher.WaitLimit(scheduler: deadlines, timeout: limits.nextWait(now: deadlines.elapsed))
        let credential = try await refresher.validCredential(within: limit)
        return Authorization(refresher: refresher, credential: credential)
    }
}
