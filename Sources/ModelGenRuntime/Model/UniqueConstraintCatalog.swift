import Foundation
import ModelGenSchema

/// Each schema's unique constraints (`Entity.uniqueColumnGroups`) and the columns of them a save
/// can set aside (`Entity.uniqueVacancies`), by entity name. Read from the schema's canonical form
/// once per process, on the first save that needs them, and shared by every context: a context
/// made per unit of work does not parse the schema again.
enum UniqueConstraintCatalog {
    typealias Constraints = [String: (groups: [[String]], vacancies: [String: UniqueVacancy])]

    private static let lock = NSLock()
    /// Guarded by `lock`.
    nonisolated(unsafe) private static var catalogs: [ObjectIdentifier: Constraints] = [:]

    /// The constraints of `schema`'s entities (none for a schema whose canonical form does not parse).
    static func constraints(of schema: any ModelSchemaDefinition.Type) -> Constraints {
        lock.withLock {
            if let found = catalogs[ObjectIdentifier(schema)] { return found }
            let canonical = try? ModelSchema(canonicalJSON: schema.canonicalSchema)
            let found = Dictionary(uniqueKeysWithValues: (canonical?.entities ?? []).map { ($0.name, ($0.uniqueColumnGroups, $0.uniqueVacancies)) })
            catalogs[ObjectIdentifier(schema)] = found
            return found
        }
    }
}
