import GRDB
import GRDBSQLite

/// The runtime benchmark's workloads written with GRDB, as its documentation recommends for speed:
/// records with hand-written row decoding and encoding (no `Codable`), one write transaction per
/// workload, `updateChanges` for the changed column, associations for the traversals, and the
/// same SQLite settings (WAL, foreign keys on) on the same store. Statements are counted by
/// SQLite's trace, one per statement run.
enum GRDBWorkloads {
    struct Book: FetchableRecord, MutablePersistableRecord {
        static let databaseTableName = "volume"
        static let writer = belongsTo(Writer.self, using: ForeignKey(["writer_id"]))
        var id: Int64?
        var title: String
        var price: Double
        var writerID: Int64?

        init(id: Int64? = nil, title: String, price: Double, writerID: Int64?) {
            (self.id, self.title, self.price, self.writerID) = (id, title, price, writerID)
        }

        init(row: Row) throws {
            id = row["id"]
            title = row["title"]
            price = row["price"]
            writerID = row["writer_id"]
        }

        func encode(to container: inout PersistenceContainer) throws {
            container["id"] = id
            container["title"] = title
            container["price"] = price
            container["writer_id"] = writerID
        }

        mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
    }

    /// A row of an id and a name (writers, tags), coded by hand.
    protocol NamedRecord: FetchableRecord, MutablePersistableRecord {
        var id: Int64? { get set }
        var name: String { get set }
        init(id: Int64?, name: String)
    }

    struct Writer: NamedRecord {
        static let databaseTableName = "writer"
        static let books = hasMany(Book.self, key: "books", using: ForeignKey(["writer_id"]))
        var id: Int64?
        var name: String
    }

    struct Tag: NamedRecord {
        static let databaseTableName = "label"
        var id: Int64?
        var name: String
    }

    struct Link: PersistableRecord {
        static let databaseTableName = "label_volumes"
        var labelID: Int64
        var volumeID: Int64

        func encode(to container: inout PersistenceContainer) throws {
            container["label_id"] = labelID
            container["volume_id"] = volumeID
        }
    }

    /// A writer with its books, as `including(all:)` fetches them.
    struct WriterWithBooks: FetchableRecord {
        var writer: Writer
        var books: [Book]

        init(row: Row) throws {
            writer = try Writer(row: row)
            books = try row.prefetchedRows["books"]?.map(Book.init(row:)) ?? []
        }
    }

    /// Runs `workload` on the store at `path`; returns the statements run.
    static func run(_ workload: RuntimeBenchmark.Workload, books: Int, tagCount: Int, path: String, schema: String) throws -> Int {
        /// Read and written on the queue's one connection, one access at a time.
        final class Counter: @unchecked Sendable { var value = 0 }
        let statements = Counter()
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA journal_mode = WAL")
            // SQLite's trace of each statement run as it ends: not the programs SQLite runs for a
            // statement (its cascades' triggers), which raw's and the runtime's counts leave out
            // too; GRDB's own trace reports those as more runs of the statement.
            sqlite3_trace_v2(db.sqliteConnection, UInt32(SQLITE_TRACE_PROFILE), { _, context, _, _ in
                Unmanaged<Counter>.fromOpaque(context!).takeUnretainedValue().value += 1
                return 0
            }, Unmanaged.passUnretained(statements).toOpaque())
        }
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        switch workload {
        case .insert:
            try queue.write { db in
                try db.execute(sql: schema)
                var tags = (0..<tagCount).map { Tag(id: nil, name: "tag\($0)") }
                for index in tags.indices { try tags[index].insert(db) }
                var writers = (0..<max(1, books / 10)).map { Writer(id: nil, name: "writer\($0)") }
                for index in writers.indices { try writers[index].insert(db) }
                for index in 0..<books {
                    var book = Book(title: "book\(index)", price: Double(index % 100), writerID: writers[index / 10 % writers.count].id)
                    try book.insert(db)
                    for offset in [0, 17, 33] {
                        try Link(labelID: tags[(index + offset) % tagCount].id!, volumeID: book.id!).insert(db)
                    }
                }
            }
        case .fetch:
            let cheap = try queue.read { db in
                try Book.filter(Column("price") < 50).order(Column("title"), Column("id")).fetchAll(db)
            }
            precondition(cheap.reduce(0) { $0 + $1.title.utf8.count } > 0)
        case .traverse:
            // Each writer's books by its association, one query per writer (the lazy loads' N+1).
            let titles = try queue.read { db in
                var titles = 0
                for writer in try Writer.fetchAll(db) {
                    for book in try writer.request(for: Writer.books).fetchAll(db) { titles += book.title.utf8.count }
                }
                return titles
            }
            precondition(titles > 0)
        case .prefetch:
            let writers = try queue.read { db in
                try WriterWithBooks.fetchAll(db, Writer.including(all: Writer.books))
            }
            var titles = 0
            for writer in writers {
                for book in writer.books { titles += book.title.utf8.count }
            }
            precondition(titles > 0)
        case .update:
            try queue.write { db in
                for (index, var book) in try Book.fetchAll(db).enumerated() where index % 10 == 0 {
                    try book.updateChanges(db) { $0.price += 1 }
                }
            }
        case .lookup:
            let found = try queue.read { db in
                var found: [Book] = []
                for round in 0..<2 {
                    for index in 0..<1_000 {
                        if let book = try Book.fetchOne(db, key: Int64((index * 7_919 + round) % books + 1)) { found.append(book) }
                    }
                }
                return found
            }
            precondition(found.count == 2_000)
        case .delete:
            // The writers' deletion cascades to their books and the books' tag links in SQLite.
            let deleted = try queue.write { db in try Writer.filter(Column("name") < "writer5").deleteAll(db) }
            precondition(deleted > 0)
        case .dedupe:
            let inserted = try queue.write { db in
                var inserted = 0
                for index in 0..<books / 10 {
                    let name = "imported\(index / 2)"
                    if try Tag.filter(Column("name") == name).fetchOne(db) == nil {
                        var tag = Tag(id: nil, name: name)
                        try tag.insert(db)
                        inserted += 1
                    }
                }
                return inserted
            }
            precondition(inserted == books / 20)
        }
        return statements.value
    }
}

extension GRDBWorkloads.NamedRecord {
    init(row: Row) throws {
        self.init(id: row["id"], name: row["name"])
    }

    func encode(to container: inout PersistenceContainer) throws {
        container["id"] = id
        container["name"] = name
    }

    mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}
