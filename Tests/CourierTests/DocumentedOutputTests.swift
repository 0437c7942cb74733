// What README.md and the articles show as printed output is what the code prints: each page marks its output with
// `<!-- output: printEvents -->` before the fence, and these tests make the calls that page describes and check
// that every documented line is printed, in order.
import CourierTesting
import Foundation
import Testing

@testable import Courier

@Suite struct DocumentedOutputTests {
    struct Page: Sendable, CustomTestStringConvertible {
        let path: String
        let baseURL: String
        let query: String
        var testDescription: String { path }
    }

    /// Two concurrent calls of one URL with a credential in its query, the second 3.2 ms after the first, and an
    /// upstream that answers 41.8 ms after the first, on a manual clock: the scenario both pages print. The lines the
    /// pages show are the ones whose order is fixed (`#1`'s `finished` and `#2`'s `joined` may print either way).
    @Test(arguments: [
        Page(path: "README.md", baseURL: "https://api.example.com/v1/feed", query: "api_key"),
        Page(
            path: "Sources/Courier/Courier.docc/EventsAndMetrics.md", baseURL: "https://api.example.com/users",
            query: "token"),
    ])
    func printEventsPrintsTheLinesThePageShows(page: Page) async throws {
        let documented = try Self.output(marked: "printEvents", in: page.path)
        #expect(!documented.isEmpty)

        let clock = ManualClock()
        let (gate, open) = AsyncStream<Void>.makeStream()
        let transport = StubTransport { _ in
            for await _ in gate {}
            return .json("{}")
        }
        let url = URL(string: page.baseURL)!
        let client = APIClient(
            baseURL: url.deletingLastPathComponent(), configuration: .init(transport: transport, clock: clock))
        let (lines, sink) = AsyncStream<String>.makeStream()
        let printer = client.printEvents { sink.yield($0) }

        let request = APIRequest<Data>.get(
            "/" + url.lastPathComponent, query: [URLQueryItem(name: page.query, value: "s3cr3t")])
        let first = Task { try await client.send(request) }
        while transport.callCount == 0 { await Task.yield() }
        clock.advance(by: .microseconds(3_200))
        let second = Task { try await client.send(request) }
        while await client.coalescer.waiterCount < 2 { await Task.yield() }  // the second call joined
        clock.advance(by: .microseconds(38_600))  // the upstream answers 41.8 ms after the first call started
        open.finish()
        _ = try await (first.value, second.value)

        var printed: [String] = []
        for await line in lines {
            printed.append(line)
            if printed.filter({ $0.contains(" finished ") }).count == 2 { break }
        }
        printer.cancel()
        #expect(printed.allSatisfy { !$0.contains("s3cr3t") })
        var remaining = printed[...]
        for line in documented {
            guard let index = remaining.firstIndex(of: line) else {
                let all = printed.joined(separator: "\n")
                Issue.record("\(page.path) shows a line that is not printed in this order: \(line)\nprinted:\n\(all)")
                return
            }
            remaining = remaining[(index + 1)...]
        }
    }

    /// The article's request, printed as the article shows.
    @Test func curlDescriptionPrintsWhatTheArticleShows() throws {
        let documented = try Self.output(
            marked: "curlDescription", in: "Sources/Courier/Courier.docc/EventsAndMetrics.md")
        let client = APIClient(baseURL: URL(string: "https://api.example.com")!)
        var report = APIRequest<Data>.get("/users", query: [URLQueryItem(name: "token", value: "s3cret")])
        report.headers["Accept"] = "application/json"

        #expect(try client.curlDescription(of: report).split(separator: "\n").map(String.init) == documented)
    }

    /// The lines of the fenced block after `<!-- output: NAME -->` in a file of the repository.
    static func output(marked name: String, in path: String) throws -> [String] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let marker = lines.firstIndex(of: "<!-- output: \(name) -->"), marker + 1 < lines.count,
            lines[marker + 1].hasPrefix("```")
        else { return [] }
        return Array(lines[(marker + 2)...].prefix { !$0.hasPrefix("```") })
    }
}
