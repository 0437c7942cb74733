import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The part of a directory the disk tier owns, and the rules that keep it from touching anything else.
///
/// The directory a caller names is often shared: an application's caches folder, or a folder with files of its
/// own. Courier never deletes there. It keeps everything in one subdirectory, `courier-cache`, that it created and
/// marked with a `CACHEDIR.TAG` (the Cache Directory Tagging convention, which backup tools honour), and inside it
/// deletes only files named as it names them: entries (`<64 hex digits>.entry`) and staged writes
/// (`<UUID>.partial`). A `courier-cache` that holds files but no marker, that is a symbolic link, or that another
/// user owns is refused, never adopted; so is an `entries` or `staging` folder inside it that is a link.
///
/// One store at a time: an exclusive `flock` on `courier-cache/lock`, held until the store goes away (or its
/// process dies), refuses a second opener in this process or another, whose deletions and limits would otherwise
/// fight the first's. Everything is created owner-only: directories `0700`, files `0600`.
enum DiskDirectory {
    static let ownedName = "courier-cache"
    static let markerName = "CACHEDIR.TAG"
    static let marker = Data(
        """
        Signature: 8a477f597d28d172789f06886806bc55
        # This directory is a Courier HTTP response cache (format 1). Courier creates and removes its files.

        """.utf8)

    /// Why a directory is not opened.
    enum Refusal: Error, CustomStringConvertible {
        /// Another cache, in this process or another, has the directory open.
        case inUse(String)
        /// The path holds something Courier did not make: files without its marker, a link, another user's folder.
        case notOwned(String, why: String)
        /// A system call failed.
        case failed(String, operation: String, errno: Int32)

        var description: String {
            switch self {
            case .inUse(let path):
                "another ResponseCache (in this process or another) has \(path) open; one cache per directory at a time"
            case .notOwned(let path, let why):
                "\(path) is not a Courier cache directory (\(why)); Courier deletes only what it wrote, so it is left alone"
            case .failed(let path, let operation, let code):
                "\(operation) \(path) failed: \(String(cString: strerror(code)))"
            }
        }
    }

    struct Opened {
        let entries: String
        let staging: String
        let lockDescriptor: Int32
    }

    /// Creates or checks the owned subdirectory of `directory` and takes its lock.
    static func take(_ directory: URL) throws -> Opened {
        // The directory named may itself be reached through a link (`/var` is one on Apple platforms): that is the
        // caller's choice. Below it, nothing is followed.
        let manager = FileManager.default
        if !manager.fileExists(atPath: directory.path) {
            do {
                try manager.createDirectory(
                    at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw Refusal.failed(directory.path, operation: "creating", errno: errno == 0 ? EIO : errno)
            }
        }
        let owned = directory.path + "/" + ownedName
        try claim(owned)
        let descriptor = open(owned + "/lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw Refusal.failed(owned + "/lock", operation: "opening", errno: errno) }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            close(descriptor)
            if code == EWOULDBLOCK { throw Refusal.inUse(directory.path) }
            throw Refusal.failed(owned + "/lock", operation: "locking", errno: code)
        }
        do {
            let entries = owned + "/entries"
            let staging = owned + "/staging"
            try makeOrCheckDirectory(entries)
            try makeOrCheckDirectory(staging)
            return Opened(entries: entries, staging: staging, lockDescriptor: descriptor)
        } catch {
            close(descriptor)
            throw error
        }
    }

    /// Makes `owned` with its marker, or checks that it is Courier's: a real directory of this user with the marker,
    /// or an empty one (a crash between making it and marking it).
    private static func claim(_ owned: String) throws {
        if mkdir(owned, 0o700) != 0 {
            guard errno == EEXIST else { throw Refusal.failed(owned, operation: "creating", errno: errno) }
            try checkDirectory(owned)
            if let found = readMarker(owned) {
                guard found == marker else { throw Refusal.notOwned(owned, why: "its \(markerName) is not Courier's") }
                return
            }
            guard names(in: owned).isEmpty else {
                throw Refusal.notOwned(owned, why: "it holds files and no \(markerName)")
            }
        }
        let path = owned + "/" + markerName
        if !DurableFiles.writeNew(marker, to: path) {
            // Another opener may have marked it first.
            guard readMarker(owned) == marker else { throw Refusal.failed(path, operation: "writing", errno: EIO) }
        }
    }

    private static func readMarker(_ owned: String) -> Data? {
        let path = owned + "/" + markerName
        guard DurableFiles.regularFile(path) != nil else { return nil }
        return DurableFiles.read(path, upTo: 4_096)
    }

    /// `path` is a directory (not a link to one) owned by this process's user.
    private static func checkDirectory(_ path: String) throws {
        var info = stat()
        guard lstat(path, &info) == 0 else { throw Refusal.failed(path, operation: "reading", errno: errno) }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw Refusal.notOwned(path, why: info.st_mode & S_IFMT == S_IFLNK ? "a symbolic link" : "not a directory")
        }
        guard info.st_uid == geteuid() else { throw Refusal.notOwned(path, why: "another user owns it") }
    }

    private static func makeOrCheckDirectory(_ path: String) throws {
        if mkdir(path, 0o700) == 0 { return }
        guard errno == EEXIST else { throw Refusal.failed(path, operation: "creating", errno: errno) }
        try checkDirectory(path)
    }

    /// The names in a directory, without following a link in its place; empty when it cannot be read.
    static func names(in path: String) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
    }

    /// A new staging name: `<UUID>.partial`.
    static func stagingName() -> String {
        UUID().uuidString + ".partial"
    }

    /// Whether `name` is one ``stagingName()`` made.
    static func isStagingName(_ name: String) -> Bool {
        guard name.hasSuffix(".partial") else { return false }
        return UUID(uuidString: String(name.dropLast(".partial".count))) != nil
    }

    /// Whether `name` is an entry's: 64 lower-case hexadecimal digits (a SHA-256) and the extension.
    static func isEntryName(_ name: String) -> Bool {
        let suffix = DiskEntryCodec.fileExtension
        guard name.hasSuffix(suffix) else { return false }
        let digest = name.utf8.dropLast(suffix.utf8.count)
        let digits = UInt8(ascii: "0")...UInt8(ascii: "9")
        let letters = UInt8(ascii: "a")...UInt8(ascii: "f")
        return digest.count == 64 && digest.allSatisfy { digits.contains($0) || letters.contains($0) }
    }
}
