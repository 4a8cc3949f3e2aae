import Foundation
import ModelGenCore
import ModelGenRuntime
import ModelGenSchema
import ModelGenTestSupport
import XCTest

/// Every change of an attribute's type (SPEC §6), differentially on both backends: for each pair of
/// the schema language's types, a column holding values of the old type at its edges (and random
/// ones) is migrated on SQLite and on PostgreSQL. Swift says what each value becomes
/// (`TypeChange.converted`): the migration must refuse, naming the count and changing nothing,
/// exactly when some value does not convert; otherwise every value must read back as Swift
/// converts it, on both backends alike. A pair without a conversion in Swift converts no value: it
/// is refused while the column holds one and made once it holds only nils, and the widenings SPEC
/// §6 lists must convert every value.
final class TypeChangeMigrationTests: XCTestCase {
    /// The types a column changes between: the scalars and two enumerations.
    static let types = ["Int16", "Int32", "Int", "Int64", "Float", "Double", "String", "Bool", "Date", "Decimal", "UUID", "Data", "URL", "Kind", "Size"]
    static let enumCases = ["Kind": ["small", "large", "huge"], "Size": ["small", "medium"]]

    /// SPEC §6's widenings: the pairs every store must be able to make.
    static let widenings: [(String, String)] = [
        ("Int16", "Int"), ("Int16", "Int64"), ("Int32", "Int"), ("Int32", "Int64"), ("Float", "Double"),
        ("Int16", "String"), ("Int32", "String"), ("Int", "String"), ("Int64", "String"), ("Double", "String"), ("Kind", "String"),
    ]

    func testEveryTypeChangeConvertsWhatSwiftConvertsAndRefusesTheRestOnBothBackends() throws {
        let postgresURL = PostgresServer.url
        if postgresURL == nil, ProcessInfo.processInfo.environment["CI"] == "true" {
            XCTFail("CI=true but MODELGEN_TEST_POSTGRES_URL is not set")
        }
        var random = SeededRandom(seed: 20_261_126)
        for (from, to) in Self.widenings {
            let values = TypeChange.values(of: from, random: &random)
            XCTAssertEqual(expectation(values, from: from, to: to).refused, 0, "SPEC §6 lists \(from) → \(to) as a widening: every value converts")
        }
        for (fromIndex, from) in Self.types.enumerated() {
            for (toIndex, to) in Self.types.enumerated() where to != from {
                let values = TypeChange.values(of: from, random: &random)
                let converts = TypeChange.converted(values[0], from: from, to: to) != nil
                // Optional both times (NULL stays NULL); then with a default each time, the new
                // attribute required (NULL becomes the new default, and the column's default changes
                // type with it).
                for defaulted in [false, true] {
                    let old = try schema(from, defaulted: defaulted), new = try schema(to, defaulted: defaulted, required: defaulted)
                    let null = defaulted ? TypeChange.defaults[to]!.value : nil
                    try checkSQLite(from: from, to: to, old: old, new: new, values: values, null: null)
                    // The pairs without a conversion all take the same path: on PostgreSQL (where a
                    // check takes a dozen psql runs) each runs one of the two forms, in turn.
                    guard converts || (fromIndex + toIndex) % 2 == (defaulted ? 1 : 0) else { continue }
                    if let postgresURL { try checkPostgreSQL(from: from, to: to, old: old, new: new, values: values, null: null, url: postgresURL) }
                }
            }
        }
    }

    // MARK: - The backends

    /// The values each backend must hold after the migration, in row order (nil: does not convert,
    /// as no value does where Swift has no conversion), and the number of values that do not convert.
    private func expectation(_ values: [TypeChange.Value], from: String, to: String) -> (converted: [TypeChange.Value?], refused: Int) {
        let converted = values.map { TypeChange.converted($0, from: from, to: to) ?? nil }
        return (converted, converted.filter { $0 == nil }.count)
    }

    private func checkSQLite(from: String, to: String, old: ModelSchema, new: ModelSchema, values written: [TypeChange.Value], null: TypeChange.Value?) throws {
        let pair = "SQLite \(from) → \(to)"
        let url = try TestSupport.temporaryDirectory().appendingPathComponent("store.sqlite")
        let database = try SQLiteDatabase(path: url.path)
        try database.execute(DDLGenerator(schema: old, dialect: .sqlite).render(header: "test"))
        try SQLiteMigrator(database: database).recordSchema(old.canonicalJSON)
        for (id, value) in (written.map(Optional.some) + [nil]).enumerated() {
            try database.query("INSERT INTO a (id, v) VALUES (?, ?)", [.integer(Int64(id + 1)), value?.sqlite ?? .null])
        }
        // What the store holds is what Swift converts.
        let values = try read(database, as: from).compactMap { $0 }
        let before = try read(database, as: from)
        let (expected, refused) = expectation(values, from: from, to: to)
        if refused > 0 {
            XCTAssertThrowsError(try SQLiteMigrator(database: database).migrate(from: old, to: new), pair) { error in
                XCTAssertEqual((error as? MigrationRefused)?.report.refusals.map(\.rows), [refused], "\(pair): \(error)")
                XCTAssertNotNil((error as? MigrationRefused)?.report.refusals.first?.example, "\(pair): the refusal names no value: \(error)")
            }
            XCTAssertEqual(try read(database, as: from), before, "\(pair): a refused migration changed the values")
            try database.execute("DELETE FROM a WHERE id IN (\(values.indices.filter { expected[$0] == nil }.map { String($0 + 1) }.joined(separator: ", ")))")
        }
        try SQLiteMigrator(database: database).migrate(from: old, to: new)
        // Bit for bit: -0.0 (the text "-0" read as a Double) keeps its sign in the untyped column.
        XCTAssertEqual(try read(database, as: to), expected.compactMap { $0 } + [null], pair)
        let fresh = try SQLiteDatabase(path: ":memory:")
        try fresh.execute(DDLGenerator(schema: new, dialect: .sqlite).render(header: "test"))
        XCTAssertEqual(try SQLiteCatalog(database), try SQLiteCatalog(fresh), "\(pair): the migrated store differs from a fresh one")
    }

    private func checkPostgreSQL(from: String, to: String, old: ModelSchema, new: ModelSchema, values written: [TypeChange.Value], null: TypeChange.Value?, url: String) throws {
        let pair = "PostgreSQL \(from) → \(to)"
        let namespace = "mg_type_change"
        let rows = (written.map(Optional.some) + [nil]).enumerated().map { "(\($0 + 1), \($1?.postgresql ?? "NULL"))" }
        try PostgresServer.psql(url, schema: namespace, DDLGenerator(schema: old, dialect: .postgresql).render(header: "old")
            + "\nINSERT INTO a (id, v) VALUES \(rows.joined(separator: ", "));")
        let before = try read(url, namespace, as: from)
        let values = before.compactMap { $0 }
        let (expected, refused) = expectation(values, from: from, to: to)
        let statements = MigrationPlanner.postgresqlStatements(from: old, to: new, allowDataLoss: false)
        let script = (["SET search_path TO \(namespace);", "BEGIN;"] + statements + ["COMMIT;"]).joined(separator: "\n")
        var deletion = ""
        if refused > 0 {
            XCTAssertThrowsError(try PostgresServer.psqlRaw(url, script), pair) { error in
                let reason = TypeChange.converted(values[0], from: from, to: to) == nil ? ", which have no exact conversion (" : " exactly: \(refused) (for example "
                XCTAssertTrue("\(error)".contains("that do not convert from \(from) to \(to)\(reason)"), "\(pair): \(error)")
                XCTAssertTrue("\(error)".contains(": \(refused) (for example "), "\(pair): \(error)")
            }
            XCTAssertEqual(try read(url, namespace, as: from), before, "\(pair): a refused migration changed the values")
            deletion = "DELETE FROM \(namespace).a WHERE id IN (\(values.indices.filter { expected[$0] == nil }.map { String($0 + 1) }.joined(separator: ", ")));\n"
        }
        try PostgresServer.psqlRaw(url, deletion + script)
        XCTAssertEqual(try read(url, namespace, as: to), expected.filter { $0 != nil } + [null], pair)
        XCTAssertEqual(try PostgresServer.catalog(url, namespace), try freshCatalog(of: new, url: url), "\(pair): the migrated database differs from a fresh one")
    }

    /// The catalog of a database made fresh from each new schema's DDL (by its hash), made once.
    private var freshCatalogs: [String: [String]] = [:]

    private func freshCatalog(of schema: ModelSchema, url: String) throws -> [String] {
        if let catalog = freshCatalogs[schema.canonicalHash] { return catalog }
        let namespace = "mg_type_change_fresh"
        try PostgresServer.psql(url, schema: namespace, DDLGenerator(schema: schema, dialect: .postgresql).render(header: "new"))
        let catalog = try PostgresServer.catalog(url, namespace)
        freshCatalogs[schema.canonicalHash] = catalog
        return catalog
    }

    /// The column's values in row order, as a Swift value of `type`.
    private func read(_ database: SQLiteDatabase, as type: String) throws -> [TypeChange.Value?] {
        try database.query("SELECT v FROM a ORDER BY id").map { row in
            switch row[0] {
            case .null: nil
            case let .integer(value) where TypeChange.isReal(type): .real(Double(value))
            case let .integer(value) where type == "Date": .date(Double(value))
            case let .integer(value) where type == "Bool": .bool(value != 0)
            case let .integer(value): .integer(value)
            case let .real(value) where type == "Date": .date(value)
            case let .real(value): .real(value)
            // Text as stored, a `Decimal` too: the app stores its shortest digits, which a unique index compares.
            case let .text(value): .text(value)
            case let .blob(bytes) where type == "Data": .data(bytes)
            case let .blob(bytes): .text("blob \(bytes)")
            }
        }
    }

    private func read(_ url: String, _ namespace: String, as type: String) throws -> [TypeChange.Value?] {
        // In hex after an `x`, so that no text's line breaks split a row and no empty text is an empty line;
        // a date as its seconds since 2001 (exact: `extract` gives a numeric), bytes in hex.
        let text = switch type {
        case "Date": "(extract(epoch FROM v) - 978307200)::text"
        case "Data": "encode(v, 'hex')"
        default: "v::text"
        }
        let output = try PostgresServer.psqlRaw(url, "SELECT coalesce('x' || encode(convert_to(\(text), 'UTF8'), 'hex'), 'null') FROM \(namespace).a ORDER BY id;")
        return output.split(separator: "\n").map { line in
            guard line != "null" else { return nil }
            let text = String(decoding: [UInt8](hexDigits: line.dropFirst()), as: UTF8.self)
            switch type {
            case "Int16", "Int32", "Int", "Int64": return .integer(Int64(text)!)
            case "Float": return .real(Double(Float(text)!))
            case "Double": return .real(Double(text)!)
            case "Decimal": return .text(Decimal(string: text)!.description)
            case "Bool": return .bool(text == "true")
            case "Date": return .date(Double(text)!)
            case "Data": return .data([UInt8](hexDigits: text))
            case "UUID": return .text(text.uppercased())  // A uuid has no case; PostgreSQL writes it in lower case.
            default: return .text(text)
            }
        }
    }

    /// An entity `A` with the attribute `v` of `type`, optional unless `required`, with a default when `defaulted`.
    private func schema(_ type: String, defaulted: Bool, required: Bool = false) throws -> ModelSchema {
        let yaml = "schema: S\nenums:\n" + Self.enumCases.sorted { $0.key < $1.key }.map { "  \($0.key): [\($0.value.joined(separator: ", "))]\n" }.joined()
            + "entities:\n  A:\n    attributes:\n      v: " + "{ type: \(type)\(required ? "" : "?")\(defaulted ? ", default: \"\(TypeChange.defaults[type]!.yaml)\"" : "") }\n"
        let compilation = TestSupport.compile(yaml)
        return try XCTUnwrap(compilation.schema, compilation.diagnostics.map(\.description).joined(separator: "\n"))
    }
}

/// What Swift makes of a value when its attribute changes type: the oracle of the test above.
enum TypeChange {
    /// A stored value as the app reads it: integers, `Float` and `Double` (a `Float` as the `Double`
    /// it widens to), text (`String`, `URL`, `UUID` and enumeration raw values), `Bool`, a `Date` (its
    /// seconds since 2001) and `Data`.
    enum Value: Equatable, CustomStringConvertible {
        case integer(Int64)
        case real(Double)
        case text(String)
        case bool(Bool)
        case date(Double)
        case data([UInt8])

        static func == (lhs: Value, rhs: Value) -> Bool {
            switch (lhs, rhs) {
            case let (.integer(a), .integer(b)): a == b
            case let (.real(a), .real(b)): a.bitPattern == b.bitPattern
            case let (.text(a), .text(b)): Array(a.unicodeScalars) == Array(b.unicodeScalars)
            case let (.bool(a), .bool(b)): a == b
            case let (.date(a), .date(b)): a.bitPattern == b.bitPattern
            case let (.data(a), .data(b)): a == b
            default: false
            }
        }

        var description: String {
            switch self {
            case let .integer(value): "\(value)"
            case let .real(value): "\(value) (bits \(String(value.bitPattern, radix: 16)))"
            case let .text(value): "\"\(value)\""
            case let .bool(value): "\(value)"
            case let .date(seconds): "date \(seconds)"
            case let .data(bytes): "data \(bytes)"
            }
        }

        var sqlite: SQLiteValue {
            switch self {
            case let .integer(value): .integer(value)
            case let .real(value): .real(value)
            case let .text(value): .text(value)
            case let .bool(value): .integer(value ? 1 : 0)
            case let .date(seconds): .real(seconds)
            case let .data(bytes): .blob(bytes)
            }
        }

        var postgresql: String {
            switch self {
            case let .integer(value): "\(value)"
            case let .real(value) where value.isInfinite: value < 0 ? "'-Infinity'" : "'Infinity'"
            case let .real(value): "'\(value)'"
            case let .text(value): "'" + value.replacingOccurrences(of: "'", with: "''") + "'"
            case let .bool(value): "\(value)"
            case let .date(seconds): "to_timestamp(\(seconds) + 978307200)"
            case let .data(bytes): "'\\x" + bytes.map { String(format: "%02x", $0) }.joined() + "'::bytea"
            }
        }
    }

    /// A default of each type, as the schema writes it and as the app reads it (where a test reads it).
    static let defaults: [String: (yaml: String, value: Value?)] = [
        "Int16": ("3", .integer(3)), "Int32": ("-3", .integer(-3)), "Int": ("7", .integer(7)), "Int64": ("-7", .integer(-7)),
        "Float": ("1.5", .real(1.5)), "Double": ("0.1", .real(0.1)), "String": ("dflt", .text("dflt")), "Bool": ("true", .bool(true)),
        "Date": ("2024-01-31", .date(728_352_000)), "Decimal": ("12.50", .text("12.5")), "UUID": ("E621E1F8-C36C-495A-93FC-0C247A3E6E5F", .text("E621E1F8-C36C-495A-93FC-0C247A3E6E5F")), "Data": ("AAEC", .data([0, 1, 2])),
        "URL": ("https://example.com/", .text("https://example.com/")), "Kind": ("large", .text("large")), "Size": ("medium", .text("medium")),
    ]

    static func isReal(_ type: String) -> Bool { type == "Float" || type == "Double" }

    static func range(of type: String) -> ClosedRange<Int64>? {
        switch type {
        case "Int16": Int64(Int16.min)...Int64(Int16.max)
        case "Int32": Int64(Int32.min)...Int64(Int32.max)
        case "Int", "Int64": Int64.min...Int64.max
        default: nil
        }
    }

    /// Values of `type` at its edges, and random ones.
    static func values(of type: String, random: inout SeededRandom) -> [Value] {
        if let range = range(of: type) {
            let edges: [Int64] = [0, 7, -1, 70_000, -40_000, 1 << 53, (1 << 53) + 1, -(1 << 53) - 1, 1 << 60, 123_456_789_012_345_678, Int64.max, Int64.min, Int64.max - 1]
            let randomOnes = (0..<8).map { _ in Int64(bitPattern: random.next()) >> Int64(random.below(64)) }
            return ([range.lowerBound, range.upperBound] + (edges + randomOnes).filter(range.contains)).map(Value.integer)
        }
        switch type {
        case "Float":
            // 2.15e9 and -2.17e9 lie halfway between two Floats: their shortest digits are on the edge
            // of what reads back as the number (which PostgreSQL does not write), as are many of the
            // round numbers drawn below.
            let floats: [Float] = [1.5, 0.1, 16_777_216, .greatestFiniteMagnitude, -.leastNonzeroMagnitude, 1e-5, 3.25e10, -0.0, .infinity, 2.15e9, -2.17e9, 0x1p100]
            let randomOnes = (0..<6).map { _ in Float(bitPattern: UInt32(truncatingIfNeeded: random.next()) & 0x7F7F_FFFF) }
                + (0..<6).map { _ in Float("\(1 + random.below(9_999))e\(5 + random.below(30))")! }
            return (floats + randomOnes).map { .real(Double($0)) }
        case "Double":
            let doubles: [Double] = [0.1, -2.5, 100, 1e15, 1e16, 9_007_199_254_740_992, 9_007_199_254_740_994, 0.0001, 0.000099999, 1e-5, .leastNonzeroMagnitude,
                                     .greatestFiniteMagnitude, 1234.5678, 0.30000000000000004, 2.0 / 3, -0.0, .infinity, -.infinity, 123_456, -1e300, 1e22,
                                     -9.223372036854775808e18, 9.223372036854775807e18, 32767, -32768.5, 2_147_483_648, 7,
                                     // Halfway between two doubles: shortest digits on the edge of what reads back as the number.
                                     8.11574e20, 1e23, -1e23, 0x1p60]
            // Random bit patterns of finite numbers, random numbers of every magnitude in between, and
            // random round numbers beyond the significand's integers (some halfway between two doubles).
            let randomOnes = (0..<10).map { _ in Double(bitPattern: random.next() & 0xFFEF_FFFF_FFFF_FFFF) }
                + (0..<10).map { _ in Double(random.below(1_000_000)) * pow(10, Double(Int(random.below(30)) - 12)) }
                + (0..<6).map { _ in Double("\(1 + random.below(999_999))e\(15 + random.below(30))")! }
            return (doubles + randomOnes).map(Value.real)
        case "String":
            return ["7", "007", "-0", "0", "-32768", "32767", "32768", "2147483648", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
                    "-9223372036854775809", "1000000000000000000", "99999999999999999999", "x", "", "small", "large", "medium", "1.5", " 7", "+7", "7e2",
                    "\u{661}\u{662}", "https://example.com/a?b=c", "it's", "line\nbreak", "true", "false", "TRUE", "1",
                    "E621E1F8-C36C-495A-93FC-0C247A3E6E5F", "e621e1f8-c36c-495a-93fc-0c247a3e6e5f", "{E621E1F8-C36C-495A-93FC-0C247A3E6E5F}",
                    "E621E1F8C36C495A93FC0C247A3E6E5F", "E621E1F8-C36C-495A-93FC-0C247A3E6E5", "G621E1F8-C36C-495A-93FC-0C247A3E6E5F",
                    " E621E1F8-C36C-495A-93FC-0C247A3E6E5F", "12.5", "-1e-3", ".5", "5.", "-0", "0.1", "1e400", "1e-400", "0e-400", "1e-45", "1e-46",
                    "3.4028235e38", "3.4028236e38", "1.7976931348623159e308", "4e-324", "0x10", "inf", "nan", "1_0", "7\n", "1e", "."].map(Value.text)
        case "URL": return ["https://example.com/a?b=c", "file:///tmp/x%20y"].map(Value.text)
        // As the runtime writes them, and as another program may have (trailing or leading zeros, an exponent).
        case "Decimal":
            // Up to 38 digits at any exponent a `Decimal` holds, as the runtime writes them.
            let extremes = [Decimal.leastNonzeroMagnitude, .greatestFiniteMagnitude, -.greatestFiniteMagnitude] + (0..<4).map { _ in random.decimalOfAnyExponent() }
            return (["12.5", "12.50", "-0.001", "1000", "0", "0.000", "123456789012345678901234567890.5", "-99.990", "007.5", "1e3", "-2.5E-3", "-0.0"]
                + extremes.map(\.description)).map(Value.text)
        case "UUID":
            // As the runtime writes them (upper case), and one in lower case as another program may have.
            let randomOnes = (0..<4).map { _ in
                withUnsafeBytes(of: (random.next(), random.next())) { UUID(uuid: $0.load(as: uuid_t.self)) }.uuidString
            }
            return (["E621E1F8-C36C-495A-93FC-0C247A3E6E5F", "00000000-0000-0000-0000-000000000000", "e621e1f8-c36c-495a-93fc-0c247a3e6e5f"] + randomOnes).map(Value.text)
        case "Kind", "Size": return (TypeChangeMigrationTests.enumCases[type] ?? []).map(Value.text)
        case "Bool": return [.bool(true), .bool(false)]
        case "Date": return [.date(0), .date(728_352_000.5), .date(-1_000_000_000)]
        case "Data": return [.data([]), .data([0, 1, 255])]
        default: preconditionFailure("no values of \(type)")
        }
    }

    /// What `value` of `from` becomes as a `to`: `.some(nil)` when it does not convert exactly,
    /// nil when the change has no conversion.
    static func converted(_ value: Value, from: String, to: String) -> Value?? {
        switch (value, from, to) {
        case let (.integer(n), _, "Float"):
            return .some(Float(exactly: n).map { .real(Double($0)) })
        case let (.real(x), "Double", "Float"):
            return .some(Float(exactly: x).map { .real(Double($0)) })
        case let (.bool(flag), "Bool", "String"):
            return .some(.text(String(flag)))
        case let (.text(text), "String", "Bool"):
            return .some(Bool(text).map(Value.bool))
        case let (.text(text), "String", "Double"), let (.text(text), "String", "Float"):
            // The decimal spellings (SPEC's contract, README), to a finite number, zero only from a zero.
            guard text.range(of: SQLNames.decimalNumberPattern, options: .regularExpression) != nil, !text.contains("\n"),
                  let number = to == "Double" ? Double(text) : Float(text).map(Double.init), number.isFinite else { return .some(nil) }
            let significand = text.prefix { $0 != "e" && $0 != "E" }
            return .some(number == 0 && significand.contains(where: { ("1"..."9").contains($0) }) ? nil : .real(number))
        case let (.text(text), "String", "UUID"):
            return .some(UUID(uuidString: text).map { .text($0.uuidString) })
        case let (.integer(n), _, _) where range(of: to) != nil:
            return .some(range(of: to)!.contains(n) ? .integer(n) : nil)
        case let (.integer(n), _, "Double"):
            return .some(Double(exactly: n).map(Value.real))
        case let (.integer(n), _, "String"), let (.integer(n), _, "Decimal"):
            return .some(.text(String(n)))
        case let (.real(x), _, _) where range(of: to) != nil:
            guard let n = Int64(exactly: x), range(of: to)!.contains(n) else { return .some(nil) }
            return .some(.integer(n))
        case let (.real(x), "Float", "String"):
            return .some(.text(Float(x).description))
        case let (.text(text), "Decimal", "String"):
            return .some(.text(Decimal(string: text)!.description))
        case let (.text(text), "UUID", "String"):
            return .some(.text(UUID(uuidString: text)!.uuidString))
        case let (.real(x), "Float", "Double"):
            return .some(.real(x))
        case let (.real(x), "Double", "String"):
            return .some(.text(x.description))
        case let (.text(text), "String", _) where range(of: to) != nil:
            guard let n = Int64(text), String(n) == text, range(of: to)!.contains(n) else { return .some(nil) }
            return .some(.integer(n))
        case let (.text(text), "String", _) where TypeChangeMigrationTests.enumCases[to] != nil,
             let (.text(text), "Kind", _) where TypeChangeMigrationTests.enumCases[to] != nil,
             let (.text(text), "Size", _) where TypeChangeMigrationTests.enumCases[to] != nil:
            return .some(TypeChangeMigrationTests.enumCases[to]!.contains(text) ? .text(text) : nil)
        case let (.text(text), "Kind", "String"), let (.text(text), "Size", "String"), let (.text(text), "URL", "String"):
            return .some(.text(text))
        default:
            return nil
        }
    }
}
