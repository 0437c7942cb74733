/// A seam for tests into ``DiskStore/write(_:record:replacing:ticket:)``: runs after a file is staged and before it
/// is renamed into place, the window in which an invalidation or another write can overtake it. `nil` in every
/// cache but a test's, so the write path pays one `nil` check.
final class DiskStoreProbe: Sendable {
    private let action = Locked<(@Sendable (_ url: String) -> Void)?>(nil)

    /// Runs `body` (with the URL being written) at every later commit.
    func beforeCommit(_ body: @escaping @Sendable (_ url: String) -> Void) {
        action.withLock { $0 = body }
    }

    func reachedCommit(url: String) {
        let body = action.withLock { $0 }
        body?(url)
    }
}
