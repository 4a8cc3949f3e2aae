import ModelGenSchema

/// Plans, for each entity, what deleting its objects does (SPEC §3), from the schema alone.
public struct DeletionPlanner: Sendable {
    public let schema: ModelSchema
    /// Indexes by entity name (looked up, never iterated), so that a plan costs what its closure
    /// touches and planning every entity stays linear in the schema's size.
    private let cascadesBySubject: [String: [Traversal]]
    private let foreignKeysByEntity: [String: [Int]]
    private let foreignKeysByTarget: [String: [Int]]
    private let joinTablesByEntity: [String: [Int]]

    public init(schema: ModelSchema) {
        self.schema = schema
        var cascades: [String: [Traversal]] = [:]
        for entity in schema.entities {
            for relationship in entity.relationships where relationship.deleteRule == .cascade {
                cascades[entity.name, default: []].append(Self.traversal(relationship, in: schema))
            }
        }
        cascadesBySubject = cascades
        var byEntity: [String: [Int]] = [:], byTarget: [String: [Int]] = [:]
        for (position, foreignKey) in schema.foreignKeys.enumerated() {
            byEntity[foreignKey.entity, default: []].append(position)
            byTarget[foreignKey.target, default: []].append(position)
        }
        foreignKeysByEntity = byEntity
        foreignKeysByTarget = byTarget
        var joins: [String: [Int]] = [:]
        for (position, joinTable) in schema.joinTables.enumerated() {
            joins[joinTable.entity, default: []].append(position)
            if joinTable.target != joinTable.entity { joins[joinTable.target, default: []].append(position) }
        }
        joinTablesByEntity = joins
    }

    /// One plan per entity, in schema order.
    public func plans() -> [DeletionPlan] {
        schema.entities.concurrentMap { plan(for: $0.name) }
    }

    public func plan(for root: String) -> DeletionPlan {
        let closure = reachable(from: root)
        let members = Set(closure)
        let inside = closure.flatMap { cascadesBySubject[$0] ?? [] }
        let (detachments, order) = deletionOrder(closure, members)
        let joinTables = Set(closure.flatMap { joinTablesByEntity[$0] ?? [] }).sorted().map { schema.joinTables[$0] }
        let checks = checks(closure, members)
        let nullifications = nullifications(closure)
        // The cascades into each entity, as indices into `inside`.
        let incoming = Dictionary(grouping: inside.indices, by: { inside[$0].other })
        let uncollected = deletedThroughParentKeys(root: root, edges: inside, incoming: incoming, checks: checks,
                                                   nullifications: nullifications, detachments: detachments, joinTables: joinTables)
        let collection = collectionSteps(root: root, closure: closure, edges: inside).filter { step in
            guard case let .follow(index) = step else { return true }
            return uncollected[inside[index].other] == nil
        }
        return DeletionPlan(root: root, closure: closure, edges: inside, collection: collection,
                            deletedThroughParentKeys: uncollected,
                            checks: checks, nullifications: nullifications,
                            detachments: detachments, joinTables: joinTables, deletionOrder: order,
                            wholeTableParentKeys: wholeTableParentKeys(root: root, closure: closure, members: members,
                                                                       edges: inside, incoming: incoming, checks: checks,
                                                                       joinTables: joinTables, detachments: detachments))
    }

    /// See `DeletionPlan.deletedThroughParentKeys`: the closure entities, root aside, that cascade to
    /// nothing, that no other step of the plan involves, and whose every incoming cascade is a key on
    /// their own rows.
    private func deletedThroughParentKeys(root: String, edges: [Traversal], incoming: [String: [Int]], checks: [ReferenceCheck],
                                          nullifications: [ForeignKey], detachments: [ForeignKey],
                                          joinTables: [JoinTable]) -> [String: [Int]] {
        var needsIDs: Set<String> = [root]
        needsIDs.formUnion(edges.map(\.subject))
        needsIDs.formUnion(checks.flatMap { [$0.traversal.subject, $0.traversal.other] })
        needsIDs.formUnion((nullifications + detachments).flatMap { [$0.entity, $0.target] })
        needsIDs.formUnion(joinTables.flatMap { [$0.entity, $0.target] })
        return incoming.filter { entity, indices in
            !needsIDs.contains(entity) && indices.allSatisfy { if case .otherColumn = edges[$0].link { true } else { false } }
        }
    }

    /// See `DeletionPlan.wholeTableParentKeys`.
    private func wholeTableParentKeys(root: String, closure: [String], members: Set<String>, edges: [Traversal], incoming: [String: [Int]],
                                      checks: [ReferenceCheck], joinTables: [JoinTable], detachments: [ForeignKey]) -> [ForeignKey]? {
        guard joinTables.isEmpty, detachments.isEmpty,
              checks.allSatisfy({ members.contains($0.traversal.other) }),
              foreignKeyPositions(closure, foreignKeysByTarget).allSatisfy({ members.contains(schema.foreignKeys[$0].entity) })
        else { return nil }
        var parentKeys: [ForeignKey] = []
        for entity in closure where entity != root {
            guard let parentEdges = incoming[entity], parentEdges.count == 1, case let .otherColumn(_, column) = edges[parentEdges[0]].link,
                  let key = (foreignKeysByEntity[entity] ?? []).map({ schema.foreignKeys[$0] }).first(where: { $0.column == column })
            else { return nil }
            parentKeys.append(key)
        }
        return parentKeys
    }

    private func inSchemaOrder(_ entities: [String]) -> [String] {
        entities.sorted { (schema.position(ofEntity: $0) ?? 0) < (schema.position(ofEntity: $1) ?? 0) }
    }

    /// Foreign keys (positions in `schema.foreignKeys`, ascending) held by or pointing at the closure.
    private func foreignKeyPositions(_ closure: [String], _ index: [String: [Int]]) -> [Int] {
        Set(closure.flatMap { index[$0] ?? [] }).sorted()
    }

    // MARK: - Traversals

    /// How `entity.relationship`'s references are found from `entity`'s side.
    func traversal(_ relationship: Relationship) -> Traversal {
        Self.traversal(relationship, in: schema)
    }

    static func traversal(_ relationship: Relationship, in schema: ModelSchema) -> Traversal {
        func table(_ entity: String) -> String { schema.entity(named: entity)!.tableName }
        let link: ReferenceLink
        switch schema.links(of: relationship) {
        case let .column(column):
            link = .subjectColumn(table: table(relationship.entity), column: column)
        case let .inverseColumn(column):
            link = .otherColumn(table: table(relationship.target), column: column)
        case let .joinTable(name, own, other):
            link = .joinTable(name: name, subjectColumn: own, otherColumn: other)
        case nil:
            preconditionFailure("resolver invariant: the links of \(relationship.entity).\(relationship.name)")
        }
        return Traversal(subject: relationship.entity, relationship: relationship.name, other: relationship.target, link: link)
    }

    /// Entities reachable from `root` through cascades, breadth first, in schema order.
    private func reachable(from root: String) -> [String] {
        var result = [root]
        var seen: Set<String> = [root]
        var index = 0
        while index < result.count {
            for edge in cascadesBySubject[result[index]] ?? [] where seen.insert(edge.other).inserted {
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
        var componentOf: [String: Int] = [:]
        for (position, component) in components.enumerated() {
            for entity in component { componentOf[entity] = position }
        }
        var internalEdges = [[Int]](repeating: [], count: components.count), outgoingEdges = internalEdges
        for (index, edge) in edges.enumerated() {
            guard let subject = componentOf[edge.subject] else { continue }
            if componentOf[edge.other] == subject {
                internalEdges[subject].append(index)
            } else {
                outgoingEdges[subject].append(index)
            }
        }
        var steps: [CollectionStep] = []
        for position in components.indices {
            if !internalEdges[position].isEmpty {
                steps.append(.followUntilStable(internalEdges[position]))
            }
            steps += outgoingEdges[position].map { .follow($0) }
        }
        return steps
    }

    // MARK: - Checks and nullification

    private func checks(_ closure: [String], _ members: Set<String>) -> [ReferenceCheck] {
        var checks: [ReferenceCheck] = []
        // Deny: a deleted object's deny relationship may point only at deleted objects.
        for entity in inSchemaOrder(closure).compactMap(schema.entity(named:)) {
            for relationship in entity.relationships where relationship.deleteRule == .deny {
                checks.append(ReferenceCheck(kind: .deny, traversal: traversal(relationship),
                                             relationship: "\(entity.name).\(relationship.name)", rule: .deny))
            }
        }
        let positions = Set(foreignKeyPositions(closure, foreignKeysByTarget) + foreignKeyPositions(closure, foreignKeysByEntity)).sorted()
        for foreignKey in positions.map({ schema.foreignKeys[$0] }) {
            // Survivors' references into the deleted set, by the rule on the referenced side.
            if members.contains(foreignKey.target) {
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
            if members.contains(foreignKey.entity), foreignKey.isUnique,
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
        foreignKeyPositions(closure, foreignKeysByTarget).map { schema.foreignKeys[$0] }.filter { foreignKey in
            !foreignKey.isRequired && ruleOnReferencedSide(foreignKey) == .nullify
        }
    }

    // MARK: - Delete order

    /// Optional foreign keys inside a cycle of the closure's tables are detached; the remaining
    /// references give the order, referencing rows first. (Cycles of required references across
    /// tables are rejected by the resolver; a required self-reference is deleted in one statement.)
    private func deletionOrder(_ closure: [String], _ members: Set<String>) -> (detachments: [ForeignKey], order: [String]) {
        let inside = foreignKeyPositions(closure, foreignKeysByEntity).map { schema.foreignKeys[$0] }.filter { members.contains($0.target) }
        let components = StronglyConnected.components(nodes: closure, edges: inside.map { ($0.entity, $0.target) })
        var componentOf: [String: Int] = [:]
        for (index, component) in components.enumerated() {
            for entity in component { componentOf[entity] = index }
        }
        // A required key is detached only from its own table (pointed at its own row): it cannot be
        // emptied, and SQLite would empty it (ON DELETE SET NULL) as it deletes the row it names.
        let detachments = inside.filter { (!$0.isRequired || $0.entity == $0.target) && componentOf[$0.entity] == componentOf[$0.target] }
        let detached = Set(detachments)
        let remaining = inside.filter { !detached.contains($0) && $0.entity != $0.target }
        return (detachments, Self.childrenFirst(inSchemaOrder(closure), references: remaining.map { ($0.entity, $0.target) }))
    }

    /// Kahn's algorithm: repeatedly the first entity (in the given order) that no entity still to be
    /// ordered references; if a cycle leaves none, the first one left. Linear up to the heap's log.
    static func childrenFirst(_ entities: [String], references: [(from: String, to: String)]) -> [String] {
        let position = Dictionary(entities.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        var referencedBy = [Int](repeating: 0, count: entities.count)
        var targets = [[Int]](repeating: [], count: entities.count)
        for (from, to) in references {
            guard let from = position[from], let to = position[to] else { continue }
            referencedBy[to] += 1
            targets[from].append(to)
        }
        var ready = MinimumHeap(entities.indices.filter { referencedBy[$0] == 0 })
        var placed = [Bool](repeating: false, count: entities.count)
        var order: [String] = []
        order.reserveCapacity(entities.count)
        var firstUnplaced = 0
        while order.count < entities.count {
            let next: Int
            if let candidate = ready.popMinimum() {
                next = candidate
            } else {
                while placed[firstUnplaced] { firstUnplaced += 1 }
                next = firstUnplaced
            }
            guard !placed[next] else { continue }
            placed[next] = true
            order.append(entities[next])
            for target in targets[next] {
                referencedBy[target] -= 1
                if referencedBy[target] == 0, !placed[target] { ready.insert(target) }
            }
        }
        return order
    }
}

/// A binary min-heap of positions: the smallest first.
struct MinimumHeap {
    private var elements: [Int] = []

    init(_ values: [Int]) {
        for value in values { insert(value) }
    }

    mutating func insert(_ value: Int) {
        elements.append(value)
        var child = elements.count - 1
        while child > 0, elements[(child - 1) / 2] > elements[child] {
            elements.swapAt(child, (child - 1) / 2)
            child = (child - 1) / 2
        }
    }

    mutating func popMinimum() -> Int? {
        guard let first = elements.first else { return nil }
        let last = elements.removeLast()
        if !elements.isEmpty {
            elements[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1, right = left + 1
                var smallest = parent
                if left < elements.count, elements[left] < elements[smallest] { smallest = left }
                if right < elements.count, elements[right] < elements[smallest] { smallest = right }
                if smallest == parent { break }
                elements.swapAt(parent, smallest)
                parent = smallest
            }
        }
        return first
    }
}
