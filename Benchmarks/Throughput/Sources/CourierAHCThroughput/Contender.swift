import AsyncHTTPClient
import Courier
import CourierAsyncHTTPClient
import Foundation
import NIOCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One way of fetching the JSON file: sends the request for a key and says whether a 200 with a body came back.
struct Contender: Sendable {
    let name: String
    let send: @Sendable (Int) async throws -> Bool
    let close: @Sendable () async -> Void

    static func all(url: URL) -> [Contender] {
        [
            rawAsyncHTTPClient(url),
            rawAsyncHTTPClientFutures(url),
            courier(url, "Courier + AsyncHTTPClientTransport", transport: AsyncHTTPClientTransport()),
            courier(
                url, "Courier + AsyncHTTPClientTransport, no cache", transport: AsyncHTTPClientTransport(), cache: nil),
            courier(url, "Courier + URLSessionTransport", transport: URLSessionTransport()),
            rawURLSession(url),
        ]
    }

    /// AsyncHTTPClient as a service would call it, with the transport's client configuration.
    static func rawAsyncHTTPClient(_ url: URL) -> Contender {
        let client = HTTPClient(
            eventLoopGroup: HTTPClient.defaultEventLoopGroup,
            configuration: AsyncHTTPClientTransport.defaultConfiguration)
        let base = url.absoluteString
        return Contender(name: "raw AsyncHTTPClient") { key in
            let response = try await client.execute(
                HTTPClientRequest(url: base + "?key=\(key)"), deadline: .distantFuture)
            let body = Data(try await response.body.collect(upTo: 1 << 20).readableBytesView)
            return response.status.code == 200 && !body.isEmpty
        } close: {
            try? await client.shutdown()
        }
    }

    /// AsyncHTTPClient's older API, which buffers the body in its own delegate and completes a future: no hop per body
    /// chunk, as ``AsyncHTTPClientTransport`` does it. Where it beats the async API, Courier is measured against it.
    static func rawAsyncHTTPClientFutures(_ url: URL) -> Contender {
        let client = HTTPClient(
            eventLoopGroup: HTTPClient.defaultEventLoopGroup,
            configuration: AsyncHTTPClientTransport.defaultConfiguration)
        let base = url.absoluteString
        return Contender(name: "raw AsyncHTTPClient, futures") { key in
            let response = try await client.execute(request: HTTPClient.Request(url: base + "?key=\(key)")).get()
            return response.status.code == 200 && (response.body?.readableBytes ?? 0) > 0
        } close: {
            try? await client.shutdown()
        }
    }

    /// Courier's ``APIClient`` with its default configuration (cache, coalescing and retries on) over `transport`,
    /// or with `cache` instead of the default cache.
    static func courier(
        _ url: URL, _ name: String, transport: any HTTPTransport, cache: ResponseCache? = ResponseCache()
    ) -> Contender {
        let client = APIClient(baseURL: url, configuration: .init(transport: transport, cache: cache))
        return Contender(name: name) { key in
            let response = try await client.send(
                APIRequest<Data>.get("", query: [URLQueryItem(name: "key", value: "\(key)")]))
            return response.statusCode == 200 && !response.value.isEmpty
        } close: {
            try? await (transport as? AsyncHTTPClientTransport)?.shutdown()
        }
    }

    /// URLSession with the configuration ``URLSessionTransport`` gives its own session.
    static func rawURLSession(_ url: URL) -> Contender {
        let session = URLSession(configuration: URLSessionTransport.defaultConfiguration)
        let base = url.absoluteString
        return Contender(name: "raw URLSession") { key in
            let (body, response) = try await session.data(for: URLRequest(url: URL(string: base + "?key=\(key)")!))
            return (response as? HTTPURLResponse)?.statusCode == 200 && !body.isEmpty
        } close: {
            session.finishTasksAndInvalidate()
        }
    }
}

/// What one round of one contender measured.
struct RoundResult {
    /// Requests per second.
    let rate: Double
    /// CPU time (user and system) this process spent per request, in microseconds: the client's own cost, whatever
    /// the machine's other load does to the rate. nginx runs in its own process and is not counted.
    let cpuMicroseconds: Double
}

enum Load {
    /// Keeps `concurrency` requests in flight until every key was fetched.
    /// A failed request counts as not done: the run stops with an error instead of reporting a rate for less work.
    static func concurrent(keys: Range<Int>, concurrency: Int, send: @escaping @Sendable (Int) async throws -> Bool)
        async -> RoundResult
    {
        let cpuBefore = processCPUTime()
        let start = ContinuousClock.now
        let failures = await withTaskGroup(of: Bool.self, returning: Int.self) { group in
            var next = keys.lowerBound
            var failures = 0
            func add() {
                let key = next
                group.addTask { (try? await send(key)) ?? false }
                next += 1
            }
            while next < min(keys.lowerBound + concurrency, keys.upperBound) { add() }
            while let succeeded = await group.next() {
                if !succeeded { failures += 1 }
                if next < keys.upperBound { add() }
            }
            return failures
        }
        let elapsed = start.duration(to: .now)
        let cpu = processCPUTime() - cpuBefore
        precondition(failures == 0, "\(failures) of \(keys.count) requests failed")
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        return RoundResult(rate: Double(keys.count) / seconds, cpuMicroseconds: cpu * 1e6 / Double(keys.count))
    }

    /// User plus system CPU time of this process so far, in seconds.
    static func processCPUTime() -> Double {
        var usage = rusage()
        #if os(Linux)
            getrusage(RUSAGE_SELF.rawValue, &usage)
        #else
            getrusage(RUSAGE_SELF, &usage)
        #endif
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) * 1e-6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}
