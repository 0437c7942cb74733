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
        // `O_EXCL` with `O_CREAT` never follows a link in the name's place; `O_NOFOLLOW` says so twice.
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
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

    /// Removes a file; a missing file is not an error. (`unlink` removes a link itself, never what it points to.)
    static func remove(_ path: String) {
        _ = unlink(path)
    }

    /// Sets a file's modification time to now: the disk tier's least-recently-used order across restarts.
    static func touch(_ path: String) {
        _ = utimensat(AT_FDCWD, path, nil, AT_SYMLINK_NOFOLLOW)
    }

    /// Up to `limit` bytes from the start of a file, or all of it; `nil` when it cannot be read.
    /// Never through a symbolic link.
    static func read(_ path: String, upTo limit: Int? = nil) -> Data? {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        defer { try? handle.close() }
        if let limit { return try? handle.read(upToCount: limit) ?? Data() }
        return try? handle.readToEnd() ?? Data()
    }

    /// The size and modification time of the regular file at `path`; `nil` for anything else, a link included.
    static func regularFile(_ path: String) -> (size: Int, modified: Date)? {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        #if canImport(Darwin)
            let time = info.st_mtimespec
        #else
            let time = info.st_mtim
        #endif
        let modified = Date(timeIntervalSince1970: Double(time.tv_sec) + Double(time.tv_nsec) / 1e9)
        return (Int(info.st_size), modified)
    }
}
