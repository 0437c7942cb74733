#if OpenAPI
    import Courier
    import HTTPTypes

    extension HeaderFields {
        /// Creates Courier's header list from HTTPTypes' fields: every field in order, a repeated name (two
        /// `Set-Cookie` lines) kept as separate fields, each name in the case it was written.
        ///
        /// This direction cannot fail: every field HTTPTypes holds is a valid Courier field.
        ///
        /// - Parameter fields: The fields to convert.
        public init(_ fields: HTTPFields) {
            self.init(fields.map { ($0.name.rawName, $0.value) })
        }
    }

    extension HTTPFields {
        /// Creates HTTPTypes' fields from Courier's header list: every field in order, a repeated name kept as
        /// separate fields, each name in the case it was written.
        ///
        /// HTTPTypes would silently rewrite a value it cannot carry (a line break becomes a space); this refuses it
        /// instead, so a request is never sent with a header other than the one the caller wrote. Whitespace around
        /// a value is dropped, as RFC 9110 §5.5 says it is not part of the value.
        ///
        /// - Parameter headers: The header fields to convert.
        /// - Throws: ``APIError/invalidRequest(_:)`` with ``InvalidRequestReason/invalidHeaderName(_:)`` for a name
        ///   that is not a token (a pseudo-header such as `:path` among them: HTTPTypes keeps those in
        ///   `HTTPRequest`'s own properties), or ``InvalidRequestReason/invalidHeaderValue(name:)`` for a value with
        ///   a control character. The error names the field, never its value, which may be a credential.
        public init(_ headers: HeaderFields) throws(APIError) {
            try self.init(headers, invalid: FieldProblem.requestError)
        }

        /// Converts `headers`, describing a field HTTPTypes cannot carry with `invalid`: a request and a response
        /// report it as different ``APIError`` cases.
        init(_ headers: HeaderFields, invalid: (FieldProblem) -> APIError) throws(APIError) {
            self.init()
            reserveCapacity(headers.count)
            for field in headers {
                guard let name = HTTPField.Name(field.name) else { throw invalid(.name(field.name)) }
                guard let value = Self.legalValue(field.value) else { throw invalid(.value(name: field.name)) }
                append(HTTPField(name: name, value: value))
            }
        }

        /// `value` as HTTPTypes holds it, or `nil` when HTTPTypes would have to change more than the surrounding
        /// whitespace (RFC 9110 §5.5: `OWS` is not part of a field value).
        private static func legalValue(_ value: String) -> String? {
            if HTTPField.isValidValue(value) { return value }
            let isWhitespace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
            guard let first = value.firstIndex(where: { !isWhitespace($0) }),
                let last = value.lastIndex(where: { !isWhitespace($0) })
            else { return "" }
            let trimmed = String(value[first...last])
            return HTTPField.isValidValue(trimmed) ? trimmed : nil
        }
    }

    /// A header field HTTPTypes cannot carry.
    enum FieldProblem {
        /// The name is not a token; it is kept to be reported.
        case name(String)
        /// The value has a control character; only the name is kept, since the value may be a credential.
        case value(name: String)

        /// The error for a field of a request the caller built: nothing was sent.
        static func requestError(_ problem: FieldProblem) -> APIError {
            switch problem {
            case .name(let name): .invalidRequest(.invalidHeaderName(name))
            case .value(let name): .invalidRequest(.invalidHeaderValue(name: name))
            }
        }

        /// The error for a field of a response a server sent.
        static func responseError(_ problem: FieldProblem) -> APIError {
            switch problem {
            case .name(let name):
                .invalidResponse(reason: "the header name \(name.debugDescription) is not a token", underlying: nil)
            case .value(let name):
                .invalidResponse(
                    reason: "the value of header \(name.debugDescription) contains a control character", underlying: nil
                )
            }
        }
    }
#endif
