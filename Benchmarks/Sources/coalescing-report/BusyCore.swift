import Foundation
import Synchronization

/// A thread that spins until stopped, outside Swift's task pool: on this 2-core machine it leaves the callers, their
/// tasks and the simulated upstream one core, as a service under load has. Issue 14 asks for exactly one upstream
/// call at 10,000 callers also then: a caller that arrived after its flight ended would start another.
final class BusyCore: Sendable {
    private let isRunning = Atomic(true)
    private let spins = Atomic(0)

    init() {
        let thread = Thread { [self] in
            var counter = 0
            while isRunning.load(ordering: .relaxed) {
                counter &+= 1
                if counter & 0xFFFF == 0 { spins.add(1, ordering: .relaxed) }
            }
        }
        thread.name = "busy-core"
        thread.start()
    }

    /// Stops the thread; returns how many rounds of 65,536 spins it made, to show it ran.
    func stop() -> Int {
        isRunning.store(false, ordering: .relaxed)
        return spins.load(ordering: .relaxed)
    }
}
