import Foundation
import ModelGenCore
import ModelGenRuntime
import ModelGenTestSupport
import XCTest

/// Random deletes raced against random writers on a real PostgreSQL server, on random schemas with
/// every kind of relationship and rule (`DifferentialDeletionTests.wideRandomSchema`). Session B
/// writes — inserts rows, moves or empties keys, links and unlinks, deletes through a generated
/// function — and session A deletes through the generated function; whichever starts first keeps its
/// transaction open (on an advisory lock the test holds) while the other runs as far as the locks
/// let it. Whatever waited for whatever, the two must end as if one had run after the other: A's
/// report or refusal, whether B's writes went through, and every row after are those of SQLite
/// running the same writes and the same plan one after the other, in the order the locks gave
/// (A after B exactly when A waited for B's transaction). A rule bypassed under concurrency, a
/// miscount, a row deleted that a committed change detached, or a deadlock shows as a difference.
final class PostgreSQLRaceTests: XCTestCase {
    private static let schemaName = "mg_race_random"
    /// The advisory lock that keeps the first session's transaction open until the test lets it go.
    private static let gateKey = 7_351_002

    /// One write of session B.
    private enum Write: CustomStringConvertible {
        case sql(String)
        /// A delete through the entity's plan (its function on PostgreSQL).
        case delete(Entity, [Int64])

        var description: String {
            switch self {
            case let .sql(sql): sql
            case let .delete(entity, ids): "delete \(entity.name) \(ids)"
            }
        }
    }

    func testRandomWritersAndDeletesEndAsIfOneRanAfterTheOther() throws {
        let url = try PostgresServer.requireURL()
        var generator = SeededRandom(seed: 0x5EED_4ACE)
        var raced = 0, waited = 0, refused = 0, writersRefused = 0
        for round in 0..<60 {
            let yaml = DifferentialDeletionTests.wideRandomSchema(&generator)
            let compilation = TestSupport.compile(yaml)
            guard let schema = compilation.schema else { continue }
            let data = DifferentialDeletionTests.randomData(schema, &generator)
            func store() throws -> SQLiteDatabase {
                let database = try SQLiteDatabase(path: ":memory:")
                try database.execute(compilation.sqliteDDL)
                try database.execute(data)
                return database
            }
            let initial = try store()
            let entity = schema.entities[generator.below(schema.entities.count)]
            let ids = try initial.query("SELECT id FROM \(entity.tableName)").compactMap { $0[0].integer }.filter { _ in generator.below(2) == 0 }
            let writes = try Self.randomWrites(schema, initial, near: (entity.name, ids), &generator)
            guard !ids.isEmpty, !writes.isEmpty else { continue }
            let path = PostgresServer.deletionPaths[round % 2]
            let writerFirst = generator.below(2) == 0
            let context = "round \(round), \(path.name), \(writerFirst ? "B" : "A") first, A deletes \(entity.name) \(ids), B: \(writes)\n\(yaml)"

            // The race on PostgreSQL.
            try PostgresServer.psql(url, schema: Self.schemaName, compilation.postgreSQLDDL + "\n" + DifferentialDeletionTests.forPostgreSQL(data))
            let session = "SET search_path TO \(Self.schemaName);\nSET application_name = "
            let delete = """
                \(path.setting)CREATE TEMP TABLE modelgen_outcome (result text);
                DO $$ BEGIN INSERT INTO modelgen_outcome SELECT \(PostgreSQLDeletionFunctions.functionName(for: entity))(ARRAY[\(ids.map(String.init).joined(separator: ","))]::bigint[])::text;
                EXCEPTION WHEN restrict_violation THEN INSERT INTO modelgen_outcome VALUES ('refused: ' || SQLERRM); END $$;

                """
            let outcome = "SELECT replace(result, E'\\n', '\\n') FROM modelgen_outcome;\n"
            let writer = writes.map { write in
                switch write {
                case let .sql(sql): sql
                case let .delete(entity, ids): "SELECT \(PostgreSQLDeletionFunctions.functionName(for: entity))(ARRAY[\(ids.map(String.init).joined(separator: ","))]::bigint[]);"
                }
            }.joined(separator: "\n") + "\n"
            let hold = "DO $$ BEGIN PERFORM pg_advisory_lock_shared(\(Self.gateKey)); END $$;\n"
            let gate = try Gate(url, key: Self.gateKey)
            defer { gate.open() }
            let deleting: TestSupport.RunningProcess, writing: TestSupport.RunningProcess
            let deleteFirst: Bool
            if writerFirst {
                writing = try PostgresServer.background(url, session + "'mg_race_b';\nBEGIN;\n" + writer + hold + "COMMIT;\n")
                let writerHolds = try waits(url, writing, application: "mg_race_b", "wait_event = 'advisory'")
                deleting = try PostgresServer.background(url, session + "'mg_race_a';\n" + delete + outcome)
                let deleteWaits = try waits(url, deleting, application: "mg_race_a", "wait_event_type = 'Lock' AND wait_event IN ('transactionid', 'tuple')")
                // A delete that did not wait for B's open transaction did not depend on it.
                deleteFirst = writerHolds && !deleteWaits
                if deleteWaits { waited += 1 }
            } else {
                deleting = try PostgresServer.background(url, session + "'mg_race_a';\nBEGIN;\n" + delete + hold + outcome + "COMMIT;\n")
                _ = try waits(url, deleting, application: "mg_race_a", "wait_event = 'advisory'")
                writing = try PostgresServer.background(url, session + "'mg_race_b';\nBEGIN;\n" + writer + "COMMIT;\n")
                if try waits(url, writing, application: "mg_race_b", "wait_event_type = 'Lock' AND wait_event IN ('transactionid', 'tuple')") { waited += 1 }
                deleteFirst = true
            }
            gate.open()
            let deleted = deleting.finish(), written = writing.finish()
            raced += 1

            // The same, one after the other, on SQLite.
            let serial = try store()
            var writerWent = false
            var expected: Result<DeletionReport, DeletionRefused>?
            func runDelete() throws {
                do {
                    expected = .success(try DeletionExecutor(database: serial).run(Self.sqlitePlan(deleting: entity, in: schema), seed: .ids(ids)))
                } catch let refusal as DeletionRefused {
                    expected = .failure(refusal)
                }
            }
            if deleteFirst {
                try runDelete()
                writerWent = try Self.apply(writes, to: serial, schema: schema)
            } else {
                writerWent = try Self.apply(writes, to: serial, schema: schema)
                try runDelete()
            }
            if !writerWent { writersRefused += 1 }

            XCTAssertEqual(deleted.status, 0, "\(context)\nA failed: \(deleted.standardError)")
            XCTAssertEqual(written.status == 0, writerWent, "\(context)\nB on PostgreSQL: \(written.status == 0 ? "committed" : written.standardError)")
            let result = deleted.standardOutput.split(separator: "\n").map(String.init).first ?? ""
            switch expected {
            case let .failure(refusal)?:
                refused += 1
                XCTAssertEqual(result, "refused: " + refusal.description.replacingOccurrences(of: "\n", with: "\\n"), context)
            case let .success(report)?:
                let json = try JSONSerialization.jsonObject(with: Data(result.utf8)) as? [String: Any]
                let counts = json?["deleted"] as? [String: Int] ?? [:]
                for other in schema.entities {
                    XCTAssertEqual(counts[other.name] ?? 0, report.deletedCount(of: other.name), "\(other.name) deleted: \(context)\n\(result)")
                }
                XCTAssertEqual(json?["nullified"] as? Int, report.nullified, "nullified: \(context)\n\(result)")
            case nil:
                XCTFail("SQLite ran no delete")
            }
            let rows = StoredRows(schema: schema)
            let stored = try PostgresServer.psqlRaw(url, "SET search_path TO \(Self.schemaName);\n" + rows.postgreSQLQuery)
            XCTAssertEqual(stored.split(separator: "\n").map(String.init), rows.lines(try rows.read(serial)), "rows after: \(context)")
        }
        // The rounds covered what they are for: waits in both directions, refusals, writers refused.
        XCTAssertGreaterThan(raced, 30)
        XCTAssertGreaterThan(waited, 3, "no delete or writer waited for the other")
        XCTAssertGreaterThan(refused, 0)
        XCTAssertGreaterThan(writersRefused, 0)
    }

    /// One to three random writes of session B on the rows `store` holds: a new row (keys to rows of
    /// their targets, or NULL), a key moved or emptied, a link added or removed, a delete through
    /// the entity's plan; half of the rows they pick of the deleted entity are among those deleted
    /// (`near`), where the race is. Some of them the database refuses (a deny, a key taken twice):
    /// then none goes.
    private static func randomWrites(_ schema: ModelSchema, _ store: SQLiteDatabase, near deleted: (entity: String, ids: [Int64]),
                                     _ generator: inout SeededRandom) throws -> [Write] {
        var ids: [String: [Int64]] = [:]
        for entity in schema.entities {
            ids[entity.name] = try store.query("SELECT id FROM \(entity.tableName) ORDER BY id").compactMap { $0[0].integer }
        }
        /// A row of `entity`, or nil when it has none.
        func row(of entity: String) -> Int64? {
            let all = entity == deleted.entity && generator.below(2) == 0 ? deleted.ids : ids[entity] ?? []
            return all.isEmpty ? nil : all[generator.below(all.count)]
        }
        /// A value for `key`: nil for NULL now and then where allowed, mostly a target no row holds for a one-to-one.
        func value(for key: ForeignKey) throws -> String? {
            if !key.isRequired && generator.below(3) == 0 { return "NULL" }
            guard key.isUnique else { return row(of: key.target).map(String.init) }
            let held = Set(try store.query("SELECT \(key.column) FROM \(key.table) WHERE \(key.column) IS NOT NULL").compactMap { $0[0].integer })
            let free = (ids[key.target] ?? []).filter { !held.contains($0) || generator.below(4) == 0 }
            return free.isEmpty ? (key.isRequired ? nil : "NULL") : String(free[generator.below(free.count)])
        }
        var writes: [Write] = []
        var nextID: Int64 = 1_000
        for _ in 0..<(1 + generator.below(3)) {
            switch generator.below(5) {
            case 0:
                let entity = schema.entities[generator.below(schema.entities.count)]
                var columns = ["id"], values = [String(nextID)]
                for key in schema.foreignKeys where key.entity == entity.name {
                    guard let value = try value(for: key) else { columns = []; break }
                    columns.append(key.column)
                    values.append(value)
                }
                guard !columns.isEmpty else { continue }
                writes.append(.sql("INSERT INTO \(entity.tableName) (\(columns.joined(separator: ", "))) VALUES (\(values.joined(separator: ", ")));"))
                nextID += 1
            case 1:
                guard !schema.foreignKeys.isEmpty else { continue }
                let key = schema.foreignKeys[generator.below(schema.foreignKeys.count)]
                guard let id = row(of: key.entity), let value = try value(for: key) else { continue }
                writes.append(.sql("UPDATE \(key.table) SET \(key.column) = \(value) WHERE id = \(id);"))
            case 2:
                guard !schema.joinTables.isEmpty else { continue }
                let table = schema.joinTables[generator.below(schema.joinTables.count)]
                guard let own = row(of: table.entity), let other = row(of: table.target) else { continue }
                writes.append(.sql("INSERT INTO \(table.name) (\(table.column), \(table.targetColumn)) VALUES (\(own), \(other));"))
            case 3:
                guard !schema.joinTables.isEmpty else { continue }
                let table = schema.joinTables[generator.below(schema.joinTables.count)]
                let pairs = try store.query("SELECT \(table.column), \(table.targetColumn) FROM \(table.name)")
                guard !pairs.isEmpty else { continue }
                let pair = pairs[generator.below(pairs.count)]
                writes.append(.sql("DELETE FROM \(table.name) WHERE \(table.column) = \(pair[0].integer!) AND \(table.targetColumn) = \(pair[1].integer!);"))
            default:
                let entity = schema.entities[generator.below(schema.entities.count)]
                let chosen = (ids[entity.name] ?? []).filter { _ in generator.below(3) == 0 }
                guard !chosen.isEmpty else { continue }
                writes.append(.delete(entity, chosen))
            }
        }
        return writes
    }

    /// The SQLite program of `entity`'s deletion plan.
    private static func sqlitePlan(deleting entity: Entity, in schema: ModelSchema) -> DeletionProgram {
        DeletionSQLRenderer(schema: schema, dialect: .sqlite).program(for: DeletionPlanner(schema: schema).plan(for: entity.name))
    }

    /// Runs `writes` on `store` as one transaction would: all of them, or (one refused) none.
    private static func apply(_ writes: [Write], to store: SQLiteDatabase, schema: ModelSchema) throws -> Bool {
        try store.execute("SAVEPOINT writer")
        do {
            for write in writes {
                switch write {
                case let .sql(sql):
                    try store.execute(sql)
                case let .delete(entity, ids):
                    _ = try DeletionExecutor(database: store).run(sqlitePlan(deleting: entity, in: schema), seed: .ids(ids))
                }
            }
            try store.execute("RELEASE writer")
            return true
        } catch {
            try store.execute("ROLLBACK TO writer; RELEASE writer")
            return false
        }
    }

    /// Waits until `session` ends or is seen waiting as `condition` says (a test on its row of
    /// `pg_stat_activity`, found by its `application` name); true when it waits. Either is a state
    /// the session stays in until the test lets the other session go.
    private func waits(_ url: String, _ session: TestSupport.RunningProcess, application: String, _ condition: String) throws -> Bool {
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if !session.process.isRunning { return false }
            let count = try PostgresServer.psqlRaw(url, "SELECT count(*) FROM pg_stat_activity WHERE application_name = '\(application)' AND \(condition);")
            if count.trimmingCharacters(in: .whitespacesAndNewlines) != "0" { return true }
            Thread.sleep(forTimeInterval: 0.005)
        }
        XCTFail("\(application) neither ended nor waited within 30 s")
        return false
    }

    /// A session holding an advisory lock until `open()`: the other sessions' transactions wait on it.
    private final class Gate {
        private let process = Process()
        private let input = Pipe()

        init(_ url: String, key: Int) throws {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["psql", url, "-X", "-q", "-A", "-t"]
            process.standardInput = input
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            input.fileHandleForWriting.write(Data("SELECT pg_advisory_lock(\(key));\n".utf8))
            let deadline = Date().addingTimeInterval(30)
            while try PostgresServer.psqlRaw(url, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = \(key) AND granted;")
                .trimmingCharacters(in: .whitespacesAndNewlines) == "0" {
                guard Date() < deadline else { throw XCTSkip("the advisory lock \(key) was not granted within 30 s") }
                Thread.sleep(forTimeInterval: 0.005)
            }
        }

        /// Ends the session, and with it the lock (again: nothing).
        func open() {
            guard process.isRunning else { return }
            try? input.fileHandleForWriting.close()
            process.waitUntilExit()
        }
    }
}
