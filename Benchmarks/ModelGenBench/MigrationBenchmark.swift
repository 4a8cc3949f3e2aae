import FitIQWorkload
import Foundation
import ModelGenCore
import ModelGenRuntime

/// Migrating a FitIQ store (issue 11): a change that rebuilds the profile table and one child
/// table (an attribute in each renamed and made optional, which `ALTER TABLE` cannot do) beside
/// copying those two tables with one `INSERT … SELECT` each, in the same run; and adding a
/// nullable column at two sizes (it must not grow with the rows).
enum MigrationBenchmark {
    static func run(sizes: [Int], repetitions: Int, schemaPath: String, build: (Int) throws -> URL, directory: URL) throws {
        guard let yaml = FileManager.default.contents(atPath: schemaPath).map({ String(decoding: $0, as: UTF8.self) }) else {
            fatalError("cannot read \(schemaPath): run from the repository root")
        }
        func schema(_ text: String) -> ModelSchema {
            let (schema, diagnostics) = ModelGen.load(path: "FitIQ.yaml", bytes: Array(text.utf8))
            guard let schema else { fatalError("\(diagnostics)") }
            return schema
        }
        let v1 = schema(yaml)
        let renamed = schema(yaml
            .replacingOccurrences(of: "      name: String\n      createdAt: Date", with: "      displayName: { type: String?, originalName: name }\n      createdAt: Date")
            .replacingOccurrences(of: "      metric: String\n", with: "      kind: { type: String?, originalName: metric }\n"))
        let widened = schema(yaml.replacingOccurrences(of: "      name: String\n      createdAt: Date", with: "      name: String\n      nickname: String?\n      createdAt: Date"))
        print("Migrating FitIQ (\(FitIQWorkload.rowsPerProfile) rows per profile): rebuild = an attribute renamed and made optional in sd_user_profile and")
        print("sd_progress_entry, both tables rebuilt; copy = the same two tables copied by one INSERT … SELECT each (the baseline);")
        print("add column = a nullable attribute added to sd_user_profile. Median of \(repetitions), a fresh copy each run.")
        print(pad(["N", "rows", "copy s", "rebuild s", "ratio", "add column s"], [7, 9, 9, 10, 7, 13]))
        for profiles in sizes {
            let base = try build(profiles)
            var copies: [Double] = [], rebuilds: [Double] = [], additions: [Double] = []
            for _ in 0..<repetitions {
                for step in 0..<3 {
                    let path = directory.appendingPathComponent("migrate.sqlite").path
                    for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: path + suffix) }
                    try FileManager.default.copyItem(atPath: base.path, toPath: path)
                    let database = try SQLiteDatabase(path: path)
                    try SQLiteMigrator(database: database).recordSchema(v1.canonicalJSON)
                    let start = DispatchTime.now()
                    switch step {
                    case 0:
                        try database.execute("""
                            BEGIN IMMEDIATE;
                            CREATE TABLE copy_profile AS SELECT * FROM sd_user_profile WHERE 0;
                            INSERT INTO copy_profile SELECT * FROM sd_user_profile;
                            CREATE TABLE copy_progress AS SELECT * FROM sd_progress_entry WHERE 0;
                            INSERT INTO copy_progress SELECT * FROM sd_progress_entry;
                            COMMIT;
                            """)
                        copies.append(Measure.elapsed(since: start))
                    case 1:
                        try SQLiteMigrator(database: database).migrate(from: v1, to: renamed)
                        rebuilds.append(Measure.elapsed(since: start))
                        let kept = try database.scalar("SELECT count(*) FROM sd_progress_entry WHERE kind IS NOT NULL")
                        precondition(kept == Int64(profiles * 100), "the renamed column lost values")
                    default:
                        try SQLiteMigrator(database: database).migrate(from: v1, to: widened)
                        additions.append(Measure.elapsed(since: start))
                    }
                }
            }
            let (copy, rebuild, addition) = (median(copies), median(rebuilds), median(additions))
            print(pad([String(profiles), String(profiles * FitIQWorkload.rowsPerProfile), format(copy), format(rebuild), String(format: "%.2f", rebuild / copy), format(addition)],
                      [7, 9, 9, 10, 7, 13]))
        }
    }
}
