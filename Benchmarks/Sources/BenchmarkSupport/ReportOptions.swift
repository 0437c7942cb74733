import Foundation

/// Where a report's files go, for every report of this package: `output` when given, the repository's `Docs/` with
/// `writesDocs`, or else the build folder the report was built in (`Benchmarks/.build/reports/`), so that a run
/// never dirties a clone.
public enum ReportDirectory {
    /// The folder to write to.
    public static func resolve(output: String?, writesDocs: Bool) -> String {
        if let output { return output }
        let build = buildDirectory()
        guard writesDocs else { return build.appendingPathComponent("reports").path }
        // Benchmarks/.build -> the repository's Docs/, whatever the working directory.
        let docs = build.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Docs")
        if FileManager.default.fileExists(atPath: docs.path) { return docs.path }
        return FileManager.default.fileExists(atPath: "../Docs") ? "../Docs" : "Docs"
    }

    /// The `.build` folder that holds this executable, or `./.build` when it runs from elsewhere.
    private static func buildDirectory() -> URL {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent()
        while directory.path != "/" {
            if directory.lastPathComponent == ".build" { return directory }
            directory.deleteLastPathComponent()
        }
        return URL(fileURLWithPath: ".build")
    }
}

/// A command-line option a report could not read, with what it expected.
public struct OptionError: Error, CustomStringConvertible {
    /// What was wrong.
    public let description: String

    /// Creates an error that says `description`.
    public init(_ description: String) { self.description = description }
}
