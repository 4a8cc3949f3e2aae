import Foundation

/// Dates as the schema and `--where` write them: ISO 8601, a day (`2024-01-31`) or an instant
/// (`2024-01-31T12:00:00Z`, `2024-01-31T14:00:00+02:00`), nothing before or after, every field
/// within its range, in the proleptic Gregorian calendar ISO 8601 specifies.
///
/// Read field by field, not by `ISO8601DateFormatter`: the formatter rolls a day past the month's
/// end over (`2024-02-30` is March 1), and where the time is out of range (`T25:00:00Z`, a leap
/// second `T23:59:60Z`) it falls back to the day alone, so a typo meant midnight.
enum ISO8601Date {
    static func date(from text: String) -> Date? {
        let fields = Array(text.utf8)
        guard fields.count == 10 || fields.count == 20 || fields.count == 25 else { return nil }
        func number(_ start: Int, _ length: Int) -> Int? {
            var value = 0
            for byte in fields[start..<start + length] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        func separator(_ position: Int, _ character: Unicode.Scalar) -> Bool { fields[position] == UInt8(ascii: character) }
        guard let year = number(0, 4), separator(4, "-"), let month = number(5, 2), separator(7, "-"), let day = number(8, 2),
              (1...12).contains(month), (1...daysIn(month, of: year)).contains(day) else { return nil }
        var seconds = daysSinceEpoch(year: year, month: month, day: day) * 86_400
        guard fields.count > 10 else { return Date(timeIntervalSince1970: Double(seconds)) }
        guard separator(10, "T"), let hour = number(11, 2), separator(13, ":"), let minute = number(14, 2), separator(16, ":"),
              let second = number(17, 2), hour < 24, minute < 60, second < 60 else { return nil }
        seconds += hour * 3_600 + minute * 60 + second
        if fields.count == 20 {
            guard separator(19, "Z") else { return nil }
        } else {
            guard separator(19, "+") || separator(19, "-"), let offsetHours = number(20, 2), separator(22, ":"), let offsetMinutes = number(23, 2),
                  offsetHours < 24, offsetMinutes < 60 else { return nil }
            // Local time is UTC plus the offset: UTC is local time minus it.
            seconds -= (separator(19, "+") ? 1 : -1) * (offsetHours * 3_600 + offsetMinutes * 60)
        }
        return Date(timeIntervalSince1970: Double(seconds))
    }

    /// The instant as `2024-01-31T12:00:00Z`.
    static func string(from date: Date) -> String {
        ISO8601DateFormatter().string(from: date)
    }

    private static func isLeap(_ year: Int) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    private static func daysIn(_ month: Int, of year: Int) -> Int {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to the date, in the proleptic Gregorian calendar (years 0 to 9999).
    private static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        // Years counted from March, so that February, with its leap day, ends each one.
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
