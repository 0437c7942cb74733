import Testing

@testable import Courier

/// The filter in front of a policy's header names never rules out a name the policy holds (it only saves hashing
/// the names it does not), and keeps up with names added or removed later.
@Suite struct CredentialNameFilterTests {
    private static let names = [
        "authorization", "x-tenant-secret", "x-goog-api-key", "ocp-apim-subscription-key", "x-csrf-token", "a", "",
        "x-amz-security-token", "session", "É-non-ascii",
    ]

    @Test func everyNameThePolicyHoldsIsFound() {
        var policy = CredentialPolicy.standard
        for name in Self.names { policy.headerNames.insert(name) }
        for name in policy.headerNames {
            #expect(policy.contains(canonicalName: name), "\(name)")
        }
        #expect(!policy.contains(canonicalName: "content-type"))
    }

    @Test func aNameRemovedFromThePolicyIsNoLongerFound() {
        var policy = CredentialPolicy.standard
        policy.headerNames.insert("X-Tenant-Secret")
        #expect(policy.contains(canonicalName: "x-tenant-secret"))
        policy.headerNames.remove("x-tenant-secret")
        #expect(!policy.contains(canonicalName: "x-tenant-secret"))
    }

    @Test func commonResponseFieldsAreRuledOutWithoutHashing() {
        let filter = CredentialPolicy.standard.headerNameFilter
        for name in [
            "server", "date", "content-type", "content-length", "last-modified", "etag", "accept-ranges",
            "cache-control", "expires", "vary", "age",
        ] {
            #expect(!filter.mayContain(name), "\(name)")
        }
        for name in CredentialPolicy.standardHeaderNames { #expect(filter.mayContain(name), "\(name)") }
    }
}
