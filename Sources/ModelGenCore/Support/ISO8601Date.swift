import Foundation

/// Dates as the schema and `--where` write them: ISO 8601, a day (`2024-01-31`) or an instant
/// (`2024-01-31T12:00:00Z`, `2024-01-31T14:00:00+02:00`), nothing before or after.
enum ISO8601Date {
    static func date(from text: String) -> Date? {
        guard text.range(of: #"\A[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}:[0-9]{2}:[0-9]{2}(Z|[+-][0-9]{2}:[0-9]{2}))?\z"#, options: .regularExpression) != nil else { return nil }
        let instant = ISO8601DateFormatter()
        let day = ISO8601DateFormatter()
        day.formatOptions = [.withFullDate]
        return instant.date(from: text) ?? day.date(from: text)
    }

    /// The instant as `2024-01-31T12:00:00Z`.
    static func string(from date: Date) -> String {
        ISO8601DateFormatter().string(from: date)
    }
}
