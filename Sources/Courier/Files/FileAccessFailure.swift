import Foundation

/// Why a file of a call could not be used: what was being done to which file, and the file system's error.
public struct FileAccessFailure: Sendable, CustomStringConvertible {
    /// What the call was doing with the file.
    public enum Operation: String, Sendable, Hashable {
        /// Reading a file to upload.
        case read
        /// Writing a download, or moving it into place.
        case write
    }

    /// What the call was doing.
    public let operation: Operation
    /// The file's path.
    public let path: String
    /// The file system's error.
    public let underlyingError: any Error

    /// Creates a failure.
    ///
    /// - Parameters:
    ///   - operation: What the call was doing with the file.
    ///   - path: The file's path.
    ///   - underlyingError: The file system's error.
    public init(_ operation: Operation, path: String, underlyingError: any Error) {
        self.operation = operation
        self.path = path
        self.underlyingError = underlyingError
    }

    /// The failure as a sentence: `the file "/tmp/a.bin" could not be read (No such file or directory)`.
    public var description: String {
        let verb = operation == .read ? "read" : "written"
        return "The file \"\(path)\" could not be \(verb) (\(Self.reason(underlyingError)))"
    }

    /// The file system's own words: the POSIX message when there is one, rather than Foundation's long description.
    private static func reason(_ error: any Error) -> String {
        let nsError = error as NSError
        if let posix = nsError.userInfo[NSUnderlyingErrorKey] as? NSError, posix.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(posix.code)))
        }
        if nsError.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(nsError.code))) }
        return String(describing: error)
    }
}

extension APIError {
    /// A ``fileAccess(_:)`` error for `url`.
    static func file(_ operation: FileAccessFailure.Operation, _ url: URL, _ error: any Error) -> APIError {
        .fileAccess(FileAccessFailure(operation, path: url.path, underlyingError: error))
    }
}
