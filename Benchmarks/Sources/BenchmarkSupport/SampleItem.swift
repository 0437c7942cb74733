import Foundation

/// A small API object as services send them, about 200 bytes of JSON: what the decoded benchmarks ask for.
public struct SampleItem: Codable, Sendable, Hashable {
    /// The identifier.
    public let id: Int
    /// A display name.
    public let name: String
    /// A contact address.
    public let email: String
    /// A role name.
    public let role: String
    /// When the item was created, as the server writes it (decoded as text, as many clients do).
    public let createdAt: String
    /// Free-form labels.
    public let tags: [String]
    /// A score.
    public let score: Double
    /// Whether the item is active.
    public let isActive: Bool

    /// The body the simulated upstream sends for the decoded variant (221 bytes).
    public static let json = Data(
        (#"{"id":1,"name":"Ada Lovelace","email":"ada.lovelace@example.com","role":"administrator","#
            + #""createdAt":"2026-11-21T12:00:00Z","tags":["mathematics","engines","poetry"],"#
            + #""score":97.5,"isActive":true,"team":"analytical-engine"}"#).utf8)
}
