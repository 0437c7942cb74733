import CourierTesting
import Foundation
import Testing

@testable import Courier

@Suite struct CurlDescriptionTests {
    private let baseURL = URL(string: "https://api.example.com/v1")!

    @Test func aGetShowsItsURLAndHeadersWithEveryCredentialRedacted() throws {
        var configuration = APIClient.Configuration()
        configuration.headers["Authorization"] = "Bearer s3cr3t-token"
        configuration.headers["X-Tenant-Secret"] = "tenant-s3cr3t"
        configuration.credentials.headerNames.insert("X-Tenant-Secret")
        configuration.credentials.queryParameters.insert("session")
        let client = APIClient(baseURL: baseURL, configuration: configuration)
        var request = APIRequest<Data>.get(
            "/feed", query: [URLQueryItem(name: "api_key", value: "k3y"), URLQueryItem(name: "session", value: "s3ss")])
        request.headers["Accept"] = "application/json"
        request.headers["X-Debug"] = "Bearer inline-s3cr3t"

        let command = try client.curlDescription(of: request)

        #expect(
            command == """
                curl 'https://api.example.com/v1/feed?api_key=<redacted>&session=<redacted>' \\
                  -H 'Accept: application/json' \\
                  -H 'X-Debug: Bearer <redacted>' \\
                  -H 'Authorization: <redacted>' \\
                  -H 'X-Tenant-Secret: <redacted>'
                """)
        for secret in ["s3cr3t-token", "tenant-s3cr3t", "k3y", "s3ss", "inline-s3cr3t"] {
            #expect(!command.contains(secret))
        }
    }

    @Test func aJSONBodyShowsEveryMemberButCredentials() throws {
        struct SignIn: Encodable, Sendable {
            struct Device: Encodable, Sendable {
                let name: String
                let refreshToken: String
                enum CodingKeys: String, CodingKey {
                    case name
                    case refreshToken = "refresh_token"
                }
            }
            let user: String
            let password: String
            let device: Device
        }
        let client = APIClient(baseURL: baseURL)
        let request = APIRequest<Data>.post(
            "/sessions", body: SignIn(user: "ada", password: "pa55", device: .init(name: "phone", refreshToken: "r1")))

        let command = try client.curlDescription(of: request)

        #expect(
            command == """
                curl -X POST 'https://api.example.com/v1/sessions' \\
                  -H 'Content-Type: application/json' \\
                  --data-raw '{"device":{"name":"phone","refresh_token":"<redacted>"},"password":"<redacted>","user":"ada"}'
                """)
    }

    @Test func aJSONBodyWithoutCredentialsIsShownAsSent() {
        let body = Data(#"{ "b": 1,  "a": "it's" }"#.utf8)
        let request = TransportRequest(
            method: .put, url: baseURL, headers: ["Content-Type": "application/merge-patch+json"], body: body)

        #expect(request.curlDescription.hasSuffix(#"--data-raw '{ "b": 1,  "a": "it'\''s" }'"#))
    }

    @Test func aFormBodyIsRedactedLikeAQuery() {
        let request = TransportRequest(
            method: .post, url: URL(string: "https://auth.example.com/token")!,
            headers: ["Content-Type": "application/x-www-form-urlencoded; charset=utf-8"],
            body: Data("client_secret=abc&grant_type=refresh_token&refresh_token=xyz".utf8))

        #expect(
            request.curlDescription.hasSuffix(
                "--data-raw 'client_secret=<redacted>&grant_type=refresh_token&refresh_token=<redacted>'"))
    }

    @Test(arguments: [
        ("application/octet-stream", Data([0xFF, 0x00, 0x10])),
        ("application/json", Data(#"{"password": "pa55""#.utf8)),
        ("text/plain", Data("line\u{0}with a NUL".utf8)),
    ])
    func aBodyWhoseSecretsCannotBeFoundIsLeftOut(contentType: String, body: Data) {
        let request = TransportRequest(method: .post, url: baseURL, headers: ["Content-Type": contentType], body: body)

        let command = request.curlDescription

        #expect(command.hasSuffix("\n# body: \(body.count) bytes, not shown"))
        #expect(!command.contains("--data-raw") && !command.contains("pa55"))
    }

    @Test func quotesSurviveAShell() async throws {
        let request = TransportRequest(
            method: .head, url: URL(string: "https://user:pa55@api.example.com/a'b?q=it's")!,
            headers: ["X-Note": "it's \"quoted\" $HOME `id`"])

        let command = request.curlDescription

        #expect(command.hasPrefix("curl --head 'https://user:<redacted>@api.example.com/a"))
        // The shell reads back exactly the words the command means: run `printf` in its place.
        let words = try await Self.shellWords(command.replacingOccurrences(of: "curl", with: "printf '%s\\n'"))
        #expect(words.contains("X-Note: it's \"quoted\" $HOME `id`"))
    }

    /// `--data-binary '@/etc/passwd'` makes curl send that file; `--data-raw` sends the text as it is.
    @Test func aBodyThatStartsWithAnAtSignIsSentAsTextNotReadFromAFile() {
        let request = TransportRequest(
            method: .post, url: baseURL, headers: ["Content-Type": "text/plain"], body: Data("@/etc/passwd".utf8))

        let command = request.curlDescription

        #expect(command.hasSuffix("--data-raw '@/etc/passwd'"))
        #expect(!command.contains("--data-binary"))
    }

    /// `-H 'X-Empty: '` tells curl to remove the header; `-H 'X-Empty;'` sends it with an empty value.
    @Test func anEmptyHeaderValueIsWrittenAsCurlSendsIt() {
        let request = TransportRequest(url: baseURL, headers: ["X-Empty": "", "Accept": "*/*"])

        #expect(
            request.curlDescription == """
                curl 'https://api.example.com/v1' \\
                  -H 'X-Empty;' \\
                  -H 'Accept: */*'
                """)
    }

    /// A JSON body is redacted as JSON whatever its `Content-Type` says, or left out when it does not parse.
    @Test(arguments: [nil, "text/plain", "application/octet-stream"] as [String?])
    func aJSONBodyWithoutAJSONTypeStillHasItsCredentialsRedacted(contentType: String?) {
        var headers: HeaderFields = [:]
        if let contentType { headers["Content-Type"] = contentType }
        let request = TransportRequest(
            method: .post, url: baseURL, headers: headers, body: Data(#" {"user": "ada", "password": "pa55"}"#.utf8))
        let broken = TransportRequest(
            method: .post, url: baseURL, headers: headers, body: Data(#"[{"password": "pa55""#.utf8))

        let command = request.curlDescription

        #expect(!command.contains("pa55"), "\(command)")
        #expect(command.hasSuffix(#"--data-raw '{"password":"<redacted>","user":"ada"}'"#), "\(command)")
        #expect(!broken.curlDescription.contains("pa55"))
    }

    @Test func badInputFailsWithTheErrorSendWouldThrow() {
        let client = APIClient(baseURL: baseURL)
        #expect {
            _ = try client.curlDescription(of: APIRequest<Data>.get("/users/\u{7}"))
        } throws: { error in
            guard case .invalidRequest = error as? APIError else { return false }
            return true
        }
        var request = APIRequest<Data>.get("/users")
        request.headers["X-Bad"] = "a\r\nInjected: yes"
        #expect(throws: APIError.self) { try client.curlDescription(of: request) }
    }

    private static func shellWords(_ command: String) async throws -> [String] {
        try await offTheCooperativePool { try runShell(command) }
    }

    private static func runShell(_ command: String) throws -> [String] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: output, as: UTF8.self).split(separator: "\n").map(String.init)
    }
}
