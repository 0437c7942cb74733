import Foundation
import MallocInterposerSwift

/// Turns on malloc counting. The interposer only sees allocations when its library is preloaded, so the
/// report re-executes itself once with `LD_PRELOAD` pointing at the library built next to it.
enum AllocationCounting {
    static func start() {
        MallocInterposerSwift.initialize()
        MallocInterposerSwift.hook()
        guard !isCounting() else { return }
        #if os(Linux)
            reexecWithPreload()
        #endif
        FileHandle.standardError.write(Data("note: allocations are not counted (interposer not loaded)\n".utf8))
    }

    private static func isCounting() -> Bool {
        let before = MallocInterposerSwift.getStatistics().mallocCount
        let probe = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 16)
        probe.deallocate()
        return MallocInterposerSwift.getStatistics().mallocCount > before
    }

    #if os(Linux)
        private static func reexecWithPreload() {
            let environment = ProcessInfo.processInfo.environment
            guard environment["COURIER_REPORT_PRELOADED"] == nil else { return }
            let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            let library = executable.deletingLastPathComponent().appendingPathComponent("libMallocInterposerSwift.so")
            guard FileManager.default.fileExists(atPath: library.path) else { return }
            setenv("LD_PRELOAD", library.path, 1)
            setenv("COURIER_REPORT_PRELOADED", "1", 1)
            var arguments = CommandLine.arguments.map { strdup($0) }
            arguments.append(nil)
            execv(executable.path, arguments)
        }
    #endif
}
