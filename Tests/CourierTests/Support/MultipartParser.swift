import Foundation

/// A test-side `multipart/form-data` reader: splits a received body on its boundary, independently of how Courier
/// writes one, so that a test checks the bytes a server would see.
struct MultipartParser {
    struct Part: Equatable {
        var headers: [String: String]
        var body: Data
    }

    /// The parts of `body`, or nil when it is not a well-formed form with `boundary`.
    static func parts(of body: Data, contentType: String?) -> [Part]? {
        guard let contentType, let range = contentType.range(of: "boundary=") else { return nil }
        let boundary = Data("--\(contentType[range.upperBound...])".utf8)
        var parts: [Part] = []
        guard var cursor = body.range(of: boundary)?.upperBound else { return nil }
        while true {
            if body[cursor...].starts(with: Data("--\r\n".utf8)) { return parts }
            guard body[cursor...].starts(with: Data("\r\n".utf8)) else { return nil }
            cursor += 2
            guard let headEnd = body.range(of: Data("\r\n\r\n".utf8), in: cursor..<body.endIndex) else { return nil }
            var headers: [String: String] = [:]
            for line in String(decoding: body[cursor..<headEnd.lowerBound], as: UTF8.self).components(
                separatedBy: "\r\n")
            {
                guard let colon = line.firstIndex(of: ":") else { return nil }
                headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                    in: .whitespaces)
            }
            guard let next = body.range(of: Data("\r\n".utf8) + boundary, in: headEnd.upperBound..<body.endIndex) else {
                return nil
            }
            parts.append(Part(headers: headers, body: Data(body[headEnd.upperBound..<next.lowerBound])))
            cursor = next.upperBound
        }
    }
}
