import Courier
import Foundation
import Vapor

/// A user as the upstream API describes it, and as this service returns it.
public struct Profile: Codable, Sendable, Equatable, Content {
    /// The user's id upstream.
    public let id: Int
    /// The user's name.
    public let name: String

    /// A profile with the given id and name.
    public init(id: Int, name: String) {
        self.id = id
        self.name = name
    }
}

/// Registers `GET /profiles/:id`, which answers with the upstream's `/users/:id` fetched through `client`.
///
/// The client is made once, outside the routes, and shared by every request: concurrent requests for one profile
/// send one upstream call, and fresh answers come from its cache.
public func registerProfileRoutes(on routes: any RoutesBuilder, client: APIClient) {
    routes.get("profiles", ":id") { (request: Request) async throws -> Profile in
        guard let id = request.parameters.get("id", as: Int.self) else { throw Abort(.badRequest) }
        let response: APIResponse<Profile> = try await client.send(APIRequest<Profile>.get("/users/\(id)"))
        return response.value
    }
}
