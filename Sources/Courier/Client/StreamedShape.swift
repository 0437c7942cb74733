import Foundation

/// What sets the streamed shapes of a call (``APIClient/stream(_:)``, downloads, uploads, server-sent events) apart
/// from `send`: the response's body is handed over as it arrives instead of being collected, and an upload's body is
/// produced while it is sent. Every other step of the call is the one pipeline's (see <doc:Architecture>).
struct StreamedShape: Sendable {
    /// The body an upload sends in place of the request's own, read as it is sent.
    var upload: StreamedBody?
    /// The upload's `Content-Type`, unless the request's headers name one; validated with the other headers.
    var uploadContentType: String?
    /// Told the bytes of the upload's body as the transport reads them, from 0 for each attempt. Attached to the body
    /// an attempt sends, after the adapters: a signer that reads the body for its digest is not counted as sending.
    var progress: ProgressReporter?
}
