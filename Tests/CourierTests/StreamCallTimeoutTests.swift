import Foundation
import Testing

@testable import Courier

/// ``APIRequest/callTimeout`` bounds a streamed call to its end, reading included: an endless body whose chunks keep
/// coming fails with ``APIError/timedOut(_:)`` once the call's time is up, where the idle timeout alone never fires.
@Suite(.timeLimit(.minutes(1))) struct StreamCallTimeoutTests {
    /// A transport whose body never ends: one chunk per second of the test's clock.
    private struct EndlessTransport: HTTPTransport {
        let clock: TestClock

        func send(_ request: TransportRequest) async throws -> TransportResponse { TransportResponse(statusCode: 500) }

        func stream(_ request: TransportRequest) async throws -> StreamedTransportResponse {
            StreamedTransportResponse(
                statusCode: 200,
                body: ByteStream(next: { [clock] in
                    try await clock.sleep(for: .seconds(1))
                    return Data(repeating: 0x61, count: 100)
                }))
        }
    }

    private static let callTimeout = Duration.seconds(10)

    private func client(clock: TestClock) -> APIClient {
        APIClient(
            baseURL: URL(string: "https://api.example.com")!,
            configuration: .init(
                transport: EndlessTransport(clock: clock), cache: nil, retryPolicy: .never, timeout: .seconds(60),
                clock: clock))
    }

    /// Moves the clock one second at a time until cancelled, at most `limit` seconds; returns the seconds moved.
    private static func tick(_ clock: TestClock, limit: Int) async -> Int {
        var seconds = 0
        while !Task.isCancelled, seconds < limit {
            await clock.waitForSleeper(of: .seconds(1))
            guard !Task.isCancelled else { break }
            clock.advance(by: .seconds(1))
            seconds += 1
        }
        return seconds
    }

    @Test func anEndlessDownloadEndsAtTheCallTimeout() async throws {
        let clock = TestClock()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var request = APIRequest<Void>.get("/endless")
        request.callTimeout = Self.callTimeout
        let download = client(clock: clock).download(request, to: directory.appendingPathComponent("endless.bin"))
        let mover = Task { await Self.tick(clock, limit: 30) }
        let outcome = Task {
            // Stops the mover once the download ended (its wait for a sleeper returns when cancelled).
            defer { mover.cancel() }
            return await #expect(throws: APIError.self) { try await download.value }
        }
        let moved = await mover.value
        if moved >= 30 { download.cancel() }
        let error = await outcome.value
        guard case .timedOut? = error else {
            Issue.record("expected timedOut, got \(String(describing: error))")
            return
        }
        #expect(moved <= 11)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }

    @Test func anEndlessStreamEndsAtTheCallTimeout() async throws {
        let clock = TestClock()
        var request = APIRequest<Data>.get("/endless")
        request.callTimeout = Self.callTimeout
        let client = client(clock: clock)
        let mover = Task { await Self.tick(clock, limit: 30) }
        let reading = Task {
            defer { mover.cancel() }
            return await #expect(throws: APIError.self) {
                let response = try await client.stream(request)
                for try await _ in response.body {}
            }
        }
        let moved = await mover.value
        if moved >= 30 { reading.cancel() }
        let error = await reading.value
        #expect(moved <= 11)
        guard case .timedOut? = error else {
            Issue.record("expected timedOut, got \(String(describing: error))")
            return
        }
    }
}
