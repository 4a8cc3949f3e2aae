import CSQLite
import Foundation
import ModelGenSchema

/// `Decimal` values are stored as their exact digits (`TEXT`, such as `-12.5`), which SQLite would
/// compare as text (`"10" < "9.5"`). Every connection the runtime opens registers the collation
/// `modelgen_decimal`, which compares such texts by their numeric value, exactly; predicates and
/// sorts on `Decimal` attributes use it:
///
///     SELECT … FROM "invoice" WHERE "invoice"."amount" > ? COLLATE modelgen_decimal
///     SELECT … FROM "invoice" ORDER BY "amount" COLLATE modelgen_decimal ASC
///
/// Plain SQL tools see the digits as text; `CAST(amount AS REAL)` gives an approximate number.
extension SQLiteDatabase {
    /// The name of the collation, as SQL writes it after `COLLATE`.
    public static let decimalCollation = "modelgen_decimal"

    func registerDecimalCollation() throws {
        let status = sqlite3_create_collation_v2(handle, Self.decimalCollation, SQLITE_UTF8, nil, { _, leftCount, left, rightCount, right in
            let lhs = UnsafeRawBufferPointer(start: left, count: Int(leftCount))
            let rhs = UnsafeRawBufferPointer(start: right, count: Int(rightCount))
            return DecimalText.compare(lhs, rhs)
        }, nil)
        guard status == SQLITE_OK else { throw error(status, sql: nil) }
    }

    /// `modelgen_decimal_text(x)`: a text that spells a `Decimal` as the runtime stores that
    /// `Decimal` (`SQLNames.sqliteDecimalTextFunction`), anything else as it is.
    func registerDecimalTextFunction() throws {
        let status = sqlite3_create_function_v2(handle, SQLNames.sqliteDecimalTextFunction, 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil, { context, _, arguments in
            guard let context, let value = arguments?[0] else { return }
            guard let text = SQLiteDatabase.text(of: value),
                  case let .text(stored)? = Decimal(sqliteValue: .text(text))?.sqliteValue else { return sqlite3_result_value(context, value) }
            sqlite3_result_text(context, stored, Int32(stored.utf8.count), SQLiteDatabase.transientDestructor)
        }, nil, nil, nil)
        guard status == SQLITE_OK else { throw error(status, sql: nil) }
    }
}

/// Exact numeric comparison of decimal texts (`-12.5`, `0.001`, `1000`), as `Decimal.description`
/// writes them. Texts that are not such numbers (`NaN`) sort before every number, by their bytes.
enum DecimalText {
    private struct Number {
        var isNegative: Bool
        /// Integer digits without leading zeros, fraction digits without trailing zeros.
        var integer: ArraySlice<UInt8>
        var fraction: ArraySlice<UInt8>
        var isZero: Bool { integer.isEmpty && fraction.isEmpty }
    }

    static func compare(_ lhs: UnsafeRawBufferPointer, _ rhs: UnsafeRawBufferPointer) -> Int32 {
        let left = Array(lhs), right = Array(rhs)
        switch (number(left), number(right)) {
        case let (a?, b?): return compare(a, b)
        case (nil, .some): return -1
        case (.some, nil): return 1
        case (nil, nil): return left.lexicographicallyPrecedes(right) ? -1 : (left == right ? 0 : 1)
        }
    }

    private static func compare(_ a: Number, _ b: Number) -> Int32 {
        let aNegative = a.isNegative && !a.isZero, bNegative = b.isNegative && !b.isZero
        if aNegative != bNegative { return aNegative ? -1 : 1 }
        let magnitude = compareMagnitude(a, b)
        return aNegative ? -magnitude : magnitude
    }

    private static func compareMagnitude(_ a: Number, _ b: Number) -> Int32 {
        if a.integer.count != b.integer.count { return a.integer.count < b.integer.count ? -1 : 1 }
        for (x, y) in zip(a.integer, b.integer) where x != y { return x < y ? -1 : 1 }
        // Fractions without trailing zeros: the shorter of two equal prefixes is the smaller.
        for (x, y) in zip(a.fraction, b.fraction) where x != y { return x < y ? -1 : 1 }
        if a.fraction.count == b.fraction.count { return 0 }
        return a.fraction.count < b.fraction.count ? -1 : 1
    }

    private static func number(_ bytes: [UInt8]) -> Number? {
        let zero = UInt8(ascii: "0"), nine = UInt8(ascii: "9"), dot = UInt8(ascii: "."), minus = UInt8(ascii: "-")
        var index = bytes.startIndex
        let isNegative = index < bytes.endIndex && bytes[index] == minus
        if isNegative { index += 1 }
        let integerStart = index
        while index < bytes.endIndex, (zero...nine).contains(bytes[index]) { index += 1 }
        var integer = bytes[integerStart..<index]
        var fraction = bytes[index..<index]
        if index < bytes.endIndex, bytes[index] == dot {
            index += 1
            let fractionStart = index
            while index < bytes.endIndex, (zero...nine).contains(bytes[index]) { index += 1 }
            fraction = bytes[fractionStart..<index]
        }
        guard index == bytes.endIndex, !(integer.isEmpty && fraction.isEmpty) else { return nil }
        while integer.first == zero { integer = integer.dropFirst() }
        while fraction.last == zero { fraction = fraction.dropLast() }
        return Number(isNegative: isNegative, integer: integer, fraction: fraction)
    }
}
