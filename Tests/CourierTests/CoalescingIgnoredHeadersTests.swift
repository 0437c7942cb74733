import Foundation
import Testing

@testable import Courier

/// A header the configuration declares irrelevant does not split a flight; one it does not declare does.
@Suite(.timeLimit(.minutes(1))) struct CoalescingIgnoredHeadersTests {
    @Test func aHeaderDeclaredIrrelevantStillShares() async throws {
        let gate = TenantKit.Gate()
        let transport = TenantIsolationTests.echoingTenant(gate: gate)
        var configuration = APIClient.Configuration(transport: transport, cache: nil, retryPolicy: .never)
        configuration.coalescingIgnoredHeaders.insert("X-Client-Version")
        let client = APIClient(baseURL: TenantIsolationTests.baseURL, configuration: configuration)
        let calls = (0..<10).map { index in
            Task {
                try await client.send(
                    APIRequest<Data>.get("/report", headers: ["X-Tenant": "acme", "X-Client-Version": "1.\(index)"]))
            }
        }
        try await TenantKit.waitForWaiters(10, on: client.coalescer)
        #expect(await client.coalescer.flightCount == 1)
        await gate.open()
        for call in calls { #expect(String(decoding: try await call.value.value, as: UTF8.self) == "acme") }
        #expect(transport.callCount == 1)
    }
}
