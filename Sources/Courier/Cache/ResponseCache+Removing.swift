import Foundation

extension ResponseCache {
    // MARK: Removing

    /// Invalidates after an unsafe request (RFC 9111 §4.4): a `2xx` or `3xx` response to a method that is not safe
    /// removes the target URI and the same-origin `Location` and `Content-Location` URIs, in every partition and
    /// variant (a write by one user makes everyone's copy suspect).
    ///
    /// - Parameters:
    ///   - request: The request that was sent.
    ///   - response: Its response.
    /// - Returns: How many entries were removed.
    @discardableResult
    public nonisolated func invalidate(for request: TransportRequest, response: TransportResponse) async -> Int {
        guard !request.method.isSafe, (200..<400).contains(response.statusCode) else { return 0 }
        var urls = [request.urlKey]
        for name in ["Location", "Content-Location"] {
            guard let value = response.headers[name]?.trimmingCharacters(in: .whitespaces),
                let target = URL(string: value, relativeTo: request.url)?.absoluteURL,
                Self.sameOrigin(target, request.url)
            else { continue }
            urls.append(RequestKey.normalize(target))
        }
        return removeAll(urls: urls)
    }

    /// Removes every stored response for `url`, in every partition and variant.
    ///
    /// - Parameter url: The URL, normalized like a ``RequestKey``'s.
    public nonisolated func remove(url: URL) async {
        removeAll(urls: [RequestKey.normalize(url)])
    }

    /// Removes every stored response whose URL begins with `prefix`, in every partition and variant: after a write
    /// that touches a whole collection, say.
    ///
    /// ```swift
    /// await cache.remove(urlsWithPrefix: URL(string: "https://api.example.com/v1/users/42/")!)
    /// ```
    ///
    /// - Parameter prefix: Compared as text with each stored URL, both normalized like a ``RequestKey``'s (scheme
    ///   and host lowercased, default port dropped). End it with `/` to stop `/users/4` from matching `/users/42`.
    /// - Returns: How many entries were removed.
    @discardableResult
    public nonisolated func remove(urlsWithPrefix prefix: URL) async -> Int {
        let prefix = RequestKey.normalize(prefix)
        let inMemory = state.withLock { $0.storage.urls.filter { $0.hasPrefix(prefix) } }
        let onDisk = disk?.urls.filter { $0.hasPrefix(prefix) } ?? []
        return removeAll(urls: Array(Set(inMemory).union(onDisk)))
    }

    /// Removes every stored response for which `shouldRemove` returns `true`, in every partition and variant.
    ///
    /// ```swift
    /// await cache.removeAll { url, entry in entry.response.headers["X-Tenant"] == "acme" }
    /// ```
    ///
    /// - Parameter shouldRemove: Given each stored entry's URL (normalized like a ``RequestKey``'s) and the entry.
    ///   It runs in the caller's task on a snapshot, outside the cache's lock, so a slow predicate holds nobody
    ///   up; an entry stored or replaced meanwhile is not removed.
    /// - Returns: How many entries were removed.
    @discardableResult
    public nonisolated func removeAll(where shouldRemove: (URL, CachedResponse) -> Bool) async -> Int {
        let snapshot = state.withLock { $0.storage.allCandidates }
        let doomed = snapshot.filter { url, candidate in
            URL(string: url).map { shouldRemove($0, candidate.entry) } ?? false
        }
        let fromDisk =
            disk?.allEntries().filter { file in
                URL(string: file.url).map { shouldRemove($0, file.entry) } ?? false
            } ?? []
        // Memory first, with the ticket that makes a write of these URLs still on its way to the disk stale.
        let (removed, ticket) = state.withLock { state in
            var removed = 0
            for (_, candidate) in doomed where state.storage.holds(candidate) {
                state.storage.remove(candidate)
                removed += 1
            }
            removed = max(removed, fromDisk.count)
            state.counters.invalidations += removed
            return (removed, disk?.reserve(removing: doomed.map(\.url) + fromDisk.map(\.url)))
        }
        if let disk, let ticket {
            disk.remove(names: fromDisk.map(\.name))
            disk.finish(ticket)
        }
        return removed
    }

    /// Removes every stored response, in memory and on disk. Statistics are kept.
    public func removeAll() {
        let ticket = state.withLock { state in
            state.storage.removeAll()
            return disk?.reserve(removing: nil)
        }
        if let disk, let ticket { disk.removeAll(ticket: ticket) }
    }
}
