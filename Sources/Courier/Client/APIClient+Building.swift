import Foundation

extension APIClient {
    /// A request as built, and whether its target may receive the client's credentials.
    struct BuiltRequest {
        var request: TransportRequest
        var isTrusted: Bool
        /// The coalescing key of `request` without a partition, when it was built already (a plain `GET`).
        var sharingKey: RequestKey? = nil
    }

    /// Builds the request that will be sent: URL, merged headers, encoded body. Throws before anything
    /// is sent when any part is malformed, the method included (a method that is not a token could smuggle a
    /// second request onto the connection). The credential fields of the default headers go only to a trusted
    /// origin (or with ``APIRequest/sendsCredentialsToAnyOrigin``), and no credential goes over cleartext `http` to
    /// a host that is not loopback unless the configuration allows it.
    @inline(never)  // its temporaries stay off the async frame of `perform`, which the caller's task holds
    func prepare(_ request: RequestFields) throws(APIError) -> BuiltRequest {
        // A plain `GET` of a path seen before (every joiner of a flight, a hot read) takes the request kept for it,
        // read under the table's lock: through its entry, the entry was retained and released as well, an object
        // every caller of the path shares. (`isPlainGET` holds only for `GET`, a valid method.)
        if request.query.isEmpty, request.isPlainGET, let plain = recentURLs.plainGET(forPath: request.path) {
            return BuiltRequest(request: plain.request, isTrusted: plain.isTrusted, sharingKey: plain.sharingKey)
        }
        try request.method.validate()
        let target = try URLBuilder.resolve(base: base, path: request.path, query: request.query, recent: recentURLs)
        let isPlainGET = request.isPlainGET
        if isPlainGET, case .entry(let entry, _) = target, let plain = entry.plainGET {
            return BuiltRequest(request: plain.request, isTrusted: plain.isTrusted, sharingKey: plain.sharingKey)
        }
        // A URL the client built on its base is not parsed here (see ``RecentURLs/Entry``): only an absolute one, whose
        // origin decides what it may receive, is read as a `URL`.
        // (An absolute URL is always parsed, into an entry: never a first sight, whose path is not read again.)
        let isAbsolute: Bool
        if case .firstSight = target { isAbsolute = false } else { isAbsolute = URLBuilder.isAbsolute(request.path) }
        let isTrusted: Bool
        if isAbsolute, case .entry(let entry, _) = target {
            isTrusted = scope.trusts(entry.url)
        } else {
            isTrusted = !isAbsolute
        }
        var headers = request.headers
        headers.addMissing(
            from: isTrusted || request.sendsCredentialsToAnyOrigin ? configuration.headers : scope.untrustedHeaders)
        var body: Data?
        // Most requests have no body: settled without copying the payload out (an outlined copy of the enum).
        switch request.hasBody ? request.body : nil {
        case nil:
            break
        case .data(let data, let contentType)?:
            body = data
            if let contentType, !headers.contains("Content-Type") { headers["Content-Type"] = contentType }
        case .json(let value)?:
            do {
                body = try configuration.encoder.encode(value)
            } catch {
                throw .encodingFailed(error)
            }
            if !headers.contains("Content-Type") { headers["Content-Type"] = "application/json" }
        }
        // An upload's body replaces the request's own; its `Content-Type` is checked below with every other header.
        let upload = request.streamed?.upload
        if upload != nil {
            body = nil
            if let type = request.streamed?.uploadContentType, !headers.contains("Content-Type") {
                headers["Content-Type"] = type
            }
        }
        try headers.validate()
        // The target is taken apart once, as it is consumed: matched again below, it was copied out (a retain of its
        // URL) and destroyed after. A plain `GET` is kept for reuse from its URL's second call: a URL called once (a
        // new query each time) does not pay for keeping it.
        var built: TransportRequest
        var keptFor: RecentURLs.Entry?
        switch consume target {
        case .entry(let entry, let isKnown):
            built = TransportRequest(
                method: request.method, target: entry, headers: headers, body: body, credentials: scope.credentials)
            if isPlainGET, isKnown { keptFor = entry }
        case .firstSight(let text):
            built = TransportRequest(
                method: request.method, unparsed: text, headers: headers, body: body, credentials: scope.credentials)
        }
        if let upload { built.streamedBody = upload }
        built.redirectPolicy = request.redirectPolicy ?? configuration.redirectPolicy
        // No credential in clear text to another machine (its own, the defaults', the token to come); for a relative
        // path that is one flag worked out with the client.
        if isAbsolute ? !scope.allowsCleartext && Cleartext.isExposed(built.url) : scope.baseIsExposed {
            try scope.refuseCleartextCredentials(
                in: built, exposed: true, authorized: willAuthorize(request, isTrusted: isTrusted))
        }
        guard let entry = keptFor else { return BuiltRequest(request: built, isTrusted: isTrusted) }
        let plain = RecentURLs.PlainGET(
            request: built, isTrusted: isTrusted,
            sharingKey: RequestKey(
                built, varyingOn: configuration.coalescingHeaders, ignoring: configuration.coalescingIgnoredHeaders))
        recentURLs.keep(plain, for: entry)
        return BuiltRequest(request: built, isTrusted: isTrusted, sharingKey: plain.sharingKey)
    }
}
