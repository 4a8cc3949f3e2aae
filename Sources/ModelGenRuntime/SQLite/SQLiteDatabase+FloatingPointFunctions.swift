import CSQLite
import ModelGenSchema

/// A migration that turns a `Double` or `Float` attribute into a `String` one writes each value as
/// Swift's `description` of it (`1.0`, `0.1`, `1e-05`, `1e+16`, `inf`), as SPEC §6 says. SQLite's
/// own `CAST(x AS TEXT)` keeps 15 significant digits (`0.30000000000000004` becomes `0.3`), so every
/// connection the runtime opens registers two functions, which the migration's copy of the column
/// calls:
///
///     INSERT INTO "modelgen_new_item" ("id", "score") SELECT "id", modelgen_double_text("score") FROM "item"
///
/// `modelgen_double_text(x)` writes the `Double`, `modelgen_float_text(x)` the `Float` (a `Float`
/// attribute's column holds the `Double` of its value). A number (`REAL`, or an `INTEGER` another
/// program wrote) becomes its description; `NULL` stays `NULL`; text or a blob that another program
/// stored in the column is copied as it is.
///
/// A third, `modelgen_exact_float(x)`, serves a migration to a `Float` attribute: the `Float` an
/// integer or a `Double` is exactly (`Float(exactly:)`, as a `REAL`), or `NULL` when it is not one
/// (`16777217`, `0.1`), which the migration counts and refuses:
///
///     SELECT count(*) FROM "item" WHERE "score" IS NOT NULL AND modelgen_exact_float("score") IS NULL
///
/// Two more, `modelgen_text_double(x)` and `modelgen_text_float(x)`, serve a migration of a `String`
/// attribute to a `Double` or `Float` one: the number a decimal spelling is (see `SQLNames.textDoubleFunction`).
extension SQLiteDatabase {
    func registerFloatingPointFunctions() throws {
        try register(SQLNames.doubleTextFunction, asFloat: false)
        try register(SQLNames.floatTextFunction, asFloat: true)
        let status = sqlite3_create_function_v2(handle, SQLNames.sqliteExactFloatFunction, 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil, { context, _, arguments in
            guard let context, let value = arguments?[0] else { return }
            let exact: Float? = switch sqlite3_value_type(value) {
            case SQLITE_INTEGER: Float(exactly: sqlite3_value_int64(value))
            case SQLITE_FLOAT: Float(exactly: sqlite3_value_double(value))
            default: nil
            }
            if let exact { sqlite3_result_double(context, Double(exact)) } else { sqlite3_result_null(context) }
        }, nil, nil, nil)
        guard status == SQLITE_OK else { throw error(status, sql: nil) }
        try registerTextNumberFunction(SQLNames.textDoubleFunction, asFloat: false)
        try registerTextNumberFunction(SQLNames.textFloatFunction, asFloat: true)
    }

    /// `modelgen_text_double(x)`, `modelgen_text_float(x)`: the number a text is (`SQLNames.textDoubleFunction`), or NULL.
    private func registerTextNumberFunction(_ name: String, asFloat: Bool) throws {
        let status = sqlite3_create_function_v2(handle, name, 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, asFloat ? UnsafeMutableRawPointer(bitPattern: 1) : nil, { context, _, arguments in
            guard let context, let value = arguments?[0] else { return }
            guard let text = SQLiteDatabase.text(of: value) else { return sqlite3_result_null(context) }
            let number: Double? = sqlite3_user_data(context) == nil ? Double(text) : Float(text).map(Double.init)
            guard let nonzero = SQLNames.decimalNumberIsNonzero(text), let number, number.isFinite, number != 0 || !nonzero else { return sqlite3_result_null(context) }
            sqlite3_result_double(context, number)
        }, nil, nil, nil)
        guard status == SQLITE_OK else { throw error(status, sql: nil) }
    }

    /// The text an SQL function's argument holds; nil for any other kind of value.
    static func text(of value: OpaquePointer) -> String? {
        guard sqlite3_value_type(value) == SQLITE_TEXT, let bytes = sqlite3_value_text(value) else { return nil }
        return String(decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_value_bytes(value))), as: UTF8.self)
    }

    private func register(_ name: String, asFloat: Bool) throws {
        // Which of the two is the function's user data (nil for `Double`): the C callback captures nothing.
        let status = sqlite3_create_function_v2(handle, name, 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, asFloat ? UnsafeMutableRawPointer(bitPattern: 1) : nil, { context, _, arguments in
            guard let context, let value = arguments?[0] else { return }
            switch sqlite3_value_type(value) {
            case SQLITE_INTEGER, SQLITE_FLOAT:
                let number = sqlite3_value_double(value)
                let text = sqlite3_user_data(context) == nil ? number.description : Float(number).description
                sqlite3_result_text(context, text, Int32(text.utf8.count), SQLiteDatabase.transientDestructor)
            default:
                sqlite3_result_value(context, value)
            }
        }, nil, nil, nil)
        guard status == SQLITE_OK else { throw error(status, sql: nil) }
    }
}
