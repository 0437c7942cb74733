import Courier
import Crypto
import Foundation

/// A signer for an API that checks HMAC-SHA256 signatures made with a secret it shares with you.
public func hmacSigner(
    keyID: String, secret: Data,
    now: @escaping @Sendable () -> Date = { Date() },
    nonce: @escaping @Sendable () -> String = { UUID().uuidString }
) -> RequestSigner {
    // The key is made in the closure: swift-crypto's SymmetricKey is not Sendable, the secret's bytes are.
    RequestSigner(
        keyID: keyID,
        bodyDigest: { body in Data(SHA256.hash(data: body)) },
        mac: { message in Data(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: secret))) },
        now: now, nonce: nonce)
}

/// A client whose every attempt is signed.
public func signedClient(baseURL: URL, keyID: String, secret: Data) -> APIClient {
    var configuration = APIClient.Configuration()
    configuration.adapters.append(hmacSigner(keyID: keyID, secret: secret))
    return APIClient(baseURL: baseURL, configuration: configuration)
}
