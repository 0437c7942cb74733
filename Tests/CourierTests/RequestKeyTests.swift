import Foundation
import Testing

@testable import Courier

private func key(_ url: String, method: RequestMethod = .get, headers: HeaderFields = [:], body: Data? = nil)
    -> RequestKey
{
    RequestKey(TransportRequest(method: method, url: URL(string: url)!, headers: headers, body: body))
}

@Suite struct RequestKeyTests {
    @Test(arguments: [
        ("HTTPS://API.Example.COM/users", "https://api.example.com/users"),
        ("https://api.example.com:443/users", "https://api.example.com/users"),
        ("http://api.example.com:80/users", "http://api.example.com/users"),
        ("https://api.example.com/users#section", "https://api.example.com/users"),
    ])
    func equivalentURLsShareAKey(variant: String, canonical: String) {
        #expect(key(variant) == key(canonical))
        #expect(key(variant).url == canonical)
    }

    @Test(arguments: [
        ("https://api.example.com/Users", "https://api.example.com/users"),
        ("https://api.example.com:8443/users", "https://api.example.com/users"),
        ("http://api.example.com/users", "https://api.example.com/users"),
        ("https://api.example.com/users?a=1", "https://api.example.com/users?a=2"),
    ])
    func differentURLsGetDifferentKeys(first: String, second: String) {
        #expect(key(first) != key(second))
    }

    @Test func aRequestKeepsItsNormalizedURLOnlyUntilTheURLChanges() {
        var request = TransportRequest(url: URL(string: "https://API.example.com/a")!)
        request.keepURLText(URLText(RequestKey.normalize(request.url)))
        let copy = request
        request.url = URL(string: "https://api.example.com/B#x")!
        #expect(request.urlKey == "https://api.example.com/B")
        #expect(copy.urlKey == "https://api.example.com/a")
        #expect(RequestKey(request) != RequestKey(copy))
        #expect(request != copy && request.urlKey != copy.urlKey)
    }

    @Test func anAdapterThatMovesTheRequestMovesItsCacheEntryAndKey() async throws {
        struct Move: RequestAdapter {
            func adapt(_ request: TransportRequest) async throws -> TransportRequest {
                var moved = request
                moved.url = URL(string: "https://api.example.com/moved")!
                return moved
            }
        }
        let transport = MockTransport.responding(headers: ["Cache-Control": "max-age=60"])
        let cache = ResponseCache()
        let client = APIClient(
            baseURL: URL(string: "https://api.example.com")!,
            configuration: .init(transport: transport, cache: cache, adapters: [Move()]))
        _ = try await client.send(APIRequest<Data>.get("/original"))
        let moved = TransportRequest(url: URL(string: "https://api.example.com/moved")!)
        let original = TransportRequest(url: URL(string: "https://api.example.com/original")!)
        #expect(await cache.cachedResponse(for: moved, partition: nil) != nil)
        #expect(await cache.cachedResponse(for: original, partition: nil) == nil)
    }

    @Test func representationHeadersMatterAndOthersDoNot() {
        let base = "https://api.example.com/a"
        #expect(key(base, headers: ["Accept": "text/csv"]) != key(base, headers: ["Accept": "application/json"]))
        #expect(key(base, headers: ["Range": "bytes=0-9"]) != key(base))
        #expect(key(base, headers: ["accept-encoding": "gzip"]) != key(base))
        #expect(key(base, headers: ["X-Request-ID": "1"]) == key(base, headers: ["X-Request-ID": "2"]))
        #expect(key(base, headers: ["ACCEPT": "a"]) == key(base, headers: ["accept": "a"]))
    }

    @Test func everyHeaderJoinsTheKeyButTheIgnoredOnes() {
        let request1 = TransportRequest(url: URL(string: "https://x.test/a")!, headers: ["X-Tenant": "acme"])
        let request2 = TransportRequest(url: URL(string: "https://x.test/a")!, headers: ["X-Tenant": "globex"])
        #expect(RequestKey(request1) != RequestKey(request2))
        #expect(RequestKey(request1, ignoring: ["x-tenant"]) == RequestKey(request2, ignoring: ["x-tenant"]))
        // A name given in `varyingOn` counts even when ignored.
        #expect(
            RequestKey(request1, varyingOn: ["X-Tenant"], ignoring: ["x-tenant"])
                != RequestKey(request2, varyingOn: ["X-Tenant"], ignoring: ["x-tenant"]))
        // A credential is never ignored.
        let alice = TransportRequest(url: URL(string: "https://x.test/a")!, headers: ["Cookie": "alice"])
        let bob = TransportRequest(url: URL(string: "https://x.test/a")!, headers: ["Cookie": "bob"])
        #expect(RequestKey(alice, ignoring: ["cookie"]) != RequestKey(bob, ignoring: ["cookie"]))
    }

    @Test func theOrderOfDifferentNamesDoesNotMatterButTheOrderOfOneNamesValuesDoes() {
        let base = "https://api.example.com/a"
        #expect(
            key(base, headers: ["X-Tenant": "acme", "X-Locale": "fr"])
                == key(base, headers: ["x-locale": "fr", "X-TENANT": "acme"]))
        let ab = HeaderFields([("X-Tag", "a"), ("X-Tenant", "acme"), ("X-Tag", "b")])
        let ba = HeaderFields([("X-Tag", "b"), ("X-Tag", "a"), ("X-Tenant", "acme")])
        let abAgain = HeaderFields([("X-Tenant", "acme"), ("X-Tag", "a"), ("X-Tag", "b")])
        #expect(key(base, headers: ab) != key(base, headers: ba))
        #expect(key(base, headers: ab) == key(base, headers: abAgain))
    }

    @Test func credentialsPartitionKeysButNeverPrint() {
        let alice = key("https://x.test/me", headers: ["Authorization": "Bearer alice-secret"])
        let bob = key("https://x.test/me", headers: ["Authorization": "Bearer bob-secret"])
        let cookie = key("https://x.test/me", headers: ["Cookie": "session=carol-secret"])
        #expect(alice != bob)
        #expect(alice != cookie)
        #expect(alice != key("https://x.test/me"))
        for described in [alice, bob, cookie].map(\.description) {
            #expect(!described.contains("secret"))
        }
        let partitioned = RequestKey(TransportRequest(url: URL(string: "https://x.test/me")!), partition: "user-1")
        #expect(
            partitioned != RequestKey(TransportRequest(url: URL(string: "https://x.test/me")!), partition: "user-2"))
    }

    @Test func bodiesAndMethodsDistinguishKeys() {
        let url = "https://x.test/q"
        #expect(key(url, method: .post, body: Data("1".utf8)) != key(url, method: .post, body: Data("2".utf8)))
        #expect(key(url, method: .post, body: Data("1".utf8)) == key(url, method: .post, body: Data("1".utf8)))
        #expect(key(url, method: .get) != key(url, method: .head))
    }
}

@Suite struct RequestKeyUserInfoTests {
    @Test func passwordsThatDifferOnlyInCaseGetDifferentKeys() {
        let upper = TransportRequest(url: URL(string: "HTTPS://user:Secret@API.example.com/me")!)
        let lower = TransportRequest(url: URL(string: "https://user:secret@api.example.com/me")!)
        #expect(RequestKey.normalize(upper.url) == "https://user:Secret@api.example.com/me")
        #expect(RequestKey(upper) != RequestKey(lower))
        #expect(!RequestKey(upper).description.contains("Secret"))
    }
}
