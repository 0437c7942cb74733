import Foundation

extension APIClient {
    /// Runs the adapters in order; their failures become ``APIError/adapterFailed(_:)``. What they return is
    /// validated again, method and headers, since an adapter may change either.
    @inline(never)
    nonisolated(nonsending) func adapt(_ request: TransportRequest) async throws -> TransportRequest {
        try await adapt(request) { _, _, _ in }
    }

    /// Runs the adapters once before the cache lookup, noting whether one that declared nothing changed a
    /// header the cache and the key cannot see (the call is then private), and which headers adapters that declared
    /// `variesOn: []` changed (the coalescing key ignores them: a signature or a timestamp must not split flights).
    nonisolated(nonsending) func adaptBeforeLookup(_ request: TransportRequest) async throws -> Adapted {
        guard !configuration.adapters.isEmpty else { return Adapted(unadapted: request, request: request) }
        var isPrivate = false
        var irrelevant: Set<String> = []
        let adapted = try await adapt(request) { adapter, before, after in
            switch adapter.variesOn {
            case nil:
                if !isPrivate, !scope.changesOnlyKeyedHeaders(before, after) { isPrivate = true }
            case let declared? where declared.isEmpty && before != after:
                irrelevant.formUnion(CredentialScope.changedNames(before, after))
            default:
                break
            }
        }
        var result = Adapted(unadapted: request, request: adapted, isPrivate: isPrivate)
        // A credential is never ignored: the key keeps credential fields whatever the ignored names say.
        if !irrelevant.isEmpty { result.ignoredHeaders = configuration.coalescingIgnoredHeaders.union(irrelevant) }
        return result
    }

    func adapt(
        _ request: TransportRequest, observe: (any RequestAdapter, HeaderFields, HeaderFields) -> Void
    ) async throws -> TransportRequest {
        var request = request
        for adapter in configuration.adapters {
            let before = request.headers
            do {
                request = try await adapter.adapt(request)
            } catch {
                // Asked in a plain function (`Docs/Performance.md#async-frames`): a cancellation goes on as it is.
                throw Self.isCancellation(error) ? error : APIError.adapterFailed(error)
            }
            observe(adapter, before, request.headers)
        }
        if !configuration.adapters.isEmpty {
            try request.method.validate()
            try request.headers.validate()
            // An adapter may replace the request wholesale; the client's policy still says what is a credential.
            request.credentials = scope.credentials
            try scope.refuseCleartextCredentials(in: request)
        }
        return request
    }
}
