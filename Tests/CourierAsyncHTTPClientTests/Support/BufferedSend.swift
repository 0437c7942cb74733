#if AsyncHTTPClient
    import Courier
    import CourierAsyncHTTPClient
    import Testing

    /// The two ways the transport sends a request whose response it buffers: ``AsyncHTTPClientTransport/send(_:)`` on
    /// AsyncHTTPClient's async API, and ``AsyncHTTPClientTransport/send(_:deadline:)`` (what `APIClient` calls) on its
    /// task API. Tests of what both must do run with each.
    enum BufferedSend: String, CaseIterable, CustomTestStringConvertible {
        case plain
        case withDeadline

        var testDescription: String { rawValue }

        func send(_ request: TransportRequest, with transport: AsyncHTTPClientTransport) async throws
            -> TransportResponse
        {
            switch self {
            case .plain: try await transport.send(request)
            case .withDeadline: try await transport.send(request, deadline: TransportDeadline(timeout: .seconds(60)))
            }
        }
    }
#endif
