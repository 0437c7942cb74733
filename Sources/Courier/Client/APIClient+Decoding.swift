import Foundation

extension APIClient {
    // MARK: Decoding

    // The two steps below are specialized in the caller's module with `send(_:)`, but not inlined into it
    // (Docs/Performance.md#specialization).

    /// The response to the call: the answer's body decoded as `T` in the caller's task, and its head; a failure to
    /// decode ends the call (`requestFailed`).
    @inlinable @inline(never)
    func response<T: Decodable>(to answer: Answer, as type: T.Type, decoder: JSONDecoder) throws -> APIResponse<T> {
        APIResponse(value: try value(of: answer, as: type, decoder: decoder), head: finished(answer))
    }

    /// ``response(to:as:decoder:)`` for a call that ``start(_:decodingOnce:)`` answered (a fresh hit). It takes the
    /// start as returned: the caller's `send` then keeps no copy of its answer in its async frame. The caller has
    /// checked that the start is answered.
    @inlinable @inline(never)
    func response<T: Decodable>(to start: consuming Start, as type: T.Type, decoder: JSONDecoder) throws
        -> APIResponse<T>
    {
        guard case .answered(let answer) = start else { preconditionFailure("a call to send has no answer yet") }
        return APIResponse(value: try value(of: answer, as: type, decoder: decoder), head: finished(answer))
    }

    /// ``sharedResponse(to:as:decoder:)`` for a call that ``start(_:decodingOnce:)`` answered, as
    /// ``response(to:as:decoder:)`` takes it.
    @inlinable @inline(never)
    func sharedResponse<T: Decodable & Sendable>(
        to start: consuming Start, as type: T.Type, decoder: JSONDecoder
    ) throws -> APIResponse<T> {
        guard case .answered(let answer) = start else { preconditionFailure("a call to send has no answer yet") }
        return APIResponse(value: try sharedValue(of: answer, as: type, decoder: decoder), head: finished(answer))
    }

    /// ``response(to:as:decoder:)`` with the value the flight decoded once when it was decoded as `T` by `decoder`, or
    /// the body decoded now.
    @inlinable @inline(never)
    func sharedResponse<T: Decodable & Sendable>(to answer: consuming Answer, as type: T.Type, decoder: JSONDecoder)
        throws -> APIResponse<T>
    {
        // The value goes straight into the response: a variable in between was one more copy (a retain per field). The
        // answer, a temporary of the caller's `send`, is consumed by `finished`.
        APIResponse(value: try sharedValue(of: answer, as: type, decoder: decoder), head: finished(answer))
    }

    /// The answer's body decoded as `T` in the caller's task; a failure ends the call (`requestFailed`).
    @inlinable @inline(__always)
    func value<T: Decodable>(of answer: Answer, as type: T.Type, decoder: JSONDecoder) throws -> T {
        do {
            return try Self.decode(type, from: answer.exchange.response, decoder: decoder)
        } catch {
            throw failed(answer, error)
        }
    }

    /// The value the flight decoded once when it was decoded as `T` by `decoder`, or the body decoded now.
    @inlinable @inline(__always)
    func sharedValue<T: Decodable & Sendable>(of answer: Answer, as type: T.Type, decoder: JSONDecoder) throws -> T {
        do {
            if let shared = try answer.exchange.decoded?.value(as: type, decoder: decoder) { return shared }
            return try Self.decode(type, from: answer.exchange.response, decoder: decoder)
        } catch {
            throw failed(answer, error)
        }
    }

    /// Decodes in the caller's task: never inside an actor, so a large body never blocks shared state.
    @inlinable
    static func decode<T: Decodable>(_ type: T.Type, from response: TransportResponse, decoder: JSONDecoder)
        throws(APIError)
        -> T
    {
        // A type comparison, not `as? T`: a dynamic cast looks up metadata on every call, and `Data` is the common case.
        if T.self == Data.self { return unsafeBitCast(response.body, to: T.self) }
        do {
            return try decoder.decode(T.self, from: response.body)
        } catch {
            throw .decodingFailed(type: String(describing: T.self), underlying: error, response: response)
        }
    }
}
