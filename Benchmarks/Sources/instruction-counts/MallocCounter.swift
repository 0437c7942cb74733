import Foundation

/// Counts mallocs with ordo-one's malloc interposer, preloaded rather than linked.
///
/// The harness does not link the interposer: a linked copy replaces `malloc` even when it is not preloaded, and under
/// callgrind its bookkeeping would count as instructions of every allocation. With `--mallocs` the harness re-executes
/// itself once with `LD_PRELOAD` pointing at `libMallocInterposerSwift.so` beside the binary (Scripts/instructions.sh
/// builds it) and finds the counters by name.
struct MallocCounter {
    private typealias Enable = @convention(c) () -> Void
    private typealias GetStats =
        @convention(c) (
            UnsafeMutablePointer<Int64>?, UnsafeMutablePointer<Int64>?, UnsafeMutablePointer<Int64>?,
            UnsafeMutablePointer<Int64>?, UnsafeMutablePointer<Int64>?, UnsafeMutablePointer<Int64>?
        ) -> Void

    private let getStats: GetStats

    /// The counter, counting from now on; `nil` when the interposer is not loaded and could not be preloaded.
    static func start() -> MallocCounter? {
        if let counter = MallocCounter() { return counter }
        #if os(Linux)
            reexecWithPreload()
        #endif
        return nil
    }

    private init?() {
        let handle = UnsafeMutableRawPointer(bitPattern: 0)  // RTLD_DEFAULT
        guard let enable = dlsym(handle, "malloc_interposer_enable"),
            let reset = dlsym(handle, "malloc_interposer_reset"),
            let getStats = dlsym(handle, "malloc_interposer_get_stats")
        else { return nil }
        unsafeBitCast(reset, to: Enable.self)()
        unsafeBitCast(enable, to: Enable.self)()
        self.getStats = unsafeBitCast(getStats, to: GetStats.self)
    }

    /// Mallocs (and their relatives: `calloc`, `realloc`, aligned allocations) so far, on every thread. Reading it
    /// allocates nothing.
    var count: Int {
        var mallocs: Int64 = 0
        var bytes: Int64 = 0
        var small: Int64 = 0
        var large: Int64 = 0
        var frees: Int64 = 0
        var freedBytes: Int64 = 0
        getStats(&mallocs, &bytes, &small, &large, &frees, &freedBytes)
        return Int(mallocs)
    }

    #if os(Linux)
        private static func reexecWithPreload() {
            guard ProcessInfo.processInfo.environment["COURIER_INTERPOSER_PRELOADED"] == nil else { return }
            let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            let library = executable.deletingLastPathComponent().appendingPathComponent("libMallocInterposerSwift.so")
            guard FileManager.default.fileExists(atPath: library.path) else { return }
            setenv("LD_PRELOAD", library.path, 1)
            setenv("COURIER_INTERPOSER_PRELOADED", "1", 1)
            var arguments = CommandLine.arguments.map { strdup($0) }
            arguments.append(nil)
            execv(executable.path, arguments)
        }
    #endif
}
