import Foundation

/// A Swift value that is stored in one SQLite column.
public protocol PersistentValue {
    var sqliteValue: SQLiteValue { get }
    init?(sqliteValue: SQLiteValue)
}

extension String: PersistentValue {
    public var sqliteValue: SQLiteValue { .text(self) }
    public init?(sqliteValue: SQLiteValue) {
        guard case let .text(text) = sqliteValue else { return nil }
        self = text
    }
}

extension Int: PersistentValue {
    public var sqliteValue: SQLiteValue { .integer(Int64(self)) }
    public init?(sqliteValue: SQLiteValue) {
        guard case let .integer(value) = sqliteValue else { return nil }
        self = Int(value)
    }
}

extension Int64: PersistentValue {
    public var sqliteValue: SQLiteValue { .integer(self) }
    public init?(sqliteValue: SQLiteValue) {
        guard case let .integer(value) = sqliteValue else { return nil }
        self = value
    }
}

extension Int32: PersistentValue {
    public var sqliteValue: SQLiteValue { .integer(Int64(self)) }
    public init?(sqliteValue: SQLiteValue) {
        guard case let .integer(value) = sqliteValue, let narrowed = Int32(exactly: value) else { return nil }
        self = narrowed
    }
}

extension Int16: PersistentValue {
    public var sqliteValue: SQLiteValue { .integer(Int64(self)) }
    public init?(sqliteValue: SQLiteValue) {
        guard case let .integer(value) = sqliteValue, let narrowed = Int16(exactly: value) else { return nil }
        self = narrowed
    }
}

extension Double: PersistentValue {
    public var sqliteValue: SQLiteValue { .real(self) }
    public init?(sqliteValue: SQLiteValue) {
        switch sqliteValue {
        case let .real(value): self = value
        case let .integer(value): self = Double(value)
        default: return nil
        }
    }
}

extension Float: PersistentValue {
    public var sqliteValue: SQLiteValue { .real(Double(self)) }
    public init?(sqliteValue: SQLiteValue) {
        guard let value = Double(sqliteValue: sqliteValue) else { return nil }
        self = Float(value)
    }
}

extension Bool: PersistentValue {
    public var sqliteValue: SQLiteValue { .integer(self ? 1 : 0) }
    public init?(sqliteValue: SQLiteValue) {
        guard case let .integer(value) = sqliteValue else { return nil }
        self = value != 0
    }
}

/// Stored as seconds since 2001-01-01 00:00:00 UTC (`REAL`), the `Double` a `Date` holds, so
/// every value reads back bit for bit and sorts and compares numerically in SQL (Core Data's
/// representation too). Plain SQL reads it with `datetime(col + 978307200, 'unixepoch')`.
extension Date: PersistentValue {
    public var sqliteValue: SQLiteValue { .real(timeIntervalSinceReferenceDate) }
    public init?(sqliteValue: SQLiteValue) {
        guard let seconds = Double(sqliteValue: sqliteValue) else { return nil }
        self = Date(timeIntervalSinceReferenceDate: seconds)
    }
}

extension UUID: PersistentValue {
    public var sqliteValue: SQLiteValue { .text(uuidString) }
    public init?(sqliteValue: SQLiteValue) {
        guard case let .text(text) = sqliteValue, let uuid = UUID(uuidString: text) else { return nil }
        self = uuid
    }
}

extension Data: PersistentValue {
    public var sqliteValue: SQLiteValue { .blob([UInt8](self)) }
    public init?(sqliteValue: SQLiteValue) {
        guard case let .blob(bytes) = sqliteValue else { return nil }
        self = Data(bytes)
    }
}

/// Stored as its exact decimal digits (`TEXT`, `-12.5`), compared and sorted by value through the
/// `modelgen_decimal` collation (`SQLiteDatabase.decimalCollation`). `Decimal.nan` is stored as
/// `NaN` (its `description`, which `Decimal(string:)` does not read) and compares as Swift
/// compares it: equal to itself, below every number.
extension Decimal: PersistentValue {
    public var sqliteValue: SQLiteValue { .text(description) }
    public init?(sqliteValue: SQLiteValue) {
        guard case let .text(text) = sqliteValue else { return nil }
        if text == Decimal.nan.description {
            self = .nan
            return
        }
        guard let value = Decimal(string: text, locale: posixLocale) else { return nil }
        self = value
    }
}

/// Decimal digits are read with a fixed locale (a `.` before the fraction), built once.
private let posixLocale = Locale(identifier: "en_US_POSIX")

extension URL: PersistentValue {
    public var sqliteValue: SQLiteValue { .text(absoluteString) }
    public init?(sqliteValue: SQLiteValue) {
        guard case let .text(text) = sqliteValue, let url = URL(string: text) else { return nil }
        self = url
    }
}

extension Optional: PersistentValue where Wrapped: PersistentValue {
    public var sqliteValue: SQLiteValue { self?.sqliteValue ?? .null }
    public init?(sqliteValue: SQLiteValue) {
        if sqliteValue == .null {
            self = .none
        } else if let value = Wrapped(sqliteValue: sqliteValue) {
            self = .some(value)
        } else {
            return nil
        }
    }
}

/// Generated enums are `String`-backed and stored as their raw value.
extension PersistentValue where Self: RawRepresentable, RawValue == String {
    public var sqliteValue: SQLiteValue { .text(rawValue) }
    public init?(sqliteValue: SQLiteValue) {
        guard case let .text(text) = sqliteValue else { return nil }
        self.init(rawValue: text)
    }
}
