import Foundation
import ModelGenQuery
import ModelGenSchema
import NIOCore
import PostgresNIO

/// How one column's values travel between a model object (which holds them as the SQLite runtime
/// does, `SQLValue`) and PostgreSQL's native type: written as the type's text, with a cast, and
/// read as text, so that every value comes back exactly.
///
/// | Swift | column | written | read |
/// |---|---|---|---|
/// | `Int`, `Int64`, `Int32`, `Int16` | `BIGINT`, `INTEGER`, `SMALLINT` | digits | digits |
/// | `Double`, `Float` | `DOUBLE PRECISION`, `REAL` | shortest exact digits | the same |
/// | `Bool` | `BOOLEAN` | `1` / `0` | `t` / `f` |
/// | `Date` | `TIMESTAMPTZ` | UTC, to the microsecond | microseconds since 2001 |
/// | `Decimal` | `NUMERIC` | its digits | its digits |
/// | `UUID` | `UUID` | its text | its text |
/// | `Data` | `BYTEA` | hex | hex |
/// | `String`, `URL`, enums | `TEXT` | the text | the text |
enum PostgresColumnType: Equatable, Sendable {
    case integer, real, bool, date, decimal, uuid, bytes, text

    init(_ type: AttributeType) {
        switch type {
        case .enumeration: self = .text
        case let .scalar(scalar):
            switch scalar {
            case .int, .int64, .int32, .int16: self = .integer
            case .double, .float: self = .real
            case .bool: self = .bool
            case .date: self = .date
            case .decimal: self = .decimal
            case .uuid: self = .uuid
            case .data: self = .bytes
            case .string, .url: self = .text
            }
        }
    }

    init(_ kind: QueryValueKind) {
        switch kind {
        case .integer: self = .integer
        case .real: self = .real
        case .text: self = .text
        case .bool: self = .bool
        case .blob: self = .bytes
        case .date: self = .date
        case .decimal: self = .decimal
        case .uuid: self = .uuid
        }
    }

    /// What a `SELECT` reads for `column` (quoted), in PostgreSQL's binary format: integers as
    /// `int8`, reals as `float8` (a `REAL`'s value exactly), a date as its microseconds since 2001
    /// (`extract(epoch …)` is exact, numeric, since PostgreSQL 14; 978,307,200 s is 1970 → 2001), a
    /// decimal as its digits; the others as they are.
    func selectExpression(_ column: String) -> String {
        switch self {
        case .integer: "\(column)::int8"
        case .real: "\(column)::float8"
        case .date: "((extract(epoch FROM \(column)) - 978307200) * 1000000)::int8"
        case .decimal: "\(column)::text"
        case .bool, .uuid, .bytes, .text: column
        }
    }

    /// The value the model holds for a cell a `SELECT` of `selectExpression` read.
    func value(of cell: PostgresCell) throws -> SQLValue {
        switch self {
        case .integer: return try cell.decode(Int64?.self).map(SQLValue.integer) ?? .null
        case .real: return try cell.decode(Double?.self).map(SQLValue.real) ?? .null
        case .bool: return try cell.decode(Bool?.self).map { .integer($0 ? 1 : 0) } ?? .null
        case .date: return try cell.decode(Int64?.self).map { .real(PostgresTimestamp(microsecondsSince2001: $0).secondsSince2001) } ?? .null
        case .uuid: return try cell.decode(UUID?.self).map { .text($0.uuidString) } ?? .null
        case .bytes: return try cell.decode(ByteBuffer?.self).map { .blob(Array($0.readableBytesView)) } ?? .null
        case .decimal, .text: return try cell.decode(String?.self).map(SQLValue.text) ?? .null
        }
    }

    /// The text PostgreSQL reads `value` from (nil for NULL); throws `Unstorable` with the reason
    /// for a value the column cannot hold.
    func text(for value: SQLValue) throws -> String? {
        switch value {
        case .null: return nil
        case let .integer(number):
            return self == .real ? String(Double(number)) : String(number)
        case let .real(number):
            if self == .date { return try PostgresTimestamp(secondsSince2001: number).text }
            if number.isNaN { throw Self.realNaN }
            if number.isInfinite { return number < 0 ? "-Infinity" : "Infinity" }
            return String(number)
        case let .text(string):
            if string.utf8.contains(0) { throw Self.nulCharacter }
            if self == .decimal, string == Decimal.nan.description { throw Self.decimalNaN }
            return string
        case let .blob(bytes):
            return "\\x" + bytes.map { byte in
                let digits = String(byte, radix: 16)
                return byte < 16 ? "0" + digits : digits
            }.joined()
        }
    }

    /// A value a PostgreSQL column cannot hold, why, and what to save instead.
    struct Unstorable: Error {
        var reason: String
        var advice: String?

        /// Why a save cannot store the value, and what to store instead.
        var reasonForSave: String { advice.map { "\(reason); \($0)" } ?? reason }
    }
}

/// A `Date` as PostgreSQL keeps it: whole microseconds. A `Date` is saved as the microsecond
/// nearest to it (exactly: no floating-point product), and read back as the `Double` nearest to
/// that microsecond; so the value an object holds after a save (`secondsSince2001` of what was
/// stored) is the value every later read gives, bit for bit, and writing it again stores the same
/// microsecond. Dates far from 2001 (before 1716 or after 2286), whose `Double`s are coarser
/// than a microsecond, come back unchanged.
struct PostgresTimestamp: Equatable {
    var microsecondsSince2001: Int64

    init(microsecondsSince2001: Int64) {
        self.microsecondsSince2001 = microsecondsSince2001
    }

    /// The first instant a store holds, in seconds since 2001: `Date.distantPast` (0001-01-01 in
    /// Foundation's calendar, which is Julian before 1582; in the proleptic Gregorian calendar
    /// PostgreSQL counts in, 30 December 1 BC).
    static let earliestSecondsSince2001: Double = -63_114_076_800
    /// The instant after the last one a store holds: 10000-01-01, in seconds since 2001.
    static let endSecondsSince2001: Double = 252_423_993_600

    /// Years 1 to 9999 (`Date.distantPast` and `Date.distantFuture` included); others throw.
    init(secondsSince2001 seconds: Double) throws {
        guard seconds.isFinite, seconds >= Self.earliestSecondsSince2001, seconds < Self.endSecondsSince2001 else {
            throw PostgresColumnType.Unstorable(reason: "a Date outside the years 1 to 9999 (\(seconds) s since 2001), which this backend does not store")
        }
        microsecondsSince2001 = Self.roundedMicroseconds(seconds)
    }

    /// `seconds × 1,000,000` rounded to the nearest integer (halves away from zero), computed
    /// exactly: the significand times 5⁶, shifted by the exponent plus 6.
    private static func roundedMicroseconds(_ seconds: Double) -> Int64 {
        guard seconds != 0 else { return 0 }
        let magnitude = seconds.magnitude
        let significand = UInt128(magnitude.significandBitPattern | (magnitude.isNormal ? 1 << 52 : 0))
        let exponent = Int(magnitude.isNormal ? magnitude.exponent : Double.leastNormalMagnitude.exponent) - 52 + 6
        let product = significand * 15_625
        var result: UInt128
        if exponent >= 0 {
            result = product << exponent
        } else if -exponent >= 128 {
            result = 0
        } else {
            result = product >> -exponent
            if (product >> (-exponent - 1)) & 1 == 1 { result += 1 }
        }
        return seconds < 0 ? -Int64(result) : Int64(result)
    }

    /// The `Double` nearest to the microseconds, in seconds since 2001 (what a read gives).
    var secondsSince2001: Double {
        let magnitude = microsecondsSince2001.magnitude
        let fraction = String(magnitude % 1_000_000 + 1_000_000).dropFirst()
        return Double("\(microsecondsSince2001 < 0 ? "-" : "")\(magnitude / 1_000_000).\(fraction)")!
    }

    /// `2024-02-29 13:05:09.123456+00`: exact, in UTC, whatever the session's time zone. A year
    /// before 1 is written as PostgreSQL reads it, counted back with `BC` (year 0 is 1 BC:
    /// `Date.distantPast` is `0001-12-30 00:00:00.000000+00 BC`).
    var text: String {
        let perDay: Int64 = 86_400_000_000
        // Days from 1970-01-01 (the civil-from-days algorithm counts from there): 2001 is day 11,323.
        var days = microsecondsSince2001 / perDay
        var rest = microsecondsSince2001 % perDay
        if rest < 0 {
            days -= 1
            rest += perDay
        }
        let (year, month, day) = Self.civil(fromDays: days + 11_323)
        let second = rest / 1_000_000, micro = rest % 1_000_000
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let fraction = String(micro + 1_000_000).dropFirst()
        let paddedYear = String((year > 0 ? year : 1 - year) + 10_000).dropFirst()
        return "\(paddedYear)-\(two(month))-\(two(day)) \(two(second / 3600)):\(two(second / 60 % 60)):\(two(second % 60)).\(fraction)+00" + (year > 0 ? "" : " BC")
    }

    /// Howard Hinnant's `civil_from_days`: the proleptic Gregorian date of day `days` since 1970-01-01.
    private static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

/// One column's values as a PostgreSQL array parameter in the binary format, typed as the
/// column (`int8[]`, `float8[]`, `boolean[]`, `timestamptz[]`, `uuid[]`, `bytea[]`; `text[]` for
/// text and for decimals, which the statement casts to `numeric`): what `unnest` turns into rows,
/// with no text to format here nor to parse on the server. Values are checked beforehand
/// (`PostgresColumnType.checked(_:)`); NULL elements are allowed, which PostgresNIO's arrays lack.
struct ColumnArray: PostgresDynamicTypeEncodable {
    let type: PostgresColumnType
    let values: [SQLValue]

    var psqlType: PostgresDataType {
        switch type {
        case .integer: .int8Array
        case .real: .float8Array
        case .bool: .boolArray
        case .date: .timestamptzArray
        case .uuid: .uuidArray
        case .bytes: .byteaArray
        case .decimal, .text: .textArray
        }
    }

    var psqlFormat: PostgresFormat { .binary }

    private var elementType: PostgresDataType {
        switch type {
        case .integer: .int8
        case .real: .float8
        case .bool: .bool
        case .date: .timestamptz
        case .uuid: .uuid
        case .bytes: .bytea
        case .decimal, .text: .text
        }
    }

    func encode<JSONEncoder: PostgresJSONEncoder>(into buffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>) {
        buffer.writeInteger(Int32(1))  // dimensions
        buffer.writeInteger(Int32(values.contains(.null) ? 1 : 0))
        buffer.writeInteger(elementType.rawValue)
        buffer.writeInteger(Int32(values.count))
        buffer.writeInteger(Int32(1))  // lower bound
        for value in values {
            switch (type, value) {
            case (_, .null):
                buffer.writeInteger(Int32(-1))
            case (.real, let .integer(number)):
                buffer.writeInteger(Int32(8))
                buffer.writeInteger(Double(number).bitPattern)
            case (.integer, let .integer(number)):
                buffer.writeInteger(Int32(8))
                buffer.writeInteger(number)
            case (.bool, let .integer(number)):
                buffer.writeInteger(Int32(1))
                buffer.writeInteger(UInt8(number != 0 ? 1 : 0))
            case (.real, let .real(number)):
                buffer.writeInteger(Int32(8))
                buffer.writeInteger(number.bitPattern)
            case (.date, let .real(seconds)):
                // Microseconds since 2000-01-01 (2000 had 366 days); checked and rounded already.
                guard let stamp = try? PostgresTimestamp(secondsSince2001: seconds) else { preconditionFailure("dates are checked before they are encoded") }
                buffer.writeInteger(Int32(8))
                buffer.writeInteger(stamp.microsecondsSince2001 + 31_622_400_000_000)
            case (.uuid, let .text(text)):
                let uuid = UUID(uuidString: text)!.uuid
                buffer.writeInteger(Int32(16))
                buffer.writeBytes([uuid.0, uuid.1, uuid.2, uuid.3, uuid.4, uuid.5, uuid.6, uuid.7,
                                   uuid.8, uuid.9, uuid.10, uuid.11, uuid.12, uuid.13, uuid.14, uuid.15])
            case (_, let .blob(bytes)):
                buffer.writeInteger(Int32(bytes.count))
                buffer.writeBytes(bytes)
            case (_, let .text(text)):
                buffer.writeInteger(Int32(text.utf8.count))
                buffer.writeString(text)
            case (_, let .integer(number)):
                let text = String(number)
                buffer.writeInteger(Int32(text.utf8.count))
                buffer.writeString(text)
            case (_, let .real(number)):
                let text = String(number)
                buffer.writeInteger(Int32(text.utf8.count))
                buffer.writeString(text)
            }
        }
    }
}

extension PostgresColumnType {
    /// The array type a column's values travel in (`ColumnArray`).
    var arrayTypeName: String {
        switch self {
        case .integer: "int8[]"
        case .real: "float8[]"
        case .bool: "boolean[]"
        case .date: "timestamptz[]"
        case .uuid: "uuid[]"
        case .bytes: "bytea[]"
        case .decimal, .text: "text[]"
        }
    }

    /// What an element of that array is cast to for the column (a decimal's text to `numeric`).
    var elementCast: String { self == .decimal ? "::numeric" : "" }

    /// `value` if the column can hold it (throws `Unstorable` otherwise), a date as the seconds
    /// the store keeps (whole microseconds).
    func checked(_ value: SQLValue) throws -> SQLValue {
        switch (self, value) {
        case (.date, let .real(seconds)):
            return .real(try PostgresTimestamp(secondsSince2001: seconds).secondsSince2001)
        case (.uuid, let .text(text)) where UUID(uuidString: text) == nil:
            throw Unstorable(reason: "\(text) is not a UUID")
        case (.decimal, .text(Decimal.nan.description)):
            throw Self.decimalNaN
        case (.real, let .real(number)) where number.isNaN:
            throw Self.realNaN
        case (_, let .text(text)) where text.utf8.contains(0):
            throw Self.nulCharacter
        default:
            return value
        }
    }

    /// PostgreSQL orders a `NUMERIC` NaN above every number, where Swift orders `Decimal.nan`
    /// below them (SQLite stores it and orders it as Swift does).
    static let decimalNaN = Unstorable(reason: "PostgreSQL orders NaN above every number, Swift orders Decimal.nan below them", advice: "store nil or a number")

    /// PostgreSQL orders a `float8` NaN above every number and equal to itself, where Swift's NaN
    /// is neither below, above nor equal to anything: a predicate would match it where Swift does
    /// not (SQLite refuses NaN too).
    static let realNaN = Unstorable(reason: "PostgreSQL orders NaN above every number and equal to itself, where Swift's NaN compares false with everything", advice: "store nil or a number")

    /// PostgreSQL text holds no NUL character (SQLite does).
    static let nulCharacter = Unstorable(reason: "PostgreSQL text cannot hold the NUL character (\\0)", advice: "remove it or store the value as Data")
}
