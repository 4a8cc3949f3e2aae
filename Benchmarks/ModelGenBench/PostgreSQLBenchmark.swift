import FitIQWorkload
import Foundation
import ModelGenCore

/// Safe deletion on a PostgreSQL server (issue 13), through `psql` with `\timing` (server round
/// trip of one statement, each in a transaction rolled back so every repetition starts from the
/// same data): the generated `<table>_safe_delete` functions beside PostgreSQL's own `ON DELETE
/// CASCADE` on the FitIQ scenarios, and beside a recursive CTE written by hand on cascade chains
/// and a wide tree. Needs `--postgres URL` (a database the benchmark may create a schema in).
enum PostgreSQLBenchmark {
    static func run(url: String, profiles: [Int], chains: [Int], treeSize: Int, repetitions: Int, fitIQPath: String, bookshelfPath: String) throws {
        let fitIQ = try schema(at: fitIQPath)
        print("PostgreSQL: FitIQ, the generated function beside PostgreSQL's own ON DELETE CASCADE (DELETE on the root")
        print("table), median of \(repetitions) after \(warmUpRuns) untimed runs in the same session, each run rolled back;")
        print("A = one profile (another each run, scattered over the ids: an app deletes each profile once), B = all,")
        print("C = even ids, D = one in 25 (40 of 1,000), scattered: past the 1,000 sleep sessions the ids are held in arrays for,")
        print("so the function collects into temporary tables. rows/s: the rows the function deleted (its report's total,")
        print("checked against the workload's) per second.")
        print(pad(["N", "scenario", "cascade s", "function s", "ratio", "rows/s"], [7, 9, 10, 11, 7, 10]))
        for size in profiles {
            let setup = prepare(fitIQ) + fitIQRows(profiles: size) + "ANALYZE;\n"
            // Each scenario: its name, the function's ids and the cascade's condition for run n, and
            // the profiles it deletes.
            let scenarios: [(String, (Int) -> String, (Int) -> String, Int)] = [
                ("A", { "ARRAY[\(scattered($0, size))]::bigint[]" }, { "id = \(scattered($0, size))" }, 1),
                ("B", { _ in "NULL" }, { _ in "TRUE" }, size),
                ("C", { _ in "ARRAY(SELECT id FROM sd_user_profile WHERE id % 2 = 0)" }, { _ in "id % 2 = 0" }, size / 2),
                ("D", { "ARRAY(\(oneIn25($0, size)))::bigint[]" }, { "id IN (\(oneIn25($0, size)))" }, size / 25),
            ].filter { $0.3 > 0 }
            for (name, ids, condition, deletedProfiles) in scenarios {
                let rows = deletedProfiles * FitIQWorkload.rowsPerProfile
                let times = try compare(url, setup: setup, repetitions: repetitions, deleting: rows,
                                        { "DELETE FROM sd_user_profile WHERE \(condition($0));" },
                                        { "SELECT \(totalDeleted) FROM sd_user_profile_safe_delete(\(ids($0))) AS report;" })
                print(pad([String(size), name, format(times.0), format(times.1), String(format: "%.2f", times.1 / times.0), String(Int(Double(rows) / times.1))],
                          [7, 9, 10, 11, 7, 10]))
            }
        }
        let bookshelf = try schema(at: bookshelfPath)
        print("PostgreSQL: deleting the root of N folders (Folder.children, cascade), the function beside a recursive CTE")
        print("(WITH RECURSIVE … DELETE), median of \(repetitions) after \(warmUpRuns) untimed runs, each run rolled back.")
        print(pad(["shape", "N", "CTE s", "function s", "ratio", "µs per folder", "rows/s"], [7, 8, 9, 11, 7, 14, 10]))
        let shapes = chains.map { ("chain", $0, "NULLIF(g - 1, 0)") } + [("tree", treeSize, "CASE WHEN g = 1 THEN NULL ELSE (g - 2) / 10 + 1 END")]
        for (shape, size, parent) in shapes {
            let setup = prepare(bookshelf) + "INSERT INTO folder (id, name, parent_id) SELECT g, 'f', \(parent) FROM generate_series(1, \(size)) AS g;\nANALYZE;\n"
            let times = try compare(url, setup: setup, repetitions: repetitions, deleting: size,
                                    { _ in "WITH RECURSIVE doomed(id) AS (SELECT 1::bigint UNION ALL SELECT f.id FROM folder AS f JOIN doomed ON f.parent_id = doomed.id) DELETE FROM folder WHERE id IN (SELECT id FROM doomed);" },
                                    { _ in "SELECT \(totalDeleted) FROM folder_safe_delete(ARRAY[1]::bigint[]) AS report;" })
            print(pad([shape, String(size), format(times.0), format(times.1), String(format: "%.2f", times.1 / times.0), String(format: "%.1f", times.1 / Double(size) * 1e6),
                       String(Int(Double(size) / times.1))], [7, 8, 9, 11, 7, 14, 10]))
        }
    }

    private static func schema(at path: String) throws -> ModelSchema {
        guard let bytes = FileManager.default.contents(atPath: path) else { fatalError("cannot read \(path): run from the repository root") }
        let (schema, diagnostics) = ModelGen.load(path: path, bytes: Array(bytes))
        guard let schema else { fatalError("\(diagnostics)") }
        return schema
    }

    /// A fresh schema `modelgen_bench` holding the tables and the deletion functions.
    private static func prepare(_ schema: ModelSchema) -> String {
        let ddl = DDLGenerator(schema: schema, dialect: .postgresql).render(header: "benchmark")
        let functions = PostgreSQLDeletionFunctions(schema: schema, plans: DeletionPlanner(schema: schema).plans()).render(after: ddl)
        return "SET client_min_messages = warning;\nDROP SCHEMA IF EXISTS modelgen_bench CASCADE;\nCREATE SCHEMA modelgen_bench;\nSET search_path TO modelgen_bench;\n" + functions
    }

    /// The FitIQ workload (`FitIQWorkload`) in PostgreSQL's types.
    private static func fitIQRows(profiles: Int) -> String {
        func series(_ count: Int) -> String { "FROM generate_series(1, \(count)) AS g" }
        return """
        INSERT INTO sd_user_profile (id, user_id, name, created_at) SELECT g, 'user' || g, 'Name', to_timestamp(0) \(series(profiles));
        INSERT INTO sd_dietary_and_activity_preferences (id, daily_calorie_goal, user_profile_id) SELECT g, 2000, g \(series(profiles));
        INSERT INTO sd_progress_entry (id, user_id, metric, value, date, user_profile_id) SELECT g, 'u', 'weight', 70.5, to_timestamp(g), (g - 1) % \(profiles) + 1 \(series(profiles * 100));
        INSERT INTO sd_sleep_session (id, start_date, end_date, user_profile_id) SELECT g, to_timestamp(g), to_timestamp(g + 1), (g - 1) % \(profiles) + 1 \(series(profiles * 50));
        INSERT INTO sd_sleep_stage (id, stage, start_date, end_date, session_id) SELECT g, 'deep', to_timestamp(g), to_timestamp(g + 1), (g - 1) % \(profiles * 50) + 1 \(series(profiles * 500));
        INSERT INTO sd_activity_snapshot (id, date, steps, active_calories, user_profile_id) SELECT g, to_timestamp(g), 1000, 55.5, (g - 1) % \(profiles) + 1 \(series(profiles * 100));
        INSERT INTO sd_physical_attribute (id, kind, value, recorded_at, user_profile_id) SELECT g, 'height', 180, to_timestamp(g), (g - 1) % \(profiles) + 1 \(series(profiles * 10));
        INSERT INTO sd_outbox_event (id, event_type, payload, created_at) SELECT g, 'sync', '\\x00'::bytea, to_timestamp(g) \(series(FitIQWorkload.outboxEvents));

        """
    }

    /// The id of run `run` of `size` objects: runs take ids 7,919 apart (a prime), so that each run
    /// deletes rows of its own, not the neighbours of the last run's.
    private static func scattered(_ run: Int, _ size: Int) -> Int { run * 7_919 % size + 1 }

    /// A query of `size / 25` ids of `size`, 25 apart, others for each of 25 runs in turn.
    private static func oneIn25(_ run: Int, _ size: Int) -> String {
        "SELECT g * 25 - \(run % 25) FROM generate_series(1, \(size / 25)) AS g"
    }

    /// Untimed runs of each statement before the timed ones: a server calls them again and again on
    /// its pooled connections, and a session plans a PL/pgSQL function's statements anew on their
    /// first five runs (PostgreSQL's plan cache, as for prepared statements), a generic plan after.
    private static let warmUpRuns = 5

    /// The rows a deletion function's report (`report`) says it deleted, as SQL.
    private static let totalDeleted = "(SELECT sum(value::bigint) FROM jsonb_each_text(report -> 'deleted'))"

    /// Medians of the two statements' times, run alternately, each in a transaction rolled back,
    /// after `warmUpRuns` of each. Each statement is made for its run's number (0, 1, …, the
    /// baseline's even and the subject's odd), so that a statement may pick different rows each run.
    /// The subject prints the rows it deleted (`totalDeleted`), which must be `rows` every run: a
    /// function that deleted too little, or too much, stops the benchmark.
    private static func compare(_ url: String, setup: String, repetitions: Int, deleting rows: Int,
                                _ baseline: (Int) -> String, _ subject: (Int) -> String) throws -> (Double, Double) {
        var script = setup
        for run in 0..<(warmUpRuns + repetitions) {
            if run == warmUpRuns { script += "\\timing on\n" }
            for statement in [baseline(2 * run), subject(2 * run + 1)] { script += "BEGIN;\n\(statement)\nROLLBACK;\n" }
        }
        let file = workDirectory.appendingPathComponent("postgres-bench.sql")
        try script.write(to: file, atomically: true, encoding: .utf8)
        let (output, _, status) = try launch(URL(fileURLWithPath: "/usr/bin/env"), ["psql", url, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-f", file.path])
        precondition(status == 0, "psql failed")
        // Three timed statements per run (BEGIN, the statement, ROLLBACK): the middle one counts.
        let times = output.split(separator: "\n").compactMap { line -> Double? in
            guard line.hasPrefix("Time: ") else { return nil }
            return Double(line.dropFirst(6).split(separator: " ")[0]).map { $0 / 1000 }
        }
        precondition(times.count == repetitions * 6, "unexpected psql output:\n\(output)")
        // Every other line is a run's count of the rows the function deleted.
        let counts = output.split(separator: "\n").filter { !$0.hasPrefix("Time: ") }
        precondition(counts.count == warmUpRuns + repetitions && counts.allSatisfy { $0 == "\(rows)" },
                     "the function did not delete the \(rows) rows expected: it reported \(counts.joined(separator: ", "))")
        let runs = stride(from: 0, to: times.count, by: 6).map { (times[$0 + 1], times[$0 + 4]) }
        return (median(runs.map(\.0)), median(runs.map(\.1)))
    }
}
