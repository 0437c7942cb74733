import Foundation
import Synchronization
import Testing

@testable import Courier

/// A URL kept as text is parsed by whichever reader comes first, under a lock inline in its owner (a request's
/// storage, a recent URL's entry). Two threads reading one fresh URL at the same moment contend for that lock.
///
/// These tests are checked by ThreadSanitizer in CI. The lock was the standard library's `Mutex`, whose contended
/// hand-off ThreadSanitizer cannot see: it reported the parse as a data race and failed CI (two warnings in
/// `tasksReadingAFirstSightURLAtOnceAllReadTheSameURL`, one run in four). With `Mutex` in place of ``InlineLock`` these
/// rounds report it on every run; the counts check that the lock also does its job.
@Suite(.serialized, .timeLimit(.minutes(1))) struct LazyURLRaceTests {
    private static let rounds = 1_000
    private let base = URLBuilder.Base(URL(string: "https://api.example.com/v1")!)

    @Test func twoThreadsReadingAFreshRequestsURLAtOnceReadTheSameURL() async throws {
        var requests: [TransportRequest] = []
        for round in 0..<Self.rounds {
            let query = [URLQueryItem(name: "page", value: String(round))]
            guard
                case .firstSight(let text) = try URLBuilder.resolve(
                    base: base, path: "/items", query: query, recent: RecentURLs())
            else {
                Issue.record("a new table of recent URLs knew the URL already")
                return
            }
            requests.append(
                TransportRequest(method: .get, unparsed: text, headers: [:], body: nil, credentials: .standard))
        }
        let built = requests
        let read = try await readFromTwoThreads(built.count) { built[$0].url }
        #expect(read.count == Self.rounds)
        for (round, urls) in read.enumerated() {
            #expect(urls.0 == urls.1 && urls.0.query == "page=\(round)")
        }
    }

    @Test func twoThreadsReadingAFreshRecentURLAtOnceReadTheSameURL() async throws {
        let entries = (0..<Self.rounds).map { round in
            let text = URLText("https://api.example.com/v1/items/\(round)")
            return RecentURLs.Entry(unparsed: text, key: .path("/items/\(round)"))
        }
        let read = try await readFromTwoThreads(entries.count) { entries[$0].url }
        #expect(read.count == Self.rounds)
        for (round, urls) in read.enumerated() {
            #expect(urls.0 == urls.1 && urls.0.lastPathComponent == String(round))
        }
        #expect(entries.allSatisfy { $0.isParsed })
    }

    /// Reads item `i` from two threads that meet at a spinning barrier before each item, so that they reach its lock
    /// within nanoseconds of each other, off the cooperative pool.
    private func readFromTwoThreads(_ count: Int, _ read: @escaping @Sendable (Int) -> URL) async throws -> [(URL, URL)]
    {
        try await offTheCooperativePool {
            let results = Locked([(URL?, URL?)](repeating: (nil, nil), count: count))
            let arrived = Atomic<Int>(0)
            let done = DispatchSemaphore(value: 0)
            @Sendable func readEach(_ store: @escaping @Sendable (inout (URL?, URL?), URL) -> Void) {
                for index in 0..<count {
                    arrived.add(1, ordering: .acquiringAndReleasing)
                    var spins = 0
                    while arrived.load(ordering: .acquiring) < 2 * (index + 1) {
                        spins += 1
                        if spins > 1_000 { sched_yield() }  // the other thread is off its core: let it run
                    }
                    let url = read(index)
                    results.withLock { store(&$0[index], url) }
                }
            }
            Thread {
                readEach { $0.1 = $1 }
                done.signal()
            }.start()
            readEach { $0.0 = $1 }
            done.wait()
            return results.withLock { $0 }.map { ($0.0!, $0.1!) }
        }
    }
}
