import Foundation
import ModelGenCore
import ModelGenRuntime
import XCTest

/// Validation is the only gate: random schemas, their names drawn from pools of keywords, reserved
/// and system names, long names, names that collide after snake_case, control characters and
/// non-ASCII text, are either rejected with located errors and no files, or generate SQLite DDL
/// that applies with every deletion program running on it, PostgreSQL DDL and functions that apply
/// and run, and (for a sample) Swift that compiles against the runtime and runs `init`, `save`
/// and `delete(model:)` for every entity. Seeded: a failure names its seed, and
/// `RandomSchema.yaml(seed:)` reproduces the schema.
final class RandomSchemaTests: XCTestCase {
    static let schemaCount = 600
    /// Accepted schemas compiled and run as Swift (about a second each).
    static let compiledSample = 12

    func testEveryAcceptedRandomSchemaAppliesCompilesAndRuns() throws {
        let postgresURL = PostgresServer.url
        if postgresURL == nil, ProcessInfo.processInfo.environment["CI"] == "true" {
            XCTFail("CI=true but MODELGEN_TEST_POSTGRES_URL is not set")
        }
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let lint = try postgresURL.map(installLinter) ?? false
        var accepted: [(seed: UInt64, compilation: Compilation)] = []
        var rejected = 0
        for seed in UInt64(1)...UInt64(Self.schemaCount) {
            let yaml = RandomSchema.yaml(seed: seed)
            let compilation = ModelGen.generate(path: "Fuzz.yaml", bytes: Array(yaml.utf8))
            if compilation.hasErrors {
                rejected += 1
                XCTAssertTrue(compilation.files.isEmpty, "seed \(seed): files despite errors")
                for diagnostic in compilation.diagnostics {
                    XCTAssertEqual(diagnostic.location.file, "Fuzz.yaml", "seed \(seed)")
                    XCTAssertGreaterThanOrEqual(diagnostic.location.line, 1, "seed \(seed): \(diagnostic)")
                    XCTAssertGreaterThanOrEqual(diagnostic.location.column, 1, "seed \(seed): \(diagnostic)")
                }
                continue
            }
            accepted.append((seed, compilation))
            try checkSQLite(compilation, seed: seed)
            if let postgresURL { try checkPostgreSQL(compilation, seed: seed, url: postgresURL, lint: lint) }
        }
        // The pools are tuned so that both outcomes are common; a generator that only produced
        // rejected schemas would test nothing.
        XCTAssertGreaterThan(accepted.count, Self.schemaCount / 5, "accepted \(accepted.count), rejected \(rejected)")
        XCTAssertGreaterThan(rejected, Self.schemaCount / 5, "accepted \(accepted.count), rejected \(rejected)")
        let stride = max(1, accepted.count / Self.compiledSample)
        for (position, sample) in accepted.enumerated() where position % stride == 0 {
            try checkSwift(sample.compilation, seed: sample.seed, in: directory.appendingPathComponent("seed\(sample.seed)"))
        }
    }

    /// Every troublesome name (Swift's keywords, the random pools' names) in every place a name
    /// goes — entity, enum, attribute, relationship, enum case — is refused by validation or its
    /// generated Swift compiles and runs: two schemas hold every name each place accepts (random
    /// schemas draw a troublesome name now and then, and compile a sample of a dozen).
    func testEveryTroublesomeNameTheValidatorAcceptsCompilesAndRuns() throws {
        // Besides the pools: the members generated models and schema types have (theirs and their protocols').
        let generatedMembers = ["entity", "persistentBackingData", "propertyName", "persistentModelID", "modelContext", "isDeleted", "hasChanges",
                                "hashValue", "hash", "models", "sqliteDDL", "postgreSQLTables", "postgreSQLFunctions", "deletionProgram",
                                "canonicalSchema", "tables", "backingData", "attach", "description", "modelDidEnd", "Holder", "Item", "Linked", "Kind", "Names"]
        let names = Set(Naming.swiftKeywords).union(RandomSchema.entityNames).union(RandomSchema.memberNames).union(RandomSchema.enumCases)
            .union(generatedMembers).filter(Naming.isIdentifier).sorted()
        func accepts(_ yaml: String) -> Bool { !ModelGen.generate(path: "Names.yaml", bytes: Array(yaml.utf8)).hasErrors }
        let q = RandomSchema.quoted
        let typeNames = names.filter { accepts("schema: Names\nentities:\n  \(q($0)):\n    attributes:\n      note: String?\n") }
        let memberNames = names.filter { !["Linked", "Item"].contains($0) }.filter { accepts("schema: Names\nentities:\n  Holder:\n    attributes:\n      \(q($0)): String?\n") }
        let enumNames = names.filter { accepts("schema: Names\nenums:\n  \(q($0)): [one]\nentities:\n  Holder:\n    attributes:\n      kind: \(q($0 + "?"))\n") }
        let caseNames = names.filter { accepts("schema: Names\nenums:\n  Kind: [\(q($0))]\nentities:\n  Holder:\n    attributes:\n      kind: Kind?\n") }
        XCTAssertGreaterThan(typeNames.count, 20, "\(typeNames)")
        XCTAssertGreaterThan(memberNames.count, 20, "\(memberNames)")
        XCTAssertGreaterThan(caseNames.count, 20, "\(caseNames)")
        XCTAssertGreaterThan(enumNames.count, 20, "\(enumNames)")
        // Entities named by every accepted type name; a holder with an attribute and a to-one
        // relationship (its inverse a to-many on Item) named by every accepted member name, and an
        // enum with every accepted case.
        var entities = ["schema: Names", "enums:", "  Kind: [\(caseNames.map(q).joined(separator: ", "))]", "entities:"]
        // Tables named apart: names that differ in case (AB, Ab) would share a table name.
        for (position, name) in typeNames.enumerated() where !["Holder", "Item", "Kind", "Linked"].contains(name) {
            entities += ["  \(q(name)):", "    table: t\(position)", "    attributes:", "      note: String?"]
        }
        // Columns named apart too (aB and a_b share a column name).
        entities += ["  Holder:", "    attributes:"] + memberNames.enumerated().map { "      \(q($1)): { type: String?, column: c\($0) }" }
        entities += ["      kind: { type: Kind?, default: \(q(caseNames[0])) }", "  Linked:", "    relationships:"]
            + memberNames.enumerated().map { "      \(q($1)): { type: Item?, inverse: back\($0), column: k\($0) }" }
        entities += ["  Item:", "    relationships:"] + memberNames.indices.map { "      back\($0): { type: \"[Linked]\", inverse: \(q(memberNames[$0])), deleteRule: cascade }" }
        // Enums named by every name accepted for one, each an attribute's type.
        var enums = ["schema: Names", "enums:"] + enumNames.map { "  \(q($0)): [one, two]" }
        enums += ["entities:", "  Holder:", "    attributes:"] + enumNames.indices.map { "      e\($0): \(q(enumNames[$0] + "?"))" }
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // SQL's keywords as a table's and its columns' names, an attribute of every type in each.
        var keywords = ["schema: Names", "enums:", "  Kind: [one, two]", "entities:", "  Order:", "    attributes:"]
        for (position, type) in (RandomSchema.scalarTypes + ["Kind"]).enumerated() {
            let keyword = ["group", "select", "where", "from", "table", "index", "order", "values", "with", "limit", "default", "check", "primary", "references", "in", "is"][position % 16]
            keywords += ["      a\(position): { type: \(type), column: \(keyword)\(position < 16 ? "" : "_\(position)") }",
                         "      b\(position): { type: \(type)?, column: \(keyword)_\(position) }"]
        }
        // Tables and columns named like the aliases the runtimes' and the deletion plans' statements
        // give their values and rows (a table `v` beside `… FROM unnest(…) AS v` was named twice).
        var aliases = ["schema: Names", "entities:"]
        for name in ["V", "T", "C", "S", "J", "K", "R", "Matches"] {
            aliases += ["  \(name):", "    attributes:", "      v1: Int", "      a: String?", "      position: { type: Int16, column: v }", "    relationships:"]
            switch name {
            case "V": aliases += ["      ts: { type: \"[T]\", inverse: vs }"]
            case "T": aliases += ["      vs: { type: \"[V]\", inverse: ts }", "      links: { type: \"[S]\", inverse: links }"]
            case "S": aliases += ["      links: { type: \"[T]\", inverse: links }", "      k: { type: K?, inverse: ss }"]
            case "K": aliases += ["      ss: { type: \"[S]\", inverse: k }"]
            case "C": aliases += ["      parent: { type: C?, inverse: children }", "      children: { type: \"[C]\", inverse: parent, deleteRule: cascade }"]
            case "J": aliases += ["      r: { type: R, inverse: js }"]
            case "R": aliases += ["      js: { type: \"[J]\", inverse: r, deleteRule: deny }"]
            default: aliases += ["      self_: { type: Matches?, inverse: also }", "      also: { type: \"[Matches]\", inverse: self_ }"]
            }
        }
        // A join table named `v`, and one named `matches`.
        let joinTables = ["schema: Names", "entities:", "  Left:", "    attributes:", "      v1: Int", "    relationships:",
                          "      rights: { type: \"[Right]\", inverse: lefts, column: v }", "      others: { type: \"[Right]\", inverse: others, column: matches }",
                          "  Right:", "    attributes:", "      a: String", "    relationships:",
                          "      lefts: { type: \"[Left]\", inverse: rights }", "      others: { type: \"[Left]\", inverse: others }"]
        // Keys in a cycle whose first entity's key is required: new rows must go in from the other.
        let cycle = ["schema: Names", "entities:", "  Book:", "    relationships:", "      topic: { type: Node, deleteRule: deny }",
                     "      child: { type: Node, inverse: topic, deleteRule: cascade }", "      previous: { type: Book, deleteRule: nullify }",
                     "  Node:", "    relationships:", "      topic: { type: Book?, inverse: child }"]
        for (label, lines) in [("entity and member names", entities), ("enum names", enums), ("SQL keywords", keywords), ("alias names", aliases),
                               ("alias names of join tables", joinTables), ("a cycle of keys", cycle)] {
            let yaml = lines.joined(separator: "\n") + "\n"
            let compilation = ModelGen.generate(path: "Names.yaml", bytes: Array(yaml.utf8))
            guard !compilation.hasErrors else {
                XCTFail("\(label): names accepted one by one are refused together: \(compilation.diagnostics)\n\(yaml)")
                continue
            }
            // The schema of every entity and member name runs on SQLite only: its program, hundreds
            // of statements beside PostgresNIO's operators, took the Swift compiler past 24 GB.
            try checkSwift(compilation, label: label, yaml: yaml, onPostgreSQL: label != "entity and member names",
                           in: directory.appendingPathComponent(label.replacingOccurrences(of: " ", with: "-")))
        }
    }

    /// Every default the validator accepts, of every type (the random pool's and more edge cases),
    /// is the same value in Swift and in SQL: an object made without arguments and saved, and a row
    /// SQLite makes from the DDL's defaults (`INSERT … DEFAULT VALUES`), read back in a new context,
    /// equal the made object bit for bit (but the sign of a zero, see README); PostgreSQL makes a
    /// row from its DDL's defaults too (it refuses literals its types cannot hold, which SQLite takes).
    func testEveryAcceptedDefaultIsTheSameInSwiftAndInSQL() throws {
        let extra: [String: [String]] = [
            "String": ["", "\\(x)", "#\"", "\"\"\"", "é😀", "\u{2028}"], "Int": ["9223372036854775807", "+5", "007", "0x10", "1_000"],
            "Int64": ["-1"], "Int32": ["2147483647", "-2147483648", "2147483648"], "Int16": ["-32768"],
            "Double": ["nan", "-0.0", "0x1p3", "1e-320", "1e-400", "0x1p-1075", ".5", "5."],
            "Float": ["1.5", "3.4028235e38", "3.4028236e38", "1e39", "-1e39", "0.1", "1e-45", "1e-46"],
            "Bool": ["false", "1"], "Date": ["2024-01-31T12:00:00.123Z", "2024-01-31T12:00:00+02:00", "9999-12-31", "1583-01-01"],
            "UUID": ["e621e1f8-c36c-495a-93fc-0c247a3e6e5f"], "Data": ["", "AA=="],
            "Decimal": ["-0.00", "0.1", "-12345678901234567890.123456789", "1E-5", "1e3"],
            "URL": ["file:///tmp/x y", "relative/path", "https://ex.com/%zz"],
        ]
        var attributes: [(name: String, type: String)] = []
        var lines = ["schema: Defaults", "entities:", "  Holder:", "    attributes:"]
        for type in RandomSchema.scalarTypes {
            for value in (RandomSchema.defaults[type] ?? []) + (extra[type] ?? []) {
                let attribute = "      a\(attributes.count): { type: \(type), default: \(RandomSchema.quoted(value)) }"
                let alone = ModelGen.generate(path: "Defaults.yaml", bytes: Array((lines + [attribute]).joined(separator: "\n").utf8) + [10])
                guard !alone.hasErrors else { continue }
                lines.append(attribute)
                attributes.append(("a\(attributes.count)", type))
            }
        }
        XCTAssertGreaterThan(attributes.count, 40, "defaults accepted: \(attributes)")
        let yaml = lines.joined(separator: "\n") + "\n"
        let compilation = ModelGen.generate(path: "Defaults.yaml", bytes: Array(yaml.utf8))
        XCTAssertFalse(compilation.hasErrors, "\(compilation.diagnostics)")
        if let url = PostgresServer.url {
            let rows = try PostgresServer.psql(url, schema: "mg_defaults", compilation.files[1].contents + "\nINSERT INTO holder DEFAULT VALUES;\nSELECT count(*) FROM holder;\n")
            XCTAssertEqual(rows.trimmingCharacters(in: .whitespacesAndNewlines), "1", yaml)
        }
        var main = [
            "import Foundation", "import ModelGenRuntime", "",
            "let url = Foundation.URL(fileURLWithPath: CommandLine.arguments[0] + \".sqlite\")",
            "try? Foundation.FileManager.default.removeItem(at: url)",
            "let container = try ModelContainer(for: Defaults.self, configurations: ModelConfiguration(url: url))",
            "let made = Holder()", "container.mainContext.insert(made)", "try container.mainContext.save()",
            "try SQLiteDatabase(path: url.path).execute(\"INSERT INTO holder DEFAULT VALUES\")",
            "let rows = try ModelContext(container).fetch(FetchDescriptor<Holder>())",
            "precondition(rows.count == 2, \"\\(rows.count) rows\")",
            "var differences = 0",
        ]
        for (name, type) in attributes {
            // A zero's sign is the one thing SQLite does not keep (README); NaN is never a default.
            let same = switch type {
            case "Double", "Float": "(made.\(name) == 0 && row.\(name) == 0) || made.\(name).bitPattern == row.\(name).bitPattern"
            case "Date": "made.\(name).timeIntervalSinceReferenceDate.bitPattern == row.\(name).timeIntervalSinceReferenceDate.bitPattern"
            default: "made.\(name) == row.\(name)"
            }
            main.append("for (position, row) in rows.enumerated() where !(\(same)) { differences += 1; print(\"\(name) (\(type)): made \\(made.\(name)), row \\(position) \\(row.\(name))\") }")
        }
        main.append("print(differences == 0 ? \"ok\" : \"\\(differences) differences\")")
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try checkSwift(compilation, label: "defaults", yaml: yaml, main: main.joined(separator: "\n") + "\n", in: directory.appendingPathComponent("defaults"))
    }

    /// The DDL applies with foreign keys on, and every entity's deletion program runs, on an empty
    /// table and on one row.
    private func checkSQLite(_ compilation: Compilation, seed: UInt64) throws {
        let schema = try XCTUnwrap(compilation.schema)
        let database = try SQLiteDatabase(path: ":memory:")
        do {
            try database.execute(compilation.files[0].contents)
            let renderer = DeletionSQLRenderer(schema: schema, dialect: .sqlite)
            let planner = DeletionPlanner(schema: schema)
            for entity in schema.entities {
                let program = renderer.program(for: planner.plan(for: entity.name))
                _ = try DeletionExecutor(database: database).run(program, seed: .ids([1]))
                _ = try DeletionExecutor(database: database).run(program, seed: .all, dryRun: true)
            }
        } catch {
            XCTFail("seed \(seed): the SQLite output of an accepted schema fails: \(error)\n\(RandomSchema.yaml(seed: seed))")
        }
    }

    /// The PostgreSQL file (tables, indexes, deletion functions) applies in a schema of its own, and
    /// every function runs (PL/pgSQL checks a body's statements only when they first run); where the
    /// server has the `plpgsql_check` extension (CI installs it), every function passes its checks
    /// with the extra warnings on: no error, no type mismatch, no unused or never-read variable.
    private func checkPostgreSQL(_ compilation: Compilation, seed: UInt64, url: String, lint: Bool) throws {
        let schema = try XCTUnwrap(compilation.schema)
        var script = compilation.files[1].contents
        if lint {
            // The checker resolves each statement's tables: the closure tables and the tables of
            // the ids locked must exist, as they do while a function runs.
            for (position, entity) in schema.entities.enumerated() {
                let table = SQLDialect.postgresql.quote(SQLNames.closureTable(of: entity.tableName))
                script += "\nCREATE TEMP TABLE IF NOT EXISTS \(table) (id bigint PRIMARY KEY, parent_id bigint, edge integer, round integer NOT NULL DEFAULT 0);"
                script += "\nCREATE TEMP TABLE IF NOT EXISTS \(PostgreSQLDeletionFunctions.lockedTable(position)) (id bigint PRIMARY KEY);"
            }
        }
        for entity in schema.entities {
            let function = PostgreSQLDeletionFunctions.functionName(for: entity)
            script += "\nSELECT \(function)(ARRAY[]::bigint[]);\nSELECT \(function)(ARRAY[1]::bigint[]);"
        }
        if lint {
            script += """

                SELECT 'finding: ' || p.proname || ' line ' || coalesce(c.lineno::text, '?') || ': ' || c.level || ': ' || c.message
                FROM pg_proc AS p JOIN pg_namespace AS n ON n.oid = p.pronamespace,
                     LATERAL public.plpgsql_check_function_tb(p.oid, extra_warnings => true, other_warnings => true, performance_warnings => false) AS c
                WHERE n.nspname = current_schema();
                """
        }
        do {
            let output = try PostgresServer.psql(url, schema: "mg_random", script)
            let findings = output.split(separator: "\n").filter { $0.hasPrefix("finding: ") }
            XCTAssertTrue(findings.isEmpty, "seed \(seed): plpgsql_check finds\n\(findings.joined(separator: "\n"))\n\(RandomSchema.yaml(seed: seed))")
        } catch {
            XCTFail("seed \(seed): the PostgreSQL output of an accepted schema fails: \(error)\n\(RandomSchema.yaml(seed: seed))")
        }
    }

    /// Whether the server can lint PL/pgSQL (`plpgsql_check`, installed in schema `public`); in CI it must.
    private func installLinter(_ url: String) throws -> Bool {
        let available = try PostgresServer.psqlRaw(url, "SELECT count(*) FROM pg_available_extensions WHERE name = 'plpgsql_check';")
        guard available.trimmingCharacters(in: .whitespacesAndNewlines) == "1" else {
            if ProcessInfo.processInfo.environment["CI"] == "true" {
                XCTFail("CI=true but the server has no plpgsql_check: .ci/run must install postgresql-15-plpgsql-check")
            }
            return false
        }
        try PostgresServer.psqlRaw(url, "SET client_min_messages = warning;\nCREATE EXTENSION IF NOT EXISTS plpgsql_check SCHEMA public;")
        return true
    }

    /// The Swift files compile against the built runtime, and a program creates, saves and deletes
    /// an object of every entity.
    private func checkSwift(_ compilation: Compilation, seed: UInt64, in directory: URL) throws {
        try checkSwift(compilation, label: "seed \(seed)", yaml: RandomSchema.yaml(seed: seed), in: directory)
    }

    private func checkSwift(_ compilation: Compilation, label: String, yaml: String, main: String? = nil, onPostgreSQL: Bool = true, in directory: URL) throws {
        let schema = try XCTUnwrap(compilation.schema)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for file in compilation.files where file.name.hasSuffix(".swift") {
            try file.contents.write(to: directory.appendingPathComponent(file.name), atomically: true, encoding: .utf8)
        }
        try (main ?? RandomSchema.mainProgram(for: schema)).write(to: directory.appendingPathComponent("main.swift"), atomically: true, encoding: .utf8)
        let products = TestSupport.productsDirectory
        let objects = try ["ModelGenRuntime", "ModelGenQuery", "ModelGenProgram", "ModelGenSchema"].flatMap { module in
            try FileManager.default.contentsOfDirectory(atPath: products.appendingPathComponent("\(module).build").path)
                .filter { $0.hasSuffix(".o") }.map { products.appendingPathComponent("\(module).build/\($0)").path }
        }
        let sources = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".swift") }.map { directory.appendingPathComponent($0).path }
        let executable = directory.appendingPathComponent("check")
        let moduleMap = TestSupport.repositoryRoot.appendingPathComponent("Sources/CSQLite/module.modulemap").path
        let compile = try TestSupport.run(URL(fileURLWithPath: "/usr/bin/env"), ["swiftc", "-module-name", "RandomCheck", "-I", products.appendingPathComponent("Modules").path,
                                                                              "-Xcc", "-fmodule-map-file=\(moduleMap)"] + sources + objects + ["-lsqlite3", "-o", executable.path])
        guard compile.status == 0 else {
            return XCTFail("\(label): the Swift of an accepted schema does not compile:\n\(compile.standardError.prefix(3000))\n\(yaml)")
        }
        let run = try TestSupport.run(executable, [])
        XCTAssertEqual(run.status, 0, "\(label): \(run.standardError)")
        XCTAssertEqual(run.standardOutput.split(separator: "\n").last, "ok", "\(label): \(run.standardOutput)\(run.standardError)")
        if main == nil, onPostgreSQL, let url = PostgresServer.url {
            try checkSwiftOnPostgreSQL(compilation, label: label, yaml: yaml, url: url, sqliteRun: run, in: directory.appendingPathComponent("postgresql"))
        }
    }

    /// The same program on the PostgreSQL backend (`ModelGenPostgres`), in a new schema of the
    /// server: the container creates the tables and functions, and the counts, the save and the
    /// deletes must go as they went on SQLite (`sqliteRun`: the same output). It is linked with the objects of the package's test product
    /// (which holds `ModelGenPostgres`, PostgresNIO and their dependencies), but the tests' own.
    private func checkSwiftOnPostgreSQL(_ compilation: Compilation, label: String, yaml: String, url: String, sqliteRun: TestSupport.ProcessResult, in directory: URL) throws {
        let schema = try XCTUnwrap(compilation.schema)
        guard let components = URLComponents(string: url), let host = components.host else { return XCTFail("MODELGEN_TEST_POSTGRES_URL is not a URL: \(url)") }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for file in compilation.files where file.name.hasSuffix(".swift") {
            try file.contents.write(to: directory.appendingPathComponent(file.name), atomically: true, encoding: .utf8)
        }
        try RandomSchema.mainProgram(for: schema, backend: .postgresql).write(to: directory.appendingPathComponent("main.swift"), atomically: true, encoding: .utf8)
        let products = TestSupport.productsDirectory
        let testTargets = ["GeneratedModelTests", "ModelGenCoreTests", "NameClashTests", "ModelGenPackageTests", "ModelGenPackageDiscoveredTests"]
        let objects = try String(contentsOf: products.appendingPathComponent("ModelGenPackageTests.product/Objects.LinkFileList"), encoding: .utf8)
            .split(separator: "\n").filter { line in !testTargets.contains { line.contains("/\($0).build/") } }
        let objectList = directory.appendingPathComponent("objects.txt")
        try objects.joined(separator: "\n").write(to: objectList, atomically: true, encoding: .utf8)
        // The module maps of the C targets: those SwiftPM writes, and those the packages carry.
        let checkouts = products.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("checkouts")
        var moduleMaps = [TestSupport.repositoryRoot.appendingPathComponent("Sources/CSQLite/module.modulemap").path]
        for entry in try FileManager.default.contentsOfDirectory(atPath: products.path) where entry.hasSuffix(".build") {
            let map = products.appendingPathComponent("\(entry)/module.modulemap").path
            if FileManager.default.fileExists(atPath: map) { moduleMaps.append(map) }
        }
        if let walk = FileManager.default.enumerator(atPath: checkouts.path) {
            for case let path as String in walk where path.hasSuffix("include/module.modulemap") { moduleMaps.append(checkouts.appendingPathComponent(path).path) }
        }
        let sources = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".swift") }.map { directory.appendingPathComponent($0).path }
        let executable = directory.appendingPathComponent("check")
        let compile = try TestSupport.run(URL(fileURLWithPath: "/usr/bin/env"), ["swiftc", "-module-name", "RandomCheck", "-I", products.appendingPathComponent("Modules").path]
            + moduleMaps.flatMap { ["-Xcc", "-fmodule-map-file=\($0)"] } + sources + ["@\(objectList.path)", "-lsqlite3", "-lstdc++", "-suppress-warnings", "-o", executable.path])
        guard compile.status == 0 else {
            return XCTFail("\(label): the Swift of an accepted schema does not compile against ModelGenPostgres:\n\(compile.standardError.prefix(3000))\n\(yaml)")
        }
        let database = components.path.split(separator: "/").first.map(String.init) ?? "postgres"
        try PostgresServer.psql(url, schema: "mg_compiled", "")
        let run = try TestSupport.run(executable, [host, String(components.port ?? 5432), components.user ?? "postgres", database, "mg_compiled"])
        XCTAssertEqual(run.status, 0, "\(label) on PostgreSQL: \(run.standardError)")
        XCTAssertEqual(run.standardOutput, sqliteRun.standardOutput,
                       "\(label): PostgreSQL went otherwise than SQLite (standard error: \(run.standardError); on SQLite: \(sqliteRun.standardError))\n\(yaml)")
        try PostgresServer.psqlRaw(url, "SET client_min_messages = warning;\nDROP SCHEMA mg_compiled CASCADE;")
    }
}

/// Random schemas as YAML, from pools of troublesome names.
enum RandomSchema {
    static let entityNames = [
        "Order", "Group", "Select", "Date", "Data", "URL", "Error", "ModelContext", "EntityDescription", "DeletionProgram",
        "PgClass", "SqliteSequence", "ModelgenDeleteA", "Node", "A", "AB", "Ab", "ABc", "Abc", "APkey", "AIdSeq", "Xmin",
        "Index", "Table", "Swift", "Type", "Fuzz", "Café", "self", "Int", "PersistentModel",
        String(repeating: "VeryLong", count: 8) + "Alpha", String(repeating: "VeryLong", count: 8) + "Beta",
        "Author", "Book", "Shelf", "Tag", "Reader", "Loan", "V",
    ]
    static let memberNames = [
        "name", "xmin", "ctid", "group", "default", "class", "where", "order", "self", "Type", "init", "entity",
        "persistentBackingData", "aB", "a_b", "ab", "AB", "value", "id", "count", "propertyName", "modelContext", "oid",
        String(repeating: "longName", count: 8) + "X", "title", "note", "price", "when", "flag", "score", "parent", "items", "node", "a", "abc", "b",
        // Names of the PL/pgSQL functions' parameters, variables and closure-table columns.
        "ids", "dry_run", "path", "changed", "deleted", "report", "round", "edge",
    ]
    static let tableNames = ["a_pkey", "pg_things", "sqlite_x", "modelgen_x", "x$modelgen$y", "with space", "Upper", "order",
                             String(repeating: "t", count: 64), "a\nb", "", "ab_idx", "node_id_seq", "ab", "things",
                             // Names of the aliases statements give their values and rows.
                             "v", "c", "t", "s", "j", "k", "r", "matches"]
    static let columnNames = ["xmin", "a\u{0}b", "with space", "Upper", String(repeating: "c", count: 64), "", "id", "x$modelgen$", "ab", "it's",
                              "ids", "dry_run", "current_round", "path", "parent_id", "round", "v", "v1", "a", "position"]
    static let scalarTypes = ["String", "Int", "Int64", "Int32", "Int16", "Double", "Float", "Bool", "Date", "UUID", "Data", "Decimal", "URL"]
    static let defaults: [String: [String]] = [
        "String": ["plain", "it's \"quoted\"\nline", "a\u{0}b", "$modelgen$"], "Int": ["0", "-9223372036854775808", "9223372036854775808"],
        "Int16": ["32767", "32768"], "Double": ["1.5", "1e308", "inf"], "Bool": ["true", "yes"],
        "Date": ["2024-01-31", "2024-01-31T12:00:00Z", "1500-01-01", "2024-01-31\n"],
        "UUID": ["E621E1F8-C36C-495A-93FC-0C247A3E6E5F", "nope"], "Data": ["AAEC", "!!"],
        "Decimal": ["12.50", "1.5\u{2028}", String(repeating: "9", count: 40)], "URL": ["https://example.com/a?b=c", ""],
    ]
    static let enumCases = ["small", "large", "Type", "default", "self", "class"]

    static func yaml(seed: UInt64) -> String {
        var random = RobustnessTests.Generator(state: seed &* 7919)
        func pick<T>(_ items: [T]) -> T { items[random.below(items.count)] }
        func chance(_ percent: Int) -> Bool { random.below(100) < percent }
        /// Mostly ordinary names; sometimes one of the troublesome ones.
        func name(_ pool: [String], ordinary: [String]) -> String { chance(7) ? pick(pool) : pick(ordinary) }

        var entities: [String] = []
        for _ in 0..<(2 + random.below(5)) {
            let candidate = name(entityNames, ordinary: ["Author", "Book", "Shelf", "Tag", "Reader", "Loan", "Node", "Order"])
            if !entities.contains(candidate) || chance(5) { entities.append(candidate) }
        }
        var lines = ["schema: \"Fuzz\""]
        let hasEnum = chance(60)
        if hasEnum {
            var cases: [String] = []
            for _ in 0..<(1 + random.below(3)) {
                let candidate = chance(10) ? pick(enumCases) : pick(["small", "large", "medium", "huge"])
                if !cases.contains(candidate) || chance(5) { cases.append(candidate) }
            }
            lines.append("enums:")
            lines.append("  \"Kind\": [\(cases.map(quoted).joined(separator: ", "))]")
        }
        lines.append("entities:")
        // Relationships are drawn as pairs or singles up front, so inverses point at each other.
        var relationships: [String: [String]] = [:]
        var members: [String: Set<String>] = [:]
        /// A member name for `entity`, new to it (but now and then a repeat).
        func member(of entity: String, ordinary: [String]) -> String {
            var candidate = name(memberNames, ordinary: ordinary)
            for _ in 0..<8 where members[entity, default: []].contains(candidate) && !chance(5) { candidate = name(memberNames, ordinary: ordinary) }
            members[entity, default: []].insert(candidate)
            return candidate
        }
        for _ in 0..<random.below(entities.count + 2) {
            let source = pick(entities), target = pick(entities)
            let forward = member(of: source, ordinary: ["owner", "items", "parent", "children", "tags", "shelf", "reader", "cover", "topic"])
            let backward = member(of: target, ordinary: ["owners", "item", "child", "tagged", "books", "loans", "origin", "notes"])
            let forwardMany = chance(40), backwardMany = chance(40)
            let rules = ["nullify", "cascade", "deny", "noAction"]
            func type(_ target: String, many: Bool) -> String { many ? "[\(target)]" : (chance(25) ? target : target + "?") }
            // Bounds on to-many relationships (0 is none; a minimum above the maximum, or bounds
            // on a to-one, are errors), which saves check on both backends alike.
            func counts(many: Bool) -> String {
                guard chance(many ? 30 : 2) else { return "" }
                return (chance(60) ? ", minimumModelCount: \(random.below(3))" : "") + (chance(60) ? ", maximumModelCount: \(random.below(4))" : "")
            }
            if chance(70) && forward != backward {
                relationships[source, default: []].append("\(quoted(forward)): { type: \(quoted(type(target, many: forwardMany))), inverse: \(quoted(backward)), deleteRule: \(pick(rules))\(counts(many: forwardMany)) }")
                relationships[target, default: []].append("\(quoted(backward)): { type: \(quoted(type(source, many: backwardMany))), inverse: \(quoted(forward)), deleteRule: \(pick(rules))\(chance(6) ? ", column: \(quoted(pick(columnNames)))" : "")\(counts(many: backwardMany)) }")
            } else {
                relationships[source, default: []].append("\(quoted(forward)): { type: \(quoted(type(target, many: forwardMany))), deleteRule: \(pick(rules))\(counts(many: forwardMany)) }")
            }
        }
        for entity in entities {
            lines.append("  \(quoted(entity)):")
            if chance(6) { lines.append("    table: \(quoted(pick(tableNames)))") }
            var attributes: [String] = []
            lines.append("    attributes:")
            for _ in 0..<random.below(5) {
                let attribute = member(of: entity, ordinary: ["title", "note", "price", "when", "flag", "score", "label", "size", "weight", "code"])
                attributes.append(attribute)
                var type = hasEnum && chance(15) ? "Kind" : pick(scalarTypes)
                var options: [String] = []
                if chance(15), let values = defaults[type] { options.append("default: \(quoted(pick(values)))") }
                if type == "Kind", chance(30) { options.append("default: \(quoted(pick(enumCases)))") }
                if chance(30) { type += "?" }
                if chance(5) { options.append("transient: true") }
                if chance(10) { options.append("unique: true") }
                if chance(15) { options.append("indexed: true") }
                if chance(4) { options.append("column: \(quoted(pick(columnNames)))") }
                lines.append("      \(quoted(attribute)): { type: \(quoted(type))\(options.map { ", " + $0 }.joined()) }")
            }
            lines.append("    relationships:")
            for relationship in relationships[entity] ?? [] { lines.append("      " + relationship) }
            if !attributes.isEmpty, chance(20) {
                let group = Array(Set((0..<(1 + random.below(2))).map { _ in quoted(pick(attributes)) })).sorted()
                lines.append("    unique: [[\(group.joined(separator: ", "))]]")
            }
            if !attributes.isEmpty, chance(25) {
                let group = Array(Set((0..<(1 + random.below(2))).map { _ in quoted(pick(attributes)) })).sorted()
                lines.append("    indexes: [[\(group.joined(separator: ", "))], \(quoted(pick(attributes)))]")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A YAML double-quoted scalar: every character kept, control characters escaped.
    static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F || scalar == "\u{2028}":
                result += "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count) + String(scalar.value, radix: 16)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }

    /// `main.swift` for a schema's generated code: one object of every entity (required attributes
    /// given a value of their type), counted by a predicate on each attribute while unsaved (the
    /// SQL of the fetch on a row of its values, named like the entity's table and columns) and
    /// again once saved, then every entity deleted through `delete(model:)`.
    /// Saves and deletes the schema refuses (a required relationship left empty, a deny) are
    /// expected errors; a crash, a failed compile or counts that differ are not.
    /// The runtime a compiled check runs on.
    enum Backend { case sqlite, postgresql }

    /// A program that inserts an object of every entity (required attributes set, relationships
    /// to the other objects), counts by a predicate on every attribute before and after the save
    /// (the same counts, or it exits 1), changes every attribute and saves, empties the
    /// relationships and saves, and deletes every entity's objects, printing what each save and
    /// delete did and the counts; on PostgreSQL it takes the server's host, port, user, database
    /// and schema as arguments.
    static func mainProgram(for schema: ModelSchema, backend: Backend = .sqlite) -> String {
        /// A value of the attribute's type; `changed` gives another one (the last case of an enum).
        func value(_ attribute: Attribute, changed: Bool = false) -> String {
            switch attribute.type {
            case let .enumeration(name):
                let cases = schema.enums.first { $0.name == name }?.cases ?? []
                return "." + Naming.swiftIdentifier((changed ? cases.last : cases.first) ?? "")
            case let .scalar(scalar):
                switch scalar {
                case .string: return changed ? "\"other text\"" : "\"text\""
                case .int, .int64, .int32, .int16: return changed ? "-2" : "1"
                case .double, .float: return changed ? "-2.25" : "1.5"
                case .bool: return changed ? "false" : "true"
                case .date: return "Foundation.Date(timeIntervalSinceReferenceDate: \(changed ? "86_400.5" : "0"))"
                case .uuid: return "Foundation.UUID()"
                case .data: return changed ? "Foundation.Data([9])" : "Foundation.Data([0, 1])"
                case .decimal: return "Foundation.Decimal(string: \"\(changed ? "-0.001" : "12.5")\")!"
                case .url: return "Foundation.URL(string: \"https://example.com\(changed ? "/other" : "")\")!"
                }
            }
        }
        // On PostgreSQL each call is awaited in a task the top-level code waits for
        // (`modelgenWait`): the program stays synchronous code, as on SQLite (as async code,
        // hundreds of lines with awaits took the compiler minutes and tens of gigabytes); names
        // of the standard library are qualified (entities may be named `Int` or `Error`).
        func awaited(_ call: String) -> String {
            backend == .postgresql ? "try modelgenWait { try await \(call) }" : "try \(call)"
        }
        var lines = ["import Foundation", "import ModelGenRuntime"]
        switch backend {
        case .sqlite:
            lines += ["", "let container = try ModelGenRuntime.ModelContainer(for: \(Naming.swiftIdentifier(schema.name)).self)",
                      "let context = container.mainContext"]
        case .postgresql:
            // The program's own names start with `modelgen`, as no name of the pools does
            // (`client` or `arguments` may name entities, which a variable would hide).
            lines += ["import ModelGenPostgres", "import PostgresNIO", "",
                      "final class ModelgenOutcome<Value>: @unchecked Swift.Sendable { var result: Swift.Result<Value, any Swift.Error>? }",
                      "func modelgenWait<Value>(_ body: @escaping () async throws -> Value) throws -> Value {",
                      "    let outcome = ModelgenOutcome<Value>(), done = Dispatch.DispatchSemaphore(value: 0)",
                      "    _Concurrency.Task { do { outcome.result = .success(try await body()) } catch { outcome.result = .failure(error) }; done.signal() }",
                      "    done.wait()",
                      "    return try outcome.result!.get()",
                      "}",
                      "let modelgenArguments = Swift.CommandLine.arguments",
                      "var modelgenConfiguration = PostgresNIO.PostgresClient.Configuration(host: modelgenArguments[1], port: Swift.Int(modelgenArguments[2])!, "
                        + "username: modelgenArguments[3], password: nil, database: modelgenArguments[4], tls: .disable)",
                      "modelgenConfiguration.options.additionalStartupParameters = [(\"search_path\", modelgenArguments[5])]",
                      "let modelgenClient = PostgresNIO.PostgresClient(configuration: modelgenConfiguration)",
                      "let modelgenRunning = _Concurrency.Task { await modelgenClient.run() }",
                      "let container = \(awaited("ModelGenPostgres.PostgresModelContainer(for: \(Naming.swiftIdentifier(schema.name)).self, client: modelgenClient)"))",
                      "let context = ModelGenPostgres.PostgresModelContext(container)"]
        }
        // An object of every entity, each relationship of it set to the object of its target (both
        // sides of a pair agree: one object per entity), so that saves and deletes have rows and
        // links to write, cascade through and refuse.
        let objects = Dictionary(schema.entities.enumerated().map { ($1.name, "modelgenObject\($0)") }, uniquingKeysWith: { first, _ in first })
        for entity in schema.entities {
            let arguments = entity.attributes.filter { !$0.isOptional && $0.defaultValue == nil }
                .map { "\(Naming.swiftIdentifier($0.name)): \(value($0))" }
            lines.append("let \(objects[entity.name]!) = \(Naming.swiftIdentifier(entity.name))(\(arguments.joined(separator: ", ")))")
            lines.append("context.insert(\(objects[entity.name]!))")
        }
        for entity in schema.entities {
            for relationship in entity.relationships {
                guard let target = objects[relationship.target] else { continue }
                lines.append("\(objects[entity.name]!).\(Naming.swiftIdentifier(relationship.name)) = \(relationship.isToMany ? "[\(target)]" : target)")
            }
        }
        // Per attribute, a count before and after the save, by `!=` (decided by SQL, not by the
        // shortcut an equality takes) with a value of its type.
        var counts: [(entity: String, predicate: String)] = []
        for entity in schema.entities {
            for attribute in entity.attributes where !attribute.isTransient {
                let other = "other\(counts.count)", name = Naming.swiftIdentifier(attribute.name)
                let type: String = switch attribute.type {
                case let .enumeration(name): Naming.swiftIdentifier(name)
                case let .scalar(scalar): ([.date, .uuid, .data, .decimal, .url].contains(scalar) ? "Foundation." : "Swift.") + scalar.rawValue
                }
                lines.append("let \(other): \(type) = \(value(attribute))")
                let test = attribute.isOptional ? "($0.\(name) ?? \(other)) != \(other)" : "$0.\(name) != \(other)"
                // Each predicate a statement of its own: inside the closures `modelgenWait` takes,
                // the type checker would solve each macro's expansion with the generic call.
                let predicate = "predicate\(counts.count)"
                lines.append("let \(predicate) = #Predicate<\(Naming.swiftIdentifier(entity.name))> { \(test) }")
                counts.append((Naming.swiftIdentifier(entity.name), predicate))
            }
        }
        for (index, count) in counts.enumerated() {
            lines.append("let unsaved\(index) = \(awaited("context.fetchCount(FetchDescriptor<\(count.entity)>(predicate: \(count.predicate)))"))")
        }
        // What happens is printed (the error's text to standard error): both backends must print the same.
        let report = "Foundation.FileHandle.standardError.write(Foundation.Data(\"\\(error)\\n\".utf8))"
        lines.append("do { \(awaited("context.save()")); print(\"save: ok\") } catch { print(\"save: refused\"); \(report) }")
        for (index, count) in counts.enumerated() {
            lines.append("print(\"count \(index): \\(unsaved\(index))\")")
            lines.append("if \(awaited("context.fetchCount(FetchDescriptor<\(count.entity)>(predicate: \(count.predicate)))")) != unsaved\(index) { print(\"\(count.entity): counted otherwise once saved\"); Foundation.exit(1) }")
        }
        // Every stored attribute changed, and saved (one UPDATE per entity); then every optional
        // to-one and every to-many emptied, and saved (keys set to NULL, join rows deleted; a
        // required partner left without its object refuses it).
        for entity in schema.entities {
            for attribute in entity.attributes where !attribute.isTransient {
                lines.append("\(objects[entity.name]!).\(Naming.swiftIdentifier(attribute.name)) = \(value(attribute, changed: true))")
            }
        }
        lines.append("do { \(awaited("context.save()")); print(\"update: ok\") } catch { print(\"update: refused\"); \(report); context.rollback() }")
        for (index, count) in counts.enumerated() {
            lines.append("let changed\(index) = \(awaited("context.fetchCount(FetchDescriptor<\(count.entity)>(predicate: \(count.predicate)))"))")
            lines.append("print(\"count \(index) changed: \\(changed\(index))\")")
        }
        for entity in schema.entities {
            for relationship in entity.relationships where relationship.cardinality != .toOne(isOptional: false) {
                lines.append("\(objects[entity.name]!).\(Naming.swiftIdentifier(relationship.name)) = \(relationship.isToMany ? "[]" : "nil")")
            }
        }
        lines.append("do { \(awaited("context.save()")); print(\"unlink: ok\") } catch { print(\"unlink: refused\"); \(report); context.rollback() }")
        for entity in schema.entities {
            let name = Naming.swiftIdentifier(entity.name)
            lines.append("do { \(awaited("context.delete(model: \(name).self)")); print(\"delete \(entity.name): ok\") } catch { print(\"delete \(entity.name): refused\"); \(report) }")
        }
        for entity in schema.entities {
            lines.append("print(\"\(entity.name) left: \\(\(awaited("context.fetchCount(FetchDescriptor<\(Naming.swiftIdentifier(entity.name))>())")))\")")
        }
        if backend == .postgresql { lines.append("modelgenRunning.cancel()") }
        lines.append("print(\"ok\")")
        return lines.joined(separator: "\n") + "\n"
    }
}
