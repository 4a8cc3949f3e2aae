/// The benchmark workload on `Schemas/FitIQ.yaml`: per user profile 1 dietary preferences, 100
/// progress entries, 50 sleep sessions with 10 stages each, 100 activity snapshots and 10 physical
/// attributes (762 rows), plus 10,000 standalone outbox events. Child rows are inserted round by
/// round across profiles (row i belongs to profile i mod N + 1), as a real app's file grows.
public enum FitIQWorkload {
    public static let rowsPerProfile = 762
    public static let outboxEvents = 10_000

    /// Rows per table for `profiles` profiles, in the schema's order.
    public static func rowCounts(profiles: Int) -> [(table: String, rows: Int)] {
        [("sd_user_profile", profiles), ("sd_dietary_and_activity_preferences", profiles),
         ("sd_progress_entry", profiles * 100), ("sd_sleep_session", profiles * 50), ("sd_sleep_stage", profiles * 500),
         ("sd_activity_snapshot", profiles * 100), ("sd_physical_attribute", profiles * 10), ("sd_outbox_event", outboxEvents)]
    }

    /// The SQL that fills an empty database built from the FitIQ DDL, in one transaction.
    public static func insertSQL(profiles: Int) -> String {
        func series(_ count: Int) -> String { "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < \(count - 1))" }
        return """
        BEGIN;
        \(series(profiles)) INSERT INTO sd_user_profile (id, user_id, name, created_at) SELECT i + 1, 'user' || (i + 1), 'Name', 0 FROM n;
        \(series(profiles)) INSERT INTO sd_dietary_and_activity_preferences (id, daily_calorie_goal, user_profile_id) SELECT i + 1, 2000, i + 1 FROM n;
        \(series(profiles * 100)) INSERT INTO sd_progress_entry (id, user_id, metric, value, date, user_profile_id) SELECT i + 1, 'u', 'weight', 70.5, i, i % \(profiles) + 1 FROM n;
        \(series(profiles * 50)) INSERT INTO sd_sleep_session (id, start_date, end_date, user_profile_id) SELECT i + 1, i, i + 1, i % \(profiles) + 1 FROM n;
        \(series(profiles * 500)) INSERT INTO sd_sleep_stage (id, stage, start_date, end_date, session_id) SELECT i + 1, 'deep', i, i + 1, i % \(profiles * 50) + 1 FROM n;
        \(series(profiles * 100)) INSERT INTO sd_activity_snapshot (id, date, steps, active_calories, user_profile_id) SELECT i + 1, i, 1000, 55.5, i % \(profiles) + 1 FROM n;
        \(series(profiles * 10)) INSERT INTO sd_physical_attribute (id, kind, value, recorded_at, user_profile_id) SELECT i + 1, 'height', 180, i, i % \(profiles) + 1 FROM n;
        \(series(outboxEvents)) INSERT INTO sd_outbox_event (id, event_type, payload, created_at) SELECT i + 1, 'sync', X'00', i FROM n;
        COMMIT;
        """
    }
}
