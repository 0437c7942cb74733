import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The delegate of the session a ``URLSessionTransport`` makes. FoundationNetworking delivers a task's response,
/// data and completion only to the session's delegate, never to the task's own, so this hands each callback to
/// the ``URLSessionExchange`` set as the task's delegate. (Apple's URLSession calls the task's delegate first.)
final class URLSessionRouter: NSObject, URLSessionDataDelegate, Sendable {
    private static func exchange(of task: URLSessionTask) -> URLSessionExchange? {
        task.delegate as? URLSessionExchange
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        guard let exchange = Self.exchange(of: dataTask) else { return completionHandler(.allow) }
        exchange.urlSession(session, dataTask: dataTask, didReceive: response, completionHandler: completionHandler)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        Self.exchange(of: dataTask)?.urlSession(session, dataTask: dataTask, didReceive: data)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        guard let exchange = Self.exchange(of: task) else { return completionHandler(.performDefaultHandling, nil) }
        exchange.urlSession(session, task: task, didReceive: challenge, completionHandler: completionHandler)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        guard let exchange = Self.exchange(of: task) else {
            return RedirectGuard.shared.urlSession(
                session, task: task, willPerformHTTPRedirection: response, newRequest: request,
                completionHandler: completionHandler)
        }
        exchange.urlSession(
            session, task: task, willPerformHTTPRedirection: response, newRequest: request,
            completionHandler: completionHandler)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        Self.exchange(of: task)?.urlSession(session, task: task, didCompleteWithError: error)
    }
}
