import Foundation
import Testing

@testable import Courier

/// Scale-out across replicas (Sources/Courier/Courier.docc/ScalingOut.md): four Courier processes, each with its own
/// cache and coalescer, fire the same GET at once through nginx with `proxy_cache` and `proxy_cache_lock` in front
/// of a slow origin. The shared tier lets one request through to the origin; each replica's private copy ages from
/// when the origin answered. Skipped unless `Scripts/interop.sh` started nginx.
@Suite(
    .enabled(if: Interop.isConfigured, "run Scripts/interop.sh, which starts nginx and sets COURIER_INTEROP_*"),
    .timeLimit(.minutes(1)))
struct InteropFleetTests {
    static let replicas = 4

    @Test func fourReplicasBehindASharedCacheCostTheOriginOneRequest() async throws {
        let executable = try #require(ChildProcess.executable, "CourierTestChild is built beside the tests")
        let url = try #require(Interop.baseURL).appendingPathComponent("fleet/item.json")
        var replicas: [(process: Process, input: Pipe, output: Pipe)] = []
        for _ in 0..<Self.replicas {
            let process = Process()
            process.executableURL = executable
            process.arguments = ["fetch", url.absoluteString]
            let input = Pipe()
            let output = Pipe()
            process.standardInput = input
            process.standardOutput = output
            try process.run()
            replicas.append((process, input, output))
        }
        // Every replica is running; release them together. The origin takes two seconds to answer, so all four
        // reach the shared cache while the first is still waiting for it.
        for replica in replicas { replica.input.fileHandleForWriting.write(Data("go\n".utf8)) }
        var reports: [[String: String]] = []
        for replica in replicas {
            // The replicas take two seconds: wait for each on a thread of its own, not one of the pool's.
            let (output, process) = (replica.output, replica.process)
            let (text, status) = try await offTheCooperativePool {
                let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                process.waitUntilExit()
                return (text, process.terminationStatus)
            }
            #expect(status == 0, "a replica failed: \(text)")
            reports.append(
                Dictionary(
                    text.split(whereSeparator: \.isWhitespace).compactMap { pair in
                        let parts = pair.split(separator: "=", maxSplits: 1)
                        return parts.count == 2 ? (String(parts[0]), String(parts[1])) : nil
                    }, uniquingKeysWith: { $1 }))
        }

        #expect(reports.map { $0["status"] } == Array(repeating: "200", count: Self.replicas))
        #expect(reports.allSatisfy { $0["bytes"] == "2048" })
        #expect(reports.filter { $0["shared"] == "MISS" }.count == 1, "one replica went through: \(reports)")
        #expect(reports.filter { $0["shared"] == "HIT" }.count == Self.replicas - 1, "the rest waited for it")
        #expect(reports.allSatisfy { $0["first"] == "network" && $0["second"] == "cache" })
        // The shared copy's age came along (the origin's Date): each private copy is already as old as the time the
        // origin took, so it expires when the shared one does, not a minute after the replica fetched it.
        let ages = reports.compactMap { $0["age"].flatMap(Int.init) }
        #expect(ages.count == Self.replicas && ages.allSatisfy { $0 >= 1 && $0 < 60 }, "ages: \(ages)")

        // A replica that asks only now waits for nothing (a shared hit), so the time its request took adds no age:
        // what it counts is the age of the shared copy, from the origin's Date that nginx stored with it.
        let late = try Interop.client()
        let fetched = try await late.send(APIRequest<Data>(url: url))
        let reused = try await late.send(APIRequest<Data>(url: url))
        #expect(fetched.headers["X-Cache-Status"] == "HIT")
        #expect(reused.source == .cache)
        let lateAge = try #require(reused.headers["Age"].flatMap(Int.init))
        #expect(lateAge >= 1, "the shared copy is as old as the origin's answer")

        let origin = await Interop.entries(for: "/origin/item.json", atLeast: 1)
        let fleet = await Interop.entries(for: "/fleet/item.json", atLeast: Self.replicas + 1)
        #expect(origin.count == 1, "one origin request in total")
        #expect(fleet.count == Self.replicas + 1)
        ReliabilityKit.record(
            "interop (nginx)", "4 processes GET one key at once through proxy_cache_lock to a 2 s origin",
            cases: Self.replicas,
            outcome: "1 origin request; private copies aged \(ages.sorted()) s on arrival, a later hit \(lateAge) s")
    }
}
