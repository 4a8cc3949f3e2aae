import ModelGenQuery
@_spi(Backend) import ModelGenRuntime
import ModelGenSchema

/// A name as `EntityDescription` holds it (quoted for SQLite), quoted for PostgreSQL.
func postgresQuoted(_ name: String) -> String {
    SQLDialect.postgresql.quote(SQLDialect.unquoted(name))
}

/// What the PostgreSQL backend writes and reads for one entity, worked out once per container from
/// the generated `EntityDescription` and the schema's canonical form (which has the types).
struct PostgresEntityMapping: Sendable {
    /// The entity's description, shared with the generated model class.
    let entity: EntityDescription
    /// The table, quoted for PostgreSQL.
    let table: String
    /// For each attribute (in schema order): its quoted column and type, or nil when transient.
    let attributeColumns: [(column: String, type: PostgresColumnType)?]
    /// The key columns (quoted), in the order of `entity.foreignKeys`.
    let keyColumns: [String]
    /// Reads `id`, then the stored attributes, then the keys (the layout of a backing's values):
    ///
    ///     SELECT "volume".id, "volume"."title", "volume"."price"::float8, "volume"."writer_id" FROM "volume"
    let selectSQL: String
    /// Every column but `id`, in the order `selectSQL` reads them, with its type (keys are integers).
    let writtenColumns: [(column: String, type: PostgresColumnType)]
    /// The columns `insertSQL` takes, one array each: `id`, then `writtenColumns`.
    let insertedColumns: [(column: String, type: PostgresColumnType)]
    /// Inserts rows given as one array per column (`ColumnArray`):
    ///
    ///     INSERT INTO "volume" (id, "title", "price", "writer_id")
    ///     SELECT v1, v2, v3, v4 FROM unnest($1::int8[], $2::text[], $3::float8[], $4::int8[]) AS v(v1, v2, v3, v4)
    let insertSQL: String
    /// The unique columns a save can set aside (`Entity.uniqueVacancies`), by unquoted name.
    let uniqueVacancies: [String: UniqueVacancy]
    /// The unique constraints' columns, unquoted (`Entity.uniqueColumnGroups`).
    let uniqueColumnGroups: [[String]]

    init(entity: EntityDescription, schema: Entity) {
        self.entity = entity
        uniqueVacancies = schema.uniqueVacancies
        uniqueColumnGroups = schema.uniqueColumnGroups
        let quote = postgresQuoted
        table = quote(entity.table)
        let typesByName = Dictionary(schema.attributes.map { ($0.name, PostgresColumnType($0.type)) }, uniquingKeysWith: { first, _ in first })
        attributeColumns = entity.attributes.map { attribute in
            attribute.column.map { (quote($0), typesByName[attribute.name] ?? .text) }
        }
        keyColumns = entity.foreignKeys.map { quote($0.column) }
        writtenColumns = attributeColumns.compactMap { $0 } + keyColumns.map { ($0, .integer) }
        let table = table, writtenColumns = writtenColumns
        selectSQL = "SELECT \(table).id" + writtenColumns.map { ", " + $0.type.selectExpression("\(table).\($0.column)") }.joined() + " FROM \(table)"
        insertedColumns = [("id", .integer)] + writtenColumns
        let columns = insertedColumns
        let names = columns.indices.map { "v\($0 + 1)" }
        insertSQL = "INSERT INTO \(table) (" + columns.map(\.0).joined(separator: ", ") + ") SELECT "
            + zip(names, columns).map { $0 + $1.1.elementCast }.joined(separator: ", ")
            + " FROM unnest(" + columns.indices.map { "$\($0 + 1)::\(columns[$0].1.arrayTypeName)" }.joined(separator: ", ") + ") AS v(" + names.joined(separator: ", ") + ")"
    }

    /// The column of relationship `index`'s key on this table, quoted (nil when the key is elsewhere).
    func keyColumn(of index: Int) -> String? {
        entity.foreignKeys.firstIndex { $0.index == index }.map { keyColumns[$0] }
    }
}
