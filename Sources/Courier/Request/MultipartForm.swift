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
/// §4.2 defers to): `"`, CR and LF are escaped as `%22`, `%0D` and `%0A`, and `\` as `%5C` (so that neither a quote
/// nor a backslash can end the quoted string early for a server that reads backslash escapes); nothing else is, so
/// `Grüße.txt` reaches the server as `Grüße.txt`. The boundary is random (128 bits), so it cannot occur in a part by
/// accident.
///
/// Nothing a caller gives can add a header line: ``makeBody()`` (and so every upload of the form) fails with
/// ``APIError/invalidRequest(_:)`` (``InvalidRequestReason/invalidMultipartForm(_:)``), before anything is sent, when
/// the boundary is not one RFC 2046 §5.1.1 allows, or a name, file name or part `Content-Type` contains any other
/// control character (NUL, DEL, a line break in a `Content-Type`).
public struct MultipartForm: Sendable {
    /// One part of the form.
    enum Part: Sendable {
        case data(name: String, filename: String?, contentType: String?, Data)
        case file(name: String, filename: String, contentType: String, URL)

        /// What the part's header lines are made of.
        var header: (name: String, filename: String?, contentType: String?) {
            switch self {
            case .data(let name, let filename, let contentType, _): (name, filename, contentType)
            case .file(let name, let filename, let contentType, _): (name, filename, contentType)
            }
        }
    }

    /// The boundary between parts.
    public let boundary: String
    private(set) var parts: [Part] = []

    /// Creates an empty form.
    ///
    /// - Parameter boundary: The boundary between parts; a random one by default. Give one only to reproduce a
    ///   body exactly (in a test): it must not occur in any part, and must be 1 to 70 characters of RFC 2046 §5.1.1
    ///   (letters, digits, `'()+_,-./:=?` and spaces, not ending in a space), or ``makeBody()`` fails.
    public init(boundary: String = "courier-" + UUID().uuidString.replacingOccurrences(of: "-", with: "")) {
        self.boundary = boundary
    }

    /// The `Content-Type` of the form, with its boundary: as a quoted string when it holds a character a token may
    /// not (`boundary="a:b"`), as RFC 2046 §5.1.1 requires.
    public var contentType: String {
        HTTPToken.isValid(boundary)
            ? "multipart/form-data; boundary=\(boundary)" : "multipart/form-data; boundary=\"\(boundary)\""
    }

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
    /// - Throws: ``APIError/invalidRequest(_:)`` when the boundary or a part's header cannot be sent (see the type's
    ///   overview), or ``APIError/fileAccess(_:)`` when a file of the form cannot be opened for reading; nothing is
    ///   sent.
    public func makeBody() throws(APIError) -> StreamedBody {
        try validate()
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
        let (name, filename, contentType) = part.header
        var disposition = "Content-Disposition: form-data; name=\"\(escaped(name))\""
        if let filename { disposition += "; filename=\"\(escaped(filename))\"" }
        var lines = disposition + "\r\n"
        // Checked by `validate()`: a type with a line break never gets here.
        if let contentType { lines += "Content-Type: \(contentType)\r\n" }
        return lines + "\r\n"
    }

    /// A name or file name as the HTML standard encodes it in a form's header: `"`, CR and LF percent-encoded; and
    /// `\`, which a server reading the quoted string with backslash escapes would take as escaping the closing quote.
    static func escaped(_ text: String) -> String {
        var result = ""
        for character in text.unicodeScalars {
            switch character {
            case "\"": result += "%22"
            case "\r": result += "%0D"
            case "\n": result += "%0A"
            case "\\": result += "%5C"
            default: result.unicodeScalars.append(character)
            }
        }
        return result
    }
}

// MARK: Validation

extension MultipartForm {
    /// Throws unless the boundary and every part's header values can be sent as they are.
    ///
    /// On bytes, with ``FieldValue``, the check every header value passes: `"\r\n"` is one `Character`, so a filter on
    /// characters let it through into a part's header.
    func validate() throws(APIError) {
        guard Self.isValidBoundary(boundary) else {
            throw .invalidRequest(
                .invalidMultipartForm(
                    "has a boundary that is not 1 to 70 characters of RFC 2046 §5.1.1 (letters, digits, '()+_,-./:=? "
                        + "and spaces, not ending in a space)"))
        }
        for (index, part) in parts.enumerated() {
            let (name, filename, contentType) = part.header
            // Part numbers, not names, in the error: a name is the caller's data and may be what is malformed.
            let problem: String? =
                if let contentType, !FieldValue.isValid(contentType) {
                    "the Content-Type"
                } else if !Self.isValidName(name) {
                    "the name"
                } else if let filename, !Self.isValidName(filename) {
                    "the file name"
                } else {
                    nil
                }
            if let problem {
                throw .invalidRequest(
                    .invalidMultipartForm("has a control character in \(problem) of part \(index + 1)"))
            }
        }
    }

    /// RFC 2046 §5.1.1: `bchars` (`DIGIT / ALPHA / "'" / "(" / ")" / "+" / "_" / "," / "-" / "." / "/" / ":" / "=" /
    /// "?"` and space), 1 to 70 of them, the last not a space. None of them can end a line or a quoted string.
    static func isValidBoundary(_ boundary: String) -> Bool {
        let bytes = boundary.utf8
        guard (1...70).contains(bytes.count), bytes.last != UInt8(ascii: " ") else { return false }
        return bytes.allSatisfy { ByteSet.boundaryCharacters.contains($0) }
    }

    /// Whether a name or file name can be sent once ``escaped(_:)``: CR and LF are escaped, any other control
    /// character (NUL, DEL, …) is refused rather than sent.
    static func isValidName(_ text: String) -> Bool {
        text.utf8.allSatisfy { byte in
            byte == 0x09 || byte == 0x0A || byte == 0x0D || (byte >= 0x20 && byte != 0x7F)
        }
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
