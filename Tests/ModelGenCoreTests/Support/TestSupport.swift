import Foundation
import ModelGenCore
import XCTest

/// Paths and helpers shared by the test cases.
enum TestSupport {
    /// The repository root, found from this file's path.
    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let schemasDirectory = repositoryRoot.appendingPathComponent("Schemas")
    static let goldenDirectory = repositoryRoot.appendingPathComponent("Tests/ModelGenCoreTests/Golden")
    static let fixturesDirectory = repositoryRoot.appendingPathComponent("Tests/ModelGenCoreTests/Fixtures")

    /// The example schemas of `Schemas/` plus the test fixtures, sorted by name.
    static var exampleSchemas: [URL] {
        [schemasDirectory, fixturesDirectory].flatMap { directory in
            ((try? FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)) ?? [])
                .filter { $0.pathExtension == "yaml" }
        }.sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    /// Where `swift build` put the products, `modelgen` among them.
    static var productsDirectory: URL {
        #if os(macOS)
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            return bundle.bundleURL.deletingLastPathComponent()
        }
        fatalError("cannot find the products directory")
        #else
        return Bundle.main.bundleURL
        #endif
    }

    static func compile(_ yaml: String, file: String = "test.yaml") -> Compilation {
        ModelGen.generate(path: file, bytes: Array(yaml.utf8))
    }

    /// The diagnostics of a schema, as printed.
    static func diagnostics(_ yaml: String) -> [String] {
        compile(yaml).diagnostics.map(\.description)
    }

    static func sqliteDDL(_ yaml: String, file: String = "test.yaml") -> String {
        let compilation = compile(yaml, file: file)
        XCTAssertFalse(compilation.hasErrors, compilation.diagnostics.map(\.description).joined(separator: "\n"))
        return compilation.sqliteDDL
    }

    static func postgresDDL(_ yaml: String, file: String = "test.yaml") -> String {
        let compilation = compile(yaml, file: file)
        XCTAssertFalse(compilation.hasErrors, compilation.diagnostics.map(\.description).joined(separator: "\n"))
        return compilation.postgreSQLDDL
    }

    /// A new directory inside this process's own temporary directory, which is removed with
    /// everything in it when the test process exits: a test run leaves nothing behind.
    static func temporaryDirectory() throws -> URL {
        let url = temporaryRoot.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// `modelgen-tests-<pid>` in the system's temporary directory, removed at exit.
    private static let temporaryRoot: URL = {
        atexit { try? FileManager.default.removeItem(at: TestSupport.temporaryRootPath) }
        return temporaryRootPath
    }()

    private static let temporaryRootPath = FileManager.default.temporaryDirectory.appendingPathComponent("modelgen-tests-\(ProcessInfo.processInfo.processIdentifier)")

    struct ProcessResult {
        var status: Int32
        var standardOutput: String
        var standardError: String
    }

    /// A program started and not yet waited for.
    struct RunningProcess {
        let process: Process
        let output: Pipe
        let error: Pipe

        /// Waits for the program to end: its exit status, standard output and standard error.
        func finish() -> ProcessResult {
            // Both pipes are read at once: a program that fills one while the other is read would
            // wait for the reader forever (a compiler's many warnings on standard error did).
            final class Collected: @unchecked Sendable { var data = Data() }
            let errorData = Collected(), readingErrors = DispatchGroup()
            readingErrors.enter()
            DispatchQueue.global().async {
                errorData.data = error.fileHandleForReading.readDataToEndOfFile()
                readingErrors.leave()
            }
            let outputData = output.fileHandleForReading.readDataToEndOfFile()
            readingErrors.wait()
            process.waitUntilExit()
            return ProcessResult(status: process.terminationStatus,
                                 standardOutput: String(decoding: outputData, as: UTF8.self),
                                 standardError: String(decoding: errorData.data, as: UTF8.self))
        }
    }

    /// Starts a program; `finish()` waits for it.
    static func start(_ executable: URL, _ arguments: [String], environment: [String: String]? = nil) throws -> RunningProcess {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let environment {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let running = RunningProcess(process: process, output: Pipe(), error: Pipe())
        process.standardOutput = running.output
        process.standardError = running.error
        try process.run()
        return running
    }

    /// Runs a program and waits for it.
    static func run(_ executable: URL, _ arguments: [String], environment: [String: String]? = nil) throws -> ProcessResult {
        try start(executable, arguments, environment: environment).finish()
    }

    /// Runs the built `modelgen`.
    static func modelgen(_ arguments: String...) throws -> ProcessResult {
        try run(productsDirectory.appendingPathComponent("modelgen"), arguments)
    }

    static func modelgen(arguments: [String]) throws -> ProcessResult {
        try run(productsDirectory.appendingPathComponent("modelgen"), arguments)
    }
}

/// The PostgreSQL server the tests use: `MODELGEN_TEST_POSTGRES_URL`, set by `.ci/run`.
enum PostgresServer {
    static var url: String? { ProcessInfo.processInfo.environment["MODELGEN_TEST_POSTGRES_URL"] }

    /// The URL, or an `XCTSkip` with the reason; in CI a missing server is a failure, not a skip.
    static func requireURL() throws -> String {
        if let url { return url }
        if ProcessInfo.processInfo.environment["CI"] == "true" {
            XCTFail("CI=true but MODELGEN_TEST_POSTGRES_URL is not set: .ci/run must start PostgreSQL")
        }
        throw XCTSkip("no PostgreSQL server: set MODELGEN_TEST_POSTGRES_URL (as .ci/run does) to run this test")
    }

    /// The two paths of the generated `<table>_safe_delete` functions, as the session setting that
    /// chooses one to put before a call: the small path (ids collected in arrays, taken by a call
    /// with few ids) and the general one (temporary tables), which a limit of 0 forces.
    static let deletionPaths: [(name: String, setting: String)] = [
        ("arrays", ""),
        ("tables", "SET \(PostgreSQLDeletionFunctions.arrayClosureLimitSetting) = 0;\n"),
    ]

    /// Runs SQL through psql with ON_ERROR_STOP in a schema of its own; returns psql's output.
    @discardableResult
    static func psql(_ url: String, schema: String, _ sql: String) throws -> String {
        let script = "SET client_min_messages = warning;\nDROP SCHEMA IF EXISTS \(schema) CASCADE;\nCREATE SCHEMA \(schema);\nSET search_path TO \(schema);\n" + sql
        return try psqlRaw(url, script)
    }

    /// The catalog of a schema by meaning: no constraint names (nor those of the indexes behind
    /// unique constraints, which PostgreSQL names after a table's first name), no schema names.
    static func catalog(_ url: String, _ namespace: String) throws -> [String] {
        let output = try PostgresServer.psqlRaw(url, """
            SET search_path TO \(namespace);
            SELECT 'column ' || table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' || coalesce(column_default, '-') || ' ' || coalesce(is_identity, '')
              FROM information_schema.columns WHERE table_schema = '\(namespace)';
            SELECT 'constraint ' || c.conrelid::regclass::text || ' ' || c.contype::text || ' ' || pg_get_constraintdef(c.oid)
              FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace WHERE n.nspname = '\(namespace)';
            SELECT 'index ' || tablename || ' ' || CASE WHEN indexdef LIKE 'CREATE UNIQUE %' THEN regexp_replace(indexdef, '^CREATE UNIQUE INDEX \\S+ ON \\S+ ', 'UNIQUE ')
                                                       ELSE regexp_replace(indexdef, ' ON \\S+ ', ' ') END
              FROM pg_indexes WHERE schemaname = '\(namespace)';
            SELECT 'function ' || p.proname || '(' || pg_get_function_arguments(p.oid) || ')' FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = '\(namespace)';
            """)
        return output.split(separator: "\n").map(String.init).sorted()
    }

    /// Starts psql on `script` (ON_ERROR_STOP) in the background, as a second session would run
    /// beside the test's; `finish()` waits for it.
    static func background(_ url: String, _ script: String) throws -> TestSupport.RunningProcess {
        let file = try TestSupport.temporaryDirectory().appendingPathComponent("script.sql")
        try script.write(to: file, atomically: true, encoding: .utf8)
        return try TestSupport.start(URL(fileURLWithPath: "/usr/bin/env"), ["psql", url, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-f", file.path])
    }

    @discardableResult
    static func psqlRaw(_ url: String, _ script: String) throws -> String {
        let result = try background(url, script).finish()
        guard result.status == 0 else {
            throw NSError(domain: "psql", code: Int(result.status), userInfo: [NSLocalizedDescriptionKey: result.standardError])
        }
        return result.standardOutput
    }
}

extension Array where Element == UInt8 {
    /// The bytes that pairs of hex digits spell, as PostgreSQL's `encode(…, 'hex')` writes them (`0aff` → `[0x0A, 0xFF]`).
    init(hexDigits text: some StringProtocol) {
        let digits = Array(text.utf8)
        self = stride(from: 0, to: digits.count, by: 2).map { UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)! }
    }
}

extension Compilation {
    /// The text of the generated `<Base>.sqlite.sql` (empty when the schema had errors).
    var sqliteDDL: String { files.first { $0.name.hasSuffix(".sqlite.sql") }?.contents ?? "" }
    /// The text of the generated `<Base>.postgresql.sql`, the deletion functions included (empty when the schema had errors).
    var postgreSQLDDL: String { files.first { $0.name.hasSuffix(".postgresql.sql") }?.contents ?? "" }
}
