import BenchmarkSupport
import Foundation

/// Command-line options of `resilience-report`.
struct Options {
    /// Multiplies every phase of every scenario (the healthy lead-in, the fault, the slow tail and overload runs);
    /// the phase after an outage heals is never shorter than 7 s, so one break and one probe fit in it.
    var scale = 1.0
    /// Calls started per second, whatever happens to the calls already started (an open loop, as a service's
    /// callers arrive).
    var rate = 100
    /// Run only the scenarios whose name contains this text.
    var only: String?
    var outputDirectory: String?
    var writesDocs = false
    var timeline = false

    static let usage = """
        usage: resilience-report [--scale 1.0] [--rate 100] [--only TEXT] [--timeline] [--write-docs | --output DIR]

          --scale       multiply every duration (0.2 runs the whole report in about two minutes)
          --rate        calls started per second (default 100)
          --only TEXT   run only the scenarios whose name contains TEXT (outage-503, outage-refused, brownout,
                        slow-tail, overload)
          --timeline    also print, per second of each run, how many calls succeeded and why the rest failed
          --write-docs  write the report into the repository's Docs/ (to publish it)
          --output      where resilience-report.md, .svg and .json go (default: Benchmarks/.build/reports/)
        """

    static func parse(_ arguments: [String]) throws -> Options {
        var options = Options()
        var remaining = arguments[...]
        while let flag = remaining.popFirst() {
            func value() throws -> String {
                guard let value = remaining.popFirst() else { throw OptionError("\(flag) needs a value") }
                return value
            }
            switch flag {
            case "--scale":
                guard let scale = Double(try value()), scale > 0, scale <= 10 else {
                    throw OptionError("--scale takes a number in (0, 10]")
                }
                options.scale = scale
            case "--rate":
                guard let rate = Int(try value()), (1...2_000).contains(rate) else {
                    throw OptionError("--rate takes 1…2000 calls a second")
                }
                options.rate = rate
            case "--only": options.only = try value().lowercased()
            case "--output": options.outputDirectory = try value()
            case "--write-docs": options.writesDocs = true
            case "--timeline": options.timeline = true
            case "--help", "-h":
                print(usage)
                exit(0)
            default:
                throw OptionError("unknown option \(flag)")
            }
        }
        return options
    }

    /// Where the files go (see ``ReportDirectory``).
    func resolvedOutputDirectory() -> String {
        ReportDirectory.resolve(output: outputDirectory, writesDocs: writesDocs)
    }
}
