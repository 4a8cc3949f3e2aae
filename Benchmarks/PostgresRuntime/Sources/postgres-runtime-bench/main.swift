import FluentKit
import FluentPostgresDriver
import Foundation
import Logging
import ModelGenPostgres
import ModelGenRuntime
import NIOCore
import NIOPosix
import PostgresNIO

// postgres-runtime-bench: the generated models on PostgreSQL (ModelGenPostgres) beside raw
// PostgresNIO (the floor: a careful hand-written data layer, one statement per table with arrays)
// and Fluent (the ORM server-side Swift users pick today, its keys cascading in the database), on
// the Bookshelf schema: N books, N/10 writers, 50 tags, 3 tags per book. Each measurement runs in
// a new PostgreSQL schema with fresh tables; methods interleave; medians of the repetitions.
//
//   swift run -c release postgres-runtime-bench --postgres postgresql://postgres@127.0.0.1:5432/postgres [--sizes 10000,100000] [--repetitions 3]
//       [--workloads insert,fetch,traverse,delete] [--methods raw,runtime,fluent]

let arguments = Array(CommandLine.arguments.dropFirst())
func option(_ name: String) -> String? { arguments.firstIndex(of: name).flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil } }
guard let url = option("--postgres").flatMap(URLComponents.init(string:)), let host = url.host else {
    print("usage: postgres-runtime-bench --postgres postgresql://USER@HOST:PORT/DATABASE [--sizes 10000,100000] [--repetitions 3]")
    exit(2)
}
let sizes = option("--sizes").map { $0.split(separator: ",").compactMap { Int($0) } } ?? [10_000, 100_000]
let repetitions = Int(option("--repetitions") ?? "") ?? 3
let workloads = option("--workloads").map { $0.split(separator: ",").compactMap { Workload(rawValue: String($0)) } } ?? Workload.allCases
let methods = option("--methods").map { $0.split(separator: ",").compactMap { Method(rawValue: String($0)) } } ?? Method.allCases
let tagCount = 50
let logger: Logger = {
    var logger = Logger(label: "postgres-runtime-bench")
    logger.logLevel = .error
    return logger
}()

func configuration(searchPath: String? = nil) -> PostgresClient.Configuration {
    var configuration = PostgresClient.Configuration(host: host, port: url.port ?? 5432, username: url.user ?? "postgres", password: url.password,
                                                     database: url.path.split(separator: "/").first.map(String.init), tls: .disable)
    if let searchPath { configuration.options.additionalStartupParameters = [("search_path", searchPath)] }
    return configuration
}

enum Workload: String, CaseIterable {
    /// Everything made in memory, then saved in one transaction.
    case insert
    /// The books cheaper than 50, by title, every column read.
    case fetch
    /// The first 1,000 writers by name and all their books (one join; prefetching; eager loading).
    case traverse
    /// The writers named before `writer5` (about half) with their books and their books' tag links.
    case delete
}

enum Method: String, CaseIterable { case raw, runtime, fluent }

/// A book as a hand-written data layer reads it.
struct BookRow {
    var id: Int64, title: String, price: Double, writerID: Int64?
}

/// Fills the ModelGen tables the way the raw method inserts (one statement per table, arrays).
func insertRaw(books: Int, on client: PostgresClient) async throws {
    try await client.withTransaction(logger: logger) { connection in
        var labelIDs: [Int64] = [], writerIDs: [Int64] = [], volumeIDs: [Int64] = []
        let labelNames = (0..<tagCount).map { "tag\($0)" }
        for try await id in try await connection.query("INSERT INTO label (name) SELECT * FROM unnest(\(labelNames)::text[]) RETURNING id", logger: logger).decode(Int64.self) { labelIDs.append(id) }
        let writerNames = (0..<max(1, books / 10)).map { "writer\($0)" }
        for try await id in try await connection.query("INSERT INTO writer (name) SELECT * FROM unnest(\(writerNames)::text[]) RETURNING id", logger: logger).decode(Int64.self) { writerIDs.append(id) }
        let titles = (0..<books).map { "book\($0)" }, prices = (0..<books).map { Double($0 % 100) }, writers = (0..<books).map { writerIDs[$0 / 10 % writerIDs.count] }
        for try await id in try await connection.query("INSERT INTO volume (title, price, writer_id) SELECT * FROM unnest(\(titles)::text[], \(prices)::float8[], \(writers)::int8[]) RETURNING id", logger: logger).decode(Int64.self) {
            volumeIDs.append(id)
        }
        var linkVolumes: [Int64] = [], linkLabels: [Int64] = []
        for (index, volume) in volumeIDs.enumerated() {
            for offset in [0, 17, 33] {
                linkVolumes.append(volume)
                linkLabels.append(labelIDs[(index + offset) % tagCount])
            }
        }
        _ = try await connection.query("INSERT INTO label_volumes (volume_id, label_id) SELECT * FROM unnest(\(linkVolumes)::int8[], \(linkLabels)::int8[])", logger: logger).collect()
    }
}

/// Runs one workload with one method on fresh tables (data in place for all but inserts); returns seconds.
func measure(_ workload: Workload, _ method: Method, books: Int, admin: PostgresClient) async throws -> Double {
    let schema = "mg_bench_\(UUID().uuidString.prefix(8).lowercased())"
    _ = try await admin.query(PostgresQuery(unsafeSQL: "CREATE SCHEMA \(schema)"), logger: logger).collect()
    defer { Task { _ = try? await admin.query(PostgresQuery(unsafeSQL: "DROP SCHEMA \(schema) CASCADE"), logger: logger).collect() } }
    let client = PostgresClient(configuration: configuration(searchPath: schema), backgroundLogger: logger)
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { await client.run() }
        defer { group.cancelAll() }
        let container = try await PostgresModelContainer(for: Bookshelf.self, client: client, logger: logger)
        let databases = Databases(threadPool: .singleton, on: MultiThreadedEventLoopGroup.singleton)
        databases.use(.postgres(client: client, logger: logger), as: .psql)
        let fluent = databases.database(.psql, logger: logger, on: MultiThreadedEventLoopGroup.singleton.any())!
        try await FluentBookshelf.create(on: fluent)
        if workload != .insert {
            try await insertRaw(books: books, on: client)
            if method == .fluent {
                for statement in FluentBookshelf.copyFromModelGenTables { _ = try await client.query(PostgresQuery(unsafeSQL: statement), logger: logger).collect() }
            }
        }
        _ = try await client.query("ANALYZE", logger: logger).collect()
        let start = ContinuousClock.now
        try await run(workload, method, books: books, client: client, container: container, fluent: fluent)
        let elapsed = ContinuousClock.now - start
        await databases.shutdownAsync()
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }
}

func run(_ workload: Workload, _ method: Method, books: Int, client: PostgresClient, container: PostgresModelContainer, fluent: any Database) async throws {
    switch (workload, method) {
    case (.insert, .raw):
        try await insertRaw(books: books, on: client)
    case (.insert, .runtime):
        let context = PostgresModelContext(container)
        let tags = (0..<tagCount).map { Label(name: "tag\($0)") }
        let writers = (0..<max(1, books / 10)).map { Writer(name: "writer\($0)") }
        for index in 0..<books {
            let book = Volume(title: "book\(index)", price: Double(index % 100))
            book.writer = writers[index / 10 % writers.count]
            book.tags = [tags[index % tagCount], tags[(index + 17) % tagCount], tags[(index + 33) % tagCount]]
            context.insert(book)
        }
        try await context.save()
    case (.insert, .fluent):
        try await FluentBookshelf.insert(books: books, tagCount: tagCount, on: fluent)

    case (.fetch, .raw):
        var rows: [BookRow] = []
        for try await (id, title, price, writerID) in try await client.query("SELECT id, title, price, writer_id FROM volume WHERE price < \(50.0) ORDER BY title, id", logger: logger)
            .decode((Int64, String, Double, Int64?).self) {
            rows.append(BookRow(id: id, title: title, price: price, writerID: writerID))
        }
        precondition(rows.count == books / 2)
    case (.fetch, .runtime):
        let found = try await PostgresModelContext(container).fetch(FetchDescriptor<Volume>(predicate: #Predicate { $0.price < 50 }, sortBy: [SortDescriptor(\.title)]))
        precondition(found.count == books / 2)
    case (.fetch, .fluent):
        let found = try await FluentVolume.query(on: fluent).filter(\.$price < 50).sort(\.$title).sort(\.$id).all()
        precondition(found.count == books / 2)

    case (.traverse, .raw):
        var titles = 0
        let sql: PostgresQuery = "SELECT w.id, w.name, v.id, v.title FROM (SELECT id, name FROM writer ORDER BY name LIMIT 1000) AS w JOIN volume v ON v.writer_id = w.id ORDER BY w.name, v.id"
        for try await (_, _, _, title) in try await client.query(sql, logger: logger).decode((Int64, String, Int64, String).self) { titles += title.utf8.count }
        precondition(titles > 0)
    case (.traverse, .runtime):
        var descriptor = FetchDescriptor<Writer>(sortBy: [SortDescriptor(\.name)])
        descriptor.fetchLimit = 1_000
        descriptor.relationshipKeyPathsForPrefetching = [\.books]
        var titles = 0
        for writer in try await PostgresModelContext(container).fetch(descriptor) {
            for book in writer.books { titles += book.title.utf8.count }
        }
        precondition(titles > 0)
    case (.traverse, .fluent):
        var titles = 0
        for writer in try await FluentWriter.query(on: fluent).sort(\.$name).limit(1_000).with(\.$books).all() {
            for book in writer.books { titles += book.title.utf8.count }
        }
        precondition(titles > 0)

    case (.delete, .raw):
        _ = try await client.query("DELETE FROM writer WHERE name < \("writer5")", logger: logger).collect()
    case (.delete, .runtime):
        let report = try await PostgresModelContext(container).delete(model: Writer.self, where: #Predicate { $0.name < "writer5" })
        precondition(report.totalDeleted > books / 3)
    case (.delete, .fluent):
        try await FluentWriter.query(on: fluent).filter(\.$name < "writer5").delete()
    }
}

let admin = PostgresClient(configuration: configuration(), backgroundLogger: logger)
try await withThrowingTaskGroup(of: Void.self) { group in
    group.addTask { await admin.run() }
    defer { group.cancelAll() }
    print("ModelGenPostgres beside raw PostgresNIO and Fluent on PostgreSQL at \(host):\(url.port ?? 5432): N books, N/10 writers, \(tagCount) tags, 3 tags per book;")
    print("median of \(repetitions), methods interleaved, each on new tables; ratios to raw in the same run.")
    print("workload".padding(toLength: 10, withPad: " ", startingAt: 0) + "N".padding(toLength: 8, withPad: " ", startingAt: 0)
          + "raw s     runtime s  fluent s   runtime/raw  fluent/raw  fluent/runtime")
    for books in sizes {
        for workload in workloads {
            var times: [Method: [Double]] = [:]
            for _ in 0..<repetitions {
                for method in methods { times[method, default: []].append(try await measure(workload, method, books: books, admin: admin)) }
            }
            func median(_ method: Method) -> Double { times[method].map { $0.sorted()[repetitions / 2] } ?? .nan }
            let (raw, runtime, fluent) = (median(.raw), median(.runtime), median(.fluent))
            func cell(_ value: Double, _ width: Int) -> String { String(format: "%.3f", value).padding(toLength: width, withPad: " ", startingAt: 0) }
            print(workload.rawValue.padding(toLength: 10, withPad: " ", startingAt: 0) + String(books).padding(toLength: 8, withPad: " ", startingAt: 0)
                  + cell(raw, 10) + cell(runtime, 11) + cell(fluent, 11) + String(format: "%.2f×", runtime / raw).padding(toLength: 13, withPad: " ", startingAt: 0)
                  + String(format: "%.2f×", fluent / raw).padding(toLength: 12, withPad: " ", startingAt: 0) + String(format: "%.2f×", fluent / runtime))
        }
    }
}
