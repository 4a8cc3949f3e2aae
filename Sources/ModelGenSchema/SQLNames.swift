/// The limits both databases put on names, and the names ModelGen derives from a table's name.
///
/// PostgreSQL keeps only the first 63 bytes of an identifier (`NAMEDATALEN - 1`): two longer names
/// that share those bytes would name one object. Names the user chooses (tables, columns) must fit;
/// names ModelGen derives (indexes, temporary tables, functions) are shortened when they would not,
/// keeping a hash of the whole name, so they stay distinct and deterministic.
public enum SQLNames {
    /// The longest identifier PostgreSQL keeps whole, in UTF-8 bytes.
    public static let maximumLength = 63

    /// PostgreSQL's system columns, which every table has already.
    public static let systemColumns: Set<String> = ["tableoid", "xmin", "cmin", "xmax", "cmax", "ctid", "oid"]

    /// Prefixes of table names that belong to someone else: PostgreSQL's catalogs (searched before
    /// the user's schema, so `pg_class` would name the catalog), SQLite's own tables, ModelGen's
    /// temporary tables and bookkeeping.
    public static let reservedTablePrefixes = ["pg_", "sqlite_", "modelgen_"]

    /// The functions that write a `Double` and a `Float` as Swift's `description` does, which a
    /// migration of such an attribute to a `String` calls (`FloatingPointText`): the runtime registers
    /// them on every SQLite connection (`SQLiteDatabase+FloatingPointFunctions.swift`); a PostgreSQL
    /// migration creates them in `pg_temp`.
    public static let doubleTextFunction = "modelgen_double_text", floatTextFunction = "modelgen_float_text"

    /// The SQLite function that writes a decimal text as the app stores the `Decimal` it spells (its
    /// shortest digits: `12.50` → `12.5`, `1e3` → `1000`), and any other value as it is (registered
    /// beside the `modelgen_decimal` collation). A migration calls it where a `Decimal` becomes a
    /// `String`, and, from a store an earlier ModelGen made whose schema kept a `Decimal` default as
    /// spelled, on the values that default filled.
    public static let sqliteDecimalTextFunction = "modelgen_decimal_text"

    /// The SQLite function that gives the `Float` a number is exactly (as `Float(exactly:)`), or
    /// NULL, which a migration of an integer or `Double` attribute to a `Float` calls (registered
    /// beside the two above).
    public static let sqliteExactFloatFunction = "modelgen_exact_float"

    /// The functions that read a `String` as a `Double` or a `Float`, as Swift's `Double(_:)` and
    /// `Float(_:)` read it, for the decimal spellings alone (`decimalNumberPattern`: `12.5`, `-1e-3`,
    /// `.5`, `+7`), and only to a finite number that is zero only when the text is: anything else
    /// gives NULL, which a migration of such an attribute counts and refuses. The runtime registers
    /// them on SQLite; a PostgreSQL migration creates them in `pg_temp` (`CAST(text AS double
    /// precision)` reads the same spellings to the same numbers and raises where Swift gives
    /// infinity or zero).
    public static let textDoubleFunction = "modelgen_text_double", textFloatFunction = "modelgen_text_float"

    /// The spellings of a number that a `String` → `Double` or `Float` migration reads: an optional
    /// sign, digits with an optional point (or a point and digits), an optional exponent.
    public static let decimalNumberPattern = "^[+-]?([0-9]+\\.?[0-9]*|\\.[0-9]+)([eE][+-]?[0-9]+)?$"

    /// Nil when `text` is not spelled as `decimalNumberPattern` says; otherwise whether a digit of
    /// its significand (before the exponent) is not zero.
    public static func decimalNumberIsNonzero(_ text: String) -> Bool? {
        let bytes = Array(text.utf8)
        var index = 0
        func skip(_ accepted: (UInt8) -> Bool) -> ArraySlice<UInt8> {
            let start = index
            while index < bytes.count, accepted(bytes[index]) { index += 1 }
            return bytes[start..<index]
        }
        let isDigit = { (byte: UInt8) in (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
        let isSign = { (byte: UInt8) in byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-") }
        if index < bytes.count, isSign(bytes[index]) { index += 1 }
        var significand = skip(isDigit)
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            significand += skip(isDigit)
        }
        guard !significand.isEmpty else { return nil }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, isSign(bytes[index]) { index += 1 }
            guard !skip(isDigit).isEmpty else { return nil }
        }
        guard index == bytes.count else { return nil }
        return significand.contains { $0 != UInt8(ascii: "0") }
    }

    /// What makes `name` unusable as a table or column name in either database, or nil.
    public static func problem(with name: String) -> String? {
        if name.isEmpty { return "is empty" }
        if let control = name.unicodeScalars.first(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            return "contains the control character U+\(String(control.value, radix: 16, uppercase: true).leftPadded(to: 4)); names must be printable"
        }
        if name.utf8.count > maximumLength {
            return "is \(name.utf8.count) bytes long; PostgreSQL keeps only the first \(maximumLength) bytes of a name"
        }
        return nil
    }

    /// `name` itself when it fits; otherwise its first bytes (whole characters), `_` and eight hex
    /// digits of a hash of the whole name, 63 bytes at most.
    public static func shortened(_ name: String) -> String {
        guard name.utf8.count > maximumLength else { return name }
        var prefix = ""
        var length = 0
        for character in name {
            let size = String(character).utf8.count
            guard length + size <= maximumLength - 9 else { break }
            prefix.append(character)
            length += size
        }
        return prefix + "_" + String(fnv1a(name), radix: 16).leftPadded(to: 8)
    }

    /// `<table>_safe_delete`: the PostgreSQL deletion function of a table.
    public static func safeDeleteFunction(of table: String) -> String { shortened(table + "_safe_delete") }

    /// `modelgen_delete_<table>`: the temporary table a delete collects a table's ids in.
    public static func closureTable(of table: String) -> String { shortened("modelgen_delete_" + table) }

    /// The names PostgreSQL gives, without being asked, to objects that share the namespace of
    /// tables and indexes: `<table>_pkey`, `<table>_id_seq`, and `<table>_<columns>_key` for each
    /// `UNIQUE`. A table with one of these names could not be created after them.
    public static func implicitNames(of table: String, uniqueColumnGroups: [[String]]) -> [String] {
        [table + "_pkey", table + "_id_seq"] + uniqueColumnGroups.map { table + "_" + $0.joined(separator: "_") + "_key" }
    }

    /// 32-bit FNV-1a: stable across runs and platforms (Swift's `hashValue` is seeded per process).
    private static func fnv1a(_ text: String) -> UInt32 {
        var hash: UInt32 = 2_166_136_261
        for byte in text.utf8 {
            hash ^= UInt32(byte)
            hash = hash &* 16_777_619
        }
        return hash
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
