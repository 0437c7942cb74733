// Downloads 1 GiB to a file and uploads 1 GiB from a file through an APIClient over URLSessionTransport or
// AsyncHTTPClientTransport, against the loopback server Scripts/streaming-memory.sh starts, and prints how far each
// raised the process's peak resident memory over its baseline (Linux: VmHWM, reset through /proc/self/clear_refs
// before each transfer).
//
//   StreamingMemory URL BYTES (download|upload|both) (urlsession|asynchttpclient)
import Courier
import CourierAsyncHTTPClient
import Foundation

func statusField(_ name: String) -> Int {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix(name + ":") } ?? ""
    return Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0  // KiB
}

/// Starts a new peak: writing 5 to clear_refs sets VmHWM back to the current resident size.
func resetPeak() {
    try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
}

func measure(_ label: String, over transportName: String, bytes: Int, _ work: () async throws -> Void) async throws
    -> String
{
    resetPeak()
    let baseline = statusField("VmRSS")
    let start = ContinuousClock.now
    try await work()
    let elapsed = ContinuousClock.now - start
    let peak = statusField("VmHWM")
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    let rate = Double(bytes) / seconds / 1_048_576
    return String(
        format: "| %@ | %@ | %d MiB | %.1f MiB | %.1f MiB | %.1f MiB | %.1f s | %.0f MiB/s |", transportName, label,
        bytes >> 20,
        Double(baseline) / 1024, Double(peak) / 1024, Double(peak - baseline) / 1024, seconds, rate)
}

let arguments = CommandLine.arguments
let base = URL(string: arguments.count > 1 ? arguments[1] : "http://127.0.0.1:18080")!
let size = arguments.count > 2 ? Int(arguments[2])! : 1 << 30
// "download" or "upload" measures one in a process of its own (the other's freed memory then cannot hide in the
// baseline); "both" runs them in turn.
let mode = arguments.count > 3 ? arguments[3] : "both"
let transportName = arguments.count > 4 ? arguments[4] : "urlsession"
let transport: any HTTPTransport
switch transportName {
case "urlsession": transport = URLSessionTransport()
case "asynchttpclient": transport = AsyncHTTPClientTransport()
default: fatalError("unknown transport \(transportName): urlsession or asynchttpclient")
}
let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-memory-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }

let client = APIClient(baseURL: base, configuration: .init(transport: transport))
// Warm up: the first transfer of each kind loads code and makes the session's buffers.
let warm = directory.appendingPathComponent("warm.bin")
_ = try await client.download(
    APIRequest<Void>.get("/download", query: [.init(name: "size", value: "1048576")]),
    to: warm
).value
_ = try await client.upload(APIRequest<Data>.put("/upload"), fromFile: warm).value

print("| transport | transfer | size | baseline RSS | peak RSS | peak over baseline | time | rate |")
print("|---|---|---|---|---|---|---|---|")
let downloaded = directory.appendingPathComponent("download.bin")
if mode == "upload" {
    // The file to upload, made sparse so that making it costs no memory.
    _ = FileManager.default.createFile(atPath: downloaded.path, contents: nil)
    let handle = try FileHandle(forWritingTo: downloaded)
    try handle.truncate(atOffset: UInt64(size))
    try handle.close()
} else {
    print(
        try await measure("download to a file", over: transportName, bytes: size) {
            _ = try await client.download(
                APIRequest<Void>.get("/download", query: [.init(name: "size", value: String(size))]), to: downloaded
            ).value
        })
}
let written = (try FileManager.default.attributesOfItem(atPath: downloaded.path)[.size] as? Int) ?? -1
guard written == size else { fatalError("downloaded \(written) bytes, expected \(size)") }
if mode != "download" {
    print(
        try await measure("upload from a file", over: transportName, bytes: size) {
            let answer = try await client.upload(APIRequest<Data>.put("/upload"), fromFile: downloaded).value.value
            guard String(decoding: answer, as: UTF8.self) == String(size) else {
                fatalError("the server received \(String(decoding: answer, as: UTF8.self)) bytes, expected \(size)")
            }
        })
}
try? await (transport as? AsyncHTTPClientTransport)?.shutdown()
