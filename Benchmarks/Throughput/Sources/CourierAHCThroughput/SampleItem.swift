/// The JSON file nginx serves, as a service would decode it (`--decoded`); the same type as the coalescing report's.
struct SampleItem: Codable, Sendable {
    let id: Int
    let name: String
    let email: String
    let role: String
    let createdAt: String
    let tags: [String]
    let score: Double
    let isActive: Bool
}
