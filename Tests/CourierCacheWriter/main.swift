import Courier
import Foundation

// Stores version after version of one response in a disk-backed ResponseCache, printing each version once it is
// stored, until it is killed: the crash-safety test kills it at random points and checks what the directory holds.
//
// Usage: CourierCacheWriter <directory> <first version> <versions>

let arguments = CommandLine.arguments
guard arguments.count == 4, let first = Int(arguments[2]), let count = Int(arguments[3]) else {
    FileHandle.standardError.write(Data("usage: CourierCacheWriter <directory> <first version> <versions>\n".utf8))
    exit(2)
}
let cache = try ResponseCache(directory: URL(fileURLWithPath: arguments[1]))
let request = TransportRequest(url: URL(string: "https://api.test/crash")!)
for version in first..<(first + count) {
    // 512 KiB of one byte value per version, so a torn file shows at once.
    let body = Data(repeating: UInt8(truncatingIfNeeded: version % 251), count: 512 << 10)
    let response = TransportResponse(
        statusCode: 200, headers: ["Cache-Control": "max-age=3600", "X-Version": String(version)], body: body)
    await cache.store(response, for: request, partition: "crash", requestTime: Date(), responseTime: Date())
    FileHandle.standardOutput.write(Data("stored \(version)\n".utf8))
}
