/// How one request uses the ``ResponseCache``.
///
/// The default, ``useProtocolPolicy``, follows RFC 9111 and the request's own `Cache-Control` header. The other
/// policies are explicit caller overrides, named after their `URLRequest.CachePolicy` counterparts:
///
/// ```swift
/// var request = APIRequest<Feed>.get("/feed")
/// request.cachePolicy = .staleWhileRevalidate  // answer at once, refresh in the background
/// ```
///
/// Whatever the policy, only `GET` responses are stored and served, and `no-store` (request or response) keeps a
/// response out of the cache. ``APIResponse/source`` tells where each answer came from.
public enum CachePolicy: Sendable, Hashable {
    /// RFC 9111: serve a fresh stored response; revalidate a stale one (`If-None-Match` or `If-Modified-Since`);
    /// honour the request's `Cache-Control` (`max-age`, `min-fresh`, `max-stale`, `no-cache`, `no-store`,
    /// `only-if-cached`) and the response's (`no-cache`, `must-revalidate`, `immutable`,
    /// `stale-while-revalidate`, `stale-if-error`). The default.
    case useProtocolPolicy
    /// Ignore stored responses and send the request as it is; a storable response still replaces the stored one.
    case reloadIgnoringCache
    /// Revalidate a stored response even when it is fresh (a conditional request; `304` serves the stored body
    /// with ``ResponseSource/revalidated``). Without a stored response, load normally.
    case reloadRevalidatingCache
    /// Serve any stored response, however stale, without contacting the server; load only when nothing is stored.
    ///
    /// - Important: This overrides the server's `must-revalidate` and `no-cache` (RFC 9111 §4.2.4 forbids that to
    ///   a cache acting on its own; here the caller asked for it explicitly, as with `URLRequest`'s
    ///   `.returnCacheDataElseLoad`).
    case returnCacheElseLoad
    /// Serve any stored response, however stale; never contact the server. When nothing is stored the call fails
    /// with ``APIError/notCached(_:)``.
    ///
    /// - Important: Like ``returnCacheElseLoad`` this overrides `must-revalidate` and `no-cache`. The request
    ///   directive `Cache-Control: only-if-cached` is the protocol-abiding variant: it accepts only a response that
    ///   is fresh (or acceptably stale under `max-stale`).
    case onlyIfCached
    /// Serve a fresh stored response; serve a stale one at once (``ResponseSource/staleWhileRevalidate``) and
    /// revalidate it in the background, whatever its `stale-while-revalidate` window (RFC 5861 §3). A response
    /// marked `must-revalidate` or `no-cache` is still revalidated before use.
    ///
    /// - Important: The background refresh is an unstructured task that shares the coalescer with foreground
    ///   calls: it never multiplies requests, and cancelling the caller does not cancel it.
    case staleWhileRevalidate
    /// RFC 9111 as ``useProtocolPolicy``, except when the server cannot be reached: after a transport failure, a
    /// timeout, an invalid response or a `5xx`, any stored response is served (``ResponseSource/cache``), however
    /// stale, instead of the failure. For apps that must show the last data they had while offline.
    ///
    /// - Important: Like ``returnCacheElseLoad`` this overrides `must-revalidate` and `no-cache`, and only while the
    ///   server is unreachable; `stale-if-error` (RFC 5861 §4) is the protocol-abiding variant, within the window
    ///   the server allows.
    case returnCacheWhenOffline
}
