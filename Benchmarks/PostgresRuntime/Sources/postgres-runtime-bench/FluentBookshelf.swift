import FluentKit
import FluentSQL
import Foundation

// The Bookshelf schema as a Fluent user writes it: UUID ids made by the client (Fluent's default,
// which lets `[Model].create(on:)` insert many rows at once and still link them), foreign keys
// that cascade in the database, an index on each key (Fluent makes none; without it PostgreSQL's
// cascade scans the whole child table per deleted parent).

final class FluentWriter: Model, @unchecked Sendable {
    static let schema = "fluent_writer"
    @ID(key: .id) var id: UUID?
    @Field(key: "name") var name: String
    @Children(for: \.$writer) var books: [FluentVolume]

    init() {}
    init(name: String) {
        id = UUID()
        self.name = name
    }
}

final class FluentVolume: Model, @unchecked Sendable {
    static let schema = "fluent_volume"
    @ID(key: .id) var id: UUID?
    @Field(key: "title") var title: String
    @Field(key: "price") var price: Double
    @OptionalParent(key: "writer_id") var writer: FluentWriter?
    @Siblings(through: FluentVolumeLabel.self, from: \.$volume, to: \.$label) var labels: [FluentLabel]

    init() {}
    init(title: String, price: Double, writerID: UUID?) {
        id = UUID()
        self.title = title
        self.price = price
        $writer.id = writerID
    }
}

final class FluentLabel: Model, @unchecked Sendable {
    static let schema = "fluent_label"
    @ID(key: .id) var id: UUID?
    @Field(key: "name") var name: String

    init() {}
    init(name: String) {
        id = UUID()
        self.name = name
    }
}

final class FluentVolumeLabel: Model, @unchecked Sendable {
    static let schema = "fluent_volume_label"
    @ID(key: .id) var id: UUID?
    @Parent(key: "volume_id") var volume: FluentVolume
    @Parent(key: "label_id") var label: FluentLabel

    init() {}
    init(volumeID: UUID, labelID: UUID) {
        id = UUID()
        $volume.id = volumeID
        $label.id = labelID
    }
}

enum FluentBookshelf {
    /// The tables, as a Fluent migration makes them, and the key indexes (through SQLKit).
    static func create(on database: any Database) async throws {
        try await database.schema(FluentWriter.schema).id().field("name", .string, .required).create()
        try await database.schema(FluentLabel.schema).id().field("name", .string, .required).unique(on: "name").create()
        try await database.schema(FluentVolume.schema).id()
            .field("title", .string, .required).field("price", .double, .required)
            .field("writer_id", .uuid, .references(FluentWriter.schema, "id", onDelete: .cascade))
            .create()
        try await database.schema(FluentVolumeLabel.schema).id()
            .field("volume_id", .uuid, .required, .references(FluentVolume.schema, "id", onDelete: .cascade))
            .field("label_id", .uuid, .required, .references(FluentLabel.schema, "id", onDelete: .cascade))
            .create()
        let sql = database as! any SQLDatabase
        try await sql.raw("CREATE INDEX fluent_volume_writer_id_idx ON fluent_volume (writer_id)").run()
        try await sql.raw("CREATE INDEX fluent_volume_label_volume_id_idx ON fluent_volume_label (volume_id)").run()
        try await sql.raw("CREATE INDEX fluent_volume_label_label_id_idx ON fluent_volume_label (label_id)").run()
    }

    /// Every object made in memory, then inserted in batches (`[Model].create(on:)`, as many rows
    /// per statement as PostgreSQL's 65,535 parameters allow), in one transaction.
    static func insert(books: Int, tagCount: Int, on database: any Database) async throws {
        let labels = (0..<tagCount).map { FluentLabel(name: "tag\($0)") }
        let writers = (0..<max(1, books / 10)).map { FluentWriter(name: "writer\($0)") }
        var volumes: [FluentVolume] = [], links: [FluentVolumeLabel] = []
        volumes.reserveCapacity(books)
        links.reserveCapacity(books * 3)
        for index in 0..<books {
            let volume = FluentVolume(title: "book\(index)", price: Double(index % 100), writerID: writers[index / 10 % writers.count].id)
            volumes.append(volume)
            for offset in [0, 17, 33] { links.append(FluentVolumeLabel(volumeID: volume.id!, labelID: labels[(index + offset) % tagCount].id!)) }
        }
        let (allVolumes, allLinks) = (volumes, links)
        try await database.transaction { database in
            for chunk in chunks(labels, 20_000) { try await chunk.create(on: database) }
            for chunk in chunks(writers, 20_000) { try await chunk.create(on: database) }
            for chunk in chunks(allVolumes, 15_000) { try await chunk.create(on: database) }
            for chunk in chunks(allLinks, 20_000) { try await chunk.create(on: database) }
        }
    }

    private static func chunks<T>(_ items: [T], _ size: Int) -> [ArraySlice<T>] {
        stride(from: 0, to: items.count, by: size).map { items[$0..<min($0 + size, items.count)] }
    }

    /// The same rows as the ModelGen tables hold, copied with ids made from theirs.
    static let copyFromModelGenTables = [
        "INSERT INTO fluent_writer (id, name) SELECT md5('w' || id)::uuid, name FROM writer",
        "INSERT INTO fluent_label (id, name) SELECT md5('l' || id)::uuid, name FROM label",
        "INSERT INTO fluent_volume (id, title, price, writer_id) SELECT md5('v' || id)::uuid, title, price, md5('w' || writer_id)::uuid FROM volume",
        "INSERT INTO fluent_volume_label (id, volume_id, label_id) SELECT gen_random_uuid(), md5('v' || volume_id)::uuid, md5('l' || label_id)::uuid FROM label_volumes",
    ]
}
