#if AsyncHTTPClient
    import AsyncHTTPClient
    import Courier
    import Foundation
    import NIOCore
    import NIOHTTP1
    import NIOHTTP2
    import NIOPosix
    import NIOSSL

    extension AsyncHTTPClientTransport {
        /// Maps AsyncHTTPClient's and SwiftNIO's errors onto Courier's, keeping the original as the cause, as
        /// ``URLSessionTransport`` maps `URLError`s.
        ///
        /// - A cancellation is `CancellationError` only when the calling task was cancelled; AsyncHTTPClient also
        ///   cancels requests itself (a client shutting down), which is a ``TransportFailure/other`` failure.
        /// - A connection that ends before the body does (a reset, a close before `Content-Length` bytes, a TLS
        ///   connection closed without `close_notify`, an HTTP/2 stream reset) is ``TransportFailure/connectionLost``:
        ///   an idempotent request may be retried.
        /// - An ``APIError`` (a streamed request body that failed to read its file, say) passes through unchanged.
        static func translate(_ error: any Error, for url: URL) -> any Error {
            if error is CancellationError || error is APIError { return error }
            if let clientError = error as? HTTPClientError {
                if Task.isCancelled, clientError == .cancelled || clientError == .requestStreamCancelled {
                    return CancellationError()
                }
                return APIError.transport(failure(for: clientError), underlying: clientError)
            }
            return APIError.transport(failure(for: error), underlying: error)
        }

        private static func failure(for error: HTTPClientError) -> TransportFailure {
            switch error {
            case .connectTimeout, .readTimeout, .writeTimeout, .deadlineExceeded, .tlsHandshakeTimeout,
                .getConnectionFromPoolTimeout, .socksHandshakeTimeout, .httpProxyHandshakeTimeout:
                .timedOut
            case .remoteConnectionClosed, .uncleanShutdown:
                .connectionLost
            case .identityCodingIncorrectlyPresent:
                .badServerResponse
            default:
                .other
            }
        }

        private static func failure(for error: any Error) -> TransportFailure {
            switch error {
            case let error as IOError:
                failure(errno: error.errnoCode)
            case let error as NIOConnectionError:
                error.connectionErrors.isEmpty && (error.dnsAError != nil || error.dnsAAAAError != nil)
                    ? .dnsFailure : .cannotConnect
            case is SocketAddressError:
                .dnsFailure
            case let error as ChannelError:
                channelFailure(error)
            case let error as HTTPParserError:
                error == .invalidEOFState ? .connectionLost : .badServerResponse
            case let error as NIOSSLError:
                error == .uncleanShutdown ? .connectionLost : .secureConnectionFailed
            case is NIOSSLExtraError, is BoringSSLError:
                .secureConnectionFailed
            case is NIOHTTP2Errors.StreamClosed:
                .connectionLost
            case is any NIOHTTP2Error:
                .badServerResponse
            default:
                .other
            }
        }

        private static func failure(errno: Int32) -> TransportFailure {
            switch errno {
            case ECONNREFUSED, ENETUNREACH, EHOSTUNREACH, EADDRNOTAVAIL: .cannotConnect
            case ECONNRESET, EPIPE, ECONNABORTED: .connectionLost
            case ETIMEDOUT: .timedOut
            default: .other
            }
        }

        private static func channelFailure(_ error: ChannelError) -> TransportFailure {
            switch error {
            case .connectTimeout: .timedOut
            case .ioOnClosedChannel, .alreadyClosed, .eof, .outputClosed, .inputClosed: .connectionLost
            default: .other
            }
        }
    }
#endif
