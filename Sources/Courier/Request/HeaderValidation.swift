extension HTTPHeaders {
    /// Bytes allowed in a field name: RFC 9110 §5.6.2 `tchar`.
    private static let tokenCharacters = ByteSet(
        "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")

    /// Throws unless every name is a token and no value contains a control character other than tab.
    ///
    /// A CR or LF in a value would let a caller's data inject headers or split the request, so it is
    /// refused before anything is sent rather than left to the transport.
    func validate() throws(APIError) {
        for field in fields {
            guard !field.name.isEmpty, field.name.utf8.allSatisfy(Self.tokenCharacters.contains) else {
                throw .invalidRequest(.invalidHeaderName(field.name))
            }
            let valueIsClean = field.value.utf8.allSatisfy { byte in
                byte == 0x09 || (byte >= 0x20 && byte != 0x7F)
            }
            guard valueIsClean else {
                throw .invalidRequest(.invalidHeaderValue(name: field.name))
            }
        }
    }
}
