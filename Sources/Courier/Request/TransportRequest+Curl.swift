import Foundation

extension TransportRequest {
    /// A `curl` command that sends this request, for a bug report or a terminal, with every credential shown as
    /// `<redacted>`.
    ///
    /// ```
    /// curl -X POST 'https://api.example.com/v1/sessions?api_key=<redacted>' \
    ///   -H 'Authorization: <redacted>' \
    ///   -H 'Content-Type: application/x-www-form-urlencoded' \
    ///   --data-raw 'user=ada&password=<redacted>'
    /// ```
    ///
    /// What is a credential comes from ``credentials``, the policy behind every other redaction: the values of its
    /// header fields and query parameters, a URL's password, `Bearer`/`Basic` credentials in any header, and body
    /// members named like its header fields or query parameters (in a form or a JSON body). A body that is not text,
    /// or that claims to be JSON and does not parse, is left out (`# body: 12 bytes, not shown`): its secrets could
    /// not be found. A body that looks like JSON (it starts with `{` or `[`) is read as JSON whatever its
    /// `Content-Type` says. Every argument is single-quoted for a POSIX shell.
    ///
    /// The command is safe to paste: the body goes in `--data-raw`, which never reads a file (with `--data-binary`, a
    /// body that starts with `@` names a local file for curl to send), and a header with an empty value is written
    /// `-H 'Name;'`, curl's form for it (`-H 'Name: '` would tell curl to leave the header out).
    public var curlDescription: String {
        let redaction = Redaction(credentials)
        var lines = ["curl" + Self.methodOption(method) + " " + Self.quoted(redaction.redact(url))]
        for field in redaction.redact(headers).fields {
            let value = redaction.redact(field.value)
            lines.append("-H " + Self.quoted(value.isEmpty ? field.name + ";" : field.name + ": " + value))
        }
        var trailer: String?
        if let body, !body.isEmpty {
            if let text = redaction.redactBody(body, contentType: headers["Content-Type"]) {
                lines.append("--data-raw " + Self.quoted(text))
            } else {
                trailer = "# body: \(body.count) bytes, not shown"
            }
        }
        return lines.joined(separator: " \\\n  ") + (trailer.map { "\n" + $0 } ?? "")
    }

    private static func methodOption(_ method: RequestMethod) -> String {
        switch method {
        case .get: ""
        case .head: " --head"
        default: " -X " + quotedIfNeeded(method.rawValue)
        }
    }

    /// `text` in single quotes, each `'` in it written as `'\''`.
    private static func quoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }

    /// A method is a token (the client rejects any other), so it needs quotes only when built by hand.
    private static func quotedIfNeeded(_ text: String) -> String {
        text.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A) }
            ? text : quoted(text)
    }
}

extension APIClient {
    /// The `curl` command for `request` as this client builds it: the full URL, the default headers, the encoded
    /// body and the client's ``Configuration/credentials``, with every credential redacted (see
    /// ``TransportRequest/curlDescription``).
    ///
    /// Adapters and the authenticator's `Authorization` run when the request is sent, once per attempt, so they are
    /// not in the command; nothing is sent to build it.
    ///
    /// - Parameter request: The request to describe.
    /// - Returns: The command.
    /// - Throws: ``APIError/invalidRequest(_:)`` or ``APIError/encodingFailed(_:)``, for a request that `send` would
    ///   refuse for the same reason before sending anything.
    public func curlDescription<Value>(of request: APIRequest<Value>) throws(APIError) -> String {
        try prepare(request.fields).request.curlDescription
    }
}
