import CourierTesting
import Dispatch
import Foundation
import Synchronization
import Testing

@testable import Courier

/// `send` runs on its caller's executor when the caller is on no actor (no executor change, see
/// `Docs/Performance.md#executor-checks`), and leaves the caller's actor when it has one: a call's steps (its observers'
/// `record` among them) and its decoding never run on the caller's actor, whichever `send` overload is called.
@Suite(.timeLimit(.minutes(1))) struct SendIsolationTests {
    @Test func aCallFromAnActorDecodesOffTheActor() async throws {
        let caller = CallingActor()
        let (decodedOnTheActor, source) = try await caller.sendDecodingOnce()
        #expect(source == .cache)
        #expect(decodedOnTheActor == false)
        #expect(caller.executor.jobs > 0, "the calls ran on the test's actor")
    }

    @Test func aCallOfANonSendableValueFromAnActorDecodesOffTheActor() async throws {
        let caller = CallingActor()
        #expect(try await caller.sendNonSendable() == false)
    }

    @Test func everyOverloadRunsItsStepsOffTheCallersActor() async throws {
        let caller = CallingActor()
        let onTheActor = try await caller.sendEachOverload()
        // Three calls, each with at least requestStarted and requestFinished.
        #expect(onTheActor.count >= 6)
        #expect(onTheActor.allSatisfy { !$0 }, "\(onTheActor.filter { $0 }.count) events were recorded on the actor")
    }
}

/// An actor whose jobs run on a serial queue of its own, so that code can tell whether it runs on the actor.
private actor CallingActor {
    let executor = QueueExecutor()
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// Whether a fresh hit, which the caller decodes itself (a flight decodes in its own task), was decoded on the
    /// actor.
    func sendDecodingOnce() async throws -> (decodedOnTheActor: Bool, source: ResponseSource) {
        let client = makeClient(observer: nil, cached: true)
        _ = try await client.send(APIRequest<Data>.get("/items/1"))
        var request = APIRequest<Placement>.get("/items/1")
        request.decoder = placementDecoder(executor)
        let response = try await client.send(request)
        #expect(executor.isCurrent, "back on the actor")
        return (response.value.decodedOnTheQueue, response.source)
    }

    func sendNonSendable() async throws -> Bool {
        let client = makeClient(observer: nil)
        var request = APIRequest<NonSendablePlacement>.get("/items/1")
        request.decoder = placementDecoder(executor)
        let response = try await client.send(request)
        #expect(executor.isCurrent, "back on the actor")
        return response.value.decodedOnTheQueue
    }

    func sendEachOverload() async throws -> [Bool] {
        let events = EventPlaces(executor)
        let client = makeClient(observer: events)
        _ = try await client.send(APIRequest<Data>.get("/items/1"))
        _ = try await client.send(APIRequest<NonSendablePlacement>.get("/items/2"))
        try await client.send(APIRequest<Void>.get("/items/3"))
        #expect(executor.isCurrent, "back on the actor")
        return events.places
    }
}

private func makeClient(observer: (any CallObserver)?, cached: Bool = false) -> APIClient {
    let transport = StubTransport.responding(headers: ["Cache-Control": "max-age=60"], body: #"{"id": 1}"#)
    var configuration = APIClient.Configuration(
        transport: transport, cache: cached ? ResponseCache() : nil, retryPolicy: .never)
    if let observer { configuration.observers = [observer] }
    return APIClient(baseURL: URL(string: "https://api.example.com")!, configuration: configuration)
}

private let executorKey = CodingUserInfoKey(rawValue: "courier.tests.executor")!

private func placementDecoder(_ executor: QueueExecutor) -> JSONDecoder {
    let decoder = JSONDecoder()
    decoder.userInfo[executorKey] = executor
    return decoder
}

/// Records whether it was decoded on the queue of the executor in its decoder's `userInfo`.
private struct Placement: Decodable, Sendable {
    let decodedOnTheQueue: Bool

    init(from decoder: any Decoder) throws {
        decodedOnTheQueue = (decoder.userInfo[executorKey] as? QueueExecutor)?.isCurrent ?? false
    }
}

/// ``Placement`` for the overload of `send` whose value is not `Sendable`.
private final class NonSendablePlacement: Decodable {
    let decodedOnTheQueue: Bool

    init(from decoder: any Decoder) throws {
        decodedOnTheQueue = (decoder.userInfo[executorKey] as? QueueExecutor)?.isCurrent ?? false
    }
}

/// For each event a call records, whether it was recorded on the executor's queue.
private final class EventPlaces: CallObserver {
    private let executor: QueueExecutor
    private let recorded = Mutex<[Bool]>([])

    init(_ executor: QueueExecutor) {
        self.executor = executor
    }

    var places: [Bool] { recorded.withLock { $0 } }

    func record(_ event: ClientEvent, in log: EventLog) {
        let onTheQueue = executor.isCurrent
        recorded.withLock { $0.append(onTheQueue) }
    }
}

/// A serial executor over one dispatch queue, which knows whether it is running a job.
private final class QueueExecutor: SerialExecutor, @unchecked Sendable {
    // Unchecked: the queue and the key are set once in `init` and only read after; the count is atomic.
    private let queue = DispatchQueue(label: "courier.tests.calling-actor")
    private let key = DispatchSpecificKey<Bool>()
    private let jobCount = Atomic(0)

    init() {
        queue.setSpecific(key: key, value: true)
    }

    /// Whether the current thread is running a job of this executor.
    var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == true }
    /// How many jobs it ran.
    var jobs: Int { jobCount.load(ordering: .relaxed) }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        jobCount.add(1, ordering: .relaxed)
        queue.async {
            job.runSynchronously(on: self.asUnownedSerialExecutor())
        }
    }
}
