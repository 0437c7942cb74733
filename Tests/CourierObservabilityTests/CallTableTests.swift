#if Observability
    import Courier
    import InMemoryTracing
    import Testing
    import Tracing

    @testable import CourierObservability

    /// A leader's span context is kept exactly as long as a call that may have joined it is still running, so joiners can
    /// link to it and memory stays bounded by the calls in progress.
    @Suite struct CallTableTests {
        private let log = EventLog()
        private let tracer = InMemoryTracer()

        private func key(_ number: UInt64) -> CallKey { CallKey(log, CallID(rawValue: number)) }

        private func begin(_ table: CallTable, _ number: UInt64, leads: Bool = false) {
            table.begin(
                key(number), method: .get, url: "https://a.test/", span: tracer.startSpan("GET", context: .topLevel))
            if leads { _ = table.update(key(number)) { $0.led = true } }
        }

        @Test func aLeadersContextOutlivesItUntilEveryCallThatCouldHaveJoinedHasEnded() throws {
            let table = CallTable()
            begin(table, 1, leads: true)
            begin(table, 2)
            let leaderSpan = try #require(table[key(1)]?.span)
            _ = table.end(key(1))
            #expect(table.counts == (open: 1, ended: 1))
            #expect(table.spanContext(of: key(1))?.inMemorySpanContext == leaderSpan.context.inMemorySpanContext)
            // A call that starts after the leader ended cannot have joined it: it does not keep the context alive.
            begin(table, 3)
            _ = table.end(key(2))
            #expect(table.counts == (open: 1, ended: 0))
            #expect(table.spanContext(of: key(1)) == nil)
        }

        @Test func aLongCallKeepsOnlyTheLeadersThatEndedWhileItRan() {
            let table = CallTable()
            begin(table, 1)
            for number in 2...101 {
                begin(table, UInt64(number), leads: true)
                _ = table.end(key(UInt64(number)))
            }
            #expect(table.counts == (open: 1, ended: 100))
            _ = table.end(key(1))
            #expect(table.counts == (open: 0, ended: 0))
        }

        @Test func callsThatSentNothingLeaveNothingBehind() {
            let table = CallTable()
            for number in 1...10 { begin(table, UInt64(number)) }
            for number in 1...10 { _ = table.end(key(UInt64(number))) }
            #expect(table.counts == (open: 0, ended: 0))
        }
    }
#endif
