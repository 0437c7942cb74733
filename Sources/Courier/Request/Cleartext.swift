import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Whether what a URL carries crosses the network in clear text: `http` to a host that is not loopback.
///
/// Credentials are not sent that way unless ``APIClient/Configuration/allowsCredentialsOverCleartext`` says so: over
/// plain `http` anyone on the path can read a token and use it. Loopback (`127.0.0.0/8`, `::1`, `localhost`) never
/// leaves the machine.
enum Cleartext {
    /// Whether `url` is `http://` to a host that is not loopback.
    static func isExposed(_ url: URL) -> Bool {
        // `https`, the common case, is settled on the text's first bytes, before parsing the scheme and the host.
        let text = url.absoluteString.utf8
        var index = text.startIndex
        for expected in "http:".utf8 {
            guard index != text.endIndex, ASCII.lowercased(text[index]) == expected else { return false }
            text.formIndex(after: &index)
        }
        return !isLoopback(host: url.host ?? "")
    }

    /// Whether `host` names this machine: `localhost`, an IPv4 address in `127.0.0.0/8`, or the IPv6 loopback address
    /// (`::1`, written in any of its forms, or an IPv4-mapped `127.x.y.z`). Names that only start with these
    /// (`127.0.0.1.example.com`, `localhost.example.com`) are other hosts.
    static func isLoopback(host: String) -> Bool {
        var name = host.lowercased()
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        if name.hasSuffix(".") { name.removeLast() }
        if name == "localhost" { return true }
        if let address = ipv4(name) { return address.0 == 127 }
        // A zone (`fe80::1%eth0`) names an interface, never loopback; `inet_pton` refuses it.
        var address = in6_addr()
        guard inet_pton(AF_INET6, name, &address) == 1 else { return false }
        let bytes = withUnsafeBytes(of: &address) { Array($0) }
        let isLoopbackV6 = bytes[0..<15].allSatisfy { $0 == 0 } && bytes[15] == 1
        let isMappedLoopbackV4 =
            bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF
            && bytes[12] == 127
        return isLoopbackV6 || isMappedLoopbackV4
    }

    /// The four octets of a dotted-decimal IPv4 address, or `nil` when `text` is not one.
    private static func ipv4(_ text: String) -> (UInt8, UInt8, UInt8, UInt8)? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var octets: [UInt8] = []
        for part in parts {
            guard (1...3).contains(part.utf8.count), part.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
                let octet = UInt8(part)
            else { return nil }
            octets.append(octet)
        }
        return (octets[0], octets[1], octets[2], octets[3])
    }
}

extension CredentialPolicy {
    /// Whether `request` carries a credential of this policy: a header field it names, a query parameter it names,
    /// or user information in the URL.
    func isCarried(by request: TransportRequest) -> Bool {
        if request.headers.fields.contains(where: { headerNames.contains($0.canonicalName) }) { return true }
        let url = request.url
        if url.user != nil || url.password != nil { return true }
        let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        return items.contains { queryParameters.contains($0.name.lowercased()) }
    }
}

extension CredentialScope {
    /// Throws when `request` would carry a credential in clear text to another machine: it has one of its own (a
    /// credential header, query parameter or user information), or `authorized` says the authenticator will add
    /// one, and its URL is `http://` to a host that is not loopback, without the configuration's opt-in.
    ///
    /// - Parameter exposed: Whether the URL is known to be exposed; `nil` to work it out.
    func refuseCleartextCredentials(
        in request: TransportRequest, exposed: Bool? = nil, authorized: Bool = false
    ) throws(APIError) {
        guard !allowsCleartext, exposed ?? Cleartext.isExposed(request.url) else { return }
        guard authorized || credentials.isCarried(by: request) else { return }
        throw .invalidRequest(.credentialsOverCleartext(host: request.url.host ?? ""))
    }
}
