import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

// Child processes for the tests that need more than one process:
//
//   CourierTestChild cache-writer <directory> <first version> <versions>
//       Stores version after version of one response in a disk-backed ResponseCache, printing each version once
//       it is stored, until it is killed (CacheCrashSafetyTests).
//   CourierTestChild fetch <url>
//       Waits for a line on standard input, then GETs <url> twice through an APIClient with its own cache and
//       prints what it saw: one replica of a fleet behind a shared cache (InteropTests).

func writeCache(directory: String, first: Int, count: Int) async throws {
    let cache = try ResponseCache(directory: URL(fileURLWithPath: directory))
    let request = TransportRequest(url: URL(string: "https://api.test/crash")!)
    for version in first..<(first + count) {
        // 512 KiB of one byte value per version, so a torn file shows at once.
        let body = Data(repeating: UInt8(truncatingIfNeeded: version % 251), count: 512 << 10)
        let response = TransportResponse(
            statusCode: 200, headers: ["Cache-Control": "max-age=3600", "X-Version": String(version)], body: body)
        await cache.store(response, for: request, partition: "crash", requestTime: Date(), responseTime: Date())
        FileHandle.standardOutput.write(Data("stored \(version)\n".utf8))
    }
}

func fetch(_ url: URL) async throws {
    let client = APIClient(
        baseURL: url.deletingLastPathComponent(),
        configuration: .init(transport: URLSessionTransport(), cache: ResponseCache(), retryPolicy: .never))
    _ = readLine()  // Every replica is ready; the test says go to all of them at once.
    let first = try await client.send(APIRequest<Data>(url: url))
    let second = try await client.send(APIRequest<Data>(url: url))
    let line = [
        "status=\(first.statusCode)", "first=\(first.source)", "shared=\(first.headers["X-Cache-Status"] ?? "-")",
        "second=\(second.source)", "age=\(second.headers["Age"] ?? "-")", "bytes=\(first.data.count)",
    ]
    FileHandle.standardOutput.write(Data((line.joined(separator: " ") + "\n").utf8))
}

let arguments = CommandLine.arguments
switch (arguments.count > 1 ? arguments[1] : "", arguments.count) {
case ("cache-writer", 5):
    guard let first = Int(arguments[3]), let count = Int(arguments[4]) else { exit(2) }
    try await writeCache(directory: arguments[2], first: first, count: count)
case ("fetch", 3):
    guard let url = URL(string: arguments[2]) else { exit(2) }
    try await fetch(url)
default:
    FileHandle.standardError.write(
        Data("usage: CourierTestChild cache-writer <dir> <first> <count> | fetch <url>\n".utf8))
    exit(2)
}
