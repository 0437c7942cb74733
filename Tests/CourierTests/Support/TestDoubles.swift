import Courier
import CourierTesting

// Courier's own tests use the test doubles it ships to users, under the names the tests have always used.
typealias MockTransport = StubTransport
typealias TestClock = ManualClock
