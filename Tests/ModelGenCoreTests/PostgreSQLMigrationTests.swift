import Foundation
import ModelGenCore
import ModelGenRuntime
import ModelGenTestSupport
import XCTest

/// Schema evolution on a real PostgreSQL server: the script `modelgen migrate OLD NEW --dialect
/// postgresql` prints, run through random sequences of evolutions of random schemas holding random
/// data, must leave a database whose catalog (columns, types, nullability, defaults, keys, foreign
/// keys and their actions, unique and check constraints, indexes, deletion functions) equals a fresh
/// one's by meaning, with every kept value; and a refused migration changes nothing.
final class PostgreSQLMigrationTests: XCTestCase {
    private func schema(_ yaml: String) throws -> ModelSchema {
        let compilation = TestSupport.compile(yaml, file: "Evolving.yaml")
        return try XCTUnwrap(compilation.schema, compilation.diagnostics.map(\.description).joined(separator: "\n"))
    }

    private func script(from old: ModelSchema, to new: ModelSchema, allowDataLoss: Bool) -> String {
        let statements = MigrationPlanner.postgresqlStatements(from: old, to: new, allowDataLoss: allowDataLoss)
        return (["BEGIN;"] + statements + PostgreSQLDeletionFunctions(schema: new, plans: DeletionPlanner(schema: new).plans()).functions() + ["COMMIT;"])
            .joined(separator: "\n")
    }

    func testRandomEvolutionsMatchFreshDatabasesAndKeepTheData() throws {
        let url = try PostgresServer.requireURL()
        for seed in UInt64(1)...20 {
            var random = SeededRandom(seed: seed &* 104_729)
            var versions = [EvolvingSchema.random(&random)]
            for _ in 0..<3 { versions.append(versions.last!.evolved(&random)) }
            let schemas = try versions.map { try schema($0.yaml) }
            let rows = versions[0].rows(&random, schema: schemas[0], dialect: .postgresql)
            // Keys may point forward: rows go in with foreign-key triggers off, as a restore does.
            try PostgresServer.psql(url, schema: "mg_migrated", PostgreSQLDeletionFunctions(schema: schemas[0], plans: DeletionPlanner(schema: schemas[0]).plans())
                .render(after: DDLGenerator(schema: schemas[0], dialect: .postgresql).render(header: "v1"))
                + "\nSET session_replication_role = replica;\n" + rows + "\nSET session_replication_role = DEFAULT;\n")
            var snapshot = try versions[0].postgresSnapshot(url, namespace: "mg_migrated", schema: schemas[0])
            for step in 1..<schemas.count {
                let context = "seed \(seed), step \(step)\n\(versions[step - 1].yaml)\n→\n\(versions[step].yaml)"
                let migration = "SET search_path TO mg_migrated;\n" + script(from: schemas[step - 1], to: schemas[step], allowDataLoss: true)
                guard let expected = versions[step].expected(from: snapshot, previous: versions[step - 1]) else {
                    // The links do not fit the new storage: the script raises and changes nothing.
                    let before = try PostgresServer.catalog(url, "mg_migrated")
                    XCTAssertThrowsError(try PostgresServer.psqlRaw(url, migration), context) { error in
                        XCTAssertTrue("\(error)".contains("migration refused, nothing was changed"), "\(context): \(error)")
                    }
                    XCTAssertEqual(try PostgresServer.catalog(url, "mg_migrated"), before, context)
                    XCTAssertEqual(try versions[step - 1].postgresSnapshot(url, namespace: "mg_migrated", schema: schemas[step - 1]), snapshot, context)
                    break
                }
                do {
                    try PostgresServer.psqlRaw(url, migration)
                } catch {
                    XCTFail("\(context): \(error)")
                    break
                }
                try PostgresServer.psql(url, schema: "mg_fresh", PostgreSQLDeletionFunctions(schema: schemas[step], plans: DeletionPlanner(schema: schemas[step]).plans())
                    .render(after: DDLGenerator(schema: schemas[step], dialect: .postgresql).render(header: "fresh")))
                let migrated = try PostgresServer.catalog(url, "mg_migrated"), fresh = try PostgresServer.catalog(url, "mg_fresh")
                XCTAssertEqual(migrated, fresh, "seed \(seed), step \(step): the migrated database differs from a fresh one\n\(versions[step].yaml)")
                let next = try versions[step].postgresSnapshot(url, namespace: "mg_migrated", schema: schemas[step])
                XCTAssertEqual(next, expected, "\(context): the kept values differ")
                snapshot = next
            }
        }
    }

    func testARefusedMigrationRaisesAndChangesNothing() throws {
        let url = try PostgresServer.requireURL()
        let v1 = try schema("schema: S\nentities:\n  A:\n    attributes:\n      n: Int\n      note: String?\n")
        let v2 = try schema("schema: S\nentities:\n  A:\n    attributes:\n      n: Int\n      note: String\n      code: { type: String, unique: true, default: x }\n")
        try PostgresServer.psql(url, schema: "mg_refused", DDLGenerator(schema: v1, dialect: .postgresql).render(header: "v1") + "\nINSERT INTO a (id, n, note) VALUES (1, 1, NULL), (2, 2, 'y');")
        XCTAssertThrowsError(try PostgresServer.psqlRaw(url, "SET search_path TO mg_refused;\n" + script(from: v1, to: v2, allowDataLoss: false))) { error in
            XCTAssertTrue("\(error)".contains("migration refused, nothing was changed: A objects whose note is nil, which becomes required (give it a default): 1"), "\(error)")
        }
        XCTAssertEqual(try PostgresServer.psqlRaw(url, "SELECT count(*) FROM information_schema.columns WHERE table_schema = 'mg_refused' AND table_name = 'a';").trimmingCharacters(in: .whitespacesAndNewlines), "3")
    }

    /// A refusal names what is to blame: the first group of duplicates by its values (SPEC §6), the
    /// first value that does not convert.
    func testARefusalNamesTheFirstDuplicateGroupAndTheFirstValueThatDoesNotConvert() throws {
        let url = try PostgresServer.requireURL()
        let v1 = try schema("schema: S\nentities:\n  A:\n    attributes:\n      code: String?\n      n: Int\n")
        let v2 = try schema("schema: S\nentities:\n  A:\n    attributes:\n      code: { type: String?, unique: true }\n      n: Int16\n    unique: [[code, n]]\n")
        try PostgresServer.psql(url, schema: "mg_named", DDLGenerator(schema: v1, dialect: .postgresql).render(header: "v1")
            + "\nINSERT INTO a (id, code, n) VALUES (1, 'it''s', 70000), (2, 'it''s', 70000), (3, 'b', 1), (4, 'b', 2), (5, NULL, 40000), (6, NULL, 40000);")
        func refusal(_ script: String) -> String {
            do {
                try PostgresServer.psqlRaw(url, "SET search_path TO mg_named;\n" + script)
                return "no refusal"
            } catch {
                return "\(error)"
            }
        }
        let script = self.script(from: v1, to: v2, allowDataLoss: false)
        XCTAssertTrue(refusal(script).contains("which becomes unique (NULLs are not duplicates): 2 (for example code = 'b' in 2 objects)"), refusal(script))
        try PostgresServer.psqlRaw(url, "UPDATE mg_named.a SET code = 'c' || id WHERE code = 'b';")
        XCTAssertTrue(refusal(script).contains("which becomes unique (NULLs are not duplicates): 1 (for example code = 'it''s' in 2 objects)"), refusal(script))
        try PostgresServer.psqlRaw(url, "UPDATE mg_named.a SET code = 'd' || id;")
        XCTAssertTrue(refusal(script).contains("values of n that do not convert from Int to Int16 exactly: 4 (for example '40000')"), refusal(script))
    }

    /// Unique values are checked as the migration writes them (a default given to every row, a
    /// default filling NULLs, a new compound constraint over a new column): refused before
    /// anything changes, with the first group named, each in turn as the data is mended.
    func testUniqueValuesAreCheckedAsTheMigrationWritesThem() throws {
        let url = try PostgresServer.requireURL()
        let v1 = try schema("schema: S\nentities:\n  A:\n    attributes:\n      code: String\n      tag: { type: String?, unique: true }\n")
        let v2 = try schema("schema: S\nentities:\n  A:\n    attributes:\n      code: String\n      tag: { type: String, unique: true, default: t }\n      kind: { type: String, default: k }\n      slot: { type: Int?, unique: true, default: 1 }\n    unique: [[code, kind]]\n")
        try PostgresServer.psql(url, schema: "mg_unique_values", DDLGenerator(schema: v1, dialect: .postgresql).render(header: "v1")
            + "\nINSERT INTO a (id, code, tag) VALUES (1, 'x', NULL), (2, 'x', NULL), (3, 'y', 't');")
        let script = self.script(from: v1, to: v2, allowDataLoss: false)
        func refusal() -> String {
            do {
                try PostgresServer.psqlRaw(url, "SET search_path TO mg_unique_values;\n" + script)
                return "no refusal"
            } catch {
                return "\(error)"
            }
        }
        let given = "which is unique, with the values the migration gives them (a new attribute's default, a default filling NULLs, a converted value; NULLs are not duplicates)"
        XCTAssertTrue(refusal().contains("sharing a value of tag, \(given): 1 (for example tag = 't' in 3 objects)"), refusal())
        try PostgresServer.psqlRaw(url, "UPDATE mg_unique_values.a SET tag = 'u' || id;")
        XCTAssertTrue(refusal().contains("sharing a value of slot, \(given): 1 (for example slot = '1' in 3 objects)"), refusal())
        try PostgresServer.psqlRaw(url, "DELETE FROM mg_unique_values.a WHERE id = 3;")
        XCTAssertTrue(refusal().contains("sharing a value of slot, \(given): 1 (for example slot = '1' in 2 objects)"), refusal())
        XCTAssertEqual(try PostgresServer.psqlRaw(url, "SELECT count(*) FROM information_schema.columns WHERE table_schema = 'mg_unique_values' AND table_name = 'a';")
            .trimmingCharacters(in: .whitespacesAndNewlines), "3", "a refused migration changes nothing")
        try PostgresServer.psqlRaw(url, "DELETE FROM mg_unique_values.a WHERE id = 2;")
        XCTAssertEqual(refusal(), "no refusal")
        XCTAssertEqual(try PostgresServer.psqlRaw(url, "SELECT code, tag, kind, slot FROM mg_unique_values.a;").trimmingCharacters(in: .whitespacesAndNewlines), "x|u1|k|1")
    }

    /// A compound unique constraint whose columns are renamed (`column:`, an attribute's
    /// `originalName`) follows them, as PostgreSQL renames it with them: it is not added again.
    func testACompoundUniqueConstraintFollowsRenamedColumns() throws {
        let url = try PostgresServer.requireURL()
        let v1 = try schema("schema: S\nentities:\n  A:\n    attributes:\n      code: String\n      n: Int\n      k: Int\n    unique: [[code, n], [n, k]]\n")
        let v2 = try schema("schema: S\nentities:\n  A:\n    attributes:\n      code: { type: String, column: label }\n      m: { type: Int, originalName: n }\n      k: Int\n    unique: [[code, m], [m, k]]\n")
        try PostgresServer.psql(url, schema: "mg_compound", DDLGenerator(schema: v1, dialect: .postgresql).render(header: "v1") + "\nINSERT INTO a (id, code, n, k) VALUES (1, 'x', 1, 1), (2, 'x', 2, 1);")
        XCTAssertFalse(MigrationPlanner.plan(from: v1, to: v2).operations.contains { $0.detail.hasPrefix("add UNIQUE") }, "a renamed constraint is no new one")
        try PostgresServer.psqlRaw(url, "SET search_path TO mg_compound;\n" + script(from: v1, to: v2, allowDataLoss: false))
        try PostgresServer.psql(url, schema: "mg_compound_fresh", PostgreSQLDeletionFunctions(schema: v2, plans: DeletionPlanner(schema: v2).plans())
            .render(after: DDLGenerator(schema: v2, dialect: .postgresql).render(header: "fresh")))
        XCTAssertEqual(try PostgresServer.catalog(url, "mg_compound"), try PostgresServer.catalog(url, "mg_compound_fresh"))
    }

    /// An index the new version has too stays as it is (renamed when its name follows a rename),
    /// rather than being dropped and built again: on a large database that would take as long as
    /// copying the table, blocking writes.
    func testIndexesAMigrationDoesNotChangeAreKeptNotRebuilt() throws {
        let url = try PostgresServer.requireURL()
        let v1 = try schema("schema: S\nentities:\n  A:\n    attributes:\n      code: { type: String, indexed: true }\n    relationships:\n      bs: { type: \"[B]\", inverse: a }\n  B:\n    relationships:\n      a: { type: A?, inverse: bs }\n")
        let added = try schema("schema: S\nentities:\n  A:\n    attributes:\n      code: { type: String, indexed: true }\n      note: String?\n    relationships:\n      bs: { type: \"[B]\", inverse: a }\n  B:\n    relationships:\n      a: { type: A?, inverse: bs }\n")
        let renamed = try schema("schema: S\nentities:\n  A:\n    attributes:\n      label: { type: String, indexed: true, originalName: code }\n      note: String?\n    relationships:\n      bs: { type: \"[C]\", inverse: a }\n  C:\n    originalName: B\n    relationships:\n      a: { type: A?, inverse: bs }\n")
        XCTAssertFalse(MigrationPlanner.postgresqlStatements(from: v1, to: added, allowDataLoss: false).contains { $0.contains("INDEX") },
                       "adding a nullable attribute touches no index")
        let renames = MigrationPlanner.postgresqlStatements(from: added, to: renamed, allowDataLoss: false)
        XCTAssertFalse(renames.contains { $0.contains("CREATE INDEX") || $0.contains("DROP INDEX") }, renames.joined(separator: "\n"))
        XCTAssertTrue(renames.contains { $0.hasPrefix("ALTER INDEX") && $0.hasSuffix("RENAME TO a_label_idx;") }, renames.joined(separator: "\n"))
        try PostgresServer.psql(url, schema: "mg_indexes", DDLGenerator(schema: v1, dialect: .postgresql).render(header: "v1")
            + "\nINSERT INTO a (id, code) VALUES (1, 'x'), (2, 'y');\nINSERT INTO b (id, a_id) VALUES (1, 1);")
        func indexes() throws -> String {
            try PostgresServer.psqlRaw(url, "SELECT string_agg(c.oid::text, ',' ORDER BY c.oid) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'mg_indexes' AND c.relkind = 'i' AND c.relname LIKE '%_idx';")
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let before = try indexes()
        try PostgresServer.psqlRaw(url, "SET search_path TO mg_indexes;\n" + script(from: v1, to: added, allowDataLoss: false))
        try PostgresServer.psqlRaw(url, "SET search_path TO mg_indexes;\n" + script(from: added, to: renamed, allowDataLoss: false))
        XCTAssertEqual(try indexes(), before, "the same two indexes, not new ones")
        try PostgresServer.psql(url, schema: "mg_indexes_fresh", DDLGenerator(schema: renamed, dialect: .postgresql).render(header: "fresh"))
        XCTAssertEqual(try PostgresServer.catalog(url, "mg_indexes").filter { !$0.hasPrefix("function") }, try PostgresServer.catalog(url, "mg_indexes_fresh").filter { !$0.hasPrefix("function") })
    }

    func testTextBecomesAnIntegerOnlyWhenEveryValueIsThatIntegersSpellingInRange() throws {
        let url = try PostgresServer.requireURL()
        let v1 = try schema("schema: S\nentities:\n  A:\n    attributes:\n      n: String?\n")
        let v2 = try schema("schema: S\nentities:\n  A:\n    attributes:\n      n: Int16?\n")
        try PostgresServer.psql(url, schema: "mg_text", DDLGenerator(schema: v1, dialect: .postgresql).render(header: "v1")
            + "\nINSERT INTO a (id, n) VALUES (1, '7'), (2, '007'), (3, '70000'), (4, 'x'), (5, NULL), (6, '-32768');")
        XCTAssertThrowsError(try PostgresServer.psqlRaw(url, "SET search_path TO mg_text;\n" + script(from: v1, to: v2, allowDataLoss: false))) { error in
            XCTAssertTrue("\(error)".contains("values of n that do not convert from String to Int16 exactly: 3"), "'007', '70000' and 'x' do not convert exactly: \(error)")
        }
        try PostgresServer.psqlRaw(url, "DELETE FROM mg_text.a WHERE id IN (2, 3, 4);")
        try PostgresServer.psqlRaw(url, "SET search_path TO mg_text;\n" + script(from: v1, to: v2, allowDataLoss: false))
        XCTAssertEqual(try PostgresServer.psqlRaw(url, "SELECT string_agg(coalesce(n::text, 'nil') || ':' || pg_typeof(n)::text, ',' ORDER BY id) FROM mg_text.a;")
            .trimmingCharacters(in: .whitespacesAndNewlines), "7:smallint,nil:smallint,-32768:smallint")
    }

    func testAnEnumCaseRenamedWithOriginalNameCarriesItsRows() throws {
        let url = try PostgresServer.requireURL()
        let v1 = try schema("schema: S\nenums:\n  Diet: [plants, meat]\nentities:\n  A:\n    attributes:\n      diet: Diet\n")
        let v2 = try schema("schema: S\nenums:\n  Diet: [plants, {carnivorous: {originalName: meat}}]\nentities:\n  A:\n    attributes:\n      diet: Diet\n")
        try PostgresServer.psql(url, schema: "mg_enum", DDLGenerator(schema: v1, dialect: .postgresql).render(header: "v1") + "\nINSERT INTO a (id, diet) VALUES (1, 'meat'), (2, 'plants');")
        try PostgresServer.psqlRaw(url, "SET search_path TO mg_enum;\n" + script(from: v1, to: v2, allowDataLoss: false))
        XCTAssertEqual(try PostgresServer.psqlRaw(url, "SELECT string_agg(diet, ',' ORDER BY id) FROM mg_enum.a;").trimmingCharacters(in: .whitespacesAndNewlines), "carnivorous,plants")
        try PostgresServer.psql(url, schema: "mg_enum_fresh", DDLGenerator(schema: v2, dialect: .postgresql).render(header: "v2"))
        XCTAssertEqual(try PostgresServer.catalog(url, "mg_enum").filter { !$0.hasPrefix("function") }, try PostgresServer.catalog(url, "mg_enum_fresh").filter { !$0.hasPrefix("function") })
    }
}

