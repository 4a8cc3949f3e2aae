import ModelGenRuntime

/// An SQLite error as the commands print it: a database another connection kept locked says so,
/// and what to do.
func databaseErrorMessage(_ error: SQLiteError, database: String) -> String {
    guard error.isBusy else { return "error: \(error)" }
    return "error: \(database) was locked by another connection for more than \(SQLiteDatabase.busyTimeoutMilliseconds / 1_000) s "
        + "(another process writing it); nothing was changed; try again"
}
