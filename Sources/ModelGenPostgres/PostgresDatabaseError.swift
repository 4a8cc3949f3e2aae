import PostgresNIO

/// An error of the PostgreSQL server, or of the connection to it, that has no more specific type
/// here (a constraint violation is a `ModelContextError`, a serialization failure a
/// `PostgresRetryableError`, a refused delete a `PostgresDeletionRefused`), described with what
/// PostgresNIO's `PSQLError` leaves out of its description: the server's message, detail, hint
/// and SQLSTATE, or what broke the connection. The description may hold values of rows (the
/// server's detail quotes them): log it, and do not show it to an app's end users.
public struct PostgresDatabaseError: Error, CustomStringConvertible {
    /// The server's SQLSTATE (`42P01`: no such table, `57014`: statement cancelled, …); nil when
    /// the error is the connection's, not the server's.
    public var sqlState: String?
    /// The server's message, or the kind of connection failure (`connectionError`, `poolClosed`, …).
    public var message: String
    /// PostgresNIO's error, with the query that failed (`String(reflecting:)` shows it).
    public var underlying: PSQLError

    /// The error `error` is, when it is PostgresNIO's.
    public init?(_ error: Error) {
        guard let error = error as? PSQLError else { return nil }
        underlying = error
        if let info = error.serverInfo {
            sqlState = info[.sqlState]
            message = [info[.message], info[.detail], info[.hint].map { "Hint: \($0)" }].compactMap { $0 }.joined(separator: " ")
        } else {
            sqlState = nil
            message = "\(error.code)" + (error.underlying.map { " (\($0))" } ?? "")
        }
    }

    public var description: String {
        if let sqlState {
            return "PostgreSQL refused a statement: \(message) (SQLSTATE \(sqlState)); the transaction was rolled back"
        }
        return "the connection to PostgreSQL failed: \(message); check that the server runs and the client can reach it, then run the unit of work again"
    }
}
