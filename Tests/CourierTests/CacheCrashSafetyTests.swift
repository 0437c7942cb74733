import Foundation
import Testing

@testable import Courier

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A process killed at any point while the disk tier writes leaves the old entry or the new one, never a torn one:
/// a child process (`CourierTestChild`) stores version after version of one response, and the test kills it with
/// `SIGKILL`, half the time while a file is half-written (a temporary file exists), then opens the directory and
/// checks what it serves.
@Suite struct CacheCrashSafetyTests {
    static let rounds = 30
    /// Rounds added, each waiting for a half-written file, when none of the first `rounds` killed the writer
    /// mid-write: a kill lands between two polls of the directory, and on a loaded machine (ThreadSanitizer in CI) all
    /// of the first rounds once missed, which left the torn-write case untested rather than failed.
    static let extraRounds = 60

    @Test func aKilledWriterLeavesTheOldEntryOrTheNewOneNeverATornOne() async throws {
        let executable = try #require(ChildProcess.executable, "CourierTestChild is built beside the tests")
        let directory = TemporaryDirectory()
        var random = SplitMix64(seed: 0x17_C0DE)
        var nextVersion = 0
        var killedMidWrite = 0
        let request = TransportRequest(url: URL(string: "https://api.test/crash")!)
        var round = 0
        while round < Self.rounds || (killedMidWrite == 0 && round < Self.rounds + Self.extraRounds) {
            defer { round += 1 }
            let waitForPartialFile = round >= Self.rounds || random.chance(50)
            let (firstVersion, afterLines) = (nextVersion, random.int(1...3))
            let lastStored = try await offTheCooperativePool {
                try Self.runAndKill(
                    executable, directory: directory, firstVersion: firstVersion, afterLines: afterLines,
                    waitForPartialFile: waitForPartialFile)
            }
            if !directory.temporaryFiles.isEmpty { killedMidWrite += 1 }

            let cache = try ResponseCache(directory: directory.url)
            #expect(directory.temporaryFiles.isEmpty, "round \(round): leftovers are removed on opening")
            let entry = try #require(await cache.cachedResponse(for: request, partition: "crash"), "round \(round)")
            let version = try #require(entry.response.headers["X-Version"].flatMap(Int.init))
            #expect(version == lastStored || version == lastStored + 1, "round \(round): the last version or the next")
            let expected = UInt8(truncatingIfNeeded: version % 251)
            #expect(entry.response.body.count == 512 << 10, "round \(round): whole body")
            #expect(entry.response.body.allSatisfy { $0 == expected }, "round \(round): one version's bytes")
            #expect(cache.diskCount == 1)
            nextVersion = lastStored + 2
        }
        #expect(killedMidWrite > 0, "some kills landed while a file was half-written")
        ReliabilityKit.record(
            "crash safety", "SIGKILL a process writing 512 KiB cache entries", cases: round,
            outcome: "\(killedMidWrite) kills mid-write; every reopen served one whole version, none torn")
    }

    /// Starts the writer, waits for `afterLines` stored versions (and, if asked, for a half-written file), kills it
    /// with `SIGKILL`, and returns the last version it reported stored. It blocks throughout: run it off the pool.
    private static func runAndKill(
        _ executable: URL, directory: TemporaryDirectory, firstVersion: Int, afterLines: Int, waitForPartialFile: Bool
    ) throws -> Int {
        let process = Process()
        process.executableURL = executable
        process.arguments = ["cache-writer", directory.url.path, String(firstVersion), "1000"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        var text = ""
        var lastStored = -1
        while lastStored < firstVersion + afterLines - 1 {
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else { break }
            text += String(decoding: chunk, as: UTF8.self)
            lastStored = text.split(separator: "\n").compactMap { Int($0.split(separator: " ").last ?? "") }.max() ?? -1
        }
        if waitForPartialFile {
            let temporary = directory.stagingDirectory.path
            for _ in 0..<100_000 where ((try? FileManager.default.contentsOfDirectory(atPath: temporary)) ?? []).isEmpty
            {
                continue
            }
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        // Whatever the writer printed after the line that was awaited counts too.
        text += String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return text.split(separator: "\n").compactMap { Int($0.split(separator: " ").last ?? "") }.max() ?? -1
    }
}
