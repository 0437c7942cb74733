/// The header fields a stored response is read by, gathered in one pass over its fields.
///
/// Reading each one by name scanned every field again, about ten times per stored response, retaining each field's
/// strings on every visit: it was the largest part of storing a response. The values are what ``HeaderFields``'s
/// subscript and ``HeaderFields/values(for:)`` give for the same names: several lines of one single-valued field are
/// joined by `", "`, list fields keep their lines.
struct StoredFields {
    var cacheControl: [String] = []
    var age: [String] = []
    var vary: [String] = []
    var date: String?
    var lastModified: String?
    var expires: String?
    var etag: String?
    var contentRange: String?

    init(_ headers: HeaderFields) {
        for field in headers.fields {
            switch field.canonicalName {
            case "cache-control": cacheControl.append(field.value)
            case "age": age.append(field.value)
            case "vary": vary.append(field.value)
            case "date": Self.add(field.value, to: &date)
            case "last-modified": Self.add(field.value, to: &lastModified)
            case "expires": Self.add(field.value, to: &expires)
            case "etag": Self.add(field.value, to: &etag)
            case "content-range": Self.add(field.value, to: &contentRange)
            default: break
            }
        }
    }

    /// The members of the `Vary` lines, trimmed and lower-cased, as ``CachedResponse/listValues(_:_:)`` gives them.
    var varyNames: [String] {
        vary.isEmpty ? [] : CachedResponse.listMembers(vary)
    }

    private static func add(_ value: String, to field: inout String?) {
        field = field.map { $0 + ", " + value } ?? value
    }
}
