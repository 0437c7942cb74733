import Foundation

/// A `multipart/form-data` body (RFC 7578): text fields and files, the files read from disk while the form is sent.
///
/// ```swift
/// var form = MultipartForm()
/// form.addField("title", value: "Holiday")
/// form.addFile("photo", at: URL(fileURLWithPath: "/tmp/IMG_0001.jpg"), contentType: "image/jpeg")
/// let response = try await client.upload(APIRequest<Photo>.post("/photos"), form: form).value
/// ```
///
/// Names and file names are sent as UTF-8, as browsers send them (the HTML standard's form encoding, which RFC 7578
/// §4.2 defers to): `"`, CR and LF are escaped as `%22`, `%0D` and `%0A`, and nothing else is, so `Grüße.txt` reaches
/// the server as `Grüße.txt`. The boundary is random (128 bits), so it cannot occur in a part by accident.
public struct MultipartForm: Sendable {
    /// One part of the form.
    enum Part: Sendable {
        case data(name: String, filename: String?, contentType: String?, Data)
        case file(name: String, filename: String, contentType: String, URL)
    }

    /// The boundary between parts.
    public let boundary: String
    private(set) var parts: [Part] = []

    /// Creates an empty form.
    ///
    /// - Parameter boundary: The boundary between parts; a random one by default. Give one only to reproduce a
    ///   body exactly (in a test): it must not occur in any part.
    public init(boundary: String = "courier-" + UUID().uuidString.replacingOccurrences(of: "-", with: "")) {
        self.boundary = boundary
    }

    /// The `Content-Type` of the form, with its boundary.
    public var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    /// Adds a text field.
    ///
    /// - Parameters:
    ///   - name: The field's name.
    ///   - value: Its value, sent as UTF-8 with no `Content-Type` (`text/plain` by RFC 7578 §4.4).
    public mutating func addField(_ name: String, value: String) {
        parts.append(.data(name: name, filename: nil, contentType: nil, Data(value.utf8)))
    }

    /// Adds a part from bytes in memory, such as a small generated file.
    ///
    /// - Parameters:
    ///   - name: The field's name.
    ///   - data: The part's bytes.
    ///   - filename: The file name to send, if the part is a file.
    ///   - contentType: The part's `Content-Type`; none by default.
    public mutating func addData(_ name: String, data: Data, filename: String? = nil, contentType: String? = nil) {
        parts.append(.data(name: name, filename: filename, contentType: contentType, data))
    }

    /// Adds a file, read from disk when the form is sent (and again for a retry).
    ///
    /// - Parameters:
    ///   - name: The field's name.
    ///   - file: A `file:` URL.
    ///   - filename: The file name to send; the URL's last path component by default.
    ///   - contentType: The part's `Content-Type`; `application/octet-stream` by default.
    public mutating func addFile(
        _ name: String, at file: URL, filename: String? = nil, contentType: String = "application/octet-stream"
    ) {
        parts.append(.file(name: name, filename: filename ?? file.lastPathComponent, contentType: contentType, file))
    }

    /// The form as a streamed body: replayable, its length the sum of its parts, each file read in chunks.
    ///
    /// - Returns: The body.
    /// - Throws: ``APIError/fileAccess(_:)`` when a file of the form cannot be opened for reading; nothing is sent.
    public func makeBody() throws(APIError) -> StreamedBody {
        var segments: [Segment] = []
        var length = 0
        for (index, part) in parts.enumerated() {
            let head = Data(((index == 0 ? "" : "\r\n") + "--\(boundary)\r\n" + Self.headers(of: part)).utf8)
            segments.append(.bytes(head))
            length += head.count
            switch part {
            case .data(_, _, _, let data):
                segments.append(.bytes(data))
                length += data.count
            case .file(_, _, _, let url):
                length += try StreamedBody.fileLength(of: url)
                segments.append(.file(url))
            }
        }
        let close = Data(((parts.isEmpty ? "" : "\r\n") + "--\(boundary)--\r\n").utf8)
        segments.append(.bytes(close))
        length += close.count
        return StreamedBody(length: length) { [segments] in
            let reader = SegmentReader(segments)
            return ByteStream(next: { try await reader.next() })
        }
    }

    /// The header lines of a part, ending with the blank line.
    static func headers(of part: Part) -> String {
        let (name, filename, contentType): (String, String?, String?)
        switch part {
        case .data(let partName, let partFilename, let partType, _):
            (name, filename, contentType) = (partName, partFilename, partType)
        case .file(let partName, let partFilename, let partType, _):
            (name, filename, contentType) = (partName, partFilename, partType)
        }
        var disposition = "Content-Disposition: form-data; name=\"\(escaped(name))\""
        if let filename { disposition += "; filename=\"\(escaped(filename))\"" }
        var lines = disposition + "\r\n"
        if let contentType { lines += "Content-Type: \(contentType.filter { $0 != "\r" && $0 != "\n" })\r\n" }
        return lines + "\r\n"
    }

    /// A name or file name as the HTML standard encodes it in a form's header: `"`, CR and LF percent-encoded.
    static func escaped(_ text: String) -> String {
        var result = ""
        for character in text.unicodeScalars {
            switch character {
            case "\"": result += "%22"
            case "\r": result += "%0D"
            case "\n": result += "%0A"
            default: result.unicodeScalars.append(character)
            }
        }
        return result
    }
}

extension MultipartForm {
    /// What the body is made of, in order: bytes in memory, or a file read when its turn comes.
    enum Segment: Sendable {
        case bytes(Data)
        case file(URL)
    }

    /// Reads the segments in order, one file open at a time.
    final class SegmentReader: Sendable {
        private struct State {
            var remaining: [Segment]
            var file: ByteStream?
        }

        private let state: Locked<State>

        init(_ segments: [Segment]) {
            state = Locked(State(remaining: segments))
        }

        func next() async throws -> Data? {
            while true {
                enum Step {
                    case bytes(Data)
                    case read(ByteStream)
                    case end
                }
                let step = try state.withLock { state throws(APIError) -> Step in
                    if let file = state.file { return .read(file) }
                    guard !state.remaining.isEmpty else { return .end }
                    switch state.remaining.removeFirst() {
                    case .bytes(let data): return .bytes(data)
                    case .file(let url):
                        let chunks = try StreamedBody.fileChunks(of: url)
                        state.file = chunks
                        return .read(chunks)
                    }
                }
                switch step {
                case .bytes(let data): return data
                case .end: return nil
                case .read(let file):
                    if let chunk = try await file.nextChunk() { return chunk }
                    state.withLock { $0.file = nil }
                }
            }
        }
    }
}
