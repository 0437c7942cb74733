#if Observability
    // The only file that sees Courier's internals: how many callers wait on a client's shared flights, so that a test
    // releases the upstream only once every caller has joined (without it, "50 callers, one upstream call" would be a
    // race the test could lose).
    @testable import Courier

    extension TestKit {
        /// Waits, without sleeping, until `count` callers are in `client`'s flights; `false` if they never are.
        static func waitForCallers(_ count: Int, on client: APIClient) async -> Bool {
            await eventually { await client.coalescer.waiterCount == count }
        }
    }
#endif
