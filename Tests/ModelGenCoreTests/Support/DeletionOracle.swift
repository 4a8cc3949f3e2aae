import ModelGenCore
import ModelGenRuntime

/// SPEC §3 as a plain Swift model, object by object, with no plan and no SQL: what deleting some
/// objects of an entity does to the rows of a store, read from an SQLite database before the
/// delete. The oracle the deletion plans are held to on schemas SQL's own actions cannot express.
struct DeletionOracle {
    /// What a delete does: refused, or the rows deleted per entity, the keys set to NULL, and every
    /// table's rows after it (`rowsText`'s form).
    enum Outcome: Equatable {
        case refused
        case deleted(counts: [String: Int], nullified: Int, rows: [String: [String]])
    }

    let schema: ModelSchema
    /// Each entity's ids.
    private var ids: [String: Set<Int64>] = [:]
    /// Each key column's values, by entity and column: row id → the id it holds.
    private var keys: [String: [String: [Int64: Int64]]] = [:]
    /// Each join table's pairs (its `column`, its `targetColumn`).
    private var pairs: [String: Set<Pair>] = [:]

    private struct Pair: Hashable { var own: Int64, target: Int64 }

    init(schema: ModelSchema, database: SQLiteDatabase) throws {
        self.schema = schema
        for entity in schema.entities {
            ids[entity.name] = Set(try database.query("SELECT id FROM \(entity.tableName)").compactMap { $0[0].integer })
        }
        for key in schema.foreignKeys {
            var values: [Int64: Int64] = [:]
            for row in try database.query("SELECT id, \(key.column) FROM \(key.table) WHERE \(key.column) IS NOT NULL") {
                if let id = row[0].integer, let target = row[1].integer { values[id] = target }
            }
            keys[key.entity, default: [:]][key.column] = values
        }
        for table in schema.joinTables {
            pairs[table.name] = Set(try database.query("SELECT \(table.column), \(table.targetColumn) FROM \(table.name)").compactMap { row in
                row[0].integer.flatMap { own in row[1].integer.map { Pair(own: own, target: $0) } }
            })
        }
    }

    /// The objects `relationship` of `id` refers to, wherever its links are stored.
    private func references(_ relationship: Relationship, of id: Int64) -> [Int64] {
        switch schema.links(of: relationship)! {
        case let .column(column):
            return keys[relationship.entity]?[column]?[id].map { [$0] } ?? []
        case let .inverseColumn(column):
            return (keys[relationship.target]?[column] ?? [:]).filter { $0.value == id }.map(\.key)
        case let .joinTable(name, ownColumn, _):
            let owns = schema.joinTables.first { $0.name == name }!.column == ownColumn
            return (pairs[name] ?? []).compactMap { pair in
                owns ? (pair.own == id ? pair.target : nil) : (pair.target == id ? pair.own : nil)
            }
        }
    }

    /// Deleting the objects `requested` of `entity` (those that exist).
    func outcome(deleting entity: String, ids requested: [Int64]) -> Outcome {
        // 1. The closure: every object a cascade reaches from one in it.
        var doomed: [String: Set<Int64>] = [:]
        var queue = requested.filter { ids[entity]!.contains($0) }.map { (entity, $0) }
        while let (name, id) = queue.popLast() {
            guard doomed[name, default: []].insert(id).inserted else { continue }
            for relationship in schema.entity(named: name)!.relationships where relationship.deleteRule == .cascade {
                queue += references(relationship, of: id).map { (relationship.target, $0) }
            }
        }
        func survives(_ entity: String, _ id: Int64) -> Bool { !(doomed[entity]?.contains(id) ?? false) }
        // 2, 3. Refused when a deleted object denies a survivor, leaves a survivor's required
        // to-one empty, or (noAction) leaves a survivor's key naming it.
        for (name, members) in doomed {
            for relationship in schema.entity(named: name)!.relationships {
                for id in members {
                    let survivors = references(relationship, of: id).filter { survives(relationship.target, $0) }
                    guard !survivors.isEmpty else { continue }
                    if relationship.deleteRule == .deny { return .refused }
                    if relationship.deleteRule == .noAction, case .inverseColumn = schema.links(of: relationship)! { return .refused }
                }
            }
        }
        for other in schema.entities {
            for relationship in other.relationships where relationship.isRequired {
                for id in ids[other.name]! where survives(other.name, id) {
                    if references(relationship, of: id).contains(where: { !survives(relationship.target, $0) }) { return .refused }
                }
            }
        }
        // 4. Survivors' keys naming a deleted object are set to NULL; the deleted rows and the join
        // rows touching them go.
        var nullified = 0
        var keysAfter = keys
        for key in schema.foreignKeys {
            for (id, target) in keys[key.entity]?[key.column] ?? [:] where survives(key.entity, id) && !survives(key.target, target) {
                keysAfter[key.entity]![key.column]![id] = nil
                nullified += 1
            }
        }
        var rows: [String: [String]] = [:]
        for entity in schema.entities {
            let columns = schema.foreignKeys.filter { $0.entity == entity.name }.map(\.column)
            rows[entity.tableName] = ids[entity.name]!.filter { survives(entity.name, $0) }.sorted().map { id in
                ([String(id)] + columns.map { keysAfter[entity.name]?[$0]?[id].map(String.init) ?? "-" }).joined(separator: ":")
            }
        }
        for table in schema.joinTables {
            rows[table.name] = (pairs[table.name] ?? []).filter { survives(table.entity, $0.own) && survives(table.target, $0.target) }
                .sorted { ($0.own, $0.target) < ($1.own, $1.target) }.map { "\($0.own):\($0.target)" }
        }
        let counts = doomed.compactMapValues { $0.isEmpty ? nil : $0.count }
        return .deleted(counts: counts, nullified: nullified, rows: rows)
    }
}
