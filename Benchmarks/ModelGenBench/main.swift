import FitIQWorkload
import Foundation
import ModelGenRuntime

// modelgen-bench: safe deletion at scale against SQLite's own cascade, the per-object pattern and
// the modelgen CLI, then the generator's growth, the runtime beside raw SQLite and GRDB, deep
// chains, migrations and (with --postgres) the PostgreSQL functions. See BENCHMARKS.md; the
// options are in `checkArguments`' usage.
//
//   swift build -c release && swift run -c release modelgen-bench [options]

let arguments = Array(CommandLine.arguments.dropFirst())

func option(_ name: String) -> String? {
    arguments.firstIndex(of: name).flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
}

func integers(_ name: String, default values: [Int]) -> [Int] {
    option(name).map { $0.split(separator: ",").compactMap { Int($0) } } ?? values
}

if arguments.first == "--measure" {
    // Child process: --measure METHOD SCENARIO DATABASE
    let method = Method(rawValue: arguments[1])!, scenario = Scenario(rawValue: arguments[2])!
    let result = try Measure.run(method, scenario, database: arguments[3])
    print(result.seconds, result.statements ?? -1, result.peakKilobytes ?? -1)
    exit(0)
}

if arguments.first == "--measure-runtime" {
    // Child process: --measure-runtime WORKLOAD METHOD BOOKS DATABASE
    let (seconds, peak, statements) = try RuntimeBenchmark.measure(RuntimeBenchmark.Workload(rawValue: arguments[1])!, RuntimeBenchmark.Method(rawValue: arguments[2])!,
                                                       books: Int(arguments[3])!, path: arguments[4])
    print(seconds, peak, statements)
    exit(0)
}

/// The options a run takes: flags, then options with a value (those in `integerLists` a list of
/// whole numbers, `--repetitions`, `--per-object-up-to` and `--tree-size` one).
let flags: Set = ["--skip-deletion", "--skip-generator", "--skip-runtime", "--skip-chains", "--skip-churn", "--skip-migration"]
let integerLists: Set = ["--sizes", "--generator-sizes", "--runtime-sizes", "--chain-sizes", "--churn-sizes", "--migration-sizes", "--postgres-profiles"]
let valued: Set = integerLists.union(["--schema", "--repetitions", "--per-object-up-to", "--tree-size", "--postgres", "--scenarios"])

/// Stops with the usage when the arguments are not a run's: an unknown option (`--help` among
/// them) would otherwise start a run of every benchmark with its defaults, and a mistyped number
/// would be dropped without a word.
func checkArguments() {
    func stop(_ problem: String) -> Never {
        FileHandle.standardError.write(Data("""
            modelgen-bench: \(problem)
            usage: modelgen-bench [--sizes 100,1000,3000] [--repetitions 5] [--scenarios A,B,C] [--per-object-up-to 1000]
                   [--generator-sizes 100,1000,10000] [--runtime-sizes 10000,80000] [--chain-sizes 1000,8000]
                   [--churn-sizes 10000,80000] [--migration-sizes 100,1000] [--schema Schemas/FitIQ.yaml]
                   [--skip-deletion] [--skip-generator] [--skip-runtime] [--skip-chains] [--skip-churn] [--skip-migration]
                   [--postgres URL [--postgres-profiles 1000] [--tree-size 111111]]
            See BENCHMARKS.md.

            """.utf8))
        exit(2)
    }
    var position = 0
    while position < arguments.count {
        let argument = arguments[position]
        position += 1
        if flags.contains(argument) { continue }
        guard valued.contains(argument) else { stop("unknown option '\(argument)'") }
        guard position < arguments.count else { stop("\(argument) needs a value") }
        let value = arguments[position]
        position += 1
        let numbers = integerLists.contains(argument) ? value.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            : ["--repetitions", "--per-object-up-to", "--tree-size"].contains(argument) ? [value] : []
        // Sizes and counts are at least 1; `--per-object-up-to 0` runs no per-object pattern.
        let least = argument == "--per-object-up-to" ? 0 : 1
        if let bad = numbers.first(where: { Int($0).map { $0 < least } ?? true }) { stop("\(argument) takes whole numbers from \(least), found '\(bad)'") }
        if argument == "--scenarios", let bad = value.split(separator: ",").first(where: { Scenario(rawValue: String($0)) == nil }) {
            stop("--scenarios takes A, B and C, found '\(bad)'")
        }
    }
}
checkArguments()

let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
let modelgen = executable.deletingLastPathComponent().appendingPathComponent("modelgen")
let schemaPath = option("--schema") ?? "Schemas/FitIQ.yaml"
let repetitions = Int(option("--repetitions") ?? "") ?? 5
let perObjectLimit = Int(option("--per-object-up-to") ?? "") ?? 1_000
let workDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("modelgen-bench-\(getpid())")
try FileManager.default.createDirectory(at: workDirectory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: workDirectory) }

/// Runs a program, returning its standard output and the wall-clock time it took.
func launch(_ program: URL, _ arguments: [String]) throws -> (output: String, seconds: Double, status: Int32) {
    let process = Process()
    process.executableURL = program
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.standardError
    let start = DispatchTime.now()
    try process.run()
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (String(decoding: output, as: UTF8.self), Measure.elapsed(since: start), process.terminationStatus)
}

/// Checks that exactly the right rows survive and that nothing dangles; returns rows deleted.
func verify(_ path: String, profiles: Int, scenario: Scenario) throws -> Int {
    let database = try SQLiteDatabase(path: path, create: false)
    let survivingProfiles = scenario.survivors(of: profiles)
    var deleted = 0
    for (table, rows) in FitIQWorkload.rowCounts(profiles: profiles) {
        let perProfile = rows / profiles
        let expected = table == "sd_outbox_event" ? rows : perProfile * survivingProfiles
        let actual = Int(try database.scalar("SELECT count(*) FROM \(table)"))
        guard actual == expected else { fatalError("\(table): \(actual) rows survive, expected \(expected) (scenario \(scenario.rawValue), N = \(profiles))") }
        deleted += rows - actual
    }
    guard try database.query("PRAGMA foreign_key_check").isEmpty else { fatalError("dangling references after scenario \(scenario.rawValue)") }
    if scenario == .even {
        guard try database.scalar("SELECT count(*) FROM sd_user_profile WHERE id % 2 = 0") == 0 else { fatalError("an even profile survived") }
    }
    return deleted
}

func buildBase(profiles: Int) throws -> URL {
    let url = workDirectory.appendingPathComponent("base-\(profiles).sqlite")
    let database = try SQLiteDatabase(path: url.path)
    try database.execute(FitIQ.sqliteDDL)
    try database.execute(FitIQWorkload.insertSQL(profiles: profiles))
    return url
}

func copyFresh(_ base: URL) throws -> String {
    let run = workDirectory.appendingPathComponent("run.sqlite")
    for suffix in ["", "-journal", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: run.path + suffix) }
    try FileManager.default.copyItem(at: base, to: run)
    return run.path
}

// The generator first: the deletion runs leave gigabytes of copied databases for the kernel to
// write back, which slows whatever runs next.
if !arguments.contains("--skip-generator") {
    GeneratorBenchmark.run(sizes: integers("--generator-sizes", default: [100, 1_000, 10_000]), repetitions: 5)
}

if !arguments.contains("--skip-runtime") {
    try RuntimeBenchmark.run(sizes: integers("--runtime-sizes", default: [10_000, 80_000]), repetitions: repetitions, executable: executable, directory: workDirectory)
}

if !arguments.contains("--skip-chains") {
    try RuntimeBenchmark.runChains(sizes: integers("--chain-sizes", default: [1_000, 8_000]), repetitions: repetitions, directory: workDirectory)
}

if !arguments.contains("--skip-churn") {
    print()
    try ChurnBenchmark.run(sizes: integers("--churn-sizes", default: [10_000, 80_000]), repetitions: repetitions, directory: workDirectory)
}

if let url = option("--postgres") {
    try PostgreSQLBenchmark.run(url: url, profiles: integers("--postgres-profiles", default: [1_000]), chains: integers("--chain-sizes", default: [1_000, 8_000, 64_000]),
                                treeSize: Int(option("--tree-size") ?? "") ?? 111_111, repetitions: repetitions, fitIQPath: schemaPath,
                                bookshelfPath: "Benchmarks/ModelGenBench/Schemas/Bookshelf.yaml")
}

if !arguments.contains("--skip-migration") {
    try MigrationBenchmark.run(sizes: integers("--migration-sizes", default: [100, 1_000]), repetitions: repetitions, schemaPath: schemaPath,
                               build: buildBase(profiles:), directory: workDirectory)
}

if !arguments.contains("--skip-deletion") {
    guard FileManager.default.fileExists(atPath: modelgen.path) else {
        fatalError("\(modelgen.path) is missing: run 'swift build -c release' first (it builds modelgen beside modelgen-bench)")
    }
    let sizes = integers("--sizes", default: [100, 1_000, 3_000])
    let scenarios = option("--scenarios").map { $0.split(separator: ",").compactMap { Scenario(rawValue: String($0)) } } ?? Scenario.allCases
    print("Safe deletion on the FitIQ workload (\(FitIQWorkload.rowsPerProfile) rows per profile + \(FitIQWorkload.outboxEvents) outbox events);")
    print("median of \(repetitions) interleaved runs, a fresh copy of the database each run, SQLite's default journal, synchronous=FULL.")
    print("ratio = median / median of SQLite's own ON DELETE CASCADE in the same run; statements = SQL statements executed.")
    print(pad(["scenario", "N", "method", "median s", "ratio", "rows/s", "statements", "peak MB"], [9, 6, 15, 10, 7, 12, 11, 8]))
    for profiles in sizes {
        let base = try buildBase(profiles: profiles)
        for scenario in scenarios {
            var methods: [Method] = [.sqliteCascade, .runtime, .cli]
            if scenario == .all { methods.append(.deleteModel) }
            if profiles <= perObjectLimit { methods.append(.perObject) }
            var results: [Method: [Measurement]] = [:]
            var rowsDeleted = 0
            for _ in 0..<repetitions {
                for method in methods {
                    let path = try copyFresh(base)
                    let measurement: Measurement
                    if method == .cli {
                        var cliArguments = ["delete", schemaPath, "--database", path, "SDUserProfile", "--json"]
                        switch scenario {
                        case .one: cliArguments += ["--id", "1"]
                        case .all: cliArguments += ["--all"]
                        case .even: cliArguments += ["--where", "id % 2 == 0"]
                        }
                        let result = try launch(modelgen, cliArguments)
                        guard result.status == 0 else { fatalError("modelgen delete failed: \(result.output)") }
                        measurement = Measurement(seconds: result.seconds, statements: FitIQ.deletionProgram(for: "SDUserProfile")!.statementCount, peakKilobytes: nil)
                    } else {
                        let result = try launch(executable, ["--measure", method.rawValue, scenario.rawValue, path])
                        let fields = result.output.split(separator: " ").map { String($0).trimmingCharacters(in: .whitespacesAndNewlines) }
                        guard result.status == 0, fields.count == 3, let seconds = Double(fields[0]) else { fatalError("measurement failed: \(result.output)") }
                        measurement = Measurement(seconds: seconds, statements: Int(fields[1]), peakKilobytes: Int(fields[2]))
                    }
                    rowsDeleted = try verify(path, profiles: profiles, scenario: scenario)
                    results[method, default: []].append(measurement)
                }
            }
            let baseline = median(results[.sqliteCascade]!.map(\.seconds))
            for method in methods {
                let runs = results[method]!
                let seconds = median(runs.map(\.seconds))
                let peak = runs.compactMap(\.peakKilobytes).max().map { String(format: "%.1f", Double($0) / 1024) } ?? "n/a"
                let statements = runs.compactMap(\.statements).max().map(String.init) ?? "n/a"
                print(pad([scenario.rawValue, String(profiles), method.rawValue, format(seconds), String(format: "%.2f", seconds / baseline),
                           String(Int(Double(rowsDeleted) / seconds)), statements, peak], [9, 6, 15, 10, 7, 12, 11, 8]))
            }
        }
    }
    print("cli: wall-clock time of the whole 'modelgen delete' process (start-up and schema compilation included); its statements are the plan's, seeding excluded.")
}

