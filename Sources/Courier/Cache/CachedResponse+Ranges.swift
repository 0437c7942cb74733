import Foundation

/// Partial content (RFC 9111 §3.3–3.4): which bytes an entry holds, answering a `Range` request from them, and
/// combining two parts of one representation.
extension CachedResponse {
    /// Whether this entry holds part of a representation (a stored `206`): it answers only `Range` requests.
    var isPartial: Bool { statusCode == 206 }

    /// The bytes held and the length of the whole representation: a `200` holds all of its body.
    private var held: ContentRange? {
        if let contentRange { return contentRange }
        guard statusCode == 200 else { return nil }
        return ContentRange(bytes: 0..<body.count, length: body.count)
    }

    /// Whether this is a `206` whose body is exactly the range its `Content-Range` names: anything else is not
    /// stored, since serving it would hand out bytes at positions the server never vouched for.
    var isWellFormedPartial: Bool {
        guard let contentRange else { return false }
        return contentRange.bytes.count == body.count
    }

    /// This entry as the `206` answer to `spec` (RFC 9110 §14.2), the stored header fields kept and the framing
    /// fields set for the part; `nil` when the bytes asked for are not all held (or none exist).
    func answering(_ spec: ByteRangeSpec) -> CachedResponse? {
        guard let held, let wanted = spec.resolved(length: held.length),
            held.bytes.lowerBound <= wanted.lowerBound, wanted.upperBound <= held.bytes.upperBound
        else { return nil }
        let start = response.body.startIndex + (wanted.lowerBound - held.bytes.lowerBound)
        var headers = response.headers
        headers["Content-Range"] = ContentRange(bytes: wanted, length: held.length).fieldValue
        headers["Content-Length"] = String(wanted.count)
        var answer = self
        answer.response = TransportResponse(
            statusCode: 206, headers: headers, body: response.body.subdata(in: start..<(start + wanted.count)))
        return answer
    }

    /// This entry combined with a newer part of the same representation (RFC 9111 §3.4): both carry the same
    /// strong entity tag and the same complete length, and their bytes meet or overlap. The stored header fields
    /// are updated with the newer ones (§3.2); the parts together become one `206`, or a `200` once they make the
    /// whole. `nil` when they do not combine.
    ///
    /// - Parameters:
    ///   - newer: The part just received.
    ///   - request: The request `newer` answers.
    func combined(with newer: CachedResponse, request: TransportRequest) -> CachedResponse? {
        guard let held, let part = newer.contentRange, newer.isWellFormedPartial, part.length == held.length,
            let tag = etag, let newerTag = newer.etag, !tag.hasPrefix("W/"), tag == newerTag,
            part.bytes.lowerBound <= held.bytes.upperBound, held.bytes.lowerBound <= part.bytes.upperBound
        else { return nil }
        let union =
            min(held.bytes.lowerBound, part.bytes.lowerBound)..<max(held.bytes.upperBound, part.bytes.upperBound)
        var body = Data(capacity: union.count)
        if held.bytes.lowerBound < part.bytes.lowerBound {
            body.append(response.body.prefix(part.bytes.lowerBound - held.bytes.lowerBound))
        }
        body.append(newer.response.body)
        if held.bytes.upperBound > part.bytes.upperBound {
            body.append(response.body.suffix(held.bytes.upperBound - part.bytes.upperBound))
        }
        var headers = Self.updatedFields(response.headers, with: newer.response.headers)
        let whole = ContentRange(bytes: union, length: held.length)
        if whole.isComplete {
            headers.remove(name: "Content-Range")
        } else {
            headers["Content-Range"] = whole.fieldValue
        }
        headers["Content-Length"] = String(union.count)
        let combined = TransportResponse(statusCode: whole.isComplete ? 200 : 206, headers: headers, body: body)
        return CachedResponse(
            response: combined, request: request, requestTime: newer.requestTime, responseTime: newer.responseTime,
            defaultFreshness: newer.defaultFreshness)
    }
}
