/// Plans, for each entity, what deleting its objects does (SPEC §3), from the schema alone.
public struct DeletionPlanner {
    public let schema: ModelSchema

    public init(schema: ModelSchema) {
        self.schema = schema
    }

    /// One plan per entity, in schema order.
    public func plans() -> [DeletionPlan] {
        schema.entities.map { plan(for: $0.name) }
    }

    public func plan(for root: String) -> DeletionPlan {
        let cascades = cascadeEdges()
        let closure = reachable(from: root, over: cascades)
        let inside = cascades.filter { closure.contains($0.subject) && closure.contains($0.other) }
        let collection = collectionSteps(root: root, closure: closure, edges: inside)
        let (detachments, order) = deletionOrder(closure)
        return DeletionPlan(root: root, closure: closure, edges: inside, collection: collection,
                            checks: checks(closure), nullifications: nullifications(closure),
                            detachments: detachments,
                            joinTables: schema.joinTables.filter { closure.contains($0.entity) || closure.contains($0.target) },
                            deletionOrder: order)
    }

    // MARK: - Traversals

    /// How `entity.relationship`'s references are found from `entity`'s side.
    func traversal(_ relationship: Relationship) -> Traversal {
        let link: ReferenceLink
        switch relationship.storage {
        case let .foreignKey(column, _):
            link = .subjectColumn(table: table(relationship.entity), column: column)
        case .inverseForeignKey:
            let inverse = relationship.inverse.flatMap { schema.relationship(relationship.target, $0) }
            guard case let .foreignKey(column, _)? = inverse?.storage else {
                preconditionFailure("resolver invariant: inverse foreign key of \(relationship.entity).\(relationship.name)")
            }
            link = .otherColumn(table: table(relationship.target), column: column)
        case let .joinTable(name):
            let joinTable = schema.joinTables.first { $0.name == name }!
            let ownsTable = joinTable.entity == relationship.entity && joinTable.relationship == relationship.name
            link = ownsTable
                ? .joinTable(name: name, subjectColumn: joinTable.column, otherColumn: joinTable.targetColumn)
                : .joinTable(name: name, subjectColumn: joinTable.targetColumn, otherColumn: joinTable.column)
        }
        return Traversal(subject: relationship.entity, relationship: relationship.name, other: relationship.target, link: link)
    }

    private func table(_ entity: String) -> String {
        schema.entity(named: entity)!.tableName
    }

    private func cascadeEdges() -> [Traversal] {
        schema.entities.flatMap { entity in
            entity.relationships.filter { $0.deleteRule == .cascade }.map(traversal)
        }
    }

    /// Entities reachable from `root` through cascades, breadth first, in schema order.
    private func reachable(from root: String, over edges: [Traversal]) -> [String] {
        var result = [root]
        var index = 0
        while index < result.count {
            for edge in edges where edge.subject == result[index] && !result.contains(edge.other) {
                result.append(edge.other)
            }
            index += 1
        }
        return result
    }

    // MARK: - Collection

    /// Strongly connected components of the cascade graph inside the closure, in topological
    /// order from the root; a cyclic component is followed until stable, then its outgoing edges once.
    private func collectionSteps(root: String, closure: [String], edges: [Traversal]) -> [CollectionStep] {
        let components = StronglyConnected.components(nodes: closure, edges: edges.map { ($0.subject, $0.other) })
        var steps: [CollectionStep] = []
        for component in components {
            let internalEdges = edges.indices.filter { component.contains(edges[$0].subject) && component.contains(edges[$0].other) }
            if !internalEdges.isEmpty {
                steps.append(.followUntilStable(internalEdges))
            }
            for index in edges.indices where component.contains(edges[index].subject) && !component.contains(edges[index].other) {
                steps.append(.follow(index))
            }
        }
        return steps
    }

    // MARK: - Checks and nullification

    private func checks(_ closure: [String]) -> [ReferenceCheck] {
        var checks: [ReferenceCheck] = []
        // Deny: a deleted object's deny relationship may point only at deleted objects.
        for entity in schema.entities where closure.contains(entity.name) {
            for relationship in entity.relationships where relationship.deleteRule == .deny {
                checks.append(ReferenceCheck(kind: .deny, traversal: traversal(relationship),
                                             relationship: "\(entity.name).\(relationship.name)", rule: .deny))
            }
        }
        for foreignKey in schema.foreignKeys {
            // Survivors' references into the deleted set, by the rule on the referenced side.
            if closure.contains(foreignKey.target) {
                let rule = ruleOnReferencedSide(foreignKey)
                let kind: ReferenceCheck.Kind? = switch rule {
                case .cascade, .deny: nil // collected by the cascade, or refused by the deny check
                case .noAction: .dangling
                case .nullify: foreignKey.isRequired ? .required : nil
                }
                if let kind {
                    let traversal = Traversal(subject: foreignKey.target, relationship: foreignKey.inverse ?? foreignKey.relationship,
                                              other: foreignKey.entity, link: .otherColumn(table: foreignKey.table, column: foreignKey.column))
                    checks.append(ReferenceCheck(kind: kind, traversal: traversal,
                                                 relationship: "\(foreignKey.entity).\(foreignKey.relationship)", rule: rule))
                }
            }
            // One-to-one: deleting the side that holds the key empties the other side's to-one.
            if closure.contains(foreignKey.entity), foreignKey.isUnique,
               let inverseName = foreignKey.inverse, let inverse = schema.relationship(foreignKey.target, inverseName),
               inverse.isRequired, let own = schema.relationship(foreignKey.entity, foreignKey.relationship),
               own.deleteRule == .nullify || own.deleteRule == .noAction {
                let traversal = Traversal(subject: foreignKey.entity, relationship: foreignKey.relationship, other: foreignKey.target,
                                          link: .subjectColumn(table: foreignKey.table, column: foreignKey.column))
                checks.append(ReferenceCheck(kind: .required, traversal: traversal,
                                             relationship: "\(foreignKey.target).\(inverseName)", rule: own.deleteRule))
            }
        }
        return checks
    }

    /// The rule applied to a row holding `foreignKey` when the row it references is deleted:
    /// the referenced side's relationship back, or nullify when there is none.
    func ruleOnReferencedSide(_ foreignKey: ForeignKey) -> DeleteRule {
        foreignKey.inverse.flatMap { schema.relationship(foreignKey.target, $0)?.deleteRule } ?? .nullify
    }

    private func nullifications(_ closure: [String]) -> [ForeignKey] {
        schema.foreignKeys.filter { foreignKey in
            closure.contains(foreignKey.target) && !foreignKey.isRequired && ruleOnReferencedSide(foreignKey) == .nullify
        }
    }

    // MARK: - Delete order

    /// Optional foreign keys inside a cycle of the closure's tables are detached; the remaining
    /// references give the order, referencing rows first. (Cycles of required references across
    /// tables are rejected by the resolver; a required self-reference is deleted in one statement.)
    private func deletionOrder(_ closure: [String]) -> (detachments: [ForeignKey], order: [String]) {
        let inside = schema.foreignKeys.filter { closure.contains($0.entity) && closure.contains($0.target) }
        let components = StronglyConnected.components(nodes: closure, edges: inside.map { ($0.entity, $0.target) })
        let detachments = inside.filter { foreignKey in
            !foreignKey.isRequired && components.contains { $0.contains(foreignKey.entity) && $0.contains(foreignKey.target) }
        }
        let remaining = inside.filter { !detachments.contains($0) && $0.entity != $0.target }
        var order: [String] = []
        var pending = schema.entities.map(\.name).filter { closure.contains($0) }
        while !pending.isEmpty {
            // The first entity (in schema order) that no pending entity still references.
            let next = pending.firstIndex { candidate in
                !remaining.contains { $0.target == candidate && $0.entity != candidate && pending.contains($0.entity) }
            } ?? 0
            order.append(pending.remove(at: next))
        }
        return (detachments, order)
    }
}

/// Tarjan's algorithm, deterministic: components come in topological order (sources first),
/// nodes inside a component in the given order.
enum StronglyConnected {
    static func components(nodes: [String], edges: [(String, String)]) -> [[String]] {
        var index = 0
        var indices: [String: Int] = [:], lowLinks: [String: Int] = [:]
        var stack: [String] = [], onStack: Set<String> = []
        var result: [[String]] = []
        func connect(_ node: String) {
            indices[node] = index
            lowLinks[node] = index
            index += 1
            stack.append(node)
            onStack.insert(node)
            for (from, to) in edges where from == node {
                if indices[to] == nil {
                    connect(to)
                    lowLinks[node] = min(lowLinks[node]!, lowLinks[to]!)
                } else if onStack.contains(to) {
                    lowLinks[node] = min(lowLinks[node]!, indices[to]!)
                }
            }
            if lowLinks[node] == indices[node] {
                var component: [String] = []
                while let top = stack.popLast() {
                    onStack.remove(top)
                    component.append(top)
                    if top == node { break }
                }
                result.append(nodes.filter { component.contains($0) })
            }
        }
        for node in nodes where indices[node] == nil {
            connect(node)
        }
        return result.reversed()
    }
}
