/// An ordered list of HTTP header fields with case-insensitive names.
///
/// Fields keep the order in which they were added, and a name may appear more than once
/// (`Set-Cookie`, `Vary`, `Cache-Control` lines from several hops). Lookups ignore ASCII case,
/// as RFC 9110 §5.1 requires.
///
/// ```swift
/// var headers: HeaderFields = ["Accept": "application/json"]
/// headers["accept"]                      // "application/json"
/// headers.add(name: "Cache-Control", value: "no-cache")
/// ```
///
/// The ``description`` of a header list replaces the values of credentials with `<redacted>`, so headers can be
/// logged safely: the fields ``CredentialPolicy/standard`` names (`Authorization`, `Cookie`, `X-API-Key`), any name
/// that looks like a credential's (`X-Tenant-Secret`, `X-Session-Id`), and `Bearer`/`Basic` credentials in any value.
public struct HeaderFields: Sendable, Hashable, ExpressibleByDictionaryLiteral {
    /// One header field: a name as it was written and its value.
    public struct Field: Sendable, Hashable {
        /// The field name, in the case it was given.
        public let name: String
        /// The field value.
        public var value: String

        /// The lower-cased name, used for comparisons.
        let canonicalName: String

        /// Creates a field.
        ///
        /// - Parameters:
        ///   - name: The field name; compared ignoring case.
        ///   - value: The field value.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
            self.canonicalName = Self.canonical(name)
        }

        /// Whether this field is named `name`, ignoring ASCII case, without allocating: header lookups run
        /// on every request, and lower-casing the name each time showed up in profiles.
        ///
        /// Inlined, so that a caller reading `fields[index]` touches only the name: called as a method on a field
        /// it was handed, the field was copied first, three retains and three releases per field looked at.
        @inline(__always)
        func hasName(_ name: String) -> Bool {
            // Most fields a lookup passes have a name of another length: settled without reading a byte.
            guard canonicalName.utf8.count == name.utf8.count else { return false }
            // Callers mostly pass the name in lower case: then it is one comparison of the two strings' bytes.
            return canonicalName == name || Self.equalIgnoringCase(canonicalName, name)
        }

        /// Byte by byte over contiguous storage (an iterator over each string's UTF-8 view cost about 30 instructions
        /// a byte), for a name given in another case.
        @inline(never)
        private static func equalIgnoringCase(_ canonicalName: String, _ name: String) -> Bool {
            var expected = canonicalName
            var given = name
            return expected.withUTF8 { expected in
                given.withUTF8 { given in
                    for index in 0..<given.count {
                        let byte = given[index]
                        let folded = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
                        guard expected[index] == folded else { return false }
                    }
                    return true
                }
            }
        }

        /// Two fields are equal when their names match ignoring case and their values match exactly.
        public static func == (lhs: Field, rhs: Field) -> Bool {
            lhs.canonicalName == rhs.canonicalName && lhs.value == rhs.value
        }

        /// Hashes the case-insensitive name and the value.
        public func hash(into hasher: inout Hasher) {
            hasher.combine(canonicalName)
            hasher.combine(value)
        }
    }

    /// The fields in order.
    public private(set) var fields: [Field]

    /// Creates an empty header list.
    public init() {
        fields = []
    }

    /// Creates a header list from name-value pairs, in order; repeated names are kept.
    ///
    /// - Parameter pairs: The fields as `(name, value)` pairs.
    public init(_ pairs: [(String, String)]) {
        fields = pairs.map { Field(name: $0.0, value: $0.1) }
    }

    /// Creates a header list from fields, in order.
    init(fields: [Field]) {
        self.fields = fields
    }

    /// Creates a header list from a dictionary literal, in the literal's order.
    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    // MARK: Reading

    /// The value for `name`, ignoring case. Several fields with that name are combined with `", "`
    /// (RFC 9110 §5.3). Setting a value replaces every field with that name; setting `nil` removes them.
    ///
    /// - Parameter name: The field name, in any case.
    public subscript(name: String) -> String? {
        get {
            let values = self.values(for: name)
            switch values.count {
            case 0: return nil
            case 1: return values[0]
            default: return values.joined(separator: ", ")
            }
        }
        set {
            if let newValue {
                replaceOrAdd(name: name, value: newValue)
            } else {
                remove(name: name)
            }
        }
    }

    /// Every value given for `name`, in order, ignoring case.
    ///
    /// - Parameter name: The field name, in any case.
    /// - Returns: The values of every field with that name; empty when there is none.
    public func values(for name: String) -> [String] {
        fields.compactMap { $0.hasName(name) ? $0.value : nil }
    }

    /// Whether at least one field has this name, ignoring case.
    ///
    /// - Parameter name: The field name, in any case.
    public func contains(_ name: String) -> Bool {
        fields.contains { $0.hasName(name) }
    }

    /// The number of fields.
    public var count: Int { fields.count }

    /// Whether there are no fields.
    public var isEmpty: Bool { fields.isEmpty }

    // MARK: Changing

    /// Reserves room for `minimumCapacity` fields, so that adding that many allocates once.
    ///
    /// - Parameter minimumCapacity: The number of fields the list will hold.
    public mutating func reserveCapacity(_ minimumCapacity: Int) {
        fields.reserveCapacity(minimumCapacity)
    }

    /// Appends a field, keeping any fields that already have this name.
    ///
    /// - Parameters:
    ///   - name: The field name.
    ///   - value: The field value.
    public mutating func add(name: String, value: String) {
        fields.append(Field(name: name, value: value))
    }

    /// Replaces the first field named `name` and removes the others, or appends one if there is none.
    ///
    /// - Parameters:
    ///   - name: The field name, in any case; the new field is written as given here.
    ///   - value: The field value.
    public mutating func replaceOrAdd(name: String, value: String) {
        guard let first = fields.firstIndex(where: { $0.hasName(name) }) else {
            fields.append(Field(name: name, value: value))
            return
        }
        fields[first] = Field(name: name, value: value)
        var index = fields.index(after: first)
        while index < fields.endIndex {
            if fields[index].hasName(name) {
                fields.remove(at: index)
            } else {
                index += 1
            }
        }
    }

    /// Removes every field named `name`, ignoring case.
    ///
    /// - Parameter name: The field name, in any case.
    public mutating func remove(name: String) {
        fields.removeAll { $0.hasName(name) }
    }

    /// Adds every field of `other` whose name this list does not have, every line of a repeated name included.
    ///
    /// The names are checked against this list as it was before adding: checking while appending would find the
    /// first line of a repeated default and drop the others.
    mutating func addMissing(from other: HeaderFields) {
        guard !other.fields.isEmpty else { return }  // a client without default headers: no filtering, no array
        let missing = other.fields.filter { !contains($0.name) }
        fields.append(contentsOf: missing)
    }
}

extension HeaderFields: Sequence {
    /// Iterates over the fields in order.
    public func makeIterator() -> IndexingIterator<[Field]> {
        fields.makeIterator()
    }
}

extension HeaderFields: CustomStringConvertible {
    /// The fields one per line as `Name: value`, with credential values replaced by `<redacted>`.
    public var description: String {
        fields.map(\.description).joined(separator: "\n")
    }
}

extension HeaderFields: CustomReflectable {
    /// One child per field, `Name: value`, credentials redacted as in ``description``, so `dump` and
    /// reflection-based loggers never show a token either.
    public var customMirror: Mirror {
        Mirror(self, unlabeledChildren: fields, displayStyle: .collection)
    }
}

extension HeaderFields.Field: CustomStringConvertible, CustomReflectable {
    /// `Name: value`, with the value of a credential field replaced by `<redacted>`.
    ///
    /// A field printed on its own cannot see the client's ``CredentialPolicy``, so it hides every value any policy is
    /// likely to name: the ``CredentialPolicy/standard`` names, and names made of the words credential names are made
    /// of (`X-Tenant-Secret`, `X-Goog-Api-Key`, `X-Amz-Security-Token`, `X-Session-Id`). In any other value, a
    /// `Bearer` or `Basic` credential, a URL's password and the standard secret query parameters are redacted.
    public var description: String {
        "\(name): \(shownValue)"
    }

    private var shownValue: String {
        CredentialPolicy.mayBeCredential(headerNamed: canonicalName)
            ? Redaction.placeholder : Redaction.standard.redact(value)
    }

    /// The name and the value as in ``description``: reflection never shows a credential.
    public var customMirror: Mirror {
        Mirror(self, children: ["name": name, "value": shownValue], displayStyle: .struct)
    }
}
