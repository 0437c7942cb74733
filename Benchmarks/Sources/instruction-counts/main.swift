// instruction-counts: a loop of calls over an in-memory transport, for Scripts/instructions.sh to run under
// callgrind (instructions) and on its own with --mallocs (allocations). See the script for the method.
//
// The entry point is synchronous on purpose: valgrind 3.19 crashes on Swift's async main once a dispatch timer
// exists, so the loop runs in a detached task while this thread waits on a semaphore, and the joiners rounds run
// their tasks on this thread.
import Dispatch
import Foundation
import Synchronization

struct Arguments {
    var scenario = Scenario.cacheOff
    var iterations = 0
    var warmUp: Int?
    var callers = 1_000
    var countsMallocs = false

    static let usage = """
        usage: instruction-counts SCENARIO ITERATIONS [--warm-up N] [--callers 1000] [--mallocs]

          SCENARIO     \(Scenario.allCases.map(\.rawValue).joined(separator: ", "))
          ITERATIONS   calls measured after the warm-up; for joiners and empty-tasks, rounds of --callers callers
          --warm-up    calls (rounds) run before the measured ones; 100 calls (decoded-hit: 2,000) or 1 round by default
          --callers    concurrent callers per round (default 1000)
          --mallocs    count mallocs in the measured iterations (re-executes with the interposer preloaded) and
                       print them per call; never under valgrind
        """

    static func parse(_ arguments: [String]) throws -> Arguments {
        var parsed = Arguments()
        var positional: [String] = []
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            func count() throws -> Int {
                guard let text = remaining.popFirst(), let value = Int(text), value > 0 else {
                    throw HarnessError(description: "\(argument) takes a positive integer")
                }
                return value
            }
            switch argument {
            case "--warm-up": parsed.warmUp = try count()
            case "--callers": parsed.callers = try count()
            case "--mallocs": parsed.countsMallocs = true
            case "--help", "-h":
                print(usage)
                exit(0)
            default: positional.append(argument)
            }
        }
        guard positional.count == 2, let scenario = Scenario(rawValue: positional[0]),
            let iterations = Int(positional[1]), iterations > 0
        else { throw HarnessError(description: "expected a scenario and a positive iteration count") }
        parsed.scenario = scenario
        parsed.iterations = iterations
        return parsed
    }
}

/// Runs a loop in a detached task, blocking this thread until it ends; returns the mallocs of the measured part.
func runLoop(_ loop: CallLoop, warmUp: Int, iterations: Int, mallocs counter: MallocCounter?) throws -> Int {
    final class Outcome: Sendable {
        let result = Mutex<Result<Int, any Error>?>(nil)
    }
    let outcome = Outcome()
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        let result = await Result { () async throws -> Int in
            for _ in 0..<warmUp { try await loop.call() }
            let before = counter?.count ?? 0
            for _ in 0..<iterations { try await loop.call() }
            let mallocs = (counter?.count ?? 0) - before
            try await loop.verify(warmUp + iterations)
            return mallocs
        }
        outcome.result.withLock { $0 = result }
        done.signal()
    }
    done.wait()
    return try outcome.result.withLock { $0! }.get()
}

/// Runs rounds of concurrent callers on this thread; returns the mallocs of the measured rounds.
func runRounds(_ rounds: Rounds, warmUp: Int, iterations: Int, mallocs counter: MallocCounter?) throws -> Int {
    for _ in 0..<warmUp { try rounds.run() }
    let before = counter?.count ?? 0
    for _ in 0..<iterations { try rounds.run() }
    let mallocs = (counter?.count ?? 0) - before
    try rounds.verify(rounds: warmUp + iterations)
    return mallocs
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do {
            self = .success(try await body())
        } catch {
            self = .failure(error)
        }
    }
}

let arguments: Arguments
do {
    arguments = try Arguments.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    FileHandle.standardError.write(Data("error: \(error)\n\n\(Arguments.usage)\n".utf8))
    exit(2)
}
let counter = arguments.countsMallocs ? MallocCounter.start() : nil
if arguments.countsMallocs {
    guard counter != nil else {
        FileHandle.standardError.write(
            Data("error: --mallocs needs libMallocInterposerSwift.so beside the binary\n".utf8))
        exit(1)
    }
}

do {
    let scenario = arguments.scenario
    let calls: Int
    let mallocs: Int
    if scenario.isRound {
        let rounds = Rounds(scenario, callers: arguments.callers)
        mallocs = try runRounds(
            rounds, warmUp: arguments.warmUp ?? 1, iterations: arguments.iterations,
            mallocs: counter)
        calls = arguments.iterations * arguments.callers
    } else {
        mallocs = try runLoop(
            scenario.makeLoop(), warmUp: arguments.warmUp ?? scenario.warmUpCalls, iterations: arguments.iterations,
            mallocs: counter)
        calls = arguments.iterations
    }
    let perCall = arguments.countsMallocs ? String(format: "%.3f", Double(mallocs) / Double(calls)) : "-"
    print("scenario=\(scenario.rawValue) calls=\(calls) mallocs-per-call=\(perCall)")
} catch {
    FileHandle.standardError.write(Data("error: \(arguments.scenario.rawValue): \(error)\n".utf8))
    exit(1)
}
