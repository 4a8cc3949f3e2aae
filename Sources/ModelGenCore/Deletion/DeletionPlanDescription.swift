import Foundation

/// Human- and machine-readable forms of deletion plans, and the schema's delete hazards.
public struct DeletionPlanDescription {
    public let schema: ModelSchema
    private let planner: DeletionPlanner

    public init(schema: ModelSchema) {
        self.schema = schema
        self.planner = DeletionPlanner(schema: schema)
    }

    // MARK: - Hazards

    /// What a developer should know about deleting from this schema, each with its path.
    public func hazards() -> [String] {
        var hazards: [String] = []
        for entity in schema.entities {
            for relationship in entity.relationships {
                let name = "\(entity.name).\(relationship.name)"
                guard let inverseName = relationship.inverse, let inverse = schema.relationship(relationship.target, inverseName) else {
                    hazards.append("missing inverse: \(name) → \(relationship.target) has no inverse; a deleted \(relationship.target) is removed from it as by nullify\(relationship.isRequired ? ", and refused because it is required" : "")")
                    continue
                }
                if relationship.deleteRule == .nullify && inverse.isRequired {
                    hazards.append("nullify into a required to-one: \(name) (nullify) → \(relationship.target).\(inverseName) is required, so deleting a \(entity.name) that still has \(relationship.isToMany ? "any " : "a ")\(relationship.target) is refused")
                }
                if relationship.deleteRule == .cascade, !relationship.isToMany, inverse.isToMany {
                    hazards.append("cascade up to a parent: \(name) (cascade) deletes the \(relationship.target) it belongs to, and with it its other \(entity.name)s unless \(relationship.target).\(inverseName) says otherwise (\(inverse.deleteRule.rawValue))")
                }
                if !relationship.isToMany, !inverse.isToMany, case let .foreignKey(column, _) = relationship.storage {
                    hazards.append("one-to-one: \(name) ↔ \(relationship.target).\(inverseName); the key is \(entity.tableName).\(column) (UNIQUE)")
                }
            }
        }
        for plan in planner.plans() {
            for check in plan.checks where check.kind == .deny && check.traversal.subject != plan.root {
                hazards.append("deny reachable through a cascade: a delete of \(plan.root) reaches \(check.traversal.subject) by \(cascadePath(to: check.traversal.subject, in: plan)), where \(check.relationship) (deny) can refuse it")
            }
        }
        hazards += graphHazards()
        var unique: [String] = []
        var seen: Set<String> = []
        for hazard in hazards where seen.insert(hazard).inserted { unique.append(hazard) }
        return unique
    }

    /// Cycles of cascades, cycles of references, and entities reached by several cascades, each
    /// reported once, from the schema's graphs.
    private func graphHazards() -> [String] {
        var hazards: [String] = []
        let entities = schema.entities.map(\.name)
        let cascades = schema.entities.flatMap { entity in entity.relationships.filter { $0.deleteRule == .cascade } }
        for component in StronglyConnected.components(nodes: entities, edges: cascades.map { ($0.entity, $0.target) }) {
            let members = Set(component)
            let inside = cascades.filter { members.contains($0.entity) && members.contains($0.target) }
            guard !inside.isEmpty else { continue }
            hazards.append("cascade cycle: \(inside.map { "\($0.entity).\($0.name)" }.joined(separator: ", ")); collected by repeating these cascades until nothing is added")
        }
        let foreignKeys = schema.foreignKeys
        for component in StronglyConnected.components(nodes: entities, edges: foreignKeys.map { ($0.entity, $0.target) }) {
            let members = Set(component)
            for foreignKey in foreignKeys where !foreignKey.isRequired && members.contains(foreignKey.entity) && members.contains(foreignKey.target) {
                hazards.append("reference cycle: \(foreignKey.entity).\(foreignKey.relationship) (\(foreignKey.table).\(foreignKey.column)) is set to NULL inside the deleted set first, so that rows can go children first")
            }
        }
        for entity in entities {
            let incoming = cascades.filter { $0.target == entity }
            if incoming.count > 1 {
                hazards.append("several cascade paths to \(entity): \(incoming.map { "\($0.entity).\($0.name)" }.joined(separator: ", ")); each object is deleted once")
            }
        }
        return hazards
    }

    private func cascadePath(to entity: String, in plan: DeletionPlan) -> String {
        var path: [String] = []
        var current = entity
        while current != plan.root, let edge = plan.edges.first(where: { $0.other == current && $0.subject != current }) {
            path.insert("\(edge.subject).\(edge.relationship)", at: 0)
            current = edge.subject
            if path.count > plan.edges.count { break }
        }
        return path.joined(separator: " → ")
    }

    // MARK: - Text

    public func text(entities: [String]) -> String {
        var lines: [String] = []
        for name in entities {
            let plan = planner.plan(for: name)
            lines.append("Deleting \(name) (one transaction):")
            var step = 0
            func add(_ text: String) {
                step += 1
                lines.append("  \(step). \(text)")
            }
            add("collect the \(name) objects to delete")
            for collection in plan.collection {
                switch collection {
                case let .follow(index):
                    let edge = plan.edges[index]
                    add("collect \(edge.other) ← \(edge.subject).\(edge.relationship) (cascade)")
                case let .followUntilStable(indices):
                    add("repeat until nothing is added: " + indices.map { "collect \(plan.edges[$0].other) ← \(plan.edges[$0].subject).\(plan.edges[$0].relationship) (cascade)" }.joined(separator: "; "))
                }
            }
            for index in keyEdges(plan) {
                let edge = plan.edges[index]
                add("\(edge.other) ← \(edge.subject).\(edge.relationship) (cascade): deleted by its key to the collected \(edge.subject) objects, nothing to collect")
            }
            for check in plan.checks {
                switch check.kind {
                case .deny: add("refuse if \(check.relationship) (deny) points at a \(check.traversal.other) that survives")
                case .required: add("refuse if a surviving \(check.traversal.other) would lose its required \(check.relationship)")
                case .dangling: add("refuse if a surviving \(check.traversal.other) still refers through \(check.relationship) (noAction)")
                }
            }
            for foreignKey in plan.nullifications {
                add("nullify \(foreignKey.entity).\(foreignKey.relationship) of surviving \(foreignKey.entity)s (\(foreignKey.table).\(foreignKey.column) = NULL)")
            }
            for foreignKey in plan.detachments {
                add("detach \(foreignKey.entity).\(foreignKey.relationship) inside the deleted set (breaks a reference cycle)")
            }
            for joinTable in plan.joinTables {
                add("remove join rows of \(joinTable.entity).\(joinTable.relationship) (\(joinTable.name))")
            }
            add("delete " + plan.deletionOrder.joined(separator: ", then "))
            lines.append("")
        }
        let hazards = hazards()
        lines.append("Hazards:")
        lines.append(contentsOf: hazards.isEmpty ? ["  none"] : hazards.map { "  - " + $0 })
        return lines.joined(separator: "\n") + "\n"
    }

    /// The edges by which uncollected entities are deleted, in closure order.
    private func keyEdges(_ plan: DeletionPlan) -> [Int] {
        plan.closure.flatMap { plan.deletedThroughParentKeys[$0] ?? [] }
    }

    // MARK: - JSON

    public func json(entities: [String]) -> String {
        func string(_ text: String) -> String {
            "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }
        func list(_ items: [String]) -> String { "[" + items.joined(separator: ", ") + "]" }
        let plans = entities.map { name -> String in
            let plan = planner.plan(for: name)
            let collection = plan.collection.map { step -> String in
                switch step {
                case let .follow(index): return list([string("\(plan.edges[index].subject).\(plan.edges[index].relationship)")])
                case let .followUntilStable(indices): return list(indices.map { string("\(plan.edges[$0].subject).\(plan.edges[$0].relationship)") })
                }
            }
            let checks = plan.checks.map { "{\"kind\": \(string($0.kind.rawValue)), \"relationship\": \(string($0.relationship)), \"rule\": \(string($0.rule.rawValue))}" }
            return """
            {"entity": \(string(name)), "closure": \(list(plan.closure.map(string))), "collect": \(list(collection)), \
            "deleteByKey": \(list(keyEdges(plan).map { string("\(plan.edges[$0].subject).\(plan.edges[$0].relationship)") })), \
            "checks": \(list(checks)), "nullify": \(list(plan.nullifications.map { string("\($0.entity).\($0.relationship)") })), \
            "detach": \(list(plan.detachments.map { string("\($0.entity).\($0.relationship)") })), \
            "joinTables": \(list(plan.joinTables.map { string($0.name) })), "deleteOrder": \(list(plan.deletionOrder.map(string)))}
            """
        }
        return "{\"plans\": \(list(plans)), \"hazards\": \(list(hazards().map(string)))}\n"
    }

    // MARK: - Mermaid

    /// A flowchart of the relationships with their delete rules, for documentation.
    public func mermaid() -> String {
        var lines = ["flowchart TD"]
        for entity in schema.entities {
            lines.append("    \(entity.name)[\"\(entity.name)\"]")
        }
        for entity in schema.entities {
            for relationship in entity.relationships {
                let arrow = relationship.deleteRule == .cascade ? "==>" : relationship.deleteRule == .deny ? "-.->" : "-->"
                lines.append("    \(entity.name) \(arrow)|\"\(relationship.name) (\(relationship.deleteRule.rawValue))\"| \(relationship.target)")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
