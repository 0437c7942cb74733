import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The file operations of the disk tier, on POSIX calls because crash safety rests on their exact order:
/// write a new file under a temporary name, `fsync` it, `rename` it over the old one (atomic within one file
/// system), then `fsync` the directory so that the rename itself survives a power cut. A process killed at any
/// point leaves the old file or the new one, and at worst a temporary file, removed at the next start.
enum DurableFiles {
    /// Writes `data` to a new file at `path`, then flushes it to the device. Never replaces an existing file.
    ///
    /// - Returns: Whether every byte was written and flushed.
    static func writeNew(_ data: Data, to path: String) -> Bool {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        let written = data.withUnsafeBytes { buffer -> Bool in
            var offset = 0
            while offset < buffer.count {
                let count = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return false }
                offset += count
            }
            return true
        }
        return written && fsync(descriptor) == 0
    }

    /// Renames `source` over `destination` atomically.
    static func replace(_ destination: String, with source: String) -> Bool {
        rename(source, destination) == 0
    }

    /// Flushes a directory's entries (a rename or an unlink in it) to the device.
    static func syncDirectory(_ path: String) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        _ = fsync(descriptor)
        close(descriptor)
    }

    /// Removes a file; a missing file is not an error.
    static func remove(_ path: String) {
        _ = unlink(path)
    }

    /// Sets a file's modification time to now: the disk tier's least-recently-used order across restarts.
    static func touch(_ path: String) {
        _ = utimensat(AT_FDCWD, path, nil, 0)
    }

    /// Up to `limit` bytes from the start of a file, or all of it; `nil` when it cannot be read.
    static func read(_ path: String, upTo limit: Int? = nil) -> Data? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        if let limit { return try? handle.read(upToCount: limit) ?? Data() }
        return try? handle.readToEnd() ?? Data()
    }
}
