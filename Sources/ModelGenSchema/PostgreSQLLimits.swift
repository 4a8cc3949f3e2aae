/// The limits of PostgreSQL's tables that a schema must stay within, so that every table it
/// declares can be created and hold any row (SQLite's limits are wider: 2,000 columns, rows of
/// a billion bytes).
public enum PostgreSQLLimits {
    /// The most columns a table holds (`MaxHeapAttributeNumber`).
    public static let columnsPerTable = 1_600
    /// The most columns an index takes (`INDEX_MAX_KEYS`): `unique` and `indexes` groups.
    public static let columnsPerIndex = 32
    /// The most bytes a row takes (`MaxHeapTupleSize` of 8 KB pages), once long values are moved
    /// out of it (TOAST).
    public static let rowBytes = 8_160

    /// The most bytes a row of `entity`'s table can take, laid out as PostgreSQL lays it out: a
    /// 23-byte header and, where a column may be NULL, a bit per column, then the columns in the
    /// DDL's order (id, stored attributes, foreign keys), each fixed-size value aligned to its
    /// type. A value of variable length (text, bytes, a decimal, an enum's case) takes at most 24
    /// bytes: TOAST moves a longer one out of the row, leaving an 18-byte pointer, and leaves one
    /// of 24 bytes or fewer in place.
    public static func largestRow(of entity: Entity, enums: [EnumType]) -> Int {
        var columns: [(size: Int, alignment: Int)] = [(8, 8)]
        var mayBeNull = false
        for attribute in entity.storedAttributes {
            mayBeNull = mayBeNull || attribute.isOptional
            switch attribute.type {
            case let .scalar(scalar): columns.append(layout(of: scalar))
            case let .enumeration(name):
                let cases = enums.first { $0.name == name }?.cases ?? []
                columns.append((cases.map { inlineVariableLength(1 + $0.utf8.count) }.max() ?? 1, 1))
            }
        }
        for relationship in entity.relationships {
            guard case .foreignKey = relationship.storage else { continue }
            mayBeNull = mayBeNull || !relationship.isRequired
            columns.append((8, 8))
        }
        func aligned(_ offset: Int, _ alignment: Int) -> Int { (offset + alignment - 1) / alignment * alignment }
        var offset = aligned(23 + (mayBeNull ? (columns.count + 7) / 8 : 0), 8)
        for column in columns { offset = aligned(offset, column.alignment) + column.size }
        return offset
    }

    /// Size and alignment of a scalar's column (PostgreSQL's `typlen` and `typalign`).
    private static func layout(of scalar: ScalarType) -> (size: Int, alignment: Int) {
        switch scalar {
        case .int, .int64, .double, .date: (8, 8)
        case .int32, .float: (4, 4)
        case .int16: (2, 2)
        case .bool: (1, 1)
        case .uuid: (16, 1)
        // A short value in place (a one-byte header, no alignment), or the pointer to a long one.
        case .string, .url, .data: (24, 1)
        // A short numeric's bytes come in pairs after a one-byte header and two of its own: 23 is
        // the largest that stays in place.
        case .decimal: (23, 1)
        }
    }

    /// What a value of `size` bytes (its header included) takes in the row at most.
    private static func inlineVariableLength(_ size: Int) -> Int { size <= 24 ? size : 18 }
}
