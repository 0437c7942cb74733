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

    /// Every contender; with `decoded`, each one decodes the body into a ``SampleItem`` as well (Courier once per
    /// flight, the raw clients with a `JSONDecoder` of their own per call, as a service would).
    static func all(url: URL, decoded: Bool = false) -> [Contender] {
        [
            rawAsyncHTTPClient(url, decoded: decoded),
            rawAsyncHTTPClientFutures(url, decoded: decoded),
            rawAsyncHTTPClientWithItsDefaults(url, decoded: decoded),
            courier(url, "Courier + AsyncHTTPClientTransport", transport: AsyncHTTPClientTransport(), decoded: decoded),
            courier(
                url, "Courier + AsyncHTTPClientTransport, no cache", transport: AsyncHTTPClientTransport(), cache: nil,
                decoded: decoded),
            courier(url, "Courier + URLSessionTransport", transport: URLSessionTransport(), decoded: decoded),
            rawURLSession(url, decoded: decoded),
        ]
    }

    /// Whether `body` is a non-empty answer, decoded into a ``SampleItem`` when the run asks for decoding.
    static func accepts(_ body: Data, decoded: Bool) -> Bool {
        guard decoded else { return !body.isEmpty }
        return (try? JSONDecoder().decode(SampleItem.self, from: body)) != nil
    }

    /// AsyncHTTPClient as a service would call it, with the transport's client configuration.
    static func rawAsyncHTTPClient(_ url: URL, decoded: Bool) -> Contender {
        rawAsyncHTTPClient(
            url, "raw AsyncHTTPClient", configuration: AsyncHTTPClientTransport.defaultConfiguration, decoded: decoded)
    }

    /// ``rawAsyncHTTPClient(_:decoded:)`` on AsyncHTTPClient's own default configuration, as a service that adopts it
    /// without Courier starts: it follows redirects, decompresses, and names a span for the process's tracer (the
    /// no-op one unless the service bootstrapped another), which ``AsyncHTTPClientTransport/defaultConfiguration``
    /// leaves out. Not the contender Courier's overhead is measured against (that one has the transport's
    /// configuration): it shows what a service pays per request for AsyncHTTPClient's defaults.
    static func rawAsyncHTTPClientWithItsDefaults(_ url: URL, decoded: Bool) -> Contender {
        rawAsyncHTTPClient(url, "raw AsyncHTTPClient, its defaults", configuration: .init(), decoded: decoded)
    }

    /// AsyncHTTPClient's async API on `configuration`, named `name`.
    private static func rawAsyncHTTPClient(
        _ url: URL, _ name: String, configuration: HTTPClient.Configuration, decoded: Bool
    ) -> Contender {
        let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        let base = url.absoluteString
        return Contender(name: name) { key in
            let response = try await client.execute(
                HTTPClientRequest(url: base + "?key=\(key)"), deadline: .distantFuture)
            let body = Data(try await response.body.collect(upTo: 1 << 20).readableBytesView)
            return response.status.code == 200 && accepts(body, decoded: decoded)
        } close: {
            try? await client.shutdown()
        }
    }

    /// AsyncHTTPClient's older API, which buffers the body in its own delegate and completes a future: no hop per body
    /// chunk, as ``AsyncHTTPClientTransport`` does it. Where it beats the async API, Courier is measured against it.
    static func rawAsyncHTTPClientFutures(_ url: URL, decoded: Bool) -> Contender {
        let client = HTTPClient(
            eventLoopGroup: HTTPClient.defaultEventLoopGroup,
            configuration: AsyncHTTPClientTransport.defaultConfiguration)
        let base = url.absoluteString
        return Contender(name: "raw AsyncHTTPClient, futures") { key in
            let response = try await client.execute(request: HTTPClient.Request(url: base + "?key=\(key)")).get()
            guard response.status.code == 200, let body = response.body else { return false }
            return decoded ? accepts(Data(body.readableBytesView), decoded: true) : body.readableBytes > 0
        } close: {
            try? await client.shutdown()
        }
    }

    /// Courier's ``APIClient`` with its default configuration (cache, coalescing and retries on) over `transport`,
    /// or with `cache` instead of the default cache.
    static func courier(
        _ url: URL, _ name: String, transport: any HTTPTransport, cache: ResponseCache? = ResponseCache(),
        decoded: Bool
    ) -> Contender {
        let client = APIClient(baseURL: url, configuration: .init(transport: transport, cache: cache))
        let send: @Sendable (Int) async throws -> Bool
        if decoded {
            send = { key in
                let response = try await client.send(
                    APIRequest<SampleItem>.get("", query: [URLQueryItem(name: "key", value: "\(key)")]))
                return response.statusCode == 200 && response.value.id == 1
            }
        } else {
            send = { key in
                let response = try await client.send(
                    APIRequest<Data>.get("", query: [URLQueryItem(name: "key", value: "\(key)")]))
                return response.statusCode == 200 && !response.value.isEmpty
            }
        }
        return Contender(name: name, send: send) {
            try? await (transport as? AsyncHTTPClientTransport)?.shutdown()
        }
    }

    /// URLSession with the configuration ``URLSessionTransport`` gives its own session.
    static func rawURLSession(_ url: URL, decoded: Bool) -> Contender {
        let session = URLSession(configuration: URLSessionTransport.defaultConfiguration)
        let base = url.absoluteString
        return Contender(name: "raw URLSession") { key in
            let (body, response) = try await session.data(for: URLRequest(url: URL(string: base + "?key=\(key)")!))
            return (response as? HTTPURLResponse)?.statusCode == 200 && accepts(body, decoded: decoded)
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
    /// Context switches of this process's threads per request (`getrusage`: voluntary, a thread that waited, and
    /// involuntary, one preempted): each voluntary one is a thread that went to sleep and was woken again.
    let contextSwitches: Double
}

enum Load {
    /// Keeps `concurrency` requests in flight until every key was fetched.
    /// A failed request counts as not done: the run stops with an error instead of reporting a rate for less work.
    static func concurrent(keys: Range<Int>, concurrency: Int, send: @escaping @Sendable (Int) async throws -> Bool)
        async -> RoundResult
    {
        let before = ProcessUsage()
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
        let after = ProcessUsage()
        precondition(failures == 0, "\(failures) of \(keys.count) requests failed")
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        let requests = Double(keys.count)
        return RoundResult(
            rate: requests / seconds, cpuMicroseconds: (after.cpu - before.cpu) * 1e6 / requests,
            contextSwitches: Double(after.contextSwitches - before.contextSwitches) / requests)
    }
}

/// What `getrusage` says of this process so far, every thread counted.
struct ProcessUsage {
    /// User plus system CPU time, in seconds.
    let cpu: Double
    /// Voluntary plus involuntary context switches.
    let contextSwitches: Int

    init() {
        var usage = rusage()
        #if os(Linux)
            getrusage(RUSAGE_SELF.rawValue, &usage)
        #else
            getrusage(RUSAGE_SELF, &usage)
        #endif
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) * 1e-6 }
        cpu = seconds(usage.ru_utime) + seconds(usage.ru_stime)
        contextSwitches = usage.ru_nvcsw + usage.ru_nivcsw
    }
}
