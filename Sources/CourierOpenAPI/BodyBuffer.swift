#if OpenAPI
    import Courier
    import Foundation
    import HTTPTypes
    import OpenAPIRuntime

    /// The one place where bodies change form between the OpenAPI runtime (`HTTPBody`, a sequence of chunks) and
    /// Courier (whole `Data`). Courier's calls buffer today; when a streaming call exists, only this file changes.
    enum BodyBuffer {
        /// The whole request body as a Courier payload, or `nil` when there is none. The generated client sets
        /// `Content-Type` itself, so the payload adds none.
        ///
        /// - Throws: ``Courier/APIError/encodingFailed(_:)`` when the body cannot be read (a single-use body read
        ///   twice, a stream that failed): nothing is sent.
        static func payload(of body: HTTPBody?) async throws -> RequestPayload? {
            guard let body else { return nil }
            do {
                return .data(try await Data(collecting: body, upTo: .max), contentType: nil)
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                throw APIError.encodingFailed(error)
            }
        }

        /// The response body for the generated client: none for `HEAD`, whose response never has one; otherwise the
        /// bytes (possibly none), readable any number of times.
        static func body(of response: TransportResponse, for method: HTTPRequest.Method) -> HTTPBody? {
            method == .head ? nil : HTTPBody(response.body)
        }
    }
#endif
