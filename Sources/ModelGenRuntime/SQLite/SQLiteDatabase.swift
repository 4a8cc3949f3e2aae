import CSQLite
@_exported import ModelGenQuery

/// A value read from or bound to SQLite.
public typealias SQLiteValue = SQLValue

/// An error SQLite reported, with its result code and message.
public struct SQLiteError: Error, Equatable, CustomStringConvertible {
    public var code: Int32
    public var message: String
    /// The statement that failed, if any.
    public var sql: String?

    public var description: String {
        sql.map { "SQLite error \(code): \(message) (in: \($0))" } ?? "SQLite error \(code): \(message)"
    }

    /// True for a UNIQUE, NOT NULL, CHECK or FOREIGN KEY violation.
    public var isConstraintViolation: Bool { code & 0xFF == SQLITE_CONSTRAINT }
    /// A key referring to no row: `SQLITE_CONSTRAINT_FOREIGNKEY` (a macro Swift does not import)
    /// from a statement, plain `SQLITE_CONSTRAINT` from a `COMMIT` that checked deferred keys.
    public var isForeignKeyViolation: Bool {
        code == SQLITE_CONSTRAINT | (3 << 8) || (code == SQLITE_CONSTRAINT && message == "FOREIGN KEY constraint failed")
    }
    /// Another connection held a lock for longer than the busy timeout (`SQLITE_BUSY`).
    public var isBusy: Bool { code & 0xFF == SQLITE_BUSY }
    /// A text or blob longer than the connection's length limit (`lengthLimit`).
    public var isTooBig: Bool { code & 0xFF == SQLITE_TOOBIG }
    /// NULL in a `NOT NULL` column (`SQLITE_CONSTRAINT_NOTNULL`).
    public var isNotNullViolation: Bool { code == SQLITE_CONSTRAINT | (5 << 8) }
}

extension SQLiteError {
    /// The error the connection reports for its last call.
    init(connection: OpaquePointer, sql: String?) {
        self.init(code: sqlite3_extended_errcode(connection), message: String(cString: sqlite3_errmsg(connection)), sql: sql)
    }
}

/// One connection to an SQLite database, with foreign keys enforced.
///
/// Not thread-safe: use a connection from one thread (or actor) at a time.
public final class SQLiteDatabase {
    let handle: OpaquePointer
    private var statementCache: [String: SQLiteStatement] = [:]
    /// Statements run through this connection (`execute` counts each call as one).
    public private(set) var statementsExecuted = 0

    /// Opens (or creates, when `create` is true) the database file at `path`; `":memory:"` for an in-memory one.
    public init(path: String, create: Bool = true) throws {
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX
        let status = sqlite3_open_v2(path, &handle, flags, nil)
        guard status == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            if let handle { sqlite3_close_v2(handle) }
            throw SQLiteError(code: status, message: "cannot open database '\(path)': \(message)")
        }
        self.handle = handle
        sqlite3_busy_timeout(handle, Self.busyTimeoutMilliseconds)
        try execute("PRAGMA foreign_keys = ON")
        try registerDecimalCollation()
        try registerDecimalTextFunction()
        try registerFloatingPointFunctions()
    }

    /// `SQLITE_TRANSIENT` (a macro Swift does not import): SQLite copies the bytes it is given
    /// before the call returns.
    static var transientDestructor: sqlite3_destructor_type { unsafeBitCast(-1, to: sqlite3_destructor_type.self) }

    /// How long a statement waits for another connection's lock before it fails with "busy".
    public static let busyTimeoutMilliseconds: Int32 = 5_000

    deinit {
        statementCache.removeAll()
        sqlite3_close_v2(handle)
    }

    /// Puts the store in write-ahead-log mode (a setting the file keeps). Changing the mode needs
    /// the store to itself, and SQLite answers "busy" at once rather than wait while another
    /// connection opens it: the change is tried again for up to the busy timeout. A store already in
    /// the mode is only read.
    func useWriteAheadLog() throws {
        guard try query("PRAGMA journal_mode").first?.first != .text("wal") else { return }
        let deadline = ContinuousClock.now + .milliseconds(Int(Self.busyTimeoutMilliseconds))
        while true {
            do {
                try execute("PRAGMA journal_mode = WAL")
                return
            } catch let error as SQLiteError where error.isBusy && ContinuousClock.now < deadline {
                sqlite3_sleep(5)
            }
        }
    }

    /// Runs one or more statements that return no rows.
    public func execute(_ sql: String) throws {
        statementsExecuted += 1
        var message: UnsafeMutablePointer<CChar>?
        let status = sqlite3_exec(handle, sql, nil, nil, &message)
        if status != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
            sqlite3_free(message)
            throw SQLiteError(code: status, message: text, sql: sql)
        }
    }

    /// A prepared statement, cached by its text so each is compiled once per connection.
    public func statement(_ sql: String) throws -> SQLiteStatement {
        if let cached = statementCache[sql] {
            cached.reset()
            return cached
        }
        let statement = try SQLiteStatement(database: self, sql: sql)
        statementCache[sql] = statement
        return statement
    }

    /// Runs a statement with bindings and returns all rows.
    @discardableResult
    public func query(_ sql: String, _ bindings: [SQLiteValue] = []) throws -> [[SQLiteValue]] {
        var rows: [[SQLiteValue]] = []
        try forEachRow(sql, bindings) { rows.append($0.row()) }
        return rows
    }

    /// Runs a statement with bindings and calls `body` at each row, which reads the columns it
    /// needs from the statement (`value(at:)`) without the rows being collected first. `body` must
    /// not run the same SQL again.
    public func forEachRow(_ sql: String, _ bindings: [SQLiteValue] = [], _ body: (SQLiteStatement) throws -> Void) throws {
        statementsExecuted += 1
        let statement = try statement(sql)
        try statement.bind(bindings)
        defer { statement.reset() }
        while try statement.step() {
            try body(statement)
        }
    }

    /// Runs a statement with bindings and returns how many rows it changed.
    @discardableResult
    public func run(_ sql: String, _ bindings: [SQLiteValue] = []) throws -> Int {
        try run(statement(sql)) { try $0.bind(bindings) }
    }

    /// Runs `statement` (one `statement(_:)` made) once with what `bind` binds
    /// (`SQLiteStatement.bind(_:at:)`), and returns how many rows it changed: no array of values,
    /// no lookup of the statement's text.
    public func run(_ statement: SQLiteStatement, bind: (SQLiteStatement) throws -> Void) throws -> Int {
        statementsExecuted += 1
        statement.reset()
        defer { statement.reset() }
        try bind(statement)
        while try statement.step() {}
        return changes
    }

    /// Runs one statement, compiled once, for each element of `rows`, whose values `bind` binds
    /// (`SQLiteStatement.bind(_:at:)`): no array of values per row. Each run counts as one statement.
    public func runEach<Rows: Sequence>(_ sql: String, _ rows: Rows, bind: (SQLiteStatement, Rows.Element) throws -> Void) throws {
        var iterator = rows.makeIterator()
        guard var row = iterator.next() else { return }
        let statement = try statement(sql)
        defer { statement.reset() }
        while true {
            try bind(statement, row)
            statementsExecuted += 1
            while try statement.step() {}
            statement.reset()
            guard let next = iterator.next() else { return }
            row = next
        }
    }

    /// The single integer a query returns (for `SELECT count(*) …`).
    public func scalar(_ sql: String, _ bindings: [SQLiteValue] = []) throws -> Int64 {
        try query(sql, bindings).first?.first?.integer ?? 0
    }

    /// The most bytes a text or blob value may hold (`SQLITE_LIMIT_LENGTH`).
    public var lengthLimit: Int { Int(sqlite3_limit(handle, SQLITE_LIMIT_LENGTH, -1)) }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    public var changes: Int { Int(sqlite3_changes64(handle)) }

    /// True while a transaction is open.
    public var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// Runs `body`, which opens and ends its own transaction, with foreign-key enforcement off, then
    /// restores it (`PRAGMA foreign_keys` cannot change inside a transaction). Only for callers
    /// that guarantee by construction that nothing is left dangling, such as a deletion plan: without
    /// checks, a multi-row `DELETE` keeps no rowids and probes no child table per row, and an
    /// unfiltered `DELETE FROM table` takes SQLite's truncate optimization. A transaction `body`
    /// leaves open is rolled back.
    public func withoutForeignKeyEnforcement<T>(_ body: () throws -> T) throws -> T {
        precondition(!isInTransaction, "PRAGMA foreign_keys cannot change inside a transaction")
        guard try scalar("PRAGMA foreign_keys") == 1 else { return try body() }
        try execute("PRAGMA foreign_keys = OFF")
        let result = Result { try body() }
        // Enforcement is switched back on even when the rollback fails; its error is thrown after.
        let rollback = Result { if isInTransaction { try execute("ROLLBACK") } }
        try execute("PRAGMA foreign_keys = ON")
        try rollback.get()
        return try result.get()
    }

    func error(_ status: Int32, sql: String?) -> SQLiteError {
        SQLiteError(connection: handle, sql: sql)
    }
}

/// A compiled statement. It refers to its connection's handle, not to the `SQLiteDatabase` that
/// caches it, so that the two do not keep each other alive: the connection closes when its
/// database object goes (`sqlite3_close_v2` waits for statements still held elsewhere).
public final class SQLiteStatement {
    private let connection: OpaquePointer
    private let handle: OpaquePointer
    public let sql: String

    init(database: SQLiteDatabase, sql: String) throws {
        var handle: OpaquePointer?
        let status = sqlite3_prepare_v2(database.handle, sql, -1, &handle, nil)
        guard status == SQLITE_OK, let handle else { throw database.error(status, sql: sql) }
        connection = database.handle
        self.handle = handle
        self.sql = sql
    }

    deinit { sqlite3_finalize(handle) }

    public func bind(_ values: [SQLiteValue]) throws {
        sqlite3_clear_bindings(handle)
        for (offset, value) in values.enumerated() { try bind(value, at: Int32(offset + 1)) }
    }

    /// Binds a value to parameter `position` (1-based); throws SQLite's error for a value it does
    /// not take (longer than its limit, `SQLITE_TOOBIG`).
    public func bind(_ value: SQLiteValue, at position: Int32) throws {
        guard bindStatus(value, at: position) == SQLITE_OK else { throw SQLiteError(connection: connection, sql: sql) }
    }

    private func bindStatus(_ value: SQLiteValue, at index: Int32) -> Int32 {
        let transient = SQLiteDatabase.transientDestructor
        switch value {
        case .null: return sqlite3_bind_null(handle, index)
        case let .integer(number): return sqlite3_bind_int64(handle, index, number)
        case let .real(number): return sqlite3_bind_double(handle, index, number)
        // Lengths are given in bytes, so NUL characters are kept; an empty value is bound as an
        // empty value, not through a null pointer (which SQLite would store as NULL).
        case var .text(text):
            return text.withUTF8 { bytes in
                // 64-bit lengths: a value past SQLite's limit is refused (SQLITE_TOOBIG), never cut.
                bytes.isEmpty ? sqlite3_bind_text(handle, index, "", 0, transient)
                    : sqlite3_bind_text64(handle, index, UnsafeRawPointer(bytes.baseAddress!).assumingMemoryBound(to: CChar.self),
                                          sqlite3_uint64(bytes.count), transient, UInt8(SQLITE_UTF8))
            }
        case let .blob(bytes):
            return bytes.isEmpty ? sqlite3_bind_zeroblob(handle, index, 0)
                : bytes.withUnsafeBytes { sqlite3_bind_blob64(handle, index, $0.baseAddress, sqlite3_uint64($0.count), transient) }
        }
    }

    /// Advances; true while a row is available.
    public func step() throws -> Bool {
        let status = sqlite3_step(handle)
        switch status {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let error = SQLiteError(connection: connection, sql: sql)
            sqlite3_reset(handle)
            throw error
        }
    }

    public func reset() { sqlite3_reset(handle) }

    public var columnCount: Int { Int(sqlite3_column_count(handle)) }

    public func value(at column: Int) -> SQLiteValue {
        let index = Int32(column)
        switch sqlite3_column_type(handle, index) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(handle, index))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(handle, index))
        case SQLITE_TEXT:
            // Read by length, not up to the first NUL.
            let count = Int(sqlite3_column_bytes(handle, index))
            guard count > 0, let pointer = sqlite3_column_text(handle, index) else { return .text("") }
            return .text(String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(handle, index))
            guard count > 0, let pointer = sqlite3_column_blob(handle, index) else { return .blob([]) }
            return .blob([UInt8](UnsafeRawBufferPointer(start: pointer, count: count)))
        default: return .null
        }
    }

    /// The integer in `column` (0 for NULL).
    public func integer(at column: Int) -> Int64 { sqlite3_column_int64(handle, Int32(column)) }

    public func row() -> [SQLiteValue] {
        (0..<columnCount).map(value(at:))
    }
}
