#if OpenAPI
    import Courier
    import CourierHTTPTypes
    import Foundation
    import HTTPTypes
    import Testing

    @Suite struct ResponseConversionTests {
        @Test(arguments: [100, 200, 204, 304, 404, 418, 503, 599, 999])
        func aResponseSurvivesARoundTrip(status: Int) throws {
            let original = TransportResponse(
                statusCode: status,
                headers: HeaderFields([("Set-Cookie", "a=1"), ("Content-Type", "text/plain"), ("set-cookie", "b=2")]),
                body: Data("body".utf8))
            let head = try HTTPResponse(original)
            #expect(head.status.code == status)
            #expect(head.headerFields[values: .setCookie] == ["a=1", "b=2"])
            #expect(TransportResponse(head, body: original.body) == original)
        }

        @Test func anHTTPTypesResponseKeepsEverythingButTheReasonPhrase() throws {
            var fields = HTTPFields()
            fields[.contentType] = "application/json"
            fields.append(HTTPField(name: .vary, value: "Accept"))
            fields.append(HTTPField(name: .vary, value: "Accept-Language"))
            let head = HTTPResponse(status: .init(code: 418, reasonPhrase: "I'm a teapot"), headerFields: fields)
            let converted = TransportResponse(head)
            #expect(converted.statusCode == 418)
            #expect(converted.headers.values(for: "vary") == ["Accept", "Accept-Language"])
            #expect(try HTTPResponse(converted).headerFields == fields)
            #expect(try HTTPResponse(converted).status == .init(code: 418))
        }

        @Test(arguments: [-1, 0, 42, 99, 1000, Int.max, Int.min])
        func aStatusThatIsNotThreeDigitsIsAnErrorNotACrash(status: Int) throws {
            let error = try #require(throws: APIError.self) { try HTTPResponse(TransportResponse(statusCode: status)) }
            guard case .invalidResponse(let reason, _) = error else {
                Issue.record("expected invalidResponse, got \(error)")
                return
            }
            #expect(reason.contains("\(status)"))
        }

        @Test func aResponseHeaderHTTPTypesCannotCarryIsAnInvalidResponse() throws {
            let named = TransportResponse(statusCode: 200, headers: HeaderFields([("Bad Name", "x")]))
            let valued = TransportResponse(
                statusCode: 200, headers: HeaderFields([("Set-Cookie", "sid=secret\r\nX: y")]))
            for response in [named, valued] {
                let error = try #require(throws: APIError.self) { try HTTPResponse(response) }
                guard case .invalidResponse = error else {
                    Issue.record("expected invalidResponse, got \(error)")
                    continue
                }
                #expect(!error.description.contains("secret"))
            }
        }
    }
#endif
