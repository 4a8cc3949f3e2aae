import Foundation
import ModelGenCore
import ModelGenRuntime
import ModelGenTestSupport
import XCTest

/// A default is stored as the value the app stores for it. For random spellings of defaults of every
/// type — decimals with leading and trailing zeros, numbers that SQLite before 3.43 reads as a
/// neighbouring double (`0.00782433`), `Float`s that round (`0.1`, `16777217`), URLs that
/// `URL(string:)` rewrites (`https://x/a b`), UUIDs in either case, dates with offsets — a row the
/// generated DDL's defaults fill, and rows a migration fills (a required attribute added with its
/// default), hold exactly what the runtime writes for Swift's reading of the spelling
/// (`PersistentValue.sqliteValue`, doubles compared bit for bit): on SQLite files and on PostgreSQL.
/// A default stored in another form would break a unique index (`12.50` beside `12.5`) and make
/// `#Predicate { $0.value == defaultValue }` miss the rows the default filled.
final class DefaultValueTests: XCTestCase {
    func testEveryDefaultIsStoredAsTheAppStoresItsValue() throws {
        let postgresURL = PostgresServer.url
        if postgresURL == nil, ProcessInfo.processInfo.environment["CI"] == "true" {
            XCTFail("CI=true but MODELGEN_TEST_POSTGRES_URL is not set")
        }
        var accepted = 0, rejected = 0
        for seed in UInt64(1)...40 {
            var random = SeededRandom(seed: seed)
            var defaults: [(type: String, spelling: String)] = []
            for _ in 0..<12 {
                let candidate = Self.randomDefault(&random)
                // Validation is the gate: a spelling it refuses (a Float that rounds to zero) is left out.
                if TestSupport.compile(Self.yaml([candidate])).hasErrors { rejected += 1 } else { defaults.append(candidate) }
            }
            accepted += defaults.count
            let label = "seed \(seed): " + defaults.map { "\($0.type) \($0.spelling)" }.joined(separator: ", ")
            let compilation = TestSupport.compile(Self.yaml(defaults))
            let new = try XCTUnwrap(compilation.schema, "\(label): \(compilation.diagnostics)")
            let old = try XCTUnwrap(TestSupport.compile(Self.yaml([])).schema)
            let expected = defaults.map { Self.stored($0.spelling, as: $0.type)! }

            // A row the DDL's defaults fill, and rows a migration fills.
            let fresh = try SQLiteDatabase(path: ":memory:")
            try fresh.execute(compilation.files[0].contents + "\nINSERT INTO holder (id, n) VALUES (1, 1);")
            let migrated = try SQLiteDatabase(path: TestSupport.temporaryDirectory().appendingPathComponent("store.sqlite").path)
            try migrated.execute(DDLGenerator(schema: old, dialect: .sqlite).render(header: "test") + "\nINSERT INTO holder (id, n) VALUES (1, 1), (2, 2);")
            try SQLiteMigrator(database: migrated).migrate(from: old, to: new)
            let select = "SELECT " + (defaults.indices.map { "v\($0)" } + ["n"]).joined(separator: ", ") + " FROM holder ORDER BY id"
            for (store, database) in [("SQLite DDL", fresh), ("SQLite migration", migrated)] {
                let rows = try database.query(select)
                XCTAssertFalse(rows.isEmpty, label)
                for row in rows { assertSame(Array(row.dropLast()), expected, defaults, "\(store), \(label)") }
            }

            guard let postgresURL else { continue }
            let columns = defaults.enumerated().map { Self.postgresText(of: "v\($0.offset)", type: $0.element.type) }
            let read = "\nSELECT " + (columns.isEmpty ? "n::text" : columns.joined(separator: " || '|' || ")) + " FROM holder ORDER BY id;"
            let freshRows = try PostgresServer.psql(postgresURL, schema: "mg_default_values", compilation.files[1].contents + "\nINSERT INTO holder (id, n) VALUES (1, 1);" + read)
            let migration = MigrationPlanner.postgresqlStatements(from: old, to: new, allowDataLoss: false).joined(separator: "\n")
            let migratedRows = try PostgresServer.psql(postgresURL, schema: "mg_default_values",
                                                       DDLGenerator(schema: old, dialect: .postgresql).render(header: "test")
                                                       + "\nINSERT INTO holder (id, n) VALUES (1, 1), (2, 2);\n" + migration + read)
            for (store, output) in [("PostgreSQL DDL", freshRows), ("PostgreSQL migration", migratedRows)] {
                let lines = output.split(separator: "\n").map(String.init)
                XCTAssertFalse(lines.isEmpty, label)
                for line in lines where !defaults.isEmpty {
                    let fields = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
                    let values = zip(fields, defaults).map { Self.fromPostgres($0.0, type: $0.1.type) }
                    assertSame(values, expected, defaults, "\(store), \(label)")
                }
            }
        }
        // Most spellings are accepted; a generator whose spellings were all refused would test nothing.
        XCTAssertGreaterThan(accepted, 400, "accepted \(accepted), rejected \(rejected)")
    }

    /// Values equal as stored: doubles bit for bit (a `-0.0` with its sign).
    private func assertSame(_ values: [SQLiteValue?], _ expected: [SQLiteValue], _ defaults: [(type: String, spelling: String)], _ label: String,
                            file: StaticString = #filePath, line: UInt = #line) {
        for (index, (value, wanted)) in zip(values, expected).enumerated() {
            let same = switch (value, wanted) {
            case let (.real(a)?, .real(b)): a.bitPattern == b.bitPattern
            default: value == wanted
            }
            XCTAssertTrue(same, "\(label): \(defaults[index].type) default \"\(defaults[index].spelling)\" stored as \(value.map { "\($0)" } ?? "nil"), the app stores \(wanted)", file: file, line: line)
        }
    }

    /// An entity `Holder` with `n: Int` and one required attribute `v<i>` per default.
    private static func yaml(_ defaults: [(type: String, spelling: String)]) -> String {
        "schema: Defaults\nentities:\n  Holder:\n    attributes:\n      n: Int\n"
            + defaults.enumerated().map { "      v\($0.offset): { type: \($0.element.type), default: \"\($0.element.spelling)\" }\n" }.joined()
    }

    /// What the runtime stores for the value Swift reads from `spelling` (as the generated initializer's default holds it).
    static func stored(_ spelling: String, as type: String) -> SQLiteValue? {
        switch type {
        case "Int", "Int64", "Int32", "Int16": Int64(spelling).map(SQLiteValue.integer)
        case "Double": Double(spelling)?.sqliteValue
        case "Float": Float(spelling)?.sqliteValue
        case "Bool": (spelling == "true").sqliteValue
        case "Decimal": Decimal(string: spelling, locale: Locale(identifier: "en_US_POSIX"))?.sqliteValue
        case "URL": URL(string: spelling)?.sqliteValue
        case "UUID": UUID(uuidString: spelling)?.sqliteValue
        case "Data": Data(base64Encoded: spelling)?.sqliteValue
        case "Date":
            (ISO8601DateFormatter().date(from: spelling) ?? {
                let day = ISO8601DateFormatter()
                day.formatOptions = [.withFullDate]
                return day.date(from: spelling)
            }())?.sqliteValue
        default: .text(spelling)
        }
    }

    /// A PostgreSQL expression giving the column's value as text that reads back exactly.
    private static func postgresText(of column: String, type: String) -> String {
        switch type {
        case "Data": "encode(\(column), 'hex')"
        case "Date": "(extract(epoch FROM \(column)) - 978307200)::text"
        default: "\(column)::text"
        }
    }

    /// The value a field of `postgresText` holds, as the runtime stores it in SQLite.
    private static func fromPostgres(_ text: String, type: String) -> SQLiteValue? {
        switch type {
        case "Data": return .blob([UInt8](hexDigits: text))
        case "Date": return Double(text).map(SQLiteValue.real)
        default: return stored(text, as: type)
        }
    }

    /// A type and a spelling of a default for it, of the kinds that have more than one spelling per value.
    static func randomDefault(_ random: inout SeededRandom) -> (type: String, spelling: String) {
        func digits(_ count: Int) -> String { String((0..<count).map { _ in Character(String(random.below(10))) }) }
        /// `whole` digits, a point and `fraction` digits (none: no point), perhaps negative.
        func decimal(whole: Int, fraction: Int) -> String {
            (random.below(3) == 0 ? "-" : "") + digits(max(1, whole)) + (fraction > 0 ? "." + digits(fraction) : "")
        }
        switch random.below(12) {
        case 0, 1:
            return ("Decimal", decimal(whole: random.below(6), fraction: random.below(8)))
        case 2, 3:
            switch random.below(3) {
            case 0: return ("Double", random.below(8) == 0 ? ["-0.0", "-0", "0.0"][random.below(3)] : decimal(whole: random.below(7), fraction: random.below(10)))
            case 1:
                // Any finite double, as Swift writes it (exponents, subnormals).
                var value = Double(bitPattern: random.next())
                while !value.isFinite { value = Double(bitPattern: random.next()) }
                return ("Double", "\(value)")
            default: return ("Double", decimal(whole: 1, fraction: random.below(4)) + "e" + String(random.below(600) - 300))
            }
        case 4, 5:
            switch random.below(3) {
            case 0: return ("Float", decimal(whole: random.below(9), fraction: random.below(9)))
            case 1: return ("Float", ["0.1", "16777217", "3.4028234e38", "1e-45", "-2.5", "100000000.5", "-0.0"][random.below(7)])
            default: return ("Float", decimal(whole: 1, fraction: random.below(4)) + "e" + String(random.below(70) - 35))
            }
        case 6:
            let urls = ["https://example.com", "HTTPS://Example.COM/a b", "https://example.com/ä?q=1 2#frag", "file:///tmp/a b/c",
                        "http://x/%7e", "mailto:someone@example.com", "https://例え.jp/パス", "relative/path"]
            return ("URL", urls[random.below(urls.count)] + (random.below(2) == 0 ? "" : "/" + digits(3)))
        case 7:
            let uuid = UUID(uuid: (UInt8(random.below(256)), UInt8(random.below(256)), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, UInt8(random.below(256)))).uuidString
            return ("UUID", random.below(2) == 0 ? uuid.lowercased() : uuid)
        case 8:
            let day = String(format: "%04d-%02d-%02d", 1600 + random.below(8000), 1 + random.below(12), 1 + random.below(28))
            guard random.below(2) == 0 else { return ("Date", day) }
            let offset = random.below(3) == 0 ? "Z" : (random.below(2) == 0 ? "+" : "-") + String(format: "%02d:%02d", random.below(14), [0, 30, 45][random.below(3)])
            return ("Date", day + String(format: "T%02d:%02d:%02d", random.below(24), random.below(60), random.below(60)) + offset)
        case 9:
            return ("Data", Data((0..<random.below(12)).map { _ in UInt8(random.below(256)) }).base64EncodedString())
        case 10:
            let type = ["Int", "Int64", "Int32", "Int16"][random.below(4)]
            let bound: Int64 = type == "Int16" ? Int64(Int16.max) : type == "Int32" ? Int64(Int32.max) : Int64.max
            return (type, String(Int64(bitPattern: random.next()) % bound))
        default:
            return random.below(2) == 0 ? ("Bool", random.below(2) == 0 ? "true" : "false") : ("String", "text " + digits(3))
        }
    }
}
