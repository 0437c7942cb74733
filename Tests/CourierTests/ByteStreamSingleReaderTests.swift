import Foundation
import Testing

@testable import Courier

/// A ``ByteStream`` has one reader: a second iteration (after the first, or beside it) fails at once with
/// ``APIError/streamAlreadyRead`` instead of racing the first for chunks or waiting for ever.
@Suite(.timeLimit(.minutes(1))) struct ByteStreamSingleReaderTests {
    private static func chunks(_ count: Int) -> ByteStream {
        let next = Locked(0)
        return ByteStream(next: {
            next.withLock { index -> Data? in
                guard index < count else { return nil }
                index += 1
                return Data([UInt8(index)])
            }
        })
    }

    @Test func aSecondIterationFailsWithStreamAlreadyRead() async throws {
        let stream = Self.chunks(3)
        #expect(try await stream.collect(upTo: 10) == Data([1, 2, 3]))
        let error = await #expect(throws: APIError.self) {
            for try await _ in stream {}
        }
        guard case .streamAlreadyRead? = error else {
            Issue.record("expected streamAlreadyRead, got \(String(describing: error))")
            return
        }
    }

    @Test func twoConcurrentReadersGetOneStreamAndOneError() async throws {
        for _ in 0..<200 {
            let stream = Self.chunks(50)
            let results = await withTaskGroup(of: Result<Data, any Error>.self) { group in
                for _ in 0..<2 {
                    group.addTask {
                        do { return .success(try await stream.collect(upTo: .max)) } catch { return .failure(error) }
                    }
                }
                return await group.reduce(into: [Result<Data, any Error>]()) { $0.append($1) }
            }
            let whole = results.compactMap { try? $0.get() }
            let refused = results.filter {
                if case .failure(APIError.streamAlreadyRead) = $0 { true } else { false }
            }
            #expect(whole == [Data((1...50).map(UInt8.init))])
            #expect(refused.count == 1)
        }
    }

    @Test func aCopyOfTheStreamIsTheSameStream() async throws {
        let stream = Self.chunks(2)
        let copy = stream
        var iterator = stream.makeAsyncIterator()
        #expect(try await iterator.next() == Data([1]))
        await #expect(throws: APIError.self) { _ = try await copy.collect(upTo: 10) }
        #expect(try await iterator.next() == Data([2]))
        #expect(try await iterator.next() == nil)
    }
}
