import Foundation
import Testing

@testable import Courier

/// `TransportRequest` and `TransportResponse` keep their fields behind one shared reference (issue 14: copies through
/// the call path retained every field); they must still behave as plain values.
@Suite struct CopyOnWriteTests {
    @Test func changingACopyOfARequestLeavesTheOriginalAlone() throws {
        let original = TransportRequest(
            method: .get, url: URL(string: "https://api.example.com/a")!, headers: ["Accept": "application/json"])
        var copy = original
        copy.headers["Authorization"] = "Bearer secret"
        copy.method = .post
        copy.url = URL(string: "https://api.example.com/b")!
        copy.body = Data("x".utf8)
        copy.redirectPolicy = .doNotFollow
        #expect(original.headers["Authorization"] == nil)
        #expect(original.method == .get && original.url.path == "/a" && original.body == nil)
        #expect(original.redirectPolicy == .default)
        #expect(copy.headers["Authorization"] == "Bearer secret" && copy.method == .post && copy.url.path == "/b")
        #expect(copy != original)
    }

    @Test func requestsWithEqualFieldsAreEqualAndHashAlike() {
        let url = URL(string: "https://api.example.com/a")!
        let first = TransportRequest(url: url, headers: ["Accept": "text/plain"])
        let second = TransportRequest(url: url, headers: ["Accept": "text/plain"])
        #expect(first == second)
        #expect(first.hashValue == second.hashValue)
        #expect(Set([first, second]).count == 1)
        var third = second
        third.headers["Accept"] = "text/html"
        #expect(first != third)
    }

    @Test func changingACopyOfAResponseLeavesTheOriginalAlone() {
        let original = TransportResponse(statusCode: 200, headers: ["ETag": "\"v1\""], body: Data("a".utf8))
        var copy = original
        copy.statusCode = 304
        copy.headers["ETag"] = "\"v2\""
        copy.body.append(contentsOf: Data("b".utf8))
        copy.url = URL(string: "https://api.example.com/moved")
        #expect(original.statusCode == 200 && original.headers["ETag"] == "\"v1\"")
        #expect(original.body == Data("a".utf8) && original.url == nil)
        #expect(copy.body == Data("ab".utf8) && copy != original)
        #expect(TransportResponse(statusCode: 200, headers: ["ETag": "\"v1\""], body: Data("a".utf8)) == original)
    }

    @Test func copiesSharedAcrossTasksStayIndependent() async {
        let shared = TransportRequest(url: URL(string: "https://api.example.com/a")!)
        let results = await withTaskGroup(of: String?.self) { group in
            for index in 0..<100 {
                group.addTask {
                    var mine = shared
                    mine.headers["X-Index"] = String(index)
                    return mine.headers["X-Index"]
                }
            }
            return await group.reduce(into: [String?]()) { $0.append($1) }
        }
        #expect(Set(results.compactMap { $0 }).count == 100)
        #expect(shared.headers.isEmpty)
    }
}
