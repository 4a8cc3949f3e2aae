import CSQLite

/// A migration that turns a `Double` attribute into a `String` one writes each value as Swift's
/// `description` of it (`1.0`, `0.1`, `1e-05`, `1e+16`, `inf`), as SPEC §6 says. SQLite's own
/// `CAST(x AS TEXT)` keeps 15 significant digits (`0.30000000000000004` becomes `0.3`), so every
/// connection the runtime opens registers the function `modelgen_double_text`, which the
/// migration's copy of the column calls:
///
///     INSERT INTO "modelgen_new_item" ("id", "score") SELECT "id", modelgen_double_text("score") FROM "item"
///
/// A number (`REAL`, or an `INTEGER` in a `REAL` column) becomes its `Double`'s description;
/// `NULL` stays `NULL`; text or a blob that another program stored in the column is copied as it is.
extension SQLiteDatabase {
    /// The name of the function, as SQL calls it.
    public static let doubleTextFunction = "modelgen_double_text"

    func registerDoubleTextFunction() throws {
        let status = sqlite3_create_function_v2(handle, Self.doubleTextFunction, 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil, { context, _, arguments in
            guard let context, let value = arguments?[0] else { return }
            switch sqlite3_value_type(value) {
            case SQLITE_INTEGER, SQLITE_FLOAT:
                let text = sqlite3_value_double(value).description
                sqlite3_result_text(context, text, Int32(text.utf8.count), unsafeBitCast(-1, to: sqlite3_destructor_type.self))
            default:
                sqlite3_result_value(context, value)
            }
        }, nil, nil, nil)
        guard status == SQLITE_OK else { throw error(status, sql: nil) }
    }
}
