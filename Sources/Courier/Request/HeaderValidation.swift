/// RFC 9110 §5.6.2 tokens: the grammar of field names and methods, checked in one place.
enum HTTPToken {
    /// Whether `text` is a token: one or more `tchar`, so it cannot carry a space, a line break or a delimiter.
    static func isValid(_ text: String) -> Bool {
        // A closure, not `ByteSet.tokenCharacters.contains` by name: a method reference allocates its context on
        // every call.
        !text.isEmpty && text.utf8.allSatisfy { ByteSet.tokenCharacters.contains($0) }
    }
}

/// RFC 9110 §5.5 field values: the one check every text that becomes part of a header line passes, whichever API it
/// came through (a request's headers, an adapter's or an observer's, an upload's `Content-Type`, a multipart part's
/// `Content-Type`).
enum FieldValue {
    /// Whether `text` may be sent as a field value: no control character but horizontal tab (so no CR, LF or NUL),
    /// no DEL. Bytes from 0x80 (UTF-8, RFC 9110's `obs-text`) pass.
    ///
    /// On bytes, not `Character`s: `"\r\n"` is one `Character`, so a filter of `"\r"` and `"\n"` characters lets
    /// it through.
    @inline(__always)
    static func isValid(_ text: String) -> Bool {
        text.utf8.allSatisfy { byte in byte == 0x09 || (byte >= 0x20 && byte != 0x7F) }
    }
}

extension HeaderFields {
    /// Throws unless every name is a token and no value contains a control character other than tab.
    ///
    /// A CR or LF in a value would let a caller's data inject headers or split the request, so it is
    /// refused before anything is sent rather than left to the transport.
    func validate() throws(APIError) {
        for field in fields {
            guard HTTPToken.isValid(field.name) else {
                throw .invalidRequest(.invalidHeaderName(field.name))
            }
            guard FieldValue.isValid(field.value) else {
                throw .invalidRequest(.invalidHeaderValue(name: field.name))
            }
        }
    }
}

extension RequestMethod {
    /// Throws unless the method is a token (RFC 9110 §9.1).
    ///
    /// The method is the first word of the request line: a space or a line break in it would let a caller's data
    /// rewrite the request line or smuggle a second request, so it is refused before anything is sent. The
    /// initializer stays non-failing (methods are mostly literals); the client checks when it builds a request
    /// and again after adapters ran.
    func validate() throws(APIError) {
        // The common methods are checked by comparing: each is a small string, compared as two machine words, where
        // checking its bytes one by one cost about 150 instructions per call.
        switch rawValue {
        case "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD": return
        default: guard HTTPToken.isValid(rawValue) else { throw .invalidRequest(.invalidMethod(rawValue)) }
        }
    }
}
