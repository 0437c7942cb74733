#if OpenAPI
    import Courier
    import CourierHTTPTypes
    import HTTPTypes
    import Testing

    @Suite struct HeaderFieldsConversionTests {
        @Test func repeatedNamesOrderAndCaseSurviveARoundTrip() throws {
            let headers = HeaderFields([
                ("Set-Cookie", "a=1; Path=/"), ("X-Trace", "one"), ("set-cookie", "b=2"), ("Vary", "Accept"),
                ("VARY", "Accept-Language"),
            ])
            let fields = try HTTPFields(headers)
            #expect(fields.count == 5)
            #expect(fields[values: .setCookie] == ["a=1; Path=/", "b=2"])
            #expect(fields.map(\.name.rawName) == ["Set-Cookie", "X-Trace", "set-cookie", "Vary", "VARY"])
            let back = HeaderFields(fields)
            #expect(back.fields.map(\.name) == headers.fields.map(\.name))
            #expect(back.fields.map(\.value) == headers.fields.map(\.value))
            #expect(back.values(for: "set-cookie") == ["a=1; Path=/", "b=2"])
        }

        @Test func httpFieldsRoundTripThroughHeaderFields() throws {
            var fields = HTTPFields()
            fields.append(HTTPField(name: .contentType, value: "application/json"))
            fields.append(HTTPField(name: HTTPField.Name("X-Custom-ID")!, value: "42"))
            fields.append(HTTPField(name: .cacheControl, value: "no-cache"))
            fields.append(HTTPField(name: .cacheControl, value: "max-age=0"))
            #expect(try HTTPFields(HeaderFields(fields)) == fields)
        }

        @Test func nonASCIIValuesAreKeptByteForByte() throws {
            let headers: HeaderFields = ["Content-Disposition": "attachment; filename=\"résumé.pdf\""]
            let back = HeaderFields(try HTTPFields(headers))
            #expect(back["content-disposition"] == "attachment; filename=\"résumé.pdf\"")
        }

        @Test func whitespaceAroundAValueIsNotPartOfIt() throws {
            let fields = try HTTPFields(HeaderFields([("Accept", "  text/plain\t")]))
            #expect(fields[.accept] == "text/plain")
        }

        @Test(arguments: [":path", ":authority", ":method", ":status", "", "Bad Name", "Bad:Name", "Ünïcode"])
        func aNameThatIsNotATokenIsRefusedByName(name: String) throws {
            let error = try #require(throws: APIError.self) { try HTTPFields(HeaderFields([(name, "x")])) }
            guard case .invalidRequest(.invalidHeaderName(let refused)) = error else {
                Issue.record("expected invalidHeaderName, got \(error)")
                return
            }
            #expect(refused == name)
        }

        @Test(arguments: ["line\r\nX-Injected: yes", "nul\u{0}byte", "bell\u{7}", "lf\nonly"])
        func aValueHTTPTypesWouldRewriteIsRefusedWithoutPrintingIt(value: String) throws {
            let headers = HeaderFields([("Authorization", "Bearer secret-\(value)")])
            let error = try #require(throws: APIError.self) { try HTTPFields(headers) }
            guard case .invalidRequest(.invalidHeaderValue(let name)) = error else {
                Issue.record("expected invalidHeaderValue, got \(error)")
                return
            }
            #expect(name == "Authorization")
            #expect(!error.description.contains("secret"))
        }
    }
#endif
