// Requests per second against a real server (nginx on loopback, started by Scripts/throughput.sh): raw
// AsyncHTTPClient, Courier over AsyncHTTPClientTransport, Courier over URLSessionTransport and raw URLSession, each
// fetching a small JSON file under distinct keys (`?key=…`, never the same twice, so Courier's cache only misses),
// first with many tasks at once, then one request after another. Contenders take turns within each round, in a
// rotating order, so that a busy moment on the machine falls on all of them, and every round makes its clients anew;
// the table shows each one's median.
//
//   swift run -c release CourierAHCThroughput --url http://127.0.0.1:18190/item.json \
//       [--requests 10000] [--concurrency 100] [--sequential 2000] [--rounds 5] [--only NAME ...]
//       [--loads concurrent,sequential] [--decoded]
//   Sequential CPU per request, AsyncHTTPClient with and without Courier (Scripts/sequential-cpu.sh):
//   ... --loads sequential --only "raw AsyncHTTPClient" --only "Courier + AsyncHTTPClientTransport" [--decoded]
//   ... --only NAME --single N [--warm-up 1200]   one contender, N requests, untimed (Scripts/instructions.sh)
import AsyncHTTPClient
import Courier
import CourierAsyncHTTPClient
import Dispatch
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

let options = try ThroughputOptions(CommandLine.arguments.dropFirst())

/// Every contender with a client of its own, made new for each round. A client settles into one state for its
/// lifetime (which event loop its pooled connections landed on, among others): with clients kept for a whole run, the
/// same binary measured one raw AsyncHTTPClient contender at 37 µs of CPU per request in one run and 64 µs in the next,
/// which moved every ratio against it by ±20 %. New clients each round spread those states over the rounds, and the
/// median takes the typical one.
func makeContenders() -> [Contender] {
    let all = Contender.all(url: options.url, decoded: options.decoded)
    guard !options.only.isEmpty else { return all }
    // A name given whole selects that contender alone, though it is part of another's name too.
    return all.filter { contender in
        options.only.contains { only in
            contender.name == only || (!all.contains { $0.name == only } && contender.name.contains(only))
        }
    }
}

func progress(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}

/// The interleaved rounds and the table.
func measureRounds() async {
    var results: [String: [String: [Double]]] = [:]
    var cpu: [String: [String: [Double]]] = [:]
    var switches: [String: [String: [Double]]] = [:]
    var names: [String] = []
    var keys = 0
    func nextKeys(_ count: Int) -> Range<Int> {
        defer { keys += count }
        return keys..<(keys + count)
    }
    for (label, requests, concurrency) in [
        ("concurrent", options.requests, options.concurrency), ("sequential", options.sequential, 1),
    ] where options.loads.contains(label) {
        for round in 0..<options.rounds {
            let contenders = makeContenders()
            names = contenders.map(\.name)
            // Opens each new client's connections, and fills each Courier client's cache halfway, before it is timed.
            for contender in contenders {
                _ = await Load.concurrent(keys: nextKeys(500), concurrency: options.concurrency, send: contender.send)
            }
            let order = contenders.indices.map { contenders[($0 + round) % contenders.count] }
            for contender in order {
                let measured = await Load.concurrent(
                    keys: nextKeys(requests), concurrency: concurrency, send: contender.send)
                results[label, default: [:]][contender.name, default: []].append(measured.rate)
                cpu[label, default: [:]][contender.name, default: []].append(measured.cpuMicroseconds)
                switches[label, default: [:]][contender.name, default: []].append(measured.contextSwitches)
                progress(
                    "\(label) round \(round + 1): \(contender.name) \(Int(measured.rate)) requests/s, "
                        + "\(Int(measured.cpuMicroseconds)) µs CPU, "
                        + String(format: "%.2f", measured.contextSwitches) + " context switches per request")
            }
            for contender in contenders { await contender.close() }
        }
    }
    let report = ThroughputReport(
        options: options, contenders: names, results: results, cpu: cpu, switches: switches)
    print(report.markdown)
}

/// `--single N`: the one contender `--only` names sends N requests after a warm-up, untimed, for a run under
/// callgrind (Scripts/instructions.sh): its instructions per request are the figure that repeats on this machine.
func sendOnce(_ count: Int) async {
    let contenders = makeContenders()
    guard contenders.count == 1, let contender = contenders.first else {
        progress("--single needs --only naming exactly one contender")
        exit(2)
    }
    _ = await Load.concurrent(keys: 0..<options.warmUp, concurrency: options.concurrency, send: contender.send)
    _ = await Load.concurrent(
        keys: options.warmUp..<(options.warmUp + count), concurrency: options.concurrency, send: contender.send)
    await contender.close()
}

// A synchronous entry point that waits for a detached task: valgrind 3.19 crashes on Swift's async `main` once a
// dispatch timer exists, and `--single` runs under it.
let finished = DispatchSemaphore(value: 0)
Task.detached {
    if let count = options.single { await sendOnce(count) } else { await measureRounds() }
    finished.signal()
}
finished.wait()
