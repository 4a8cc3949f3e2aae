import CSQLite
import Foundation
import ModelGenCore
@testable import ModelGenRuntime
import ModelGenTestSupport
import XCTest

/// Schema evolution on real SQLite files: named cases for the rows of SPEC §6, and a differential
/// property test — random schemas with random data through random sequences of evolutions, each
/// migrated store compared by meaning with a fresh store of the new schema, every kept value
/// checked, and v1 → v2 → v3 compared with v1 → v3.
final class MigrationTests: XCTestCase {
    // MARK: - Helpers

    private func schema(_ yaml: String, file: String = "test.yaml") throws -> ModelSchema {
        let compilation = TestSupport.compile(yaml, file: file)
        return try XCTUnwrap(compilation.schema, compilation.diagnostics.map(\.description).joined(separator: "\n"))
    }

    /// A store at `schema`, as the runtime creates one (or, with `.real`, as an earlier ModelGen
    /// did: floating-point columns declared `REAL`), with `rows` inserted.
    private func store(_ schema: ModelSchema, rows: String = "", floatingPointColumns: SQLiteFloatingPointColumns = .untyped) throws -> (SQLiteDatabase, URL) {
        let url = try TestSupport.temporaryDirectory().appendingPathComponent("store.sqlite")
        let database = try SQLiteDatabase(path: url.path)
        try database.execute(DDLGenerator(schema: schema, dialect: .sqlite, floatingPointColumns: floatingPointColumns).render(header: "test"))
        try SQLiteMigrator(database: database).recordSchema(schema.canonicalJSON)
        if !rows.isEmpty { try database.execute("BEGIN; PRAGMA defer_foreign_keys = ON; \(rows) COMMIT;") }
        return (database, url)
    }

    private func freshCatalog(_ schema: ModelSchema) throws -> SQLiteCatalog {
        let database = try SQLiteDatabase(path: ":memory:")
        try database.execute(DDLGenerator(schema: schema, dialect: .sqlite).render(header: "test"))
        return try SQLiteCatalog(database)
    }

    private func assertLikeFresh(_ database: SQLiteDatabase, _ schema: ModelSchema, _ message: String = "", file: StaticString = #filePath, line: UInt = #line) throws {
        let migrated = try SQLiteCatalog(database), fresh = try freshCatalog(schema)
        XCTAssertEqual(migrated, fresh, "\(message)\nmigrated:\n\(migrated)\nfresh:\n\(fresh)", file: file, line: line)
        XCTAssertEqual(try database.query("PRAGMA foreign_key_check").count, 0, message, file: file, line: line)
        // Rebuilt tables' indexes get their names by an edit of sqlite_master: the file must stay sound.
        XCTAssertEqual(try database.query("PRAGMA integrity_check").first?.first, .text("ok"), message, file: file, line: line)
        XCTAssertEqual(try SQLiteMigrator(database: database).storedSchema()?.hash, schema.canonicalHash, message, file: file, line: line)
    }

    private func strings(_ database: SQLiteDatabase, _ sql: String) throws -> [String] {
        try database.query(sql).map { row in row.map { $0 == .null ? "nil" : $0.testText }.joined(separator: "|") }
    }

    // MARK: - Named cases (SPEC §6)

    func testRenamesCarryValuesAndIndexesFollowTheNewNames() throws {
        let v1 = try schema("""
            schema: Shop
            entities:
              Item:
                attributes:
                  title: { type: String, indexed: true }
                relationships:
                  shelf: { type: Shelf?, inverse: items }
              Shelf:
                attributes:
                  label: String
                relationships:
                  items: { type: "[Item]", inverse: shelf, deleteRule: cascade }
            """)
        let v2 = try schema("""
            schema: Shop
            entities:
              Product:
                originalName: Item
                attributes:
                  name: { type: String, indexed: true, originalName: [title] }
                relationships:
                  rack: { type: Rack?, inverse: products, originalName: shelf }
              Rack:
                originalName: Shelf
                attributes:
                  label: String
                relationships:
                  products: { type: "[Product]", inverse: rack, deleteRule: cascade, originalName: items }
            """)
        let (database, _) = try store(v1, rows: "INSERT INTO shelf (id, label) VALUES (1, 'A'); INSERT INTO item (id, title, shelf_id) VALUES (1, 'pen', 1), (2, 'ink', NULL), (3, 'cap', NULL);")
        // The runtime recorded the largest ids, then item 3 was deleted: its id is not to be given again.
        try database.recordLargestIDs(ofTables: [("item", "item"), ("shelf", "shelf")])
        try database.execute("DELETE FROM item WHERE id = 3")
        let log = StatementLog(database)
        let report = try SQLiteMigrator(database: database).migrate(from: v1, to: v2)
        XCTAssertTrue(report.dataLoss.isEmpty, report.description)
        XCTAssertFalse(report.operations.contains { $0.kind == "rebuildTable" }, "renames are made in place: \(report)")
        try assertLikeFresh(database, v2)
        XCTAssertFalse(log.statements.contains { $0.contains("CREATE INDEX") || $0.contains("DROP INDEX") },
                       "the indexes were renamed, not built again:\n\(log.statements.joined(separator: "\n"))")
        XCTAssertEqual(try strings(database, "SELECT id, name, rack_id FROM product ORDER BY id"), ["1|pen|1", "2|ink|nil"])
        XCTAssertEqual(try strings(database, "SELECT id, label FROM rack"), ["1|A"])
        XCTAssertEqual(try strings(database, "SELECT * FROM modelgen_largest_ids ORDER BY 1"), ["product|3", "rack|1"], "the largest ids follow the renamed tables")
    }

    func testAddingColumnsAndDefaults() throws {
        let v1 = try schema("schema: S\nentities:\n  A:\n    attributes:\n      n: Int\n")
        let v2 = try schema("""
            schema: S
            entities:
              A:
                attributes:
                  n: Int
                  note: String?
                  size: { type: Int, default: 7 }
                  label: { type: String, default: "x", unique: true }
            """)
        let (database, _) = try store(v1, rows: "INSERT INTO a (id, n) VALUES (1, 10);")
        let report = try SQLiteMigrator(database: database).migrate(from: v1, to: v2)
        XCTAssertEqual(report.operations.filter { $0.kind == "rebuildTable" }.count, 1, "a UNIQUE column needs a rebuild: \(report)")
        try assertLikeFresh(database, v2)
        XCTAssertEqual(try strings(database, "SELECT n, note, size, label FROM a"), ["10|nil|7|x"])

        let v3 = try schema("schema: S\nentities:\n  A:\n    attributes:\n      n: Int\n      note: String?\n")
        let (plain, _) = try store(v1, rows: "INSERT INTO a (id, n) VALUES (1, 10);")
        let added = try SQLiteMigrator(database: plain).migrate(from: v1, to: v3)
        XCTAssertEqual(added.operations.map(\.kind), ["addAttribute"], "a nullable column is added in place, without a rebuild")
        try assertLikeFresh(plain, v3)
    }

    func testARequiredAttributeWithoutDefaultIsRefusedWhenRowsExistAndNothingChanges() throws {
        let v1 = try schema("schema: S\nentities:\n  A:\n    attributes:\n      n: Int\n")
        let v2 = try schema("schema: S\nentities:\n  A:\n    attributes:\n      n: Int\n      code: String\n")
        let (database, url) = try store(v1, rows: "INSERT INTO a (id, n) VALUES (1, 1), (2, 2);")
        try database.execute("PRAGMA wal_checkpoint")
        let before = try Data(contentsOf: url)
        XCTAssertThrowsError(try SQLiteMigrator(database: database).migrate(from: v1, to: v2)) { error in
            let refused = error as? MigrationRefused
            XCTAssertEqual(refused?.report.refusals.map(\.rows), [2], "\(error)")
            XCTAssertTrue(refused?.description.contains("existing A objects, which would have no value for the new required attribute code (give it a default): 2") == true, "\(error)")
        }
        XCTAssertEqual(try Data(contentsOf: url), before, "a refused migration leaves the file byte for byte as it was")
        let (empty, _) = try store(v1)
        try SQLiteMigrator(database: empty).migrate(from: v1, to: v2)
        try assertLikeFresh(empty, v2, "with no rows the same change is made")
    }

    func testRemovingDataIsRefusedUnlessAllowedAndCounted() throws {
        let v1 = try schema("schema: S\nentities:\n  A:\n    attributes:\n      n: Int\n      note: String?\n  B: {}\n")
        let v2 = try schema("schema: S\nentities:\n  A:\n    attributes:\n      n: Int\n")
        let (database, _) = try store(v1, rows: "INSERT INTO a (id, n, note) VALUES (1, 1, 'x'), (2, 2, NULL), (3, 3, 'y'); INSERT INTO b (id) VALUES (1);")
        XCTAssertThrowsError(try SQLiteMigrator(database: database).migrate(from: v1, to: v2)) { error in
            let report = (error as? MigrationRefused)?.report
            XCTAssertEqual(report?.dataLoss.map(\.rows).sorted(), [1, 2], "\(error)")
        }
        let dryRun = try SQLiteMigrator(database: database).migrate(from: v1, to: v2, allowDataLoss: true, dryRun: true)
        XCTAssertEqual(dryRun.dataLoss.map(\.rows).sorted(), [1, 2])
        XCTAssertEqual(try database.scalar("SELECT count(*) FROM b"), 1, "a dry run changes nothing")
        let report = try SQLiteMigrator(database: database).migrate(from: v1, to: v2, allowDataLoss: true)
        XCTAssertEqual(report.dataLoss, dryRun.dataLoss, "the dry run reported what the run did")
        try assertLikeFresh(database, v2)
        XCTAssertEqual(try strings(database, "SELECT id, n FROM a ORDER BY id"), ["1|1", "2|2", "3|3"])
    }

    func testRebuildingAParentKeepsItsCascadingChildren() throws {
        let v1 = try schema("""
            schema: S
            entities:
              Parent:
                attributes:
                  name: String
                relationships:
                  children: { type: "[Child]", inverse: parent, deleteRule: cascade }
              Child:
                attributes:
                  n: Int
                relationships:
                  parent: { type: Parent, inverse: children }
            """)
        let v2 = try schema("""
            schema: S
            entities:
              Parent:
                attributes:
                  name: { type: String, unique: true }
                relationships:
                  children: { type: "[Child]", inverse: parent, deleteRule: cascade }
              Child:
                attributes:
                  n: Int
                relationships:
                  parent: { type: Parent, inverse: children }
            """)
        let (database, _) = try store(v1, rows: "INSERT INTO parent (id, name) VALUES (1, 'a'), (2, 'b'); INSERT INTO child (id, n, parent_id) VALUES (1, 1, 1), (2, 2, 1), (3, 3, 2);")
        let report = try SQLiteMigrator(database: database).migrate(from: v1, to: v2)
        XCTAssertTrue(report.operations.contains { $0.kind == "rebuildTable" && $0.entity == "Parent" }, report.description)
        try assertLikeFresh(database, v2)
        XCTAssertEqual(try database.scalar("SELECT count(*) FROM child"), 3, "dropping the old parent table fired no ON DELETE CASCADE")
        XCTAssertEqual(try database.scalar("PRAGMA foreign_keys"), 1, "enforcement is back on")
    }

    func testARebuiltTablesIndexesAreCarriedByTheCopyAndNamedAsTheSchemaSays() throws {
        let v1 = try schema("""
            schema: S
            entities:
              Note:
                attributes:
                  title: { type: String, indexed: true }
                  body: String
                indexes: [[body, title]]
            """)
        let v2 = try schema("""
            schema: S
            entities:
              Note:
                attributes:
                  title: { type: String, indexed: true }
                  body: String?
                indexes: [[body, title]]
            """)
        // With sqlite_master editable (the usual case) and with defensive mode on, where the
        // indexes the copy filled keep temporary names until they are replaced.
        for defensive: Int32 in [0, 1] {
            let (database, _) = try store(v1, rows: "INSERT INTO note (id, title, body) VALUES (1, 'a', 'x'), (2, 'b', 'y');")
            XCTAssertEqual(modelgen_sqlite3_set_defensive(database.handle, defensive), SQLITE_OK)
            // A dry run does all of it and rolls back: the connection sees the old indexes again.
            let original = try SQLiteCatalog(database)
            try SQLiteMigrator(database: database).migrate(from: v1, to: v2, dryRun: true)
            XCTAssertEqual(try SQLiteCatalog(database), original, "defensive \(defensive): a dry run changes nothing")
            XCTAssertEqual(try strings(database, "SELECT id FROM note INDEXED BY note_body_title_idx WHERE body = 'y'"), ["2"])
            let log = StatementLog(database)
            let report = try SQLiteMigrator(database: database).migrate(from: v1, to: v2)
            XCTAssertTrue(report.operations.contains { $0.kind == "rebuildTable" }, report.description)
            try assertLikeFresh(database, v2, "defensive \(defensive)")
            // The indexes the copy filled are renamed; only where that is forbidden are they built again.
            let rebuilt = log.statements.filter { $0.hasPrefix("CREATE INDEX") && !$0.contains("modelgen_new_") }
            XCTAssertEqual(rebuilt.count, defensive == 0 ? 0 : 2, "defensive \(defensive):\n\(log.statements.joined(separator: "\n"))")
            XCTAssertEqual(try strings(database, "SELECT id FROM note INDEXED BY note_body_title_idx WHERE body = 'y'"), ["2"])
        }
    }

    func testConstraintsThatTheDataBreaksAreRefusedWithCounts() throws {
        let v1 = try schema("schema: S\nenums:\n  Size: [small, large, huge]\nentities:\n  A:\n    attributes:\n      code: String\n      note: String?\n      size: Size\n      n: Int32\n")
        let v2 = try schema("schema: S\nenums:\n  Size: [small, large]\nentities:\n  A:\n    attributes:\n      code: { type: String, unique: true }\n      note: String\n      size: Size\n      n: Int16\n")
        let (database, _) = try store(v1, rows: "INSERT INTO a (id, code, note, size, n) VALUES (1, 'x', NULL, 'huge', 1), (2, 'x', 'n', 'small', 70000), (3, 'y', NULL, 'huge', 2);")
        XCTAssertThrowsError(try SQLiteMigrator(database: database).migrate(from: v1, to: v2)) { error in
            let refusals = (error as? MigrationRefused)?.report.refusals ?? []
            XCTAssertEqual(Set(refusals.map { "\($0.element ?? "")=\($0.rows)" }), ["code=1", "note=2", "size=2", "n=1"], "\(error)")
            // Duplicates are named by the values of a group, a value that does not convert by itself.
            XCTAssertEqual(Set(refusals.compactMap { finding in finding.example.map { "\(finding.element ?? ""): \($0)" } }), ["code: code = 'x' in 2 objects", "n: 70000"], "\(error)")
        }
        try database.execute("UPDATE a SET code = 'z' || id, note = 'n', size = 'small', n = 1")
        try SQLiteMigrator(database: database).migrate(from: v1, to: v2)
        try assertLikeFresh(database, v2)
    }

    /// Unique values are checked as the migration writes them, not as the old rows hold them: a new
    /// unique attribute's default given to every row, a default filling the NULLs of a unique
    /// attribute that becomes required, a new compound constraint over a new column. A refusal
    /// is counted before anything changes, never an error of the copy halfway.
    func testUniqueValuesAreCheckedAsTheMigrationWritesThem() throws {
        let v1 = try schema("schema: S\nentities:\n  A:\n    attributes:\n      code: String\n      tag: { type: String?, unique: true }\n")
        let v2 = try schema("schema: S\nentities:\n  A:\n    attributes:\n      code: String\n      tag: { type: String, unique: true, default: t }\n      kind: { type: String, default: k }\n      slot: { type: Int?, unique: true, default: 1 }\n    unique: [[code, kind]]\n")
        let (database, url) = try store(v1, rows: "INSERT INTO a (id, code, tag) VALUES (1, 'x', NULL), (2, 'x', NULL), (3, 'y', 't');")
        try database.execute("PRAGMA wal_checkpoint")
        let before = try Data(contentsOf: url)
        XCTAssertThrowsError(try SQLiteMigrator(database: database).migrate(from: v1, to: v2)) { error in
            let refusals = (error as? MigrationRefused)?.report.refusals ?? []
            XCTAssertEqual(Set(refusals.map { "\($0.element ?? "")=\($0.rows)" }), ["tag=1", "slot=1", "code, kind=1"], "\(error)")
            XCTAssertEqual(Set(refusals.compactMap(\.example)), ["tag = 't' in 3 objects", "slot = 1 in 3 objects", "code = 'x', kind = 'k' in 2 objects"], "\(error)")
        }
        XCTAssertEqual(try Data(contentsOf: url), before, "a refused migration changes nothing")
        // One object: no value repeats.
        try database.execute("DELETE FROM a WHERE id > 1")
        try SQLiteMigrator(database: database).migrate(from: v1, to: v2)
        try assertLikeFresh(database, v2)
        XCTAssertEqual(try strings(database, "SELECT code, tag, kind, slot FROM a"), ["x|t|k|1"])
    }

    /// A store an earlier ModelGen made kept a `Decimal` default as spelled (`12.50`), and so do the
    /// rows that default filled; the app stores `12.5`, the text a unique index compares. Migrated,
    /// those values are written in their shortest digits, and two that are one `Decimal` refuse a
    /// unique attribute (counted, nothing changed).
    func testDecimalsAnEarlierDefaultSpelledOtherwiseAreWrittenAsTheAppStoresThem() throws {
        for unique in [false, true] {
            let yaml = "schema: S\nentities:\n  A:\n    attributes:\n      n: Int\n      d: { type: Decimal, default: \"12.50\"\(unique ? ", unique: true" : "") }\n"
            let new = try schema(yaml)
            XCTAssertEqual(new.entities[0].attributes[1].defaultValue, .decimal("12.5"))
            var old = new
            old.entities[0].attributes[1].defaultValue = .decimal("12.50")
            let (database, url) = try store(old, rows: "INSERT INTO a (id, n) VALUES (1, 1); INSERT INTO a (id, n, d) VALUES (2, 2, '7.5'), (3, 3, '\(unique ? "12.5" : "0.250")');")
            XCTAssertEqual(try strings(database, "SELECT d FROM a ORDER BY id"), ["12.50", "7.5", unique ? "12.5" : "0.250"])
            try database.execute("PRAGMA wal_checkpoint")
            let before = try Data(contentsOf: url)
            do {
                try SQLiteMigrator(database: database).migrate(from: old, to: new)
                XCTAssertFalse(unique, "12.50 and 12.5 stayed in a unique column")
                try assertLikeFresh(database, new)
                // The row the old default filled; a value written otherwise by plain SQL is healed too.
                XCTAssertEqual(try strings(database, "SELECT d FROM a ORDER BY id"), ["12.5", "7.5", "0.25"])
            } catch {
                XCTAssertTrue(unique, "\(error)")
                XCTAssertEqual((error as? MigrationRefused)?.report.refusals.map { "\($0.element ?? "")=\($0.rows)" }, ["d=1"], "\(error)")
                XCTAssertEqual(try Data(contentsOf: url), before, "a refused migration changes nothing")
            }
        }
    }

    func testWideningConvertsExactlyAndATypeChangeWithoutAConversionTakesOnlyNils() throws {
        let v1 = try schema("schema: S\nentities:\n  A:\n    attributes:\n      n: Int16\n      f: Float\n      k: Int\n")
        let v2 = try schema("schema: S\nentities:\n  A:\n    attributes:\n      n: Int\n      f: Double\n      k: String\n")
        let (database, _) = try store(v1, rows: "INSERT INTO a (id, n, f, k) VALUES (1, -32768, 1.5, 9223372036854775807);")
        try SQLiteMigrator(database: database).migrate(from: v1, to: v2)
        try assertLikeFresh(database, v2)
        XCTAssertEqual(try strings(database, "SELECT n, f, k, typeof(k) FROM a"), ["-32768|1.5|9223372036854775807|text"])
        // Int → Date has no conversion: refused while n holds a value (named), made once it holds none.
        let v3 = try schema("schema: S\nentities:\n  A:\n    attributes:\n      n: Date?\n      f: Double\n      k: String\n")
        XCTAssertThrowsError(try SQLiteMigrator(database: database).migrate(from: v2, to: v3)) { error in
            XCTAssertTrue("\(error)".contains("values of n that do not convert from Int to Date, which have no exact conversion"), "\(error)")
            XCTAssertEqual((error as? MigrationRefused)?.report.refusals.map(\.rows), [1], "\(error)")
            XCTAssertEqual((error as? MigrationRefused)?.report.refusals.first?.example, "-32768", "\(error)")
        }
        XCTAssertEqual(try strings(database, "SELECT n FROM a"), ["-32768"], "a refused migration changes nothing")
        let v2Optional = try schema("schema: S\nentities:\n  A:\n    attributes:\n      n: Int?\n      f: Double\n      k: String\n")
        try SQLiteMigrator(database: database).migrate(from: v2, to: v2Optional)
        try database.execute("UPDATE a SET n = NULL")
        try SQLiteMigrator(database: database).migrate(from: v2Optional, to: v3)
        try assertLikeFresh(database, v3)
        XCTAssertEqual(try strings(database, "SELECT n, f, k FROM a"), ["nil|1.5|9223372036854775807"])
    }

    func testTextBecomesAnIntegerOnlyWhenEveryValueIsThatIntegersSpellingInRange() throws {
        let v1 = try schema("schema: S\nentities:\n  A:\n    attributes:\n      n: String?\n")
        let v2 = try schema("schema: S\nentities:\n  A:\n    attributes:\n      n: Int16?\n")
        let (database, _) = try store(v1, rows: "INSERT INTO a (id, n) VALUES (1, '7'), (2, '007'), (3, '70000'), (4, 'x'), (5, NULL), (6, '-32768');")
        XCTAssertThrowsError(try SQLiteMigrator(database: database).migrate(from: v1, to: v2)) { error in
            XCTAssertEqual((error as? MigrationRefused)?.report.refusals.map(\.rows), [3], "'007', '70000' and 'x' do not convert exactly: \(error)")
        }
        try database.execute("DELETE FROM a WHERE id IN (2, 3, 4)")
        try SQLiteMigrator(database: database).migrate(from: v1, to: v2)
        try assertLikeFresh(database, v2)
        XCTAssertEqual(try strings(database, "SELECT n, typeof(n) FROM a ORDER BY id"), ["7|integer", "nil|null", "-32768|integer"])
    }

    func testAnEnumCaseRenamedWithOriginalNameCarriesItsRows() throws {
        let v1 = try schema("schema: S\nenums:\n  Diet: [plants, meat, both]\nentities:\n  A:\n    attributes:\n      diet: Diet\n")
        let v2 = try schema("schema: S\nenums:\n  Diet: [herbivorous, {carnivorous: {originalName: meat}}, both]\nentities:\n  A:\n    attributes:\n      diet: Diet\n")
        let (database, _) = try store(v1, rows: "INSERT INTO a (id, diet) VALUES (1, 'meat'), (2, 'both');")
        try SQLiteMigrator(database: database).migrate(from: v1, to: v2)
        try assertLikeFresh(database, v2)
        XCTAssertEqual(try strings(database, "SELECT diet FROM a ORDER BY id"), ["carnivorous", "both"])
        let (refusing, _) = try store(v1, rows: "INSERT INTO a (id, diet) VALUES (1, 'plants');")
        XCTAssertThrowsError(try SQLiteMigrator(database: refusing).migrate(from: v1, to: v2)) { error in
            XCTAssertTrue("\(error)".contains("a removed case (plants): 1"), "a case removed without originalName is refused while used: \(error)")
        }
    }

    func testAnOriginalNameComesBeforeTheSameNameAndHistoriesDecideBetweenClaims() throws {
        // v1 → v2: the entities, two attributes and two cases exchange names.
        let v1 = try schema("schema: S\nenums:\n  K: [a, b]\nentities:\n  Alpha:\n    attributes:\n      x: String\n      y: Int\n      k: K\n  Beta:\n    attributes:\n      z: String\n")
        let v2 = try schema("""
            schema: S
            enums:
              K: [{b: {originalName: a}}, {a: {originalName: b}}]
            entities:
              Beta:
                originalName: Alpha
                attributes:
                  y: { type: String, originalName: x }
                  x: { type: Int, originalName: y }
                  k: K
              Alpha:
                originalName: Beta
                attributes:
                  z: String
            """)
        let (database, _) = try store(v1, rows: "INSERT INTO alpha (id, x, y, k) VALUES (1, 'one', 1, 'a'); INSERT INTO beta (id, z) VALUES (7, 'seven');")
        let report = try SQLiteMigrator(database: database).migrate(from: v1, to: v2)
        XCTAssertTrue(report.dataLoss.isEmpty, "\(report)")
        try assertLikeFresh(database, v2)
        XCTAssertEqual(try strings(database, "SELECT id, y, x, k FROM beta"), ["1|one|1|b"])
        XCTAssertEqual(try strings(database, "SELECT id, z FROM alpha"), ["7|seven"])

        // v1 → v2 → v3: a title renamed, then the name taken by a new attribute.
        let n1 = try schema("schema: N\nentities:\n  Note:\n    attributes:\n      title: String\n")
        let n2 = try schema("schema: N\nentities:\n  Note:\n    attributes:\n      name: { type: String, originalName: title }\n")
        let n3 = try schema("schema: N\nentities:\n  Note:\n    attributes:\n      name: { type: String, originalName: title }\n      title: { type: String, default: new }\n")
        for (from, rows) in [(n1, "INSERT INTO note (id, title) VALUES (1, 'kept');"), (n2, "INSERT INTO note (id, name) VALUES (1, 'kept');")] {
            let (store, _) = try store(from, rows: rows)
            try SQLiteMigrator(database: store).migrate(from: from, to: n3)
            XCTAssertEqual(try strings(store, "SELECT name, title FROM note"), ["kept|new"])
        }
        let current = Set(MigrationPlanner.plan(from: n3, to: n3).operations.map(\.detail))
        XCTAssertTrue(current.isEmpty, "a store at the current version is at it: \(current)")

        // Two histories that end alike: the first continues the stored title, with a warning.
        let n4 = try schema("schema: N\nentities:\n  Note:\n    attributes:\n      name: { type: String, originalName: title }\n      heading: { type: String?, originalName: title }\n")
        let plan = MigrationPlanner.plan(from: n1, to: n4)
        XCTAssertEqual(plan.operations.map(\.detail), ["column title of note becomes name", "add column heading to note"])
        XCTAssertEqual(plan.warnings.map(\.element), ["name"])
        XCTAssertTrue(plan.warnings.first?.message.contains("'Note.name' and 'Note.heading' could each continue the store's 'Note.title'") == true, "\(plan.warnings)")
    }

    func testDeleteRuleChangesRebuildWithTheNewAction() throws {
        let v1 = try schema("schema: S\nentities:\n  P:\n    relationships:\n      cs: { type: \"[C]\", inverse: p }\n  C:\n    relationships:\n      p: { type: P?, inverse: cs }\n")
        let v2 = try schema("schema: S\nentities:\n  P:\n    relationships:\n      cs: { type: \"[C]\", inverse: p, deleteRule: cascade }\n  C:\n    relationships:\n      p: { type: P?, inverse: cs }\n")
        let (database, _) = try store(v1, rows: "INSERT INTO p (id) VALUES (1); INSERT INTO c (id, p_id) VALUES (1, 1);")
        try SQLiteMigrator(database: database).migrate(from: v1, to: v2)
        try assertLikeFresh(database, v2)
        XCTAssertEqual(try strings(database, "SELECT on_delete FROM pragma_foreign_key_list('c')"), ["CASCADE"])
    }

    func testLinksFollowWhenStorageMovesBetweenAKeyColumnAndAJoinTable() throws {
        let oneToMany = try schema("""
            schema: Library
            entities:
              Author:
                attributes:
                  name: String
                relationships:
                  books: { type: "[Book]", inverse: author, deleteRule: cascade }
              Book:
                attributes:
                  title: String
                relationships:
                  author: { type: Author?, inverse: books }
            """)
        let manyToMany = try schema("""
            schema: Library
            entities:
              Author:
                attributes:
                  name: String
                relationships:
                  books: { type: "[Book]", inverse: authors }
              Book:
                attributes:
                  title: String
                relationships:
                  authors: { type: "[Author]", inverse: books, originalName: author }
            """)
        let rows = "INSERT INTO author (id, name) VALUES (1, 'Le Guin'), (2, 'Banks'); INSERT INTO book (id, title, author_id) VALUES (1, 'Dispossessed', 1), (2, 'Excession', 2), (3, 'Lathe', 1), (4, 'Anonymous', NULL);"
        let (database, url) = try store(oneToMany, rows: rows)
        let report = try SQLiteMigrator(database: database).migrate(from: oneToMany, to: manyToMany)
        XCTAssertEqual(report.operations.filter { $0.kind == "moveRelationship" }.map(\.detail),
                       ["the links of Author.books move from column author_id of book to join table author_books"], report.description)
        XCTAssertTrue(report.dataLoss.isEmpty, "moved links are not lost: \(report)")
        try assertLikeFresh(database, manyToMany)
        XCTAssertEqual(try strings(database, "SELECT author_id, book_id FROM author_books ORDER BY book_id"), ["1|1", "2|2", "1|3"])

        // Back to one author per book: refused while a book has two, naming the count; then carried.
        try database.execute("INSERT INTO author_books (author_id, book_id) VALUES (2, 1), (2, 3)")
        try database.execute("PRAGMA wal_checkpoint")
        let before = try Data(contentsOf: url)
        XCTAssertThrowsError(try SQLiteMigrator(database: database).migrate(from: manyToMany, to: oneToMany, allowDataLoss: true)) { error in
            XCTAssertEqual((error as? MigrationRefused)?.report.refusals.map(\.rows), [2], "\(error)")
            XCTAssertTrue("\(error)".contains("Book objects with more than one author, which becomes a to-one relationship: 2"), "\(error)")
        }
        XCTAssertEqual(try Data(contentsOf: url), before, "a refused migration changes nothing")
        try database.execute("DELETE FROM author_books WHERE author_id = 2 AND book_id IN (1, 3)")
        try SQLiteMigrator(database: database).migrate(from: manyToMany, to: oneToMany)
        try assertLikeFresh(database, oneToMany)
        XCTAssertEqual(try strings(database, "SELECT id, author_id FROM book ORDER BY id"), ["1|1", "2|2", "3|1", "4|nil"])
    }

    // MARK: - modelgen migrate

    func testTheCommandMigratesRefusesChecksAndPrints() throws {
        let directory = try TestSupport.temporaryDirectory()
        let v1 = directory.appendingPathComponent("v1.yaml"), v2 = directory.appendingPathComponent("v2.yaml")
        try "schema: Shop\nentities:\n  Item:\n    attributes:\n      title: String\n      price: Double?\n".write(to: v1, atomically: true, encoding: .utf8)
        try """
            schema: Shop
            entities:
              Product:
                originalName: Item
                attributes:
                  name: { type: String, originalName: title }
                  cost: Double?
            """.write(to: v2, atomically: true, encoding: .utf8)
        let file = directory.appendingPathComponent("shop.sqlite").path
        let database = try SQLiteDatabase(path: file)
        try database.execute(DDLGenerator(schema: try schema(String(contentsOf: v1, encoding: .utf8)), dialect: .sqlite).render(header: "v1")
                             + "INSERT INTO item (id, title, price) VALUES (1, 'pen', 2.5), (2, 'ink', NULL);")
        let before = try Data(contentsOf: URL(fileURLWithPath: file))

        let noSchema = try TestSupport.modelgen("migrate", v2.path, "--database", file)
        XCTAssertEqual(noSchema.status, 2)
        XCTAssertTrue(noSchema.standardError.contains("records no schema; give the schema it was built from with --from"), noSchema.standardError)
        let refused = try TestSupport.modelgen("migrate", v2.path, "--database", file, "--from", v1.path)
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.standardError.contains("values in column price of item, which the new schema removes: 1"), refused.standardError)
        XCTAssertTrue(refused.standardError.contains("\(v2.path):7:7: warning: 'Product.cost' is added and 'price' removed, both Double: if this is a rename, did you mean 'originalName: price'?"),
                      "an undeclared rename is pointed out at the new element: \(refused.standardError)")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: file)), before, "a refused migration changes nothing")
        XCTAssertEqual(try TestSupport.modelgen("migrate", v2.path, "--database", file, "--check").status, 1)

        let printed = try TestSupport.modelgen("migrate", v1.path, v2.path, "--dialect", "sqlite")
        XCTAssertEqual(printed.status, 0, printed.standardError)
        XCTAssertTrue(printed.standardOutput.contains("ALTER TABLE item RENAME TO modelgen_rename_0;"), printed.standardOutput)
        let postgres = try TestSupport.modelgen("migrate", v1.path, v2.path, "--dialect", "postgresql")
        XCTAssertEqual(postgres.status, 0, postgres.standardError)
        XCTAssertTrue(postgres.standardOutput.contains("SELECT count(*) INTO modelgen_rows FROM item WHERE price IS NOT NULL; IF modelgen_rows > 0 THEN RAISE EXCEPTION 'migration refused, nothing was changed: %: % (would be lost"),
                      "data loss raises in the script unless allowed: \(postgres.standardOutput)")
        XCTAssertTrue(postgres.standardOutput.hasSuffix("COMMIT;\n"))
        XCTAssertEqual(try TestSupport.modelgen("migrate", v1.path, v2.path, "--dialect", "oracle").status, 2)

        let migrated = try TestSupport.modelgen("migrate", v2.path, "--database", file, "--from", v1.path, "--allow-data-loss", "--json")
        XCTAssertEqual(migrated.status, 0, migrated.standardError)
        XCTAssertTrue(migrated.standardOutput.contains("\"dataLoss\": [{\"entity\": \"Product\", \"attribute\": \"price\", \"rows\": 1,"), migrated.standardOutput)
        XCTAssertEqual(try strings(database, "SELECT id, name, cost FROM product ORDER BY id"), ["1|pen|nil", "2|ink|nil"])
        XCTAssertEqual(try TestSupport.modelgen("migrate", v2.path, "--database", file, "--check").status, 0)
        let again = try TestSupport.modelgen("migrate", v2.path, "--database", file)
        XCTAssertEqual(again.status, 0)
        XCTAssertEqual(again.standardOutput, "The store is at this schema already; nothing to do.\n")
    }

    /// A store whose floating-point columns an earlier ModelGen declared `REAL` (where SQLite
    /// stores -0.0 as 0) is stale to `--check` though it records the schema; a dry run says what
    /// the migration rebuilds and changes nothing; the migration rebuilds those tables untyped,
    /// values kept, and then there is nothing to do.
    func testTheCommandRebuildsTheTablesOfFloatingPointColumnsDeclaredREAL() throws {
        let directory = try TestSupport.temporaryDirectory()
        let yaml = "schema: Shop\nentities:\n  Item:\n    attributes:\n      title: String\n      price: Double?\n  Tag:\n    attributes:\n      name: String\n"
        let path = directory.appendingPathComponent("Shop.yaml")
        try yaml.write(to: path, atomically: true, encoding: .utf8)
        let shop = try schema(yaml)
        let file = directory.appendingPathComponent("shop.sqlite").path
        let database = try SQLiteDatabase(path: file)
        try database.execute(DDLGenerator(schema: shop, dialect: .sqlite, floatingPointColumns: .real).render(header: "an earlier ModelGen")
                             + "INSERT INTO item (id, title, price) VALUES (1, 'pen', 2.5), (2, 'ink', NULL); INSERT INTO tag (id, name) VALUES (1, 'new');")
        try SQLiteMigrator(database: database).recordSchema(shop.canonicalJSON)
        try database.execute("PRAGMA wal_checkpoint")
        let before = try Data(contentsOf: URL(fileURLWithPath: file))

        let check = try TestSupport.modelgen("migrate", path.path, "--database", file, "--check")
        XCTAssertEqual(check.status, 1)
        XCTAssertTrue(check.standardError.contains("declared its floating-point columns REAL"), check.standardError)
        let dryRun = try TestSupport.modelgen("migrate", path.path, "--database", file, "--dry-run")
        XCTAssertEqual(dryRun.status, 0, dryRun.standardError)
        XCTAssertTrue(dryRun.standardOutput.hasPrefix("Would rebuild the tables whose floating-point columns an earlier ModelGen declared REAL"), dryRun.standardOutput)
        XCTAssertTrue(dryRun.standardOutput.contains("rebuild table item") && !dryRun.standardOutput.contains("rebuild table tag"), dryRun.standardOutput)
        try database.execute("PRAGMA wal_checkpoint")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: file)), before, "a dry run changes nothing")

        let migrated = try TestSupport.modelgen("migrate", path.path, "--database", file)
        XCTAssertEqual(migrated.status, 0, migrated.standardError)
        XCTAssertEqual(try strings(database, "SELECT id, title, price, typeof(price) FROM item ORDER BY id"), ["1|pen|2.5|real", "2|ink|nil|null"])
        XCTAssertEqual(try database.scalar("SELECT count(*) FROM pragma_table_info('item') WHERE type = 'REAL'"), 0)
        try assertLikeFresh(database, shop)
        XCTAssertEqual(try TestSupport.modelgen("migrate", path.path, "--database", file, "--check").status, 0)
        XCTAssertEqual(try TestSupport.modelgen("migrate", path.path, "--database", file).standardOutput, "The store is at this schema already; nothing to do.\n")
    }

    // MARK: - Differential property test

    func testRandomEvolutionsMatchFreshStoresAndKeepTheData() throws {
        var refusals = 0, losses = 0, moves = 0, typeChanges = 0, caseChanges = 0, madeUnique = 0, madeRequired = 0, renamedByName = 0, transient = 0, steps = 0, passedNames = 0
        for seed in UInt64(1)...150 {
            var random = SeededRandom(seed: seed &* 104_729)
            var versions = [EvolvingSchema.random(&random)]
            for _ in 0..<3 { versions.append(versions.last!.evolved(&random)) }
            let schemas = try versions.map { try schema($0.yaml) }
            let rows = versions[0].rows(&random, schema: schemas[0])
            // Every third store as an earlier ModelGen made it: its REAL columns become untyped on the way.
            let earlier: SQLiteFloatingPointColumns = seed % 3 == 0 ? .real : .untyped
            let (database, url) = try store(schemas[0], rows: rows, floatingPointColumns: earlier)
            var snapshots = [try versions[0].snapshot(database, schema: schemas[0])]
            for step in 1..<schemas.count {
                let context = "seed \(seed), step \(step)\n\(versions[step - 1].yaml)\n→\n\(versions[step].yaml)"
                let expected = versions[step].expected(from: snapshots.last!, previous: versions[step - 1])
                let operations = MigrationPlanner.plan(from: schemas[step - 1], to: schemas[step]).operations
                moves += operations.filter { $0.kind == "moveRelationship" }.count
                typeChanges += operations.filter { $0.detail.contains("changes type") }.count
                let cases = { (version: EvolvingSchema) in version.enums.map { $0.cases.map { "\($0.id)=\($0.name)" } } }
                if cases(versions[step]).count == cases(versions[step - 1]).count, cases(versions[step]) != cases(versions[step - 1]) { caseChanges += 1 }
                // Attributes and groups of them that are unique, relationships that are required.
                let unique = { (version: EvolvingSchema) in Set(version.entities.flatMap { $0.attributes.filter(\.isUnique).map { [$0.id] } + $0.uniqueGroups }) }
                let required = { (version: EvolvingSchema) in Set(version.entities.flatMap(\.relationships).filter(\.isRequired).map(\.id)) }
                if expected != nil, !unique(versions[step]).subtracting(unique(versions[step - 1])).isEmpty { madeUnique += 1 }
                if expected != nil, !required(versions[step]).subtracting(required(versions[step - 1])).isEmpty { madeRequired += 1 }
                // Tables and columns named with `table:` and `column:`.
                let names = { (version: EvolvingSchema) in Set(version.entities.flatMap { entity in ["\(entity.id)=\(entity.table ?? "")"] + entity.attributes.map { "\($0.id)=\($0.column ?? "")" } }) }
                if expected != nil, !names(versions[step]).subtracting(names(versions[step - 1])).filter({ !$0.hasSuffix("=") }).isEmpty { renamedByName += 1 }
                let stored = { (version: EvolvingSchema) in Set(version.entities.flatMap { $0.attributes.map { "\($0.id)=\($0.isTransient)" } }) }
                if expected != nil, !stored(versions[step]).subtracting(stored(versions[step - 1])).filter({ !$0.hasSuffix("false") }).isEmpty { transient += 1 }
                if expected != nil, !versions[step].namesPassed(from: versions[step - 1]).isEmpty { passedNames += 1 }
                steps += 1
                /// The migration of this step, as a dry run or not, and whether the file stayed as it was.
                func migrate(allowDataLoss: Bool, dryRun: Bool) throws -> (Result<MigrationReport, Error>, unchanged: Bool) {
                    try database.execute("PRAGMA wal_checkpoint")
                    let before = try Data(contentsOf: url)
                    let result = Result { try SQLiteMigrator(database: database).migrate(from: schemas[step - 1], to: schemas[step], allowDataLoss: allowDataLoss, dryRun: dryRun) }
                    try database.execute("PRAGMA wal_checkpoint")
                    return (result, try Data(contentsOf: url) == before)
                }
                // A dry run changes nothing and reports what the run then does (or refuses the same way).
                let (preview, previewChangedNothing) = try migrate(allowDataLoss: true, dryRun: true)
                XCTAssertTrue(previewChangedNothing, "\(context): the dry run changed the file")
                guard let expected else {
                    // The links do not fit the new storage: refused, and the file is as it was.
                    let (refused, unchanged) = try migrate(allowDataLoss: true, dryRun: false)
                    guard case let .failure(error) = refused, let refusal = error as? MigrationRefused else { return XCTFail("\(context): \(refused)") }
                    XCTAssertTrue(unchanged, "\(context): a refused migration changes nothing")
                    guard case let .failure(previewError) = preview, let previewRefusal = previewError as? MigrationRefused else { return XCTFail("\(context): the dry run gave \(preview)") }
                    var previewReport = previewRefusal.report
                    XCTAssertTrue(previewReport.isDryRun && !previewReport.refusals.isEmpty, "\(context)")
                    previewReport.isDryRun = false
                    XCTAssertEqual(previewReport, refusal.report, "\(context): the dry run refused otherwise than the run")
                    refusals += 1
                    break
                }
                let lost = versions[step].expectedLoss(from: snapshots.last!, previous: versions[step - 1], previousSchema: schemas[step - 1])
                if lost > 0 {
                    // Without leave to lose data: refused, counting the same losses, and nothing changed.
                    let (refused, unchanged) = try migrate(allowDataLoss: false, dryRun: false)
                    guard case let .failure(error) = refused, let refusal = error as? MigrationRefused else { return XCTFail("\(context): \(refused)") }
                    XCTAssertTrue(unchanged, "\(context): a migration refused for its losses changed the file")
                    XCTAssertEqual(refusal.report.dataLoss.map(\.rows).reduce(0, +), lost, "\(context): the refusal counts other losses")
                }
                let report: MigrationReport
                do {
                    report = try SQLiteMigrator(database: database).migrate(from: schemas[step - 1], to: schemas[step], allowDataLoss: true)
                } catch {
                    XCTFail("\(context): \(error)")
                    break
                }
                var previewReport = try preview.get()
                XCTAssertTrue(previewReport.isDryRun)
                previewReport.isDryRun = false
                XCTAssertEqual(previewReport, report, "\(context): the dry run reported otherwise than the run")
                XCTAssertEqual(report.dataLoss.map(\.rows).reduce(0, +), lost, "\(context): the values reported lost \(report.dataLoss.map { "\($0.message): \($0.rows)" })")
                losses += lost
                try assertLikeFresh(database, schemas[step], context)
                let snapshot = try versions[step].snapshot(database, schema: schemas[step])
                XCTAssertEqual(snapshot, expected, "\(context): the kept values differ")
                snapshots.append(snapshot)
            }
            guard snapshots.count == schemas.count, let expected = versions.last!.expected(from: snapshots[0], previous: versions[0]) else { continue }
            // The first version straight to the last gives the same tables as step by step, and the
            // values the direct change keeps (step by step may differ only where an intermediate
            // version filled NULLs with a default or dropped a value).
            let (direct, _) = try store(schemas[0], rows: rows, floatingPointColumns: earlier)
            do {
                try SQLiteMigrator(database: direct).migrate(from: schemas[0], to: schemas.last!, allowDataLoss: true)
            } catch {
                XCTFail("seed \(seed): v1 → v\(schemas.count): \(error)\n\(versions.map(\.yaml).joined(separator: "→\n"))")
                continue
            }
            XCTAssertEqual(try SQLiteCatalog(direct), try SQLiteCatalog(database), "seed \(seed): v1 → v\(schemas.count) differs from step by step")
            XCTAssertEqual(try versions.last!.snapshot(direct, schema: schemas.last!), expected, "seed \(seed): v1 → v\(schemas.count) holds other values than it should")
        }
        // The generator must reach both outcomes, or the test proves less than it says.
        XCTAssertGreaterThan(moves, 5, "few evolutions moved links between storages")
        XCTAssertGreaterThan(typeChanges, 5, "few evolutions changed a type")
        XCTAssertGreaterThan(caseChanges, 5, "few evolutions added, renamed or removed an enum case")
        print("random evolutions: \(steps) steps, \(refusals) refused, \(losses) values lost, \(moves) moves, \(typeChanges) type changes, \(caseChanges) case changes, \(madeUnique) made unique, \(madeRequired) made required, \(renamedByName) named tables or columns, \(transient) made attributes transient, \(passedNames) passed names between elements")
        XCTAssertGreaterThan(madeUnique, 5, "few evolutions made attributes unique")
        XCTAssertGreaterThan(madeRequired, 5, "few evolutions made a to-one required")
        XCTAssertGreaterThan(renamedByName, 5, "few evolutions named a table or a column")
        XCTAssertGreaterThan(transient, 5, "few evolutions made an attribute transient")
        XCTAssertGreaterThan(passedNames, 5, "few evolutions passed a name from one element to another")
        XCTAssertGreaterThan(refusals, 0, "no evolution was refused")
        XCTAssertGreaterThan(losses, 100, "few evolutions lost values")
    }
}

/// The statements a connection runs from now on (`sqlite3_trace_v2`), as written.
private final class StatementLog {
    private(set) var statements: [String] = []

    init(_ database: SQLiteDatabase) {
        sqlite3_trace_v2(database.handle, UInt32(SQLITE_TRACE_STMT), { _, context, statement, _ in
            guard let context, let statement, let sql = sqlite3_sql(OpaquePointer(statement)) else { return 0 }
            Unmanaged<StatementLog>.fromOpaque(context).takeUnretainedValue().statements.append(String(cString: sql))
            return 0
        }, Unmanaged.passUnretained(self).toOpaque())
    }
}
