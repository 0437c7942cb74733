import Foundation

// The bodies of the public `send` overloads (`APIClient.swift`): a caller on no actor runs them where it runs, a caller
// on an actor through a `@concurrent` step first (Docs/Performance.md#executor-checks).
extension APIClient {
    // MARK: Leaving the Caller's Actor

    /// `send` for a caller on an actor: the same steps off it, where a plain `async` function runs (the task's executor
    /// preference, or the global concurrent executor).
    @inlinable @inline(never) @concurrent
    func sendOffTheCallersActor<T: Decodable>(_ request: APIRequest<T>) async throws -> APIResponse<T> {
        try await respond(to: request)
    }

    /// `send` with shared decoding for a caller on an actor, off it as above.
    @inlinable @inline(never) @concurrent
    func sendOffTheCallersActor<T: Decodable & Sendable>(_ request: APIRequest<T>) async throws -> APIResponse<T> {
        try await respondDecodingOnce(to: request)
    }

    /// `send` of an `APIRequest<Void>` for a caller on an actor, off it as above.
    @concurrent
    func sendOffTheCallersActor(_ request: APIRequest<Void>) async throws -> APIResponse<Void> {
        try await respond(to: request)
    }

    // MARK: One Call, Where Its Caller Runs

    /// The steps of `send`, then the caller's decoding, on the executor `send` runs on.
    @inlinable @inline(__always)
    nonisolated(nonsending) func respond<T: Decodable>(to request: APIRequest<T>) async throws -> APIResponse<T> {
        let decoder = decoder(for: request.fields)
        // A fresh hit is answered by `start` itself, without a suspension point. Each branch builds the response in a
        // plain function of its own, and a hit's answer is read there from the start as returned: merged into one
        // `answer` first, the branches kept three copies of it and the response's head in this frame, which every
        // caller's task holds while it waits (Docs/Performance.md#joining).
        let start = try self.start(request.fields, decodingOnce: nil)
        if case .answered = start { return try response(to: consume start, as: T.self, decoder: decoder) }
        // Consumed: the `Sending` is moved out of it rather than copied (a retain and a release of each of its
        // references, and a second destruction of the start).
        switch consume start {
        case .answered: preconditionFailure("answered just above")
        case .sending(let sending):
            return try response(
                to: await answer(sending, request.fields, decodingOnce: nil), as: T.self, decoder: decoder)
        }
    }

    /// `respond(to:)` with the flight's value decoded once for every caller that asks for `T` with
    /// the same decoder.
    @inlinable @inline(__always)
    nonisolated(nonsending) func respondDecodingOnce<T: Decodable & Sendable>(to request: APIRequest<T>) async throws
        -> APIResponse<T>
    {
        let decoder = decoder(for: request.fields)
        // `Data` needs no decoding: sharing it would only box it.
        let shared = T.self == Data.self ? nil : SharedDecoding(T.self, decoder: decoder)
        // A fresh hit is answered by `start` itself, without a suspension point; each branch builds the response in a
        // plain function, as in `respond(to:)` above.
        let start = try self.start(request.fields, decodingOnce: shared)
        if case .answered = start { return try sharedResponse(to: consume start, as: T.self, decoder: decoder) }
        switch consume start {
        case .answered: preconditionFailure("answered just above")
        case .sending(let sending):
            return try sharedResponse(
                to: await answer(sending, request.fields, decodingOnce: shared), as: T.self, decoder: decoder)
        }
    }

    /// The steps of `send` for an `APIRequest<Void>`, on the executor `send` runs on.
    nonisolated(nonsending) func respond(to request: APIRequest<Void>) async throws -> APIResponse<Void> {
        let answer =
            switch try start(request.fields, decodingOnce: nil) {
            case .answered(let answer): answer
            case .sending(let sending): try await answer(sending, request.fields, decodingOnce: nil)
            }
        return APIResponse(value: (), head: finished(answer))
    }
}
