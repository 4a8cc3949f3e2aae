import Foundation
import FitIQWorkload
import ModelGenCore
import ModelGenRuntime
import XCTest

/// `modelgen plan` and `modelgen delete` as an administrator runs them, on SQLite files.
final class DeleteCommandTests: XCTestCase {
    private let zoo = TestSupport.schemasDirectory.appendingPathComponent("Zoo.yaml").path
    private let fitIQ = TestSupport.schemasDirectory.appendingPathComponent("FitIQ.yaml").path

    /// A database built from the generated DDL, as a user would build it.
    private func zooDatabase() throws -> String {
        let directory = try TestSupport.temporaryDirectory()
        XCTAssertEqual(try TestSupport.modelgen("generate", zoo, "-o", directory.path).status, 0)
        let path = directory.appendingPathComponent("zoo.sqlite").path
        let database = try SQLiteDatabase(path: path)
        try database.execute(try String(contentsOf: directory.appendingPathComponent("Zoo.sqlite.sql"), encoding: .utf8))
        try database.execute("""
            INSERT INTO animal_category (id, name) VALUES (1, 'Mammal'), (2, 'Bird');
            INSERT INTO animal (id, name, diet, category_id) VALUES (1, 'Lion', 'carnivorous', 1), (2, 'Zebra', 'herbivorous', 1), (3, 'Eagle', 'carnivorous', 2), (4, 'Stray', 'omnivorous', NULL);
            """)
        return path
    }

    private func count(_ path: String, _ table: String) throws -> Int64 {
        try SQLiteDatabase(path: path, create: false).scalar("SELECT count(*) FROM \(table)")
    }

    /// A database another process keeps locked past the wait: the delete and the migration say
    /// so and what to do, change nothing, and exit 2.
    func testALockedDatabaseIsReportedWithWhatToDo() throws {
        let database = try zooDatabase()
        let other = try SQLiteDatabase(path: database, create: false)
        try other.execute("BEGIN IMMEDIATE")
        let expected = "error: \(database) was locked by another connection for more than 5 s (another process writing it); nothing was changed; try again\n"
        let delete = try TestSupport.modelgen("delete", zoo, "--database", database, "AnimalCategory", "--all")
        XCTAssertEqual(delete.status, 2)
        XCTAssertEqual(delete.standardError, expected)
        // A later Zoo: animals get a nickname.
        let later = try TestSupport.temporaryDirectory().appendingPathComponent("Zoo.yaml")
        try String(contentsOfFile: zoo, encoding: .utf8).replacingOccurrences(of: "      name: String\n      diet:", with: "      name: String\n      nickname: String?\n      diet:")
            .write(to: later, atomically: true, encoding: .utf8)
        let migrate = try TestSupport.modelgen("migrate", later.path, "--database", database, "--from", zoo)
        XCTAssertEqual(migrate.status, 2)
        XCTAssertEqual(migrate.standardError, expected)
        try other.execute("COMMIT")
        XCTAssertEqual(try count(database, "animal"), 4)
        XCTAssertEqual(try TestSupport.modelgen("migrate", later.path, "--database", database, "--from", zoo).status, 0, "once the lock is gone")
    }

    /// In a store the runtime keeps (it records its schema), a delete records each table's largest
    /// id before its rows go, so the runtime never gives a deleted row's id to a new object; a dry
    /// run records nothing, and a database built from the DDL alone is not given the runtime's table.
    func testADeleteInAStoreTheRuntimeKeepsRecordsTheLargestIDs() throws {
        let plain = try zooDatabase()
        XCTAssertEqual(try TestSupport.modelgen("delete", zoo, "--database", plain, "Animal", "--id", "4").status, 0)
        XCTAssertEqual(try count(plain, "sqlite_master WHERE name = 'modelgen_largest_ids'"), 0, "a database without the runtime")

        let kept = try zooDatabase()
        let (schema, _) = ModelGen.load(path: zoo, bytes: Array(try Data(contentsOf: URL(fileURLWithPath: zoo))))
        try SQLiteMigrator(database: SQLiteDatabase(path: kept, create: false)).recordSchema(XCTUnwrap(schema).canonicalJSON)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: kept))
        XCTAssertEqual(try TestSupport.modelgen("delete", zoo, "--database", kept, "Animal", "--id", "4", "--dry-run").status, 0)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: kept)), bytes, "a dry run changes no byte")
        XCTAssertEqual(try TestSupport.modelgen("delete", zoo, "--database", kept, "Animal", "--id", "4").status, 0)
        let largest = try SQLiteDatabase(path: kept, create: false).query("SELECT \"table\", largest FROM modelgen_largest_ids ORDER BY 1")
        XCTAssertEqual(largest.map { row -> String in if case let .text(table) = row[0] { "\(table) \(row[1].integer ?? 0)" } else { "\(row)" } }, ["animal 4", "animal_category 2"],
                       "the largest ids as they were before the delete: Stray (4) was the newest animal")
    }

    func testDeleteByIdPrintsTheJSONReport() throws {
        let database = try zooDatabase()
        let result = try TestSupport.modelgen("delete", zoo, "--database", database, "AnimalCategory", "--id", "1", "--json")
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertEqual(result.standardOutput, "{\"deleted\": {\"Animal\": 2, \"AnimalCategory\": 1}, \"nullified\": 0, \"dryRun\": false}\n")
        XCTAssertEqual(try count(database, "animal"), 2)
    }

    func testDryRunReportsTheSameAndChangesNothing() throws {
        let database = try zooDatabase()
        let before = try Data(contentsOf: URL(fileURLWithPath: database))
        let result = try TestSupport.modelgen("delete", zoo, "--database", database, "AnimalCategory", "--all", "--dry-run", "--json")
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertEqual(result.standardOutput, "{\"deleted\": {\"Animal\": 3, \"AnimalCategory\": 2}, \"nullified\": 0, \"dryRun\": true}\n")
        XCTAssertEqual(try count(database, "animal"), 4)
        XCTAssertEqual(try count(database, "animal_category"), 2)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: database)), before)
    }

    func testDeleteWhereWithAPredicate() throws {
        let database = try zooDatabase()
        let result = try TestSupport.modelgen("delete", zoo, "--database", database, "Animal", "--where", "diet == \"carnivorous\" && category.name == \"Bird\"", "--json")
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertEqual(result.standardOutput, "{\"deleted\": {\"Animal\": 1}, \"nullified\": 0, \"dryRun\": false}\n")
        let bad = try TestSupport.modelgen("delete", zoo, "--database", database, "Animal", "--where", "dit == 1")
        XCTAssertEqual(bad.status, 2)
        XCTAssertTrue(bad.standardError.contains("did you mean 'diet'?"), bad.standardError)
    }

    func testMissingIdsAreAWarning() throws {
        let database = try zooDatabase()
        let result = try TestSupport.modelgen("delete", zoo, "--database", database, "Animal", "--id", "4", "--id", "40", "--json")
        XCTAssertEqual(result.status, 0)
        XCTAssertEqual(result.standardError, "warning: no Animal with id 40; ignored\n")
        XCTAssertEqual(result.standardOutput, "{\"deleted\": {\"Animal\": 1}, \"nullified\": 0, \"dryRun\": false}\n")
    }

    /// Ids anywhere in Int64 (SQLite takes negative ones): `--id -5` is an id, not an option.
    func testIdsAtTheEndsOfInt64AndNegativeOnesAreDeleted() throws {
        let database = try zooDatabase()
        try SQLiteDatabase(path: database, create: false).execute("""
            INSERT INTO animal (id, name, diet, category_id) VALUES (-9223372036854775808, 'Min', 'omnivorous', NULL), (-5, 'Minus', 'omnivorous', NULL), \
            (9223372036854775807, 'Max', 'omnivorous', NULL)
            """)
        let result = try TestSupport.modelgen("delete", zoo, "--database", database, "Animal", "--id", "-9223372036854775808", "--id", "-5",
                                              "--id", "9223372036854775807", "--json")
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertEqual(result.standardOutput, "{\"deleted\": {\"Animal\": 3}, \"nullified\": 0, \"dryRun\": false}\n")
        XCTAssertEqual(try count(database, "animal"), 4)
    }

    func testRefusedDeleteExitsOneAndChangesNothing() throws {
        let directory = try TestSupport.temporaryDirectory()
        let schema = directory.appendingPathComponent("Lending.yaml")
        try """
        schema: Lending
        entities:
          Book:
            attributes:
              title: String
            relationships:
              loans: { type: [Loan], inverse: book, deleteRule: deny }
          Loan:
            relationships:
              book: { type: Book, inverse: loans }
        """.write(to: schema, atomically: true, encoding: .utf8)
        XCTAssertEqual(try TestSupport.modelgen("generate", schema.path, "-o", directory.path).status, 0)
        let path = directory.appendingPathComponent("lending.sqlite").path
        let database = try SQLiteDatabase(path: path)
        try database.execute(try String(contentsOf: directory.appendingPathComponent("Lending.sqlite.sql"), encoding: .utf8))
        try database.execute("INSERT INTO book (id, title) VALUES (7, 'Dune'); INSERT INTO loan (id, book_id) VALUES (17, 7);")
        for extra in [[], ["--dry-run"]] {
            let result = try TestSupport.modelgen(arguments: ["delete", schema.path, "--database", path, "Book", "--id", "7", "--json"] + extra)
            XCTAssertEqual(result.status, 1)
            XCTAssertEqual(result.standardOutput, "")
            XCTAssertTrue(result.standardError.contains("Book#7 cannot be deleted: Book.loans (deny) still refers to Loan#17"), result.standardError)
        }
        XCTAssertEqual(try database.scalar("SELECT count(*) FROM book"), 1)
    }

    func testUsageAndSchemaErrorsExitTwo() throws {
        let database = try zooDatabase()
        XCTAssertEqual(try TestSupport.modelgen("delete", zoo, "--database", database, "Animal").status, 2, "no selector")
        XCTAssertEqual(try TestSupport.modelgen("delete", zoo, "--database", database, "Animal", "--all", "--id", "1").status, 2, "two selectors")
        let unknown = try TestSupport.modelgen("delete", zoo, "--database", database, "Animl", "--all")
        XCTAssertEqual(unknown.status, 2)
        XCTAssertEqual(unknown.standardError, "error: schema 'Zoo' has no entity 'Animl'; did you mean 'Animal'?\n")
        XCTAssertEqual(try TestSupport.modelgen("delete", zoo, "--database", "/nonexistent.sqlite", "Animal", "--all").status, 2)
    }

    func testPlanOfFitIQDeletesDeepestFirstWithoutManualRelationshipBreaking() throws {
        let result = try TestSupport.modelgen("plan", fitIQ, "--entity", "SDUserProfile")
        XCTAssertEqual(result.status, 0, result.standardError)
        let output = result.standardOutput
        let order = try XCTUnwrap(output.split(separator: "\n").first { $0.contains(". delete ") })
        let stage = try XCTUnwrap(order.range(of: "SDSleepStage")), session = try XCTUnwrap(order.range(of: "SDSleepSession,"))
        let profile = try XCTUnwrap(order.range(of: "SDUserProfile"))
        XCTAssertLessThan(stage.lowerBound, session.lowerBound)
        XCTAssertLessThan(session.lowerBound, profile.lowerBound)
        XCTAssertTrue(output.contains("one-to-one: SDDietaryAndActivityPreferences.userProfile ↔ SDUserProfile.dietaryAndActivityPreferences"), output)
        XCTAssertFalse(output.contains("SDOutboxEvent"), "standalone events are not touched:\n\(output)")
        XCTAssertFalse(output.contains("nullify"), "no relationship breaking is needed:\n\(output)")
        XCTAssertTrue(output.contains("SDSleepStage ← SDSleepSession.stages (cascade): deleted by its key to the collected SDSleepSession objects"), output)
        XCTAssertEqual(try TestSupport.modelgen("plan", fitIQ, "--format", "mermaid").status, 0)
        let json = try TestSupport.modelgen("plan", fitIQ, "--entity", "SDUserProfile", "--format", "json")
        XCTAssertEqual(json.status, 0, json.standardError)
        let plans = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])["plans"] as? [[String: Any]]
        let plan = try XCTUnwrap(plans?.first)
        XCTAssertEqual(plan["collect"] as? [[String]], [["SDUserProfile.sleepSessions"]], "only the sessions' ids are needed")
        XCTAssertEqual(plan["deleteByKey"] as? [String], ["SDUserProfile.dietaryAndActivityPreferences", "SDUserProfile.progressEntries",
                                                          "SDUserProfile.activitySnapshots", "SDUserProfile.physicalAttributes", "SDSleepSession.stages"])
    }

    /// SIGKILL during a large delete: the database is exactly as before, or (if the kill came after
    /// the commit) exactly as after; never anything in between. `--where` makes it the general plan.
    func testKilledDeleteLosesNothing() throws {
        let directory = try TestSupport.temporaryDirectory()
        let original = directory.appendingPathComponent("original.sqlite").path
        let database = try SQLiteDatabase(path: original)
        let compilation = ModelGen.generate(path: "FitIQ.yaml", bytes: [UInt8](try Data(contentsOf: URL(fileURLWithPath: fitIQ))))
        try database.execute(compilation.files[0].contents)
        try database.execute(FitIQWorkload.insertSQL(profiles: 200))
        let totalRows = try Self.rowCount(database)
        try database.execute("PRAGMA wal_checkpoint")

        // Time one complete run, then kill runs at fractions of that time.
        let timed = directory.appendingPathComponent("timed.sqlite").path
        try FileManager.default.copyItem(atPath: original, toPath: timed)
        let start = Date()
        XCTAssertEqual(try TestSupport.modelgen("delete", fitIQ, "--database", timed, "SDUserProfile", "--where", "id > 0").status, 0)
        let duration = Date().timeIntervalSince(start)
        let rowsAfterDelete = try Self.rowCount(try SQLiteDatabase(path: timed, create: false))
        XCTAssertEqual(rowsAfterDelete, Int64(FitIQWorkload.outboxEvents))
        var killedMidway = 0
        for fraction in [0.3, 0.5, 0.7, 0.85] {
            let copy = directory.appendingPathComponent("kill-\(fraction).sqlite").path
            try FileManager.default.copyItem(atPath: original, toPath: copy)
            let process = Process()
            process.executableURL = TestSupport.productsDirectory.appendingPathComponent("modelgen")
            process.arguments = ["delete", fitIQ, "--database", copy, "SDUserProfile", "--where", "id > 0"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            Thread.sleep(forTimeInterval: duration * fraction)
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            let reopened = try SQLiteDatabase(path: copy, create: false)
            XCTAssertEqual(try reopened.query("PRAGMA integrity_check").first?.first, .text("ok"))
            XCTAssertEqual(try reopened.query("PRAGMA foreign_key_check").count, 0)
            let rows = try Self.rowCount(reopened)
            XCTAssertTrue(rows == totalRows || rows == rowsAfterDelete, "a killed delete is all or nothing: \(rows) rows (killed at \(fraction))")
            if process.terminationReason == .uncaughtSignal && rows == totalRows { killedMidway += 1 }
        }
        XCTAssertGreaterThan(killedMidway, 0, "at least one run should have been killed before finishing (a run took \(duration) s)")
    }

    static func rowCount(_ database: SQLiteDatabase) throws -> Int64 {
        var total: Int64 = 0
        for (table, _) in FitIQWorkload.rowCounts(profiles: 1) {
            total += try database.scalar("SELECT count(*) FROM \(table)")
        }
        return total
    }
}
