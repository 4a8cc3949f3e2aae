import Foundation
import ModelGenCore
import XCTest

/// The query plans PostgreSQL chooses for the statements inside the generated functions, read with
/// `auto_explain` (nested statements included) on a real server: no statement may run a subquery
/// again for every row (a `SubPlan` that is not hashed — what `NOT IN` becomes once its set outgrows
/// `work_mem`), whatever the sizes, on either path of the functions (ids in arrays for a small
/// delete, in temporary tables for a large one). `work_mem` is set to its minimum so that any such
/// plan shows.
final class PostgreSQLPlanTests: XCTestCase {
    private let schema = """
        schema: Plans
        entities:
          Team:
            attributes:
              name: String
            relationships:
              members: { type: "[Member]", inverse: team, deleteRule: cascade }
              projects: { type: "[Project]", inverse: team, deleteRule: cascade }
              sponsors: { type: "[Sponsor]", inverse: team, deleteRule: nullify }
          Project:
            relationships:
              team: { type: Team?, inverse: projects }
              tasks: { type: "[Task]", inverse: project, deleteRule: deny }
              tags: { type: "[Tag]", inverse: projects }
          Member:
            relationships:
              team: { type: Team?, inverse: members }
              mentor: { type: Member?, inverse: mentees }
              mentees: { type: "[Member]", inverse: mentor, deleteRule: nullify }
          Sponsor:
            relationships:
              team: { type: Team?, inverse: sponsors }
          Task:
            relationships:
              project: { type: Project?, inverse: tasks }
          Tag:
            relationships:
              projects: { type: "[Project]", inverse: tags }
        """

    func testNoStatementOfTheFunctionsRescansASubqueryPerRow() throws {
        let url = try PostgresServer.requireURL()
        let ddl = TestSupport.postgresDDL(schema, file: "Plans.yaml")
        // Half the teams go (ids 1 to 200): their members, some mentoring members of the other half,
        // their projects and those projects' tags links; sponsors are nullified; tasks refer to no project.
        try PostgresServer.psql(url, schema: "mg_plans", ddl + """
            INSERT INTO team (id, name) SELECT g, 't' FROM generate_series(1, 400) AS g;
            INSERT INTO project (id, team_id) SELECT g, g % 400 + 1 FROM generate_series(1, 4000) AS g;
            INSERT INTO member (id, team_id) SELECT g, g % 400 + 1 FROM generate_series(1, 8000) AS g;
            UPDATE member SET mentor_id = (id + 1) % 8000 + 1;
            INSERT INTO sponsor (id, team_id) SELECT g, g % 400 + 1 FROM generate_series(1, 4000) AS g;
            INSERT INTO task (id, project_id) SELECT g, NULL FROM generate_series(1, 4000) AS g;
            INSERT INTO tag (id) SELECT g FROM generate_series(1, 100) AS g;
            INSERT INTO project_tags (project_id, tag_id) SELECT g, g % 100 + 1 FROM generate_series(1, 4000) AS g;
            ANALYZE;
            """)
        let (output, plans) = try explained(url, schema: "mg_plans", """
            SET work_mem = '64kB';
            SELECT team_safe_delete(ARRAY(SELECT id FROM team WHERE id <= 200), true);
            SELECT team_safe_delete(ARRAY[1, 2, 3], true);
            SELECT member_safe_delete(NULL, true);
            SELECT project_safe_delete(NULL, true);
            """)
        XCTAssertGreaterThan(plans.count, 20, "auto_explain showed the functions' statements")
        XCTAssertTrue(output.contains("\"Member\": 4000"), "the run behind the plans deleted what it should: \(output)")
        // Both paths ran: the 200 teams' 4,000 members outgrow the small path's limit, three teams do not.
        XCTAssertTrue(plans.contains { $0.contains("FROM pg_temp.modelgen_delete_team") }, "the general path (temporary tables) ran")
        XCTAssertTrue(plans.contains { $0.contains("= ANY(modelgen_closure_1_id)") }, "the small path (arrays) ran")
        for plan in plans where plan.contains("SubPlan") {
            // A use of a subplan reads "(SubPlan 1)" when it reruns per row, "(hashed SubPlan 1)" when it is hashed once.
            let rescanned = plan.split(separator: "\n").filter { $0.contains("(SubPlan") }
            XCTAssertEqual(rescanned, [], "a subquery run again for every row:\n\(plan)")
        }
    }

    /// The small path (a few ids, collected in arrays) probes the indexes of large tables, in the
    /// plans PL/pgSQL makes for a function's first calls in a session and in the generic plans it
    /// keeps from the sixth call on, which cannot see how many ids the arrays hold: a statement that
    /// scanned a whole table there would cost each small delete what a bulk one costs.
    func testTheSmallPathProbesIndexesInEveryPlan() throws {
        let url = try PostgresServer.requireURL()
        try makeOwnersItemsPartsAndNotes(url)
        let (output, plans) = try explained(url, schema: "mg_probe", """
            SELECT owner_safe_delete(ARRAY[g]::bigint[], true) FROM generate_series(1, 3) AS g;
            -- The plans PL/pgSQL may keep after five calls, made at once.
            SET plan_cache_mode = force_generic_plan;
            SELECT owner_safe_delete(ARRAY[g]::bigint[], true) FROM generate_series(4, 6) AS g;
            """)
        XCTAssertTrue(output.contains("\"Item\": 50"), "each call deletes an owner's 50 items: \(output)")
        // Their statements name the arrays (`modelgen_closure_<n>_id`); the general path names tables.
        let smallPath = plans.filter { $0.contains("modelgen_closure_") }
        XCTAssertGreaterThan(smallPath.count, 6 * 4, "auto_explain showed the small path's statements of every call")
        assertNoSequentialScanOfItemsPartsOrNotes(in: smallPath, "the small path scans")
    }

    /// The general path (ids in temporary tables) probes the indexes of large tables too when it
    /// deletes a small part of them: 40 of 2,000 owners, so 2,000 of 100,000 items, 4,000 of
    /// 200,000 parts and 800 of 40,000 notes, the small path turned off. The rows of an owner are
    /// scattered over the tables' pages, and planned with PostgreSQL's default `random_page_cost`
    /// (4) these statements scanned whole tables: deleting 40 FitIQ profiles this way took 2.5×
    /// PostgreSQL's own cascade. The functions set it to 1.1 (the rows were just read and locked).
    func testTheGeneralPathProbesIndexesWhenItDeletesAFewOfManyRows() throws {
        let url = try PostgresServer.requireURL()
        try makeOwnersItemsPartsAndNotes(url)
        let (output, plans) = try explained(url, schema: "mg_probe", """
            SET modelgen.array_closure_limit = 0;
            SELECT owner_safe_delete(ARRAY(SELECT g * 50 FROM generate_series(1, 40) AS g), true);
            """)
        XCTAssertTrue(output.contains("\"Item\": 2000") && output.contains("\"Part\": 4000"), "the call deletes 2,000 items and 4,000 parts: \(output)")
        let generalPath = plans.filter { $0.contains("pg_temp.modelgen_delete_") }
        XCTAssertGreaterThan(generalPath.count, 4, "auto_explain showed the general path's statements")
        assertNoSequentialScanOfItemsPartsOrNotes(in: generalPath, "the general path, deleting a fiftieth of it, scans")
    }

    /// No plan of `plans` reads the large tables of `mg_probe` (items, parts, notes) from end to end.
    private func assertNoSequentialScanOfItemsPartsOrNotes(in plans: [String], _ message: String, line: UInt = #line) {
        for plan in plans {
            for table in ["item", "part", "note"] {
                XCTAssertFalse(plan.contains("Seq Scan on \(table) "), "\(message) \(table):\n\(plan)", line: line)
            }
        }
    }

    /// Schema `mg_probe`: 2,000 owners, each with 50 items (2 parts each) and 20 notes, an owner's
    /// rows scattered over the tables' pages.
    private func makeOwnersItemsPartsAndNotes(_ url: String) throws {
        let ddl = TestSupport.postgresDDL("""
            schema: Probe
            entities:
              Owner:
                relationships:
                  items: { type: "[Item]", inverse: owner, deleteRule: cascade }
                  notes: { type: "[Note]", inverse: owner, deleteRule: nullify }
              Item:
                relationships:
                  owner: { type: Owner?, inverse: items }
                  parts: { type: "[Part]", inverse: item, deleteRule: cascade }
              Part:
                relationships:
                  item: { type: Item?, inverse: parts }
              Note:
                relationships:
                  owner: { type: Owner?, inverse: notes }
            """, file: "Probe.yaml")
        try PostgresServer.psql(url, schema: "mg_probe", ddl + """
            INSERT INTO owner (id) SELECT g FROM generate_series(1, 2000) AS g;
            INSERT INTO item (id, owner_id) SELECT g, g % 2000 + 1 FROM generate_series(1, 100000) AS g;
            INSERT INTO part (id, item_id) SELECT g, g % 100000 + 1 FROM generate_series(1, 200000) AS g;
            INSERT INTO note (id, owner_id) SELECT g, g % 2000 + 1 FROM generate_series(1, 40000) AS g;
            ANALYZE;
            """)
    }

    /// Runs `calls` in `schema` with `auto_explain` showing every statement's plan, nested ones
    /// included; returns psql's output and the plans.
    private func explained(_ url: String, schema: String, _ calls: String) throws -> (output: String, plans: [String]) {
        let file = try TestSupport.temporaryDirectory().appendingPathComponent("explain.sql")
        try """
            SET search_path TO \(schema);
            LOAD 'auto_explain';
            SET auto_explain.log_min_duration = 0;
            SET auto_explain.log_nested_statements = on;
            SET auto_explain.log_level = warning;

            """.appending(calls).write(to: file, atomically: true, encoding: .utf8)
        // The plans arrive as warnings, on psql's standard error; thousands of them (the foreign
        // keys' own queries among them): written to a file, not a pipe.
        let log = file.deletingLastPathComponent().appendingPathComponent("plans.txt")
        let run = try TestSupport.run(URL(fileURLWithPath: "/bin/sh"), ["-c", "psql \"$0\" -X -q -A -t -v ON_ERROR_STOP=1 -f \"$1\" 2> \"$2\"", url, file.path, log.path])
        let warnings = try String(contentsOf: log, encoding: .utf8)
        XCTAssertEqual(run.status, 0, String(warnings.suffix(2_000)))
        return (run.standardOutput, Array(warnings.components(separatedBy: "WARNING:  duration:").dropFirst()))
    }
}
