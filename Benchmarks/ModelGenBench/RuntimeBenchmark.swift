import CSQLite
import Foundation
import ModelGenRuntime

/// The runtime beside the raw SQLite C API (prepared statements, one transaction) and GRDB
/// (`GRDBWorkloads`) on the Bookshelf schema: N books, N/10 writers, 50 tags, 3 tags per book. Each method runs in a
/// fresh child process (`--measure-runtime WORKLOAD METHOD BOOKS DATABASE`), methods interleaved,
/// the median of the repetitions reported with its ratio to raw in the same run, and peak memory.
enum RuntimeBenchmark {
    enum Workload: String, CaseIterable {
        /// Build everything in memory as an app would (`volume.tags = […]`), then one save.
        case insert
        /// The books cheaper than 50, by title (`#Predicate` and `SortDescriptor`; raw: the same
        /// `SELECT … WHERE price < 50 ORDER BY title` read into an array of structs), reading every title.
        case fetch
        /// Every writer's books through the relationship (lazy loads; raw: one join read into
        /// writers holding arrays of book structs).
        case traverse
        /// The same with `relationshipKeyPathsForPrefetching = [\.books]` (one query for all books).
        case prefetch
        /// Fetch every book, change the price of every tenth, then one save (raw: the books read into
        /// structs, the changed ones written by a prepared `UPDATE` each, one transaction).
        case update
        /// 1,000 objects by identifier, twice (`model(for:)`; raw: `SELECT … WHERE id = ?` read into a struct).
        case lookup
        /// About half the writers (named before `writer5`) deleted with their books and their books' tag links
        /// (`delete(model:where:)`, the generated plan; raw: one `DELETE` and SQLite's own cascade).
        case delete
        /// An import that skips what it has: N/10 tag names, each name twice, each looked up
        /// (`fetch` by the unique name, limit 1, which sees the unsaved tags) and inserted when
        /// missing, one save (raw: a prepared `SELECT` and `INSERT` per name, one transaction).
        case dedupe
    }

    enum Method: String, CaseIterable { case raw, runtime, grdb }

    static let tagCount = 50

    static func run(sizes: [Int], repetitions: Int, executable: URL, directory: URL) throws {
        print("The runtime beside raw SQLite (Bookshelf: N books, N/10 writers, \(tagCount) tags, 3 tags per book);")
        print("median of \(repetitions) interleaved runs in fresh processes; ratio = method / raw in the same run.")
        print("statements: the SQL statements each method ran (the runtime's `ModelContainer.statementsExecuted`; raw's own count; for GRDB, SQLite's trace of each statement run).")
        print(pad(["workload", "N", "method", "median s", "ratio", "peak MB", "statements"], [9, 8, 8, 10, 7, 8, 10]))
        for books in sizes {
            let base = directory.appendingPathComponent("bookshelf-\(books).sqlite")
            try? FileManager.default.removeItem(at: base)
            _ = try measure(.insert, .raw, books: books, path: base.path)
            // Opened once by the runtime, as an app's store is after its first launch: the runtime
            // then records the schema, and later opens only compare its hash.
            _ = try ModelContainer(for: Bookshelf.self, configurations: ModelConfiguration(url: base))
            for workload in Workload.allCases {
                var results: [Method: [(seconds: Double, peak: Int, statements: Int)]] = [:]
                for _ in 0..<repetitions {
                    for method in Method.allCases {
                        let path = directory.appendingPathComponent("run.sqlite").path
                        for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: path + suffix) }
                        if workload != .insert { try FileManager.default.copyItem(atPath: base.path, toPath: path) }
                        let result = try launch(executable, ["--measure-runtime", workload.rawValue, method.rawValue, String(books), path])
                        let fields = result.output.split(separator: " ").map { String($0).trimmingCharacters(in: .whitespacesAndNewlines) }
                        guard result.status == 0, fields.count == 3, let seconds = Double(fields[0]), let peak = Int(fields[1]), let statements = Int(fields[2]) else {
                            fatalError("runtime measurement failed: \(result.output)")
                        }
                        results[method, default: []].append((seconds, peak, statements))
                    }
                }
                let raw = median(results[.raw]!.map(\.seconds))
                for method in Method.allCases {
                    let seconds = median(results[method]!.map(\.seconds))
                    let peak = results[method]!.map(\.peak).max() ?? 0
                    print(pad([workload.rawValue, String(books), method.rawValue, format(seconds), String(format: "%.2f", seconds / raw),
                               String(format: "%.1f", Double(peak) / 1024), String(results[method]![0].statements)], [9, 8, 8, 10, 7, 8, 10]))
                }
            }
        }
    }

    /// Deleting the root of a chain of folders, each the parent of the next (a cascade cycle through
    /// a self-reference): the generated plan run by the runtime beside a recursive CTE written by
    /// hand, in the same run; SQLite's own cascade refuses chains deeper than 1,000.
    static func runChains(sizes: [Int], repetitions: Int, directory: URL) throws {
        print("Deleting the root of a chain of N folders (cascade through a self-reference); median of \(repetitions);")
        print("ratio = runtime plan / hand-written recursive CTE in the same run.")
        print(pad(["N", "CTE s", "plan s", "ratio", "plan s / N (µs)"], [8, 10, 10, 7, 15]))
        for size in sizes {
            let base = directory.appendingPathComponent("chain-\(size).sqlite")
            try? FileManager.default.removeItem(at: base)
            let builder = try SQLiteDatabase(path: base.path)
            try builder.execute(Bookshelf.sqliteDDL)
            try builder.execute("BEGIN")
            for id in 1...size {
                try builder.run("INSERT INTO folder (id, name, parent_id) VALUES (?, 'f', ?)", [.integer(Int64(id)), id == 1 ? .null : .integer(Int64(id - 1))])
            }
            try builder.execute("COMMIT")
            var cte: [Double] = [], plan: [Double] = []
            for _ in 0..<repetitions {
                let copy = directory.appendingPathComponent("chain-run.sqlite")
                for method in 0..<2 {
                    try? FileManager.default.removeItem(at: copy)
                    try FileManager.default.copyItem(at: base, to: copy)
                    let database = try SQLiteDatabase(path: copy.path)
                    let start = DispatchTime.now()
                    if method == 0 {
                        try database.withoutForeignKeyEnforcement {
                            try database.execute("""
                                BEGIN IMMEDIATE;
                                WITH RECURSIVE doomed(id) AS (SELECT 1 UNION ALL SELECT f.id FROM folder AS f JOIN doomed ON f.parent_id = doomed.id)
                                DELETE FROM folder WHERE id IN doomed;
                                COMMIT
                                """)
                        }
                        cte.append(Measure.elapsed(since: start))
                    } else {
                        let report = try DeletionExecutor(database: database).run(Bookshelf.deletionProgram(for: "Folder")!, seed: .ids([1]))
                        plan.append(Measure.elapsed(since: start))
                        precondition(report.totalDeleted == size)
                    }
                    let left = try database.scalar("SELECT count(*) FROM folder")
                    precondition(left == 0, "\(left) folders survive")
                }
            }
            let (a, b) = (median(cte), median(plan))
            print(pad([String(size), format(a), format(b), String(format: "%.2f", b / a), String(format: "%.1f", b / Double(size) * 1e6)], [8, 10, 10, 7, 15]))
        }
    }

    /// Child process: runs one workload with one method; returns seconds, peak kilobytes and the
    /// statements run.
    static func measure(_ workload: Workload, _ method: Method, books: Int, path: String) throws -> (Double, Int, Int) {
        let start = DispatchTime.now()
        var statements = 0
        switch (workload, method) {
        case (_, .grdb): statements = try GRDBWorkloads.run(workload, books: books, tagCount: tagCount, path: path, schema: Bookshelf.sqliteDDL)
        case (.insert, .runtime): statements = try insertWithRuntime(books: books, path: path)
        case (.insert, .raw): statements = try insertRaw(books: books, path: path)
        case (.traverse, .runtime):
            let container = try ModelContainer(for: Bookshelf.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
            var titles = 0
            for writer in try container.mainContext.fetch(FetchDescriptor<Writer>()) {
                for book in writer.books { titles += book.title.utf8.count }
            }
            precondition(titles > 0)
            statements = container.statementsExecuted
        case (.prefetch, .runtime):
            let container = try ModelContainer(for: Bookshelf.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
            var descriptor = FetchDescriptor<Writer>()
            descriptor.relationshipKeyPathsForPrefetching = [\.books]
            var titles = 0
            for writer in try container.mainContext.fetch(descriptor) {
                for book in writer.books { titles += book.title.utf8.count }
            }
            precondition(titles > 0)
            statements = container.statementsExecuted
        case (.fetch, .runtime):
            let container = try ModelContainer(for: Bookshelf.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
            let cheap = try container.mainContext.fetch(FetchDescriptor<Volume>(predicate: #Predicate { $0.price < 50 }, sortBy: [SortDescriptor(\.title)]))
            precondition(cheap.reduce(0) { $0 + $1.title.utf8.count } > 0)
            statements = container.statementsExecuted
        case (.fetch, .raw):
            let database = try RawDatabase(path)
            var cheap: [RawBook] = []
            try database.each("SELECT id, title, price, writer_id FROM volume WHERE price < 50 ORDER BY title, id") { statement in
                cheap.append(RawBook(statement))
            }
            precondition(cheap.reduce(0) { $0 + $1.title.utf8.count } > 0)
            statements = database.statements
        case (.delete, .runtime):
            let container = try ModelContainer(for: Bookshelf.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
            // Writers are named writer0, writer1, …: those before writer5 are about half.
            let report = try container.mainContext.delete(model: Writer.self, where: #Predicate { $0.name < "writer5" })
            precondition(report.totalDeleted > books / 3)
            statements = container.statementsExecuted
        case (.delete, .raw):
            let database = try RawDatabase(path)
            try database.transaction {
                let delete = try database.prepare("DELETE FROM writer WHERE name < 'writer5'")
                try database.step(delete)
                sqlite3_finalize(delete)
            }
            statements = database.statements
        case (.traverse, .raw), (.prefetch, .raw):
            let database = try RawDatabase(path)
            var writers: [RawWriter] = []
            try database.each("SELECT w.id, w.name, v.id, v.title, v.price, v.writer_id FROM writer w JOIN volume v ON v.writer_id = w.id ORDER BY w.id") { statement in
                let id = sqlite3_column_int64(statement, 0)
                if writers.last?.id != id { writers.append(RawWriter(id: id, name: String(cString: sqlite3_column_text(statement, 1)), books: [])) }
                writers[writers.count - 1].books.append(RawBook(statement, from: 2))
            }
            var titles = 0
            for writer in writers {
                for book in writer.books { titles += book.title.utf8.count }
            }
            precondition(titles > 0)
            statements = database.statements
        case (.update, .runtime):
            let container = try ModelContainer(for: Bookshelf.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
            let context = container.mainContext
            for (index, book) in try context.fetch(FetchDescriptor<Volume>()).enumerated() where index % 10 == 0 { book.price += 1 }
            try context.save()
            statements = container.statementsExecuted
        case (.update, .raw):
            let database = try RawDatabase(path)
            var all: [RawBook] = []
            try database.each("SELECT id, title, price, writer_id FROM volume") { statement in all.append(RawBook(statement)) }
            var changed: [Int] = []
            for index in all.indices where index % 10 == 0 {
                all[index].price += 1
                changed.append(index)
            }
            try database.transaction {
                let update = try database.prepare("UPDATE volume SET price = ? WHERE id = ?")
                for index in changed {
                    sqlite3_bind_double(update, 1, all[index].price)
                    sqlite3_bind_int64(update, 2, all[index].id)
                    try database.step(update)
                }
                sqlite3_finalize(update)
            }
            statements = database.statements
        case (.lookup, .runtime):
            let container = try ModelContainer(for: Bookshelf.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
            let context = container.mainContext
            var found = 0
            for round in 0..<2 {
                for index in 0..<1_000 {
                    let id = Int64((index * 7_919 + round) % books + 1)
                    if try context.model(for: PersistentIdentifier(entity: "Volume", id: id)) != nil { found += 1 }
                }
            }
            precondition(found == 2_000)
            statements = container.statementsExecuted
        case (.dedupe, .runtime):
            let container = try ModelContainer(for: Bookshelf.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
            let context = container.mainContext
            var inserted = 0
            for index in 0..<books / 10 {
                let name = "imported\(index / 2)"
                var descriptor = FetchDescriptor<Label>(predicate: #Predicate { $0.name == name })
                descriptor.fetchLimit = 1
                if try context.fetch(descriptor).isEmpty {
                    context.insert(Label(name: name))
                    inserted += 1
                }
            }
            try context.save()
            precondition(inserted == books / 20)
            statements = container.statementsExecuted
        case (.dedupe, .raw):
            let database = try RawDatabase(path)
            var inserted = 0
            try database.transaction {
                let select = try database.prepare("SELECT id FROM label WHERE name = ?")
                let insert = try database.prepare("INSERT INTO label (name) VALUES (?)")
                for index in 0..<books / 10 {
                    let name = "imported\(index / 2)"
                    sqlite3_bind_text(select, 1, name, -1, RawDatabase.transient)
                    if !database.first(select) {
                        sqlite3_bind_text(insert, 1, name, -1, RawDatabase.transient)
                        try database.step(insert)
                        inserted += 1
                    }
                }
                [select, insert].forEach { sqlite3_finalize($0) }
            }
            precondition(inserted == books / 20)
            statements = database.statements
        case (.lookup, .raw):
            let database = try RawDatabase(path)
            let select = try database.prepare("SELECT id, title, price, writer_id FROM volume WHERE id = ?")
            var found: [RawBook] = []
            for round in 0..<2 {
                for index in 0..<1_000 {
                    sqlite3_bind_int64(select, 1, Int64((index * 7_919 + round) % books + 1))
                    _ = database.first(select) { found.append(RawBook($0)) }
                }
            }
            sqlite3_finalize(select)
            precondition(found.count == 2_000)
            statements = database.statements
        }
        return (Measure.elapsed(since: start), Measure.peakKilobytes() ?? 0, statements)
    }

    /// Returns the statements run.
    private static func insertWithRuntime(books: Int, path: String) throws -> Int {
        let container = try ModelContainer(for: Bookshelf.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        let context = container.mainContext
        let tags = (0..<tagCount).map { Label(name: "tag\($0)") }
        let writers = (0..<max(1, books / 10)).map { Writer(name: "writer\($0)") }
        for index in 0..<books {
            let book = Volume(title: "book\(index)", price: Double(index % 100))
            book.writer = writers[index / 10 % writers.count]
            book.tags = [tags[index % tagCount], tags[(index + 17) % tagCount], tags[(index + 33) % tagCount]]
            context.insert(book)
        }
        try context.save()
        return container.statementsExecuted
    }

    /// Returns the statements run.
    private static func insertRaw(books: Int, path: String) throws -> Int {
        let database = try RawDatabase(path)
        try database.execute(Bookshelf.sqliteDDL)
        try database.transaction {
            let tag = try database.prepare("INSERT INTO label (id, name) VALUES (?, ?)")
            for index in 0..<tagCount {
                sqlite3_bind_int64(tag, 1, Int64(index + 1))
                sqlite3_bind_text(tag, 2, "tag\(index)", -1, RawDatabase.transient)
                try database.step(tag)
            }
            let writer = try database.prepare("INSERT INTO writer (id, name) VALUES (?, ?)")
            let writers = max(1, books / 10)
            for index in 0..<writers {
                sqlite3_bind_int64(writer, 1, Int64(index + 1))
                sqlite3_bind_text(writer, 2, "writer\(index)", -1, RawDatabase.transient)
                try database.step(writer)
            }
            let book = try database.prepare("INSERT INTO volume (id, title, price, writer_id) VALUES (?, ?, ?, ?)")
            let link = try database.prepare("INSERT INTO label_volumes (volume_id, label_id) VALUES (?, ?)")
            for index in 0..<books {
                sqlite3_bind_int64(book, 1, Int64(index + 1))
                sqlite3_bind_text(book, 2, "book\(index)", -1, RawDatabase.transient)
                sqlite3_bind_double(book, 3, Double(index % 100))
                sqlite3_bind_int64(book, 4, Int64(index / 10 % writers + 1))
                try database.step(book)
                for offset in [0, 17, 33] {
                    sqlite3_bind_int64(link, 1, Int64(index + 1))
                    sqlite3_bind_int64(link, 2, Int64((index + offset) % tagCount + 1))
                    try database.step(link)
                }
            }
            [tag, writer, book, link].forEach { sqlite3_finalize($0) }
        }
        return database.statements
    }
}

/// A book as a hand-written data layer returns it: every column the runtime's `Volume` holds.
struct RawBook {
    var id: Int64
    var title: String
    var price: Double
    var writerID: Int64?

    /// Reads the columns `id, title, price, writer_id` from `column` on of the statement's row.
    init(_ statement: OpaquePointer, from column: Int32 = 0) {
        id = sqlite3_column_int64(statement, column)
        title = String(cString: sqlite3_column_text(statement, column + 1))
        price = sqlite3_column_double(statement, column + 2)
        writerID = sqlite3_column_type(statement, column + 3) == SQLITE_NULL ? nil : sqlite3_column_int64(statement, column + 3)
    }
}

/// A writer with its books, as a hand-written data layer builds them from one join.
struct RawWriter {
    var id: Int64
    var name: String
    var books: [RawBook]
}

/// The SQLite C API with nothing in between, as a careful hand-written data layer uses it.
final class RawDatabase {
    static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
    let handle: OpaquePointer
    /// The statements run, counted as the runtime counts its own: each run of a prepared
    /// statement, and each `execute` (however many statements its text holds).
    private(set) var statements = 0

    init(_ path: String) throws {
        var handle: OpaquePointer?
        guard sqlite3_open(path, &handle) == SQLITE_OK, let handle else { throw RawError.failed("open \(path)") }
        self.handle = handle
        try execute("PRAGMA foreign_keys = ON; PRAGMA journal_mode = WAL")
    }

    deinit { sqlite3_close_v2(handle) }

    enum RawError: Error { case failed(String) }

    func execute(_ sql: String) throws {
        statements += 1
        guard sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK else { throw RawError.failed(String(cString: sqlite3_errmsg(handle))) }
    }

    func prepare(_ sql: String) throws -> OpaquePointer {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK, let statement else { throw RawError.failed(String(cString: sqlite3_errmsg(handle))) }
        return statement
    }

    func step(_ statement: OpaquePointer) throws {
        statements += 1
        guard sqlite3_step(statement) == SQLITE_DONE else { throw RawError.failed(String(cString: sqlite3_errmsg(handle))) }
        sqlite3_reset(statement)
    }

    func each(_ sql: String, _ body: (OpaquePointer) -> Void) throws {
        statements += 1
        let statement = try prepare(sql)
        while sqlite3_step(statement) == SQLITE_ROW { body(statement) }
        sqlite3_finalize(statement)
    }

    /// Runs a query to its first row, which `body` reads; whether there was one.
    func first(_ statement: OpaquePointer, _ body: (OpaquePointer) -> Void = { _ in }) -> Bool {
        statements += 1
        let found = sqlite3_step(statement) == SQLITE_ROW
        if found { body(statement) }
        sqlite3_reset(statement)
        return found
    }

    func transaction(_ body: () throws -> Void) throws {
        try execute("BEGIN IMMEDIATE")
        try body()
        try execute("COMMIT")
    }
}
