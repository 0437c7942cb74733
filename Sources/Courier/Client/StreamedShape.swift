import Foundation

/// What sets the streamed shapes of a call (``APIClient/stream(_:)``, downloads, uploads, server-sent events) apart
/// from `send`: the response's body is handed over as it arrives instead of being collected, and an upload's body is
/// produced while it is sent. Every other step of the call is the one pipeline's (see <doc:Architecture>).
///
/// A class, so that the call and the attempt carry one reference (the retry loop's frames stay as small as a buffered
/// call's), and so that the attempt that receives an acceptable head can hand its body to the exchange.
final class StreamedShape: Sendable {
    /// The body an upload sends in place of the request's own, read as it is sent.
    let upload: StreamedBody?
    /// The upload's `Content-Type`, unless the request's headers name one; validated with the other headers.
    let uploadContentType: String?
    /// Told the bytes of the upload's body as the transport reads them, from 0 for each attempt. Attached to the body
    /// an attempt sends, after the adapters: a signer that reads the body for its digest is not counted as sending.
    let progress: ProgressReporter?
    /// The body of the acceptable response, from the attempt that received its head to the exchange.
    private let arriving = InlineLock<ByteStream?>(nil)

    init(upload: StreamedBody? = nil, uploadContentType: String? = nil, progress: ProgressReporter? = nil) {
        self.upload = upload
        self.uploadContentType = uploadContentType
        self.progress = progress
    }

    /// Keeps the body of an acceptable response for ``takeArrivingBody()``.
    func hold(_ body: ByteStream) {
        arriving.withLock { $0 = body }
    }

    /// The body an attempt kept, once.
    func takeArrivingBody() -> ByteStream? {
        arriving.withLock { body in
            defer { body = nil }
            return body
        }
    }
}
