import Foundation
import ModelGenCore
import ModelGenRuntime
import ModelGenTestSupport
import XCTest

/// Random schemas and data, deleted twice: by ModelGen's plan on a database whose foreign keys
/// have no actions (NO ACTION everywhere, enforcement on), and by one SQL `DELETE` relying on
/// SQLite's own ON DELETE CASCADE / SET NULL. The survivors, the counts and the nullified
/// references must agree, and `PRAGMA foreign_key_check` must be empty. Then, on schemas SQL's
/// actions cannot judge too (`wideRandomSchema`), the SQLite plans against `DeletionOracle` (SPEC
/// §3 as a Swift model) and the PostgreSQL functions against the SQLite plans, on every path and
/// on tables whose foreign keys have no actions: the same reports or refusals, the same rows after.
final class DifferentialDeletionTests: XCTestCase {
    /// A schema whose rules SQL actions can express: cascade or nullify on to-many sides of
    /// one-to-many pairs (self-references included), nullify on many-to-many and inverseless to-ones;
    /// with `refusing`, deny and noAction too (deletes the plans refuse).
    static func randomSchema(_ generator: inout SeededRandom, refusing: Bool = false) -> String {
        let count = 2 + generator.below(5)
        var relationships = Array(repeating: [String](), count: count)
        var attributes = Array(repeating: ["      label: String?"], count: count)
        for pair in 0..<(1 + generator.below(7)) {
            let parent = generator.below(count), child = generator.below(count)
            switch generator.below(6) {
            case 0:
                relationships[parent].append("      m\(pair): { type: [E\(child)], inverse: n\(pair) }")
                relationships[child].append("      n\(pair): { type: [E\(parent)], inverse: m\(pair) }")
            case 1:
                relationships[child].append("      ref\(pair): { type: E\(parent)? }")
            default:
                let rule = ["cascade", "nullify", "deny", "noAction"][generator.below(refusing ? 4 : 2)]
                relationships[parent].append("      kids\(pair): { type: [E\(child)], inverse: up\(pair), deleteRule: \(rule) }")
                relationships[child].append("      up\(pair): { type: E\(parent)?, inverse: kids\(pair) }")
            }
            if generator.below(3) == 0 { attributes[child].append("      n\(pair)x: Int?") }
        }
        // Half the tables are named like the aliases the plans' statements give their closures and
        // rows (a table `c` beside `… AS c` hid the alias).
        var aliasNames = ["c", "v", "r", "m", "t", "s", "j", "k", "links", "shared", "matches", "closure", "ids", "x", "o", "p"]
        var yaml = "schema: Random\nentities:\n"
        for index in 0..<count {
            yaml += "  E\(index):\n"
            if generator.below(2) == 0 { yaml += "    table: \(aliasNames.remove(at: generator.below(aliasNames.count)))\n" }
            yaml += "    attributes:\n" + attributes[index].joined(separator: "\n") + "\n"
            if !relationships[index].isEmpty { yaml += "    relationships:\n" + relationships[index].joined(separator: "\n") + "\n" }
        }
        return yaml
    }

    /// The statement that defers the checks of keys to the commit, in SQLite and in PostgreSQL
    /// (`randomData` names rows of an entity's own table inserted after the row).
    static let deferKeys = (sqlite: "PRAGMA defer_foreign_keys = ON;", postgreSQL: "SET CONSTRAINTS ALL DEFERRED;")

    /// `randomData`'s statements as PostgreSQL takes them.
    static func forPostgreSQL(_ data: String) -> String {
        data.replacingOccurrences(of: deferKeys.sqlite, with: deferKeys.postgreSQL)
    }

    /// Rows inserted with NULL keys first, then keys set, so any reference graph (cycles too) loads;
    /// a required key is given with its row (the entities inserted after those they require, which
    /// validation keeps acyclic; a required key to the row's own entity may name a row inserted
    /// after it, the checks of keys being deferred: rings), and the keys of a one-to-one are distinct.
    static func randomData(_ schema: ModelSchema, _ generator: inout SeededRandom) -> String {
        var rowCounts: [String: Int] = [:]
        var sql = "BEGIN;\n\(deferKeys.sqlite)\n"
        for entity in schema.entities {
            rowCounts[entity.name] = generator.below(14)
        }
        let required = Dictionary(grouping: schema.foreignKeys.filter(\.isRequired), by: \.entity)
        var inserted: [String] = []
        func insert(_ entity: Entity) {
            guard !inserted.contains(entity.name) else { return }
            inserted.append(entity.name)
            let keys = required[entity.name] ?? []
            for key in keys where key.target != entity.name { insert(schema.entity(named: key.target)!) }
            // A row needs a row of each entity it requires, and a one-to-one a row of its own.
            var rows = rowCounts[entity.name] ?? 0
            for key in keys {
                let targets = rowCounts[key.target] ?? 0
                if targets == 0 || key.isUnique { rows = min(rows, targets) }
            }
            rowCounts[entity.name] = rows
            var targets = keys.map { key in Array(1...max(1, rowCounts[key.target] ?? 0)).shuffled(using: &generator) }
            for id in stride(from: 1, through: rows, by: 1) {
                let values = keys.indices.map { index in keys[index].isUnique ? targets[index].removeLast() : 1 + generator.below(rowCounts[keys[index].target] ?? 0) }
                sql += "INSERT INTO \(entity.tableName) (\((["id"] + keys.map(\.column)).joined(separator: ", "))) VALUES (\(([id] + values).map(String.init).joined(separator: ", ")));\n"
            }
        }
        for entity in schema.entities { insert(entity) }
        for foreignKey in schema.foreignKeys where !foreignKey.isRequired {
            let targets = rowCounts[foreignKey.target] ?? 0
            var free = foreignKey.isUnique ? Array(1...max(1, targets)).shuffled(using: &generator) : []
            for id in stride(from: 1, through: rowCounts[foreignKey.entity] ?? 0, by: 1) where targets > 0 && generator.below(4) != 0 {
                if foreignKey.isUnique && free.isEmpty { break }
                sql += "UPDATE \(foreignKey.table) SET \(foreignKey.column) = \(foreignKey.isUnique ? free.removeLast() : 1 + generator.below(targets)) WHERE id = \(id);\n"
            }
        }
        for table in schema.joinTables {
            let left = rowCounts[table.entity] ?? 0, right = rowCounts[table.target] ?? 0
            guard left > 0, right > 0 else { continue }
            var pairs: [String] = []
            for _ in 0..<generator.below(10) {
                let pair = "(\(1 + generator.below(left)), \(1 + generator.below(right)))"
                if !pairs.contains(pair) { pairs.append(pair) }
            }
            for pair in pairs { sql += "INSERT INTO \(table.name) VALUES \(pair);\n" }
        }
        return sql + "COMMIT;\n"
    }

    func testPlansAgreeWithSQLitesOwnCascadeOnRandomSchemas() throws {
        var generator = SeededRandom(seed: 7)
        var deletedAnything = 0, deletedThroughKeys = 0
        for round in 0..<150 {
            let yaml = Self.randomSchema(&generator)
            let compilation = TestSupport.compile(yaml)
            let schema = try XCTUnwrap(compilation.schema, "\(compilation.diagnostics)\n\(yaml)")
            let ddl = compilation.files[0].contents
            let data = Self.randomData(schema, &generator)
            let directory = try TestSupport.temporaryDirectory()

            let oracle = try SQLiteDatabase(path: directory.appendingPathComponent("oracle.sqlite").path)
            try oracle.execute(ddl)
            try oracle.execute(data)
            let subject = try SQLiteDatabase(path: directory.appendingPathComponent("plan.sqlite").path)
            let withoutActions = ["CASCADE", "SET NULL", "RESTRICT"].reduce(ddl) {
                $0.replacingOccurrences(of: "ON DELETE \($1)", with: "ON DELETE NO ACTION")
            }
            try subject.execute(withoutActions)
            try subject.execute(data)

            let entity = schema.entities[generator.below(schema.entities.count)]
            let existing = try oracle.query("SELECT id FROM \(entity.tableName)").compactMap { $0[0].integer }
            // A quarter of the rounds delete every object, which may take the whole-table fast path.
            let deletesAll = generator.below(4) == 0
            let ids = deletesAll ? existing : existing.filter { _ in generator.below(3) == 0 }
            let before = try snapshot(oracle, schema)

            let plan = DeletionPlanner(schema: schema).plan(for: entity.name)
            if !plan.deletedThroughParentKeys.isEmpty { deletedThroughKeys += 1 }
            let program = DeletionSQLRenderer(schema: schema, dialect: .sqlite).program(for: plan)
            // A dry run first: it changes nothing, and reports what the run then does.
            var preview = try DeletionExecutor(database: subject).run(program, seed: deletesAll ? .all : .ids(ids), dryRun: true)
            XCTAssertEqual(try snapshot(subject, schema), before, "round \(round): the dry run changed rows\n\(yaml)")
            let report = try DeletionExecutor(database: subject).run(program, seed: deletesAll ? .all : .ids(ids))
            XCTAssertTrue(preview.isDryRun)
            (preview.isDryRun, preview.statementsExecuted) = (false, report.statementsExecuted)
            XCTAssertEqual(preview, report, "round \(round): the dry run reported otherwise than the run\n\(yaml)")
            try oracle.run("DELETE FROM \(entity.tableName) WHERE id IN (SELECT value FROM json_each(?))", [.text("[" + ids.map(String.init).joined(separator: ",") + "]")])

            // As a save runs the plan: in its transaction, the schema's own ON DELETE actions and
            // enforcement on, the checks of keys deferred to the commit.
            let enforced = try SQLiteDatabase(path: directory.appendingPathComponent("enforced.sqlite").path)
            try enforced.execute(ddl)
            try enforced.execute(data)
            try enforced.execute("BEGIN IMMEDIATE; PRAGMA defer_foreign_keys = ON")
            do {
                let enforcedReport = try DeletionExecutor(database: enforced).run(program, seed: deletesAll ? .all : .ids(ids))
                try enforced.execute("COMMIT")
                XCTAssertEqual(enforcedReport.deleted.map { "\($0.entity) \($0.count)" }, report.deleted.map { "\($0.entity) \($0.count)" }, "round \(round): deleted in a save\n\(yaml)")
                XCTAssertEqual(enforcedReport.nullified, report.nullified, "round \(round): nullified in a save\n\(yaml)")
            } catch {
                XCTFail("round \(round): the plan failed as a save runs it: \(error)\n\(yaml)")
            }

            let after = try snapshot(oracle, schema)
            XCTAssertEqual(try snapshot(subject, schema), after, "round \(round): survivors differ\n\(yaml)")
            XCTAssertEqual(try snapshot(enforced, schema), after, "round \(round): survivors differ in a save\n\(yaml)")
            XCTAssertEqual(try subject.query("PRAGMA foreign_key_check").count, 0, "round \(round)")
            for other in schema.entities {
                let expected = (before[other.tableName]?.count ?? 0) - (after[other.tableName]?.count ?? 0)
                XCTAssertEqual(report.deletedCount(of: other.name), expected, "round \(round): deleted \(other.name)\n\(yaml)")
            }
            var nullified = 0
            for foreignKey in schema.foreignKeys {
                let survivorsBefore = before[foreignKey.table] ?? [], survivorsAfter = after[foreignKey.table] ?? []
                let columnIndex = try columnPosition(oracle, table: foreignKey.table, column: foreignKey.column)
                for row in survivorsAfter where row[columnIndex] == .null {
                    if let old = survivorsBefore.first(where: { $0[0] == row[0] }), old[columnIndex] != .null { nullified += 1 }
                }
            }
            XCTAssertEqual(report.nullified, nullified, "round \(round): nullified\n\(yaml)")
            if report.totalDeleted > 0 { deletedAnything += 1 }
        }
        XCTAssertGreaterThan(deletedAnything, 50, "the random cases should mostly delete something")
        XCTAssertGreaterThan(deletedThroughKeys, 5, "some random plans should delete leaves through their parents' keys")
    }

    /// The same plans as PostgreSQL functions, on both their paths and when the small one leaves
    /// for the general one part way: same survivors, same counts as on SQLite; and where SQLite
    /// refuses (deny, noAction), the same refusal, word for word, and nothing changed.
    func testPostgreSQLFunctionsAgreeWithTheSQLitePlans() throws {
        let (compiled, refusals) = try assertPostgreSQLFunctionsAgreeWithTheSQLitePlans(seed: 99, rounds: 120) { Self.randomSchema(&$0, refusing: true) }
        XCTAssertEqual(compiled, 120, "every schema of these rules is valid")
        XCTAssertGreaterThan(refusals, 10, "some random deletes should be refused")
    }

    /// The same on schemas that use the whole relationship language (`wideRandomSchema`): one-to-ones,
    /// required keys, many-to-manys and inverseless to-manys under every rule.
    func testPostgreSQLFunctionsAgreeWithTheSQLitePlansOnEveryKindOfRelationship() throws {
        let (compiled, refusals) = try assertPostgreSQLFunctionsAgreeWithTheSQLitePlans(seed: 41, rounds: 120) { Self.wideRandomSchema(&$0) }
        XCTAssertGreaterThan(compiled, 80, "most random schemas should be valid")
        XCTAssertGreaterThan(refusals, 10, "some random deletes should be refused")
    }

    /// A schema of 2 to 6 entities with 1 to 7 relationships (or pairs) of any kind: one-to-many
    /// (the to-one optional or required, a rule on each side), one-to-one (a rule on each side, one
    /// side now and then required), many-to-many (a rule on each side), inverseless to-one
    /// (optional or required) and inverseless to-many; every rule among cascade, nullify, deny and
    /// noAction. Some of them validation refuses (a cycle of required keys, say).
    static func wideRandomSchema(_ generator: inout SeededRandom) -> String {
        let count = 2 + generator.below(5)
        var relationships = Array(repeating: [String](), count: count)
        func rule() -> String { ["cascade", "nullify", "deny", "noAction"][generator.below(4)] }
        for pair in 0..<(1 + generator.below(7)) {
            let one = generator.below(count), other = generator.below(count)
            // A required key to its own entity names rows inserted after it too (rings of rows).
            let optional = generator.below(3) != 0 ? "?" : ""
            switch generator.below(5) {
            case 0:
                relationships[one].append("      m\(pair): { type: \"[E\(other)]\", inverse: n\(pair), deleteRule: \(rule()) }")
                relationships[other].append("      n\(pair): { type: \"[E\(one)]\", inverse: m\(pair), deleteRule: \(rule()) }")
            case 1:
                relationships[one].append("      ref\(pair): { type: \"E\(other)\(optional)\", deleteRule: \(rule()) }")
            case 2:
                relationships[one].append("      refs\(pair): { type: \"[E\(other)]\", deleteRule: \(rule()) }")
            case 3:
                relationships[one].append("      mate\(pair): { type: \"E\(other)\(optional)\", inverse: back\(pair), deleteRule: \(rule()) }")
                relationships[other].append("      back\(pair): { type: \"E\(one)?\", inverse: mate\(pair), deleteRule: \(rule()) }")
            default:
                relationships[one].append("      kids\(pair): { type: \"[E\(other)]\", inverse: up\(pair), deleteRule: \(rule()) }")
                relationships[other].append("      up\(pair): { type: \"E\(one)\(optional)\", inverse: kids\(pair), deleteRule: \(rule()) }")
            }
        }
        var yaml = "schema: Wide\nentities:\n"
        for index in 0..<count {
            yaml += "  E\(index):\n    attributes:\n      label: String?\n"
            if !relationships[index].isEmpty { yaml += "    relationships:\n" + relationships[index].joined(separator: "\n") + "\n" }
        }
        return yaml
    }

    /// Deletes random objects of random schemas (`makeSchema`; those validation refuses are passed
    /// over) on SQLite by the plans and on PostgreSQL by the functions, on every path: the same
    /// report or refusal, and the same rows after. Returns how many schemas were valid, and how
    /// many deletes were refused.
    private func assertPostgreSQLFunctionsAgreeWithTheSQLitePlans(seed: UInt64, rounds: Int, _ makeSchema: (inout SeededRandom) -> String) throws -> (compiled: Int, refusals: Int) {
        let url = try PostgresServer.requireURL()
        var generator = SeededRandom(seed: seed)
        var compiled = 0, refusals = 0
        for round in 0..<rounds {
            let yaml = makeSchema(&generator)
            let compilation = TestSupport.compile(yaml)
            guard let schema = compilation.schema else { continue }
            compiled += 1
            let data = Self.randomData(schema, &generator)
            let sqlite = try SQLiteDatabase(path: ":memory:")
            try sqlite.execute(compilation.files[0].contents)
            try sqlite.execute(data)
            let entity = schema.entities[generator.below(schema.entities.count)]
            let ids = try sqlite.query("SELECT id FROM \(entity.tableName)").compactMap { $0[0].integer }.filter { _ in generator.below(2) == 0 }
            let program = DeletionSQLRenderer(schema: schema, dialect: .sqlite).program(for: DeletionPlanner(schema: schema).plan(for: entity.name))
            var report: DeletionReport?, refusal: String?
            /// The report of a run, or its refusal's message.
            func outcome(dryRun: Bool) throws -> Result<DeletionReport, DeletionRefused> {
                do {
                    return .success(try DeletionExecutor(database: sqlite).run(program, seed: .ids(ids), dryRun: dryRun))
                } catch let refused as DeletionRefused {
                    return .failure(refused)
                }
            }
            // What SPEC §3 says the delete does, from the rows before it.
            let expected = try DeletionOracle(schema: schema, database: sqlite).outcome(deleting: entity.name, ids: ids)
            // A dry run first: it refuses as the run refuses, or reports what the run does.
            let preview = try outcome(dryRun: true)
            switch try outcome(dryRun: false) {
            case let .success(done):
                report = done
                var previewReport = try preview.get()
                (previewReport.isDryRun, previewReport.statementsExecuted) = (false, done.statementsExecuted)
                XCTAssertEqual(previewReport, done, "round \(round): the dry run reported otherwise than the run\n\(yaml)")
            case let .failure(refused):
                refusal = refused.description
                refusals += 1
                guard case let .failure(previewRefusal) = preview else {
                    XCTFail("round \(round): the dry run was not refused\n\(yaml)")
                    continue
                }
                XCTAssertEqual(previewRefusal.description, refused.description, "round \(round)\n\(yaml)")
            }

            // Each table's rows after the plan ran, as text.
            let storedRows = StoredRows(schema: schema)
            let sqliteRows = try storedRows.read(sqlite)
            // As a save runs the plan: in its transaction, enforcement on, the checks of keys
            // deferred to the commit (the plan then detaches the keys of cycles in the deleted set).
            let enforced = try SQLiteDatabase(path: ":memory:")
            try enforced.execute(compilation.files[0].contents)
            try enforced.execute(data)
            try enforced.execute("BEGIN IMMEDIATE; \(Self.deferKeys.sqlite)")
            do {
                let enforcedReport = try DeletionExecutor(database: enforced).run(program, seed: .ids(ids))
                try enforced.execute("COMMIT")
                XCTAssertEqual(enforcedReport.deleted.map { "\($0.entity) \($0.count)" }, report?.deleted.map { "\($0.entity) \($0.count)" },
                               "round \(round): deleted in a save\n\(yaml)")
            } catch let refused as DeletionRefused {
                try enforced.execute("ROLLBACK")
                XCTAssertEqual(refused.description, refusal, "round \(round): refused in a save\n\(yaml)")
            } catch {
                XCTFail("round \(round): the plan failed as a save runs it: \(error)\n\(yaml)")
                try? enforced.execute("ROLLBACK")
            }
            XCTAssertEqual(try storedRows.read(enforced), sqliteRows, "round \(round): the rows after the plan in a save\n\(yaml)")
            // The plan did what the model says.
            switch (expected, report) {
            case (.refused, _):
                XCTAssertNotNil(refusal, "round \(round): SPEC §3 refuses deleting \(entity.name) \(ids); the plan deleted\n\(yaml)")
            case (.deleted, nil):
                XCTFail("round \(round): SPEC §3 deletes \(entity.name) \(ids); the plan refused: \(refusal ?? "")\n\(yaml)")
            case let (.deleted(counts, nullified, rows), report?):
                for other in schema.entities {
                    XCTAssertEqual(report.deletedCount(of: other.name), counts[other.name] ?? 0, "round \(round): \(other.name) deleted, against SPEC §3\n\(yaml)")
                }
                XCTAssertEqual(report.nullified, nullified, "round \(round): nullified, against SPEC §3\n\(yaml)")
                for (table, stored) in zip(storedRows.tables, sqliteRows) {
                    XCTAssertEqual(stored, rows[table.table] ?? [], "round \(round): \(table.table) after the plan, against SPEC §3\n\(yaml)")
                }
            }
            // Both paths, and the small one turning to tables part way (past 3 objects of an entity).
            let leaving = ("arrays, then tables past 3", "SET \(PostgreSQLDeletionFunctions.arrayClosureLimitSetting) = 3;\n")
            // And one path on tables whose foreign keys have no actions (SPEC §3: no statement of a
            // delete relies on an SQL cascade), the arrays or the tables by turns.
            let ddl = compilation.files[1].contents
            let withoutActions = ddl.replacingOccurrences(of: #" ON DELETE (CASCADE|SET NULL|RESTRICT|NO ACTION)"#, with: "", options: .regularExpression)
            let bare = PostgresServer.deletionPaths[round % 2]
            for path in (PostgresServer.deletionPaths + [leaving]).map({ (name: $0.name, setting: $0.setting, ddl: ddl) })
                + [(name: bare.name + ", keys without actions", setting: bare.setting, ddl: withoutActions)] {
                // The function's report, or its refusal's message (line breaks escaped): of a dry run, then of the run.
                let call = "\(PostgreSQLDeletionFunctions.functionName(for: entity))(ARRAY[\(ids.map(String.init).joined(separator: ","))]::bigint[]"
                let output = try PostgresServer.psql(url, schema: "mg_differential", path.ddl + "\n" + Self.forPostgreSQL(data) + "\n" + path.setting + """
                    CREATE TEMP TABLE modelgen_outcome (position serial, result text);
                    DO $$ BEGIN INSERT INTO modelgen_outcome (result) SELECT \(call), dry_run => true)::text;
                    EXCEPTION WHEN restrict_violation THEN INSERT INTO modelgen_outcome (result) VALUES ('refused: ' || SQLERRM); END $$;
                    DO $$ BEGIN INSERT INTO modelgen_outcome (result) SELECT \(call))::text;
                    EXCEPTION WHEN restrict_violation THEN INSERT INTO modelgen_outcome (result) VALUES ('refused: ' || SQLERRM); END $$;
                    SELECT replace(result, E'\\n', '\\n') FROM modelgen_outcome ORDER BY position;

                    """ + storedRows.postgreSQLQuery)
                var lines = output.split(separator: "\n").map(String.init)
                let dryRun = lines.removeFirst()
                XCTAssertEqual(dryRun.replacingOccurrences(of: "\"dryRun\": true", with: "\"dryRun\": false"), lines[0],
                               "round \(round), \(path.name): the dry run reported otherwise than the run\n\(yaml)")
                if let refusal {
                    XCTAssertEqual(lines[0], "refused: " + refusal.replacingOccurrences(of: "\n", with: "\\n"), "round \(round), \(path.name)\n\(yaml)")
                } else {
                    let report = try XCTUnwrap(report)
                    let result = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any], "round \(round), \(path.name): \(output)")
                    let deleted = result["deleted"] as? [String: Int] ?? [:]
                    for other in schema.entities {
                        XCTAssertEqual(deleted[other.name] ?? 0, report.deletedCount(of: other.name), "round \(round), \(path.name): \(other.name)\n\(yaml)")
                    }
                    XCTAssertEqual(result["nullified"] as? Int, report.nullified, "round \(round), \(path.name)\n\(yaml)")
                }
                XCTAssertEqual(Array(lines.dropFirst()), storedRows.lines(sqliteRows), "round \(round), \(path.name)")
            }
        }
        return (compiled, refusals)
    }

    func testPostgreSQLFunctionRefusesAndChangesNothing() throws {
        let url = try PostgresServer.requireURL()
        let compilation = TestSupport.compile("""
        schema: Lending
        entities:
          Book:
            relationships:
              loans: { type: [Loan], inverse: book, deleteRule: deny }
          Loan:
            relationships:
              book: { type: Book, inverse: loans }
        """)
        for path in PostgresServer.deletionPaths {
            let script = compilation.files[1].contents + "\n" + path.setting + """
                INSERT INTO book (id) VALUES (7), (8);
                INSERT INTO loan (id, book_id) VALUES (17, 7);
                DO $$ BEGIN PERFORM book_safe_delete(ARRAY[7, 8]::bigint[]); EXCEPTION WHEN restrict_violation THEN RAISE NOTICE 'refused'; END $$;
                SELECT count(*) FROM book;
                SELECT book_safe_delete(ARRAY[8]::bigint[]);
                """
            let output = try PostgresServer.psql(url, schema: "mg_refusal", script)
            XCTAssertEqual(output.split(separator: "\n").map(String.init), ["2", "{\"dryRun\": false, \"deleted\": {\"Book\": 1}, \"nullified\": 0}"], path.name)
        }
    }

    func testPostgreSQLRefusalsNameTheCascadePathAsTheCommandDoes() throws {
        let url = try PostgresServer.requireURL()
        let yaml = """
        schema: Lending
        entities:
          Author:
            relationships:
              books: { type: [Book], inverse: author, deleteRule: cascade }
          Book:
            relationships:
              author: { type: Author?, inverse: books }
              loans: { type: [Loan], inverse: book, deleteRule: deny }
          Loan:
            relationships:
              book: { type: Book, inverse: loans }
        """
        let compilation = TestSupport.compile(yaml)
        let rows = "INSERT INTO author (id) VALUES (3); INSERT INTO book (id, author_id) VALUES (2, 3); INSERT INTO loan (id, book_id) VALUES (5, 2);"
        for path in PostgresServer.deletionPaths {
            let script = compilation.files[1].contents + "\n" + rows + "\n" + path.setting + """
                DO $$ BEGIN PERFORM author_safe_delete(ARRAY[3]::bigint[]); EXCEPTION WHEN restrict_violation THEN RAISE NOTICE '%', SQLERRM; END $$;
                """
            let directory = try TestSupport.temporaryDirectory()
            let file = directory.appendingPathComponent("script.sql")
            try ("SET client_min_messages = notice;\nDROP SCHEMA IF EXISTS mg_path CASCADE;\nCREATE SCHEMA mg_path;\nSET search_path TO mg_path;\n" + script).write(to: file, atomically: true, encoding: .utf8)
            let result = try TestSupport.run(URL(fileURLWithPath: "/usr/bin/env"), ["psql", url, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-f", file.path])
            XCTAssertEqual(result.status, 0, result.standardError)
            XCTAssertTrue(result.standardError.contains("Author#3 → books (cascade) → Book#2 cannot be deleted: Book.loans (deny) still refers to Loan#5, which would survive"), "\(path.name): \(result.standardError)")
        }

        // The same words as modelgen delete on SQLite.
        let fixture = try DeletionFixture(yaml)
        try fixture.execute(rows)
        XCTAssertThrowsError(try fixture.delete("Author", .ids([3]))) { error in
            XCTAssertTrue("\(error)".contains("Author#3 → books (cascade) → Book#2 cannot be deleted: Book.loans (deny) still refers to Loan#5"), "\(error)")
        }
    }

    /// A cascade through each node's own key to the next (`Node.next`), over data that cycles:
    /// 2,000 nodes asked for all lead to Node#1, which leads round 1 → 2 → 3 → 1, and a pin denies
    /// deleting Node#3. Node#1 is reached first from the nodes asked for, later from Node#3: the path
    /// a refusal names follows the first, on every path of PostgreSQL's functions as in SQLite's
    /// plan, where PostgreSQL's walk kept either and could name 64 steps round the cycle.
    func testARefusalsPathLeadsBackToTheObjectsAskedForThroughCyclesOfTheData() throws {
        let url = try PostgresServer.requireURL()
        let yaml = """
            schema: Ring
            entities:
              Node:
                relationships:
                  next: { type: Node?, deleteRule: cascade }
                  pins: { type: "[Pin]", inverse: node, deleteRule: deny }
              Pin:
                relationships:
                  node: { type: Node?, inverse: pins }
            """
        let rows = """
            INSERT INTO node (id) VALUES (1), (2), (3);
            INSERT INTO node (id, next_id) WITH RECURSIVE g(v) AS (SELECT 1001 UNION ALL SELECT v + 1 FROM g WHERE v < 3000) SELECT v, 1 FROM g;
            UPDATE node SET next_id = 2 WHERE id = 1;
            UPDATE node SET next_id = 3 WHERE id = 2;
            UPDATE node SET next_id = 1 WHERE id = 3;
            INSERT INTO pin (id, node_id) VALUES (1, 3);
            """
        let blocker = "Node#1001 → next (cascade) → Node#1 → next (cascade) → Node#2 → next (cascade) → Node#3 cannot be deleted: Node.pins (deny) still refers to Pin#1, which would survive"
        let compilation = TestSupport.compile(yaml)
        for path in PostgresServer.deletionPaths {
            let refusal = try postgreSQLRefusal(url, schema: "mg_ring", compilation.files[1].contents + "\n" + rows, path: path,
                                                call: "node_safe_delete(ARRAY(SELECT generate_series(1001, 3000))::bigint[])")
            XCTAssertTrue(refusal.contains(blocker), "\(path.name): \(refusal)")
        }
        let fixture = try DeletionFixture(yaml)
        try fixture.execute(rows)
        XCTAssertThrowsError(try fixture.delete("Node", .ids(Array(1001...3000)))) { error in
            XCTAssertTrue("\(error)".contains(blocker), "\(error)")
        }
    }

    /// More blockers than a refusal lists (150 books deny deleting their author; 100 are named):
    /// the books of least id on both backends, though PostgreSQL holds the rows in the reverse
    /// order (inserted from the highest id down), which its scan followed.
    func testARefusalListsTheSameBlockersOnBothBackendsWhateverTheirStorageOrder() throws {
        let url = try PostgresServer.requireURL()
        let yaml = """
            schema: Shelf
            entities:
              Author:
                relationships:
                  books: { type: "[Book]", inverse: author, deleteRule: deny }
              Book:
                relationships:
                  author: { type: Author?, inverse: books }
            """
        let named = "Author#1 cannot be deleted: Author.books (deny) still refers to "
            + (1...DeletionSQLRenderer.blockerLimit).map { "Book#\($0)" }.joined(separator: ", ") + ", which would survive"
        let compilation = TestSupport.compile(yaml)
        for path in PostgresServer.deletionPaths {
            let refusal = try postgreSQLRefusal(url, schema: "mg_shelf", compilation.files[1].contents + """

                INSERT INTO author (id) VALUES (1);
                INSERT INTO book (id, author_id) SELECT g, 1 FROM generate_series(150, 1, -1) AS g;
                ANALYZE;
                """, path: path, call: "author_safe_delete(ARRAY[1]::bigint[])")
            XCTAssertTrue(refusal.contains(named), "\(path.name): \(refusal)")
        }
        let fixture = try DeletionFixture(yaml)
        try fixture.execute("INSERT INTO author (id) VALUES (1);" + (1...150).reversed().map { "INSERT INTO book (id, author_id) VALUES (\($0), 1);" }.joined())
        XCTAssertThrowsError(try fixture.delete("Author", .ids([1]))) { error in
            XCTAssertTrue("\(error)".contains(named), "\(error)")
        }
    }

    /// The message of the refusal `call` (a safe-delete function's call) raises on `path`, run in
    /// PostgreSQL schema `schema` after `script`; a call that is not refused fails the script.
    private func postgreSQLRefusal(_ url: String, schema: String, _ script: String, path: (name: String, setting: String), call: String) throws -> String {
        try PostgresServer.psql(url, schema: schema, script + "\n" + path.setting + """
            DO $$ BEGIN PERFORM \(call); RAISE EXCEPTION 'not refused';
            EXCEPTION WHEN restrict_violation THEN CREATE TEMP TABLE modelgen_refusal AS SELECT SQLERRM AS message; END $$;
            SELECT message FROM modelgen_refusal;
            """)
    }

    func testPostgreSQLFunctionsDryRunDeleteAllAndKeepTheirSearchPath() throws {
        let url = try PostgresServer.requireURL()
        let compilation = TestSupport.compile("""
        schema: Shelves
        entities:
          Shelf:
            relationships:
              books: { type: [Book], inverse: shelf, deleteRule: cascade }
          Book:
            relationships:
              shelf: { type: Shelf?, inverse: books }
        """)
        let script = compilation.files[1].contents + """

            INSERT INTO shelf (id) VALUES (1), (2);
            INSERT INTO book (id, shelf_id) VALUES (1, 1), (2, 1), (3, 2);
            SELECT shelf_safe_delete(NULL, dry_run => true);
            SELECT count(*) FROM book;
            SELECT shelf_safe_delete(ARRAY[1]::bigint[], dry_run => true);
            \(PostgresServer.deletionPaths[1].setting)SELECT shelf_safe_delete(ARRAY[1]::bigint[], dry_run => true);
            RESET \(PostgreSQLDeletionFunctions.arrayClosureLimitSetting);
            SELECT count(*) FROM book;
            -- A NULL dry_run is refused, having changed nothing.
            CREATE TEMP TABLE mg_outcome (sqlstate text);
            DO $$ BEGIN
                PERFORM shelf_safe_delete(ARRAY[1]::bigint[], dry_run => NULL);
                INSERT INTO mg_outcome VALUES ('ran');
            EXCEPTION WHEN OTHERS THEN
                INSERT INTO mg_outcome VALUES (SQLSTATE);
            END $$;
            SELECT sqlstate FROM mg_outcome;
            SELECT count(*) FROM book;
            -- Called from elsewhere, with a table of the same name in the caller's schema: the function's own tables are used.
            CREATE SCHEMA IF NOT EXISTS mg_elsewhere;
            SET search_path TO mg_elsewhere;
            CREATE TABLE IF NOT EXISTS book (id bigint);
            SELECT mg_dry_all.shelf_safe_delete(NULL);
            SELECT count(*) FROM mg_dry_all.book;
            """
        let output = try PostgresServer.psql(url, schema: "mg_dry_all", script)
        XCTAssertEqual(output.split(separator: "\n").map(String.init), [
            "{\"dryRun\": true, \"deleted\": {\"Book\": 3, \"Shelf\": 2}, \"nullified\": 0}", "3",
            "{\"dryRun\": true, \"deleted\": {\"Book\": 2, \"Shelf\": 1}, \"nullified\": 0}",
            "{\"dryRun\": true, \"deleted\": {\"Book\": 2, \"Shelf\": 1}, \"nullified\": 0}", "3",
            "22004", "3",
            "{\"dryRun\": false, \"deleted\": {\"Book\": 3, \"Shelf\": 2}, \"nullified\": 0}", "0",
        ], "a dry run reports what the run does and changes nothing, on either path; a NULL dry_run is refused; NULL ids means every object")
    }

    private func snapshot(_ database: SQLiteDatabase, _ schema: ModelSchema) throws -> [String: [[SQLiteValue]]] {
        var result: [String: [[SQLiteValue]]] = [:]
        for table in schema.entities.map(\.tableName) + schema.joinTables.map(\.name) {
            result[table] = try database.query("SELECT * FROM \(table) ORDER BY 1, 2")
        }
        return result
    }

    private func columnPosition(_ database: SQLiteDatabase, table: String, column: String) throws -> Int {
        let names = try database.query("SELECT name FROM pragma_table_info(?) ORDER BY cid", [.text(table)])
        return try XCTUnwrap(names.firstIndex { $0[0] == .text(column) })
    }
}
