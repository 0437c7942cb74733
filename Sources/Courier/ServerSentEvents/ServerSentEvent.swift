import Foundation

/// One event of a `text/event-stream` (the WHATWG HTML standard's server-sent events).
public struct ServerSentEvent: Sendable, Hashable {
    /// The event's type: its `event:` field, `"message"` when it has none.
    public var type: String
    /// Its data: the `data:` lines joined with `"\n"`.
    public var data: String
    /// The last event ID the stream had set when this event was dispatched (its own `id:` field, or an earlier
    /// one); what a reconnection sends as `Last-Event-ID`.
    public var lastEventID: String?
    /// The reconnection delay the server asked for with a `retry:` field, if this event's block carried one.
    public var retry: Duration?

    /// Creates an event.
    ///
    /// - Parameters:
    ///   - type: The event's type.
    ///   - data: Its data.
    ///   - lastEventID: The last event ID.
    ///   - retry: The reconnection delay it asked for.
    public init(type: String = "message", data: String, lastEventID: String? = nil, retry: Duration? = nil) {
        self.type = type
        self.data = data
        self.lastEventID = lastEventID
        self.retry = retry
    }

    /// Decodes ``data`` as JSON, as most APIs that stream (LLM token streams among them) send it.
    ///
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - decoder: The decoder to use.
    /// - Returns: The decoded value.
    /// - Throws: ``APIError/decodingFailed(type:underlying:response:)``, with the data as the response's body.
    public func decode<T: Decodable>(_ type: T.Type, decoder: JSONDecoder = JSONDecoder()) throws(APIError) -> T {
        do {
            return try decoder.decode(T.self, from: Data(data.utf8))
        } catch {
            throw .decodingFailed(
                type: String(describing: T.self), underlying: error,
                response: TransportResponse(statusCode: 200, body: Data(data.utf8)))
        }
    }
}

/// The `text/event-stream` parser of the WHATWG HTML standard (§9.2.6, "Interpreting an event stream"), fed bytes as
/// they arrive.
///
/// Lines end with CRLF, LF or CR (a CR at the end of one chunk and an LF at the start of the next are one line end).
/// A blank line dispatches the event being built; a line starting with `:` is a comment; a field the standard does
/// not know, an `id` with a NUL, and a `retry` that is not all ASCII digits are ignored. Nothing a server sends
/// makes it fail, except a line or an event larger than ``maxEventBytes``, which would otherwise grow without
/// bound.
struct ServerSentEventParser: Sendable {
    /// The largest event (or single line) accepted: 8 MiB.
    static let maxEventBytes = 8 << 20

    private var line: [UInt8] = []
    private var data = ""
    private var hasData = false
    private var type = ""
    private var retry: Duration?
    private var atStart = true
    private var skipLineFeed = false
    /// The last event ID buffer: it survives dispatches and reconnections.
    private(set) var lastEventID: String?
    /// The reconnection time the stream last set, if any.
    private(set) var reconnectionTime: Duration?
    private var pending: [ServerSentEvent] = []

    init(lastEventID: String? = nil) {
        self.lastEventID = lastEventID
    }

    /// Reads `bytes`; returns the events they complete, in order.
    mutating func feed(_ bytes: Data) throws(APIError) -> [ServerSentEvent] {
        for byte in bytes {
            if skipLineFeed {
                skipLineFeed = false
                if byte == 0x0A { continue }
            }
            switch byte {
            case 0x0D:
                skipLineFeed = true
                endLine()
            case 0x0A:
                endLine()
            default:
                guard line.count < Self.maxEventBytes else { throw .responseTooLarge(limit: Self.maxEventBytes) }
                line.append(byte)
            }
        }
        guard data.utf8.count <= Self.maxEventBytes else { throw .responseTooLarge(limit: Self.maxEventBytes) }
        defer { pending = [] }
        return pending
    }

    /// The stream ended: an event not yet dispatched is discarded, as the standard says.
    mutating func reset() {
        line = []
        data = ""
        hasData = false
        type = ""
        retry = nil
        skipLineFeed = false
        atStart = true
    }

    private mutating func endLine() {
        var text = String(decoding: line, as: UTF8.self)
        line.removeAll(keepingCapacity: true)
        if atStart {
            atStart = false
            if text.hasPrefix("\u{FEFF}") { text.removeFirst() }
        }
        guard !text.isEmpty else { return dispatch() }
        if text.hasPrefix(":") { return }
        let field: Substring
        var value: Substring
        if let colon = text.firstIndex(of: ":") {
            field = text[..<colon]
            value = text[text.index(after: colon)...]
            if value.hasPrefix(" ") { value = value.dropFirst() }
        } else {
            field = text[...]
            value = ""
        }
        switch field {
        case "event":
            type = String(value)
        case "data":
            data += value
            data += "\n"
            hasData = true
        case "id":
            if !value.contains("\u{0}") { lastEventID = String(value) }
        case "retry":
            if !value.isEmpty, value.allSatisfy({ $0.isASCII && $0.isNumber }), let milliseconds = Int64(value) {
                retry = .milliseconds(milliseconds)
                reconnectionTime = retry
            }
        default:
            break
        }
    }

    private mutating func dispatch() {
        defer {
            data = ""
            hasData = false
            type = ""
            retry = nil
        }
        guard hasData else { return }
        if data.hasSuffix("\n") { data.removeLast() }
        pending.append(
            ServerSentEvent(
                type: type.isEmpty ? "message" : type, data: data, lastEventID: lastEventID?.nilIfEmpty,
                retry: retry))
    }
}

extension String {
    fileprivate var nilIfEmpty: String? { isEmpty ? nil : self }
}
