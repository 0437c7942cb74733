extension EventLog {
    /// Prints one readable line per event until the returned task is cancelled; for debugging.
    ///
    /// Each line starts with the call's id, the time since the log was created, and the call's method and
    /// redacted URL (remembered from its `requestStarted` event), then the step:
    ///
    /// ```
    /// #12 +3.2ms GET https://api.example.com/users?token=<redacted> → joined #11
    /// ```
    ///
    /// The subscription starts before this returns, so nothing emitted afterwards is missed.
    ///
    /// - Parameters:
    ///   - limit: How many unread lines to keep before dropping the oldest; ``bufferSize`` when `nil`.
    ///   - write: Where lines go; `print` by default. Called from the returned task, one line at a time.
    /// - Returns: The task that prints; cancel it to stop.
    @discardableResult
    public func printEvents(
        bufferingNewest limit: Int? = nil, to write: @escaping @Sendable (String) -> Void = { print($0) }
    ) -> Task<Void, Never> {
        let events = subscribe(bufferingNewest: limit)
        return Task {
            var lines = EventLines()
            for await event in events { write(lines.line(for: event)) }
        }
    }
}

/// Turns events into lines, remembering each call's method and URL from its first event until its last.
struct EventLines {
    private var targets: [CallID: String] = [:]

    mutating func line(for event: ClientEvent) -> String {
        let prefix = "\(event.callID) +\(event.at.formattedMilliseconds)"
        switch event.kind {
        case .requestStarted(let method, let url):
            targets[event.callID] = "\(method) \(url)"
            return "\(prefix) \(method) \(url) started"
        case .requestFinished, .requestFailed:
            let target = targets.removeValue(forKey: event.callID)
            return [prefix, target, event.kind.description].compactMap { $0 }.joined(separator: " ")
        default:
            return [prefix, targets[event.callID], event.kind.description].compactMap { $0 }.joined(separator: " ")
        }
    }
}
