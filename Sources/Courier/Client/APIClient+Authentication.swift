import Foundation

extension APIClient {
    /// How one call is authorized: which refresher provides its credentials, which identity they must
    /// belong to, and whether the call has used the one refresh-and-resend a `401` earns it.
    ///
    /// Lives inside the call's flight (`sendWithRetries(_:first:)`), so joiners of a
    /// coalesced flight never cause refreshes of their own.
    ///
    /// An immutable class: each step returns the state for the next one. The retry loop keeps it across its awaits,
    /// and a reference keeps that frame small (`Docs/Performance.md#async-frames`); only an authorized call
    /// allocates, once per attempt.
    final class Authorization: Sendable {
        let refresher: TokenRefresher
        /// The identity the call's flight is partitioned by. Every attempt must carry a credential of
        /// this identity: a flight shared by one user's callers is never sent with another's token.
        let identity: String
        /// The credential the last attempt was sent with.
        private let used: Credential?
        /// The credential for the next attempt when it is already known: the one taken when the call
        /// started (so the first attempt does not ask the refresher twice), or the one a refresh produced.
        private let replacement: Credential?
        /// Whether the call already refreshed once; a second `401` is then final.
        private let hasRefreshed: Bool
        /// Whether the credential may go over cleartext `http` to a host that is not loopback
        /// (``Configuration/allowsCredentialsOverCleartext``).
        private let allowsCleartext: Bool

        convenience init(refresher: TokenRefresher, credential: Credential, allowsCleartext: Bool) {
            self.init(
                refresher: refresher, identity: credential.identity, used: nil, replacement: credential,
                hasRefreshed: false, allowsCleartext: allowsCleartext)
        }

        private init(
            refresher: TokenRefresher, identity: String, used: Credential?, replacement: Credential?,
            hasRefreshed: Bool, allowsCleartext: Bool
        ) {
            self.refresher = refresher
            self.identity = identity
            self.used = used
            self.replacement = replacement
            self.hasRefreshed = hasRefreshed
            self.allowsCleartext = allowsCleartext
        }

        /// Applies the credential for the next attempt to `request`, after the adapters ran.
        /// - Returns: The state after this attempt.
        @inline(never)
        func authorize(
            _ request: inout TransportRequest, using apply: (inout TransportRequest, Credential) -> Void
        ) async throws -> Authorization {
            let credential: Credential
            if let replacement {
                credential = replacement
            } else {
                credential = try await refresher.validCredential()
            }
            guard credential.identity == identity else { throw APIError.authenticationFailed(.identityChanged) }
            // The last word before the token goes out: the URL is the one this attempt sends to, whatever adapters did
            // to it (the request was checked when it was built, but a reused plain `GET` or an adapter can change what
            // that check saw).
            if !allowsCleartext, Cleartext.isExposed(request.url) {
                throw APIError.invalidRequest(.credentialsOverCleartext(host: request.url.host ?? ""))
            }
            apply(&request, credential)
            // Validation errors name the header, never its value, so a malformed token is not printed.
            try request.headers.validate()
            return Authorization(
                refresher: refresher, identity: identity, used: credential, replacement: nil,
                hasRefreshed: hasRefreshed, allowsCleartext: allowsCleartext)
        }

        /// Handles a `401`: obtains the credential for the one resend a call gets, or, when the call has
        /// already refreshed, fails with ``APIError/unauthorized(_:)``. Never loops.
        /// - Returns: The state for the resend.
        @inline(never)
        func prepareResend(after response: TransportResponse) async throws -> Authorization {
            guard !hasRefreshed, let used else { throw APIError.unauthorized(response) }
            let refreshed = try await refresher.refresh(rejected: used)
            return Authorization(
                refresher: refresher, identity: identity, used: used, replacement: refreshed, hasRefreshed: true,
                allowsCleartext: allowsCleartext)
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
    nonisolated(nonsending) func authorization(for request: RequestFields, within limits: CallLimits) async throws
        -> Authorization?
    {
        guard request.requiresAuthentication, let refresher = configuration.authenticator,
            !refresher.isRefreshingInCurrentTask
        else { return nil }
        let limit = TokenRefresher.WaitLimit(scheduler: deadlines, timeout: limits.nextWait(now: deadlines.elapsed))
        let credential = try await refresher.validCredential(within: limit)
        return Authorization(
            refresher: refresher, credential: credential, allowsCleartext: configuration.allowsCredentialsOverCleartext)
    }

    /// Whether the authenticator will authorize `request`, sent to a target whose trust is `isTrusted`: what
    /// ``authorization(for:within:)`` decides, without asking the refresher for a credential. Read only when the
    /// target is cleartext, to refuse the call before a token is fetched for it.
    func willAuthorize(_ request: RequestFields, isTrusted: Bool) -> Bool {
        guard request.requiresAuthentication, let refresher = configuration.authenticator,
            isTrusted || request.sendsCredentialsToAnyOrigin
        else { return false }
        return !refresher.isRefreshingInCurrentTask
    }
}
