import Foundation
import ModelGenCore
import ModelGenRuntime
import ModelGenTestSupport
import XCTest

/// A schema that evolves at random, one version after another, remembering the identity of every
/// entity, attribute and relationship (renames are declared with `originalName`, as a user would),
/// so a test can say which values a migrated store must hold.
struct EvolvingSchema {
    struct Attribute {
        var id: Int
        var name: String
        var originalNames: [String] = []
        /// One of `scalarTypes` or an enumeration's name; a version may widen an integer, a `Double`
        /// or a `Decimal` (to `Int` or `String`) or narrow an `Int` to `Int16`.
        var type: String
        var isOptional: Bool
        var defaultValue: String?
        var isIndexed = false
        /// `unique: true`: a version that makes an attribute unique whose stored values repeat
        /// (or would, once a default fills its NULLs) is refused.
        var isUnique = false
        /// A column name of its own (`column:`); a version that sets, changes or clears it renames the column.
        var column: String?
        /// The column's name: its own, or the attribute's (names here need no snake case).
        var columnName: String { column ?? name }
        /// `transient: true`: no column. A version that makes an attribute transient drops its
        /// column (its values are lost); one that stores it again adds a column (its default, or nil).
        var isTransient = false
    }

    /// A relationship `name` on the entity with the inverse `inverseName` on the target (which
    /// carries the delete rule); `kind` says their cardinalities, and so where the links are stored.
    struct Relationship {
        enum Kind: CaseIterable {
            /// Optional to-one, inverse to-many: a key column on the entity's table.
            case toOne
            /// Optional to-one both ways: a UNIQUE key column on one of the two tables.
            case oneToOne
            /// To-many both ways: a join table.
            case manyToMany
        }

        var id: Int
        var name: String
        var originalNames: [String] = []
        var inverseName: String
        var inverseOriginalNames: [String] = []
        var target: Int
        var deleteRule: String
        var kind = Kind.toOne
        /// A required to-one (kind `toOne` only): a version that makes it required while an object
        /// has no target, or adds it to a table with rows, is refused.
        var isRequired = false
    }

    /// An enumeration whose cases are added, renamed (`originalName`) and removed.
    struct Enumeration {
        struct Case {
            var id: Int
            var name: String
            var originalNames: [String] = []
        }

        /// Enumerations keep their names (a schema cannot rename one).
        var name: String
        var cases: [Case]
    }

    struct Entity {
        var id: Int
        var name: String
        var originalNames: [String] = []
        /// A table name of its own (`table:`); a version that sets, changes or clears it renames the table.
        var table: String?
        var attributes: [Attribute] = []
        var relationships: [Relationship] = []
        /// Compound unique constraints (`unique: [[a, b]]`), by attribute id: a version that adds
        /// one while two rows hold the same values is refused.
        var uniqueGroups: [[Int]] = []
        /// Compound indexes (`indexes: [[a, b]]`), by attribute id.
        var indexGroups: [[Int]] = []

        /// The table's name: its own, or the entity's in lower case (`E12` → `e12`, as the schema derives it).
        var tableName: String { table ?? name.lowercased() }
        /// The attributes that have a column.
        var storedAttributes: [Attribute] { attributes.filter { !$0.isTransient } }
        /// The positions in `attributes` of those that have a column.
        var storedIndices: [Int] { attributes.indices.filter { !attributes[$0].isTransient } }
    }

    var entities: [Entity] = []
    var enums: [Enumeration] = []

    /// The attribute types besides enumerations.
    static let scalarTypes = ["Int", "Int16", "String", "Double", "Bool", "Decimal", "Date", "Float", "UUID", "Data"]
    /// Defaults of each type, the first one a new attribute takes; some spelled otherwise than
    /// the app stores them (`12.50`, a lower-case UUID, a `Float` that rounds), which a store must
    /// hold as the app does (`DefaultValueTests`).
    static let defaultChoices = [
        "Int": ["7", "-2"], "Int16": ["3", "9"], "String": ["dflt", "other"], "Double": ["2.5", "0.125"], "Bool": ["true", "false"],
        "Decimal": ["12.50", "-0.0"], "Date": ["2024-01-31", "2024-01-31T12:00:00+02:00"], "Float": ["0.1", "16777217"],
        "UUID": ["e621e1f8-c36c-495a-93fc-0c247a3e6e5f", "00000000-0000-0000-0000-00000000000A"], "Data": ["AAEC", "/w=="],
    ]
    private var nextID = 0
    /// Every name an element was given when it was made (renames give names never used before).
    private var firstNames: Set<String> = []

    private mutating func newID() -> Int {
        nextID += 1
        return nextID
    }

    static func random(_ random: inout SeededRandom) -> EvolvingSchema {
        var schema = EvolvingSchema()
        for _ in 0..<(2 + random.below(2)) { schema.addEntity(&random) }
        for _ in 0..<(1 + random.below(3)) { schema.addRelationship(&random) }
        return schema
    }

    private func entityName(_ id: Int) -> String { entities.first { $0.id == id }!.name }

    // MARK: - Changes

    private mutating func addEntity(_ random: inout SeededRandom) {
        let id = newID()
        var entity = Entity(id: id, name: "E\(id)")
        firstNames.insert(entity.name)
        for _ in 0..<(1 + random.below(3)) { entity.attributes.append(newAttribute(&random, required: random.below(2) == 0)) }
        entities.append(entity)
    }

    private mutating func newAttribute(_ random: inout SeededRandom, required: Bool) -> Attribute {
        let id = newID()
        firstNames.insert("a\(id)")
        if random.below(5) == 0 {
            // An enumeration: a new one now and then, else one the schema has.
            if enums.isEmpty || random.below(3) == 0 {
                enums.append(Enumeration(name: "K\(newID())", cases: (0..<(2 + random.below(2))).map { _ in newCase() }))
            }
            let enumeration = enums[random.below(enums.count)]
            return Attribute(id: id, name: "a\(id)", type: enumeration.name, isOptional: !required,
                             defaultValue: random.below(3) == 0 ? enumeration.cases[random.below(enumeration.cases.count)].name : nil)
        }
        let type = Self.scalarTypes[random.below(Self.scalarTypes.count)]
        return Attribute(id: id, name: "a\(id)", type: type, isOptional: !required, defaultValue: random.below(3) == 0 ? Self.defaultChoices[type]![0] : nil)
    }

    private mutating func newCase() -> Enumeration.Case {
        let id = newID()
        firstNames.insert("c\(id)")
        return Enumeration.Case(id: id, name: "c\(id)")
    }

    /// A default for a required attribute of `type`: a case for an enumeration.
    private func defaultValue(of type: String) -> String? {
        if let enumeration = enums.first(where: { $0.name == type }) { return enumeration.cases.first?.name }
        return Self.defaultChoices[type]?.first
    }

    /// Adds, renames or removes a case of an enumeration (never one an attribute's default names,
    /// nor the last one).
    private mutating func changeCase(_ random: inout SeededRandom) {
        guard !enums.isEmpty else { return }
        let e = random.below(enums.count)
        let c = random.below(enums[e].cases.count)
        let name = enums[e].cases[c].name
        switch random.below(4) {
        case 0: enums[e].cases.insert(newCase(), at: random.below(enums[e].cases.count + 1))
        case 3 where enums[e].cases.count > 1:
            // Two cases exchange names; defaults name the same cases as before.
            let (a, b) = Self.twoPositions(enums[e].cases.count, &random)
            let (first, second) = Self.exchangeNames(&enums[e].cases, a, b, name: \.name, originalNames: \.originalNames)
            for entity in entities.indices {
                for a in entities[entity].attributes.indices where entities[entity].attributes[a].type == enums[e].name {
                    let value = entities[entity].attributes[a].defaultValue
                    entities[entity].attributes[a].defaultValue = value == first ? second : value == second ? first : value
                }
            }
        case 1:
            let renamed = "c\(newID())"
            enums[e].cases[c].originalNames.insert(name, at: 0)
            enums[e].cases[c].name = renamed
            for entity in entities.indices {
                for a in entities[entity].attributes.indices where entities[entity].attributes[a].type == enums[e].name && entities[entity].attributes[a].defaultValue == name {
                    entities[entity].attributes[a].defaultValue = renamed
                }
            }
        default:
            let named = entities.contains { $0.attributes.contains { $0.type == enums[e].name && $0.defaultValue == name } }
            if enums[e].cases.count > 1, !named { enums[e].cases.remove(at: c) }
        }
    }

    private mutating func addRelationship(_ random: inout SeededRandom) {
        guard !entities.isEmpty else { return }
        let source = random.below(entities.count), target = entities[random.below(entities.count)].id
        let id = newID()
        firstNames.insert("r\(id)")
        entities[source].relationships.append(Relationship(id: id, name: "r\(id)", inverseName: "inv\(id)", target: target,
                                                           deleteRule: ["nullify", "cascade", "noAction", "deny"][random.below(4)],
                                                           kind: Relationship.Kind.allCases[random.below(3)]))
    }

    /// The next version: one to three random changes of the kinds SPEC §6 lists.
    func evolved(_ random: inout SeededRandom) -> EvolvingSchema {
        var next = self
        for _ in 0..<(1 + random.below(3)) { next.change(&random) }
        return next
    }

    /// One random change; none where it would give two tables, or two columns of a table, one name
    /// (a name taken with `table:` or `column:`, then derived for another: a schema error).
    private mutating func change(_ random: inout SeededRandom) {
        let before = self
        makeChange(&random)
        let tables = entities.map(\.tableName)
        let columnsRepeat = entities.contains { entity in
            let columns = entity.storedAttributes.map(\.columnName)
            return Set(columns).count != columns.count
        }
        if Set(tables).count != tables.count || columnsRepeat { self = before }
    }

    private mutating func makeChange(_ random: inout SeededRandom) {
        let e = random.below(entities.count)
        switch random.below(32) {
        case 0: entities[e].attributes.append(newAttribute(&random, required: false))
        case 1:
            var attribute = newAttribute(&random, required: true)
            attribute.defaultValue = defaultValue(of: attribute.type)
            entities[e].attributes.append(attribute)
        case 2 where entities[e].attributes.count > 1:
            let removed = entities[e].attributes.remove(at: random.below(entities[e].attributes.count)).id
            entities[e].uniqueGroups.removeAll { $0.contains(removed) }
            entities[e].indexGroups.removeAll { $0.contains(removed) }
        case 3 where !entities[e].attributes.isEmpty:
            let a = random.below(entities[e].attributes.count)
            entities[e].attributes[a].originalNames.insert(entities[e].attributes[a].name, at: 0)
            entities[e].attributes[a].name = "a\(newID())"
        case 4:
            entities[e].originalNames.insert(entities[e].name, at: 0)
            entities[e].name = "E\(newID())"
        case 5: addEntity(&random)
        case 6 where entities.count > 1:
            let removed = entities.remove(at: e).id
            for index in entities.indices { entities[index].relationships.removeAll { $0.target == removed } }
        case 7 where !entities[e].attributes.isEmpty:
            let a = random.below(entities[e].attributes.count)
            if entities[e].attributes[a].isOptional {
                entities[e].attributes[a].isOptional = false
                entities[e].attributes[a].defaultValue = defaultValue(of: entities[e].attributes[a].type)
            } else {
                entities[e].attributes[a].isOptional = true
            }
        case 8, 29 where !entities[e].attributes.isEmpty:
            // A widening, which every value survives: `Int16` → `Int`, and integers, `Double`s and
            // `Decimal`s → `String` (as Swift's `description`, which is how a snapshot writes them);
            // or a narrowing, `Int` → `Int16`, refused while a value is out of its range.
            let a = random.below(entities[e].attributes.count)
            let widened: String? = switch entities[e].attributes[a].type {
            case "Int16": random.below(2) == 0 ? "Int" : "String"
            case "Int": random.below(2) == 0 ? "Int16" : "String"
            case "Double", "Decimal": "String"
            default: nil
            }
            if let widened {
                entities[e].attributes[a].type = widened
                if entities[e].attributes[a].defaultValue != nil { entities[e].attributes[a].defaultValue = Self.defaultChoices[widened]![0] }
            }
        case 9 where !entities[e].storedIndices.isEmpty:
            entities[e].attributes[entities[e].storedIndices[random.below(entities[e].storedIndices.count)]].isIndexed.toggle()
        case 16 where !entities[e].storedIndices.isEmpty:
            entities[e].attributes[entities[e].storedIndices[random.below(entities[e].storedIndices.count)]].isUnique.toggle()
        case 10: addRelationship(&random)
        case 11 where !entities[e].relationships.isEmpty: entities[e].relationships.remove(at: random.below(entities[e].relationships.count))
        case 12 where !entities[e].relationships.isEmpty:
            let r = random.below(entities[e].relationships.count)
            entities[e].relationships[r].deleteRule = ["nullify", "cascade", "noAction", "deny"].filter { $0 != entities[e].relationships[r].deleteRule }[random.below(3)]
        case 13 where !entities[e].relationships.isEmpty:
            let r = random.below(entities[e].relationships.count)
            entities[e].relationships[r].originalNames.insert(entities[e].relationships[r].name, at: 0)
            entities[e].relationships[r].name = "r\(newID())"
            entities[e].relationships[r].inverseOriginalNames.insert(entities[e].relationships[r].inverseName, at: 0)
            entities[e].relationships[r].inverseName = "inv\(newID())"
        case 15: changeCase(&random)
        case 14 where !entities[e].relationships.isEmpty:
            // The links change storage: a key column becomes a join table, or the other way round, or moves to the other table.
            let r = random.below(entities[e].relationships.count)
            entities[e].relationships[r].kind = Relationship.Kind.allCases.filter { $0 != entities[e].relationships[r].kind }[random.below(2)]
            entities[e].relationships[r].isRequired = false
        case 17 where entities[e].storedIndices.count > 1:
            toggleGroup(in: &entities[e].uniqueGroups, of: entities[e], &random)
        case 18 where entities[e].storedIndices.count > 1:
            toggleGroup(in: &entities[e].indexGroups, of: entities[e], &random)
        case 19, 20, 21, 26:
            // Any to-one of the schema.
            let candidates = entities.indices.flatMap { e in entities[e].relationships.indices.filter { entities[e].relationships[$0].kind == .toOne }.map { (e, $0) } }
            guard !candidates.isEmpty else { break }
            let (e, r) = candidates[random.below(candidates.count)]
            // Required keys may not form a cycle across tables (the schema refuses one).
            if entities[e].relationships[r].isRequired || !requiredKeysReach(entities[e].id, from: entities[e].relationships[r].target) {
                entities[e].relationships[r].isRequired.toggle()
            }
        case 22 where !entities[e].storedIndices.isEmpty:
            let a = entities[e].storedIndices[random.below(entities[e].storedIndices.count)]
            entities[e].attributes[a].column = entities[e].attributes[a].column == nil || random.below(2) == 0 ? "col\(newID())" : nil
        case 23:
            entities[e].table = entities[e].table == nil || random.below(2) == 0 ? "tbl\(newID())" : nil
        case 24 where !entities[e].attributes.isEmpty:
            // A default given, changed or taken away: rows keep their values; new ones get the new default.
            let a = random.below(entities[e].attributes.count)
            let attribute = entities[e].attributes[a]
            let others = Self.defaultChoices[attribute.type]
                ?? enums.first { $0.name == attribute.type }.map { $0.cases.map(\.name) } ?? []
            // A transient attribute that is required keeps one (the schema asks for it).
            let choices = others.filter { $0 != attribute.defaultValue } + (attribute.isTransient && !attribute.isOptional ? [] : [nil])
            guard !choices.isEmpty else { break }
            entities[e].attributes[a].defaultValue = choices[random.below(choices.count)]
        case 25 where !entities[e].attributes.isEmpty:
            // Stored again, or made transient: no longer unique, indexed, named or in a group.
            let a = random.below(entities[e].attributes.count), id = entities[e].attributes[a].id
            if entities[e].attributes[a].isTransient {
                entities[e].attributes[a].isTransient = false
            } else {
                entities[e].attributes[a].isTransient = true
                if !entities[e].attributes[a].isOptional, entities[e].attributes[a].defaultValue == nil {
                    entities[e].attributes[a].defaultValue = defaultValue(of: entities[e].attributes[a].type)
                }
                entities[e].attributes[a].isUnique = false
                entities[e].attributes[a].isIndexed = false
                entities[e].attributes[a].column = nil
                entities[e].uniqueGroups.removeAll { $0.contains(id) }
                entities[e].indexGroups.removeAll { $0.contains(id) }
            }
        case 27, 28, 30, 31: passName(&random)
        default: break
        }
    }

    /// A name passes from one element to another: two exchange names (entities, attributes,
    /// relationships; tables or columns with `table:` and `column:`), or a new element takes a
    /// name another gave up.
    private mutating func passName(_ random: inout SeededRandom) {
        let e = random.below(entities.count)
        switch random.below(7) {
        case 0 where entities[e].attributes.count > 1:
            // Two attributes exchange names, each declaring the other's as its original name.
            let (a, b) = Self.twoPositions(entities[e].attributes.count, &random)
            Self.exchangeNames(&entities[e].attributes, a, b, name: \.name, originalNames: \.originalNames)
        case 1 where entities.count > 1:
            let (a, b) = Self.twoPositions(entities.count, &random)
            Self.exchangeNames(&entities, a, b, name: \.name, originalNames: \.originalNames)
        case 2 where entities[e].relationships.count > 1:
            let (a, b) = Self.twoPositions(entities[e].relationships.count, &random)
            Self.exchangeNames(&entities[e].relationships, a, b, name: \.name, originalNames: \.originalNames)
        case 3:
            // A new attribute takes a name another gave up (a later one: see `reusableName`).
            guard let name = reusableName(entities[e].attributes.map { ($0.name, $0.originalNames) }, &random) else { break }
            var attribute = newAttribute(&random, required: false)
            attribute.name = name
            entities[e].attributes.append(attribute)
        case 4:
            guard let name = reusableName(entities.map { ($0.name, $0.originalNames) }, &random) else { break }
            addEntity(&random)
            entities[entities.count - 1].name = name
        case 5 where entities.count > 1:
            // Two tables exchange names (`table:`); the entities keep theirs.
            let (a, b) = Self.twoPositions(entities.count, &random)
            (entities[a].table, entities[b].table) = (entities[b].tableName, entities[a].tableName)
        case 6 where entities[e].storedIndices.count > 1:
            // Two columns exchange names (`column:`); the attributes keep theirs.
            let stored = entities[e].storedIndices
            let (i, j) = Self.twoPositions(stored.count, &random)
            let (a, b) = (stored[i], stored[j])
            (entities[e].attributes[a].column, entities[e].attributes[b].column) = (entities[e].attributes[b].columnName, entities[e].attributes[a].columnName)
        default: break
        }
    }

    /// Two different positions below `count` (at least 2).
    private static func twoPositions(_ count: Int, _ random: inout SeededRandom) -> (Int, Int) {
        let first = random.below(count)
        return (first, (first + 1 + random.below(count - 1)) % count)
    }

    /// Elements `a` and `b` of `elements` exchange names, each declaring its old one first among
    /// its original names; returns their names before.
    @discardableResult
    private static func exchangeNames<Element>(_ elements: inout [Element], _ a: Int, _ b: Int,
                                               name: WritableKeyPath<Element, String>, originalNames: WritableKeyPath<Element, [String]>) -> (String, String) {
        let (first, second) = (elements[a][keyPath: name], elements[b][keyPath: name])
        elements[a][keyPath: originalNames].insert(first, at: 0)
        elements[a][keyPath: name] = second
        elements[b][keyPath: originalNames].insert(second, at: 0)
        elements[b][keyPath: name] = first
        return (first, second)
    }

    /// A name that one of `elements` had and gave up, that none has now, for a new element: never
    /// a name an element was first given (one still in the schema or removed). A new element
    /// named as another was first is that element to a store from before (identity is by name),
    /// and, once renamed in turn, has a history ending as the other's does (`Lineage` then warns
    /// and picks the first): either way not what the test's identities say.
    private func reusableName(_ elements: [(name: String, originalNames: [String])], _ random: inout SeededRandom) -> String? {
        let taken = Set(elements.map(\.name))
        let candidates = elements.flatMap(\.originalNames).filter { !taken.contains($0) && !firstNames.contains($0) }
        return candidates.isEmpty ? nil : candidates[random.below(candidates.count)]
    }

    /// The names that `previous` gave one element and this version another of the same kind and
    /// scope (two exchanging names, a name given up and taken): "scope.name".
    func namesPassed(from previous: EvolvingSchema) -> Set<String> {
        func named(_ version: EvolvingSchema) -> [String: Int] {
            var ids: [String: Int] = [:]
            for entity in version.entities {
                ids["entity.\(entity.name)"] = entity.id
                for attribute in entity.attributes { ids["E\(entity.id).\(attribute.name)"] = attribute.id }
                for relationship in entity.relationships { ids["E\(entity.id).\(relationship.name)"] = relationship.id }
            }
            for enumeration in version.enums {
                for item in enumeration.cases { ids["\(enumeration.name).\(item.name)"] = item.id }
            }
            return ids
        }
        let before = named(previous)
        return Set(named(self).filter { name, id in before[name].map { $0 != id } ?? false }.keys)
    }

    /// Removes one of `groups`, or adds a group of two of `entity`'s attributes.
    private func toggleGroup(in groups: inout [[Int]], of entity: Entity, _ random: inout SeededRandom) {
        if !groups.isEmpty, random.below(2) == 0 {
            groups.remove(at: random.below(groups.count))
            return
        }
        let stored = entity.storedAttributes
        let (first, second) = Self.twoPositions(stored.count, &random)
        let group = [stored[first].id, stored[second].id]
        if !groups.contains(group) { groups.append(group) }
    }

    /// Whether required to-ones lead from entity `start` to entity `goal` (self-references aside).
    private func requiredKeysReach(_ goal: Int, from start: Int) -> Bool {
        var seen: Set<Int> = [], pending = [start]
        while let entity = pending.popLast() {
            if entity == goal { return true }
            guard seen.insert(entity).inserted, let found = entities.first(where: { $0.id == entity }) else { continue }
            pending += found.relationships.filter { $0.isRequired && $0.target != entity }.map(\.target)
        }
        return false
    }

    // MARK: - YAML, rows and snapshots

    var yaml: String {
        func names(_ list: [String]) -> String { list.isEmpty ? "" : ", originalName: [\(list.joined(separator: ", "))]" }
        var lines = ["schema: Evolving"]
        if !enums.isEmpty {
            lines.append("enums:")
            for enumeration in enums {
                let cases = enumeration.cases.map { $0.originalNames.isEmpty ? $0.name : "{\($0.name): {originalName: [\($0.originalNames.joined(separator: ", "))]}}" }
                lines.append("  \(enumeration.name): [\(cases.joined(separator: ", "))]")
            }
        }
        lines.append("entities:")
        for entity in entities {
            lines.append("  \(entity.name):")
            if !entity.originalNames.isEmpty { lines.append("    originalName: [\(entity.originalNames.joined(separator: ", "))]") }
            if let table = entity.table { lines.append("    table: \(table)") }
            lines.append("    attributes:")
            for attribute in entity.attributes {
                var options = "type: \(attribute.type)\(attribute.isOptional ? "?" : "")"
                if let value = attribute.defaultValue { options += ", default: \(value)" }
                if attribute.isIndexed { options += ", indexed: true" }
                if attribute.isUnique { options += ", unique: true" }
                if let column = attribute.column { options += ", column: \(column)" }
                if attribute.isTransient { options += ", transient: true" }
                lines.append("      \(attribute.name): { \(options)\(names(attribute.originalNames)) }")
            }
            lines.append("    relationships:")
            for relationship in entity.relationships {
                let type = relationship.kind == .manyToMany ? "\"[\(entityName(relationship.target))]\"" : entityName(relationship.target) + (relationship.isRequired ? "" : "?")
                lines.append("      \(relationship.name): { type: \(type), inverse: \(relationship.inverseName)\(names(relationship.originalNames)) }")
            }
            for other in entities {
                for relationship in other.relationships where relationship.target == entity.id {
                    let type = relationship.kind == .oneToOne ? other.name + "?" : "\"[\(other.name)]\""
                    lines.append("      \(relationship.inverseName): { type: \(type), inverse: \(relationship.name), deleteRule: \(relationship.deleteRule)\(names(relationship.inverseOriginalNames)) }")
                }
            }
            func groups(_ groups: [[Int]]) -> String {
                "[" + groups.map { group in "[" + group.map { id in entity.attributes.first { $0.id == id }!.name }.joined(separator: ", ") + "]" }.joined(separator: ", ") + "]"
            }
            if !entity.uniqueGroups.isEmpty { lines.append("    unique: \(groups(entity.uniqueGroups))") }
            if !entity.indexGroups.isEmpty { lines.append("    indexes: \(groups(entity.indexGroups))") }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A round number beyond 2^53 (`a`e`k`, `a` of at most six digits) that lies exactly halfway
    /// between two doubles: where the one it reads as has an even significand, Swift writes its
    /// digits and PostgreSQL longer ones (a widening to `String` must write Swift's).
    static func halfwayDouble(_ random: inout SeededRandom) -> Double {
        while true {
            let a = 1 + random.below(999_999), k = 15 + random.below(10)
            let number = Double("\(a)e\(k)")!
            // a · 10^k = a · 5^k · 2^k is halfway when its factors of two are those of half a unit
            // in the last place: 2^(exponent - 53).
            if a.trailingZeroBitCount + k == Int(number.exponent) - 53 { return number }
        }
    }

    /// A `Double` beyond 2^53 as SQL whose value is exactly it: PostgreSQL reads Swift's digits
    /// exactly; SQLite before 3.43 misreads some decimal literals, so there it is its significand
    /// times a power of two, each read exactly.
    static func exactSQL(_ number: Double, _ dialect: SQLDialect) -> String {
        guard dialect == .sqlite else { return String(number) }
        let shift = Int(number.exponent) - 52
        precondition(shift > 0, "\(number) is not beyond 2^53")
        return "(CAST(\(Int64(number / Double(sign: .plus, exponent: shift, significand: 1))) AS REAL) * \(Int64(1) << shift))"
    }

    /// Random rows for every table of this version (`schema`, resolved from `yaml`): 2 to 5 objects
    /// per entity, values of each attribute's type (NULL now and then where optional), and links
    /// each relationship's kind allows (none, one, or for many-to-many up to two targets per object;
    /// a one-to-one never shares a target), written where `schema` stores them.
    /// With `dialect` PostgreSQL, booleans are written `TRUE` and `FALSE`.
    func rows(_ random: inout SeededRandom, schema: ModelSchema, dialect: SQLDialect = .sqlite) -> String {
        var statements: [String] = []
        let q = dialect.quote
        let counts = Dictionary(entities.map { ($0.id, 2 + random.below(4)) }, uniquingKeysWith: { first, _ in first })
        for entity in entities {
            for row in 1...counts[entity.id]! {
                var columns = ["id"], values = [String(row)]
                for attribute in entity.storedAttributes {
                    columns.append(q(Self.column(of: attribute, in: entity, schema)))
                    if attribute.isOptional && random.below(4) == 0 { values.append("NULL"); continue }
                    switch attribute.type {
                    case "Int": values.append(String(Int64(bitPattern: random.next()) >> Int64(random.below(64))))
                    case "Int16": values.append(String(Int(random.below(65536)) - 32768))
                    case "String": values.append("'s\(random.below(1000))''\(row)'")
                    case "Double" where random.below(6) == 0:
                        values.append(Self.exactSQL(Self.halfwayDouble(&random), dialect))
                    case "Double": values.append(String(Double(random.below(1_000_000)) / 64))
                    case "Decimal" where random.below(5) == 0:
                        // Far from 1, as the app stores it.
                        let value = random.decimalOfAnyExponent()
                        values.append(dialect == .sqlite ? "'\(value)'" : "\(value)")
                    // The others as the app stores them, from few values so that some repeat.
                    case "Decimal":
                        let digits = ["12.5", "-3.25", "0", "100", "0.1"][random.below(5)]
                        values.append(dialect == .sqlite ? "'\(digits)'" : digits)
                    case "Date":
                        let seconds = Double(random.below(4)) * 86_400 + 728_352_000
                        values.append(dialect == .sqlite ? String(seconds) : "to_timestamp(\(Int(seconds) + 978_307_200))")
                    case "Float": values.append(String(Double(Float(random.below(100_000)) / 64)))
                    case "UUID": values.append("'0000000\(random.below(3))-0000-0000-0000-00000000000A'")
                    case "Data":
                        let hex = ["", "00", "0102", "FF"][random.below(4)]
                        values.append(dialect == .sqlite ? "X'\(hex)'" : "'\\x\(hex)'::bytea")
                    case let type where type.hasPrefix("K"):
                        let cases = enums.first { $0.name == type }!.cases
                        values.append("'\(cases[random.below(cases.count)].name)'")
                    case "Bool":
                        let flag = random.below(2) == 1
                        values.append(dialect == .sqlite ? (flag ? "1" : "0") : (flag ? "TRUE" : "FALSE"))
                    default: fatalError("no values of \(attribute.type)")
                    }
                }
                statements.append("INSERT INTO \(q(Self.table(of: entity, schema))) (\(columns.joined(separator: ", "))) VALUES (\(values.joined(separator: ", ")));")
            }
        }
        for entity in entities {
            for relationship in entity.relationships {
                let targets = counts[relationship.target]!
                var free = Array(1...targets)
                // Some relationships link every object (so that a version may make them required).
                let linksAll = random.below(2) == 0
                for row in 1...counts[entity.id]! where linksAll || random.below(3) != 0 {
                    let linked: [Int]
                    switch relationship.kind {
                    case .toOne: linked = [1 + random.below(targets)]
                    case .oneToOne: linked = free.isEmpty ? [] : [free.remove(at: random.below(free.count))]
                    case .manyToMany: linked = Array(Set((0...random.below(2)).map { _ in 1 + random.below(targets) })).sorted()
                    }
                    statements += linked.map { Self.link(entity.name, relationship.name, owner: row, target: $0, in: schema, dialect: dialect) }
                }
            }
        }
        return statements.joined(separator: "\n")
    }

    /// The table of `entity` in `schema` (this version, resolved).
    private static func table(of entity: Entity, _ schema: ModelSchema) -> String {
        schema.entity(named: entity.name)!.tableName
    }

    /// The column of `attribute` of `entity` in `schema` (this version, resolved).
    private static func column(of attribute: Attribute, in entity: Entity, _ schema: ModelSchema) -> String {
        schema.entity(named: entity.name)!.attributes.first { $0.name == attribute.name }!.columnName
    }

    /// The statement storing one link of `entity.relationship` where `schema` keeps it.
    private static func link(_ entity: String, _ relationship: String, owner: Int, target: Int, in schema: ModelSchema, dialect: SQLDialect) -> String {
        let q = dialect.quote
        let model = schema.relationship(entity, relationship)!
        switch model.storage {
        case let .foreignKey(column, _):
            return "UPDATE \(q(schema.entity(named: entity)!.tableName)) SET \(q(column)) = \(target) WHERE id = \(owner);"
        case .inverseForeignKey:
            guard case let .foreignKey(column, _) = schema.relationship(model.target, model.inverse!)!.storage else { fatalError("no key column") }
            return "UPDATE \(q(schema.entity(named: model.target)!.tableName)) SET \(q(column)) = \(owner) WHERE id = \(target);"
        case let .joinTable(name):
            let table = schema.joinTable(named: name)!
            let owns = table.entity == entity && table.relationship == relationship
            return "INSERT INTO \(q(name)) (\(q(table.column)), \(q(table.targetColumn))) VALUES (\(owns ? owner : target), \(owns ? target : owner));"
        }
    }

    /// `SELECT owner, target` of every link of `entity.relationship`, read where `schema` stores them.
    static func linksSQL(_ entity: String, _ relationship: String, in schema: ModelSchema, dialect: SQLDialect) -> String {
        let q = dialect.quote
        let model = schema.relationship(entity, relationship)!
        switch model.storage {
        case let .foreignKey(column, _):
            return "SELECT id, \(q(column)) FROM \(q(schema.entity(named: entity)!.tableName)) WHERE \(q(column)) IS NOT NULL"
        case .inverseForeignKey:
            guard case let .foreignKey(column, _) = schema.relationship(model.target, model.inverse!)!.storage else { fatalError("no key column") }
            return "SELECT \(q(column)), id FROM \(q(schema.entity(named: model.target)!.tableName)) WHERE \(q(column)) IS NOT NULL"
        case let .joinTable(name):
            let table = schema.joinTable(named: name)!
            let owns = table.entity == entity && table.relationship == relationship
            return "SELECT \(q(owns ? table.column : table.targetColumn)), \(q(owns ? table.targetColumn : table.column)) FROM \(q(name))"
        }
    }

    /// Every stored value, by identity: "entity id/row id/attribute or relationship id" → value
    /// (a relationship's value: its targets' ids, sorted, joined by commas; "NULL" for none).
    func snapshot(_ database: SQLiteDatabase, schema: ModelSchema) throws -> [String: String] {
        var values: [String: String] = [:]
        for entity in entities {
            let columns = entity.storedAttributes.map { (String($0.id), Self.column(of: $0, in: entity, schema)) }
            let select = (["id"] + columns.map { SQLDialect.sqlite.quote($0.1) }).joined(separator: ", ")
            for row in try database.query("SELECT \(select) FROM \(SQLDialect.sqlite.quote(Self.table(of: entity, schema)))") {
                guard let id = row[0].integer else { continue }
                values["\(entity.id)/\(id)"] = "row"
                for (index, column) in columns.enumerated() {
                    values["\(entity.id)/\(id)/\(column.0)"] = row[index + 1].testText
                }
                for relationship in entity.relationships { values["\(entity.id)/\(id)/\(relationship.id)"] = "NULL" }
            }
            for relationship in entity.relationships {
                let links = try database.query(Self.linksSQL(entity.name, relationship.name, in: schema, dialect: .sqlite)).map { ($0[0].integer!, $0[1].integer!) }
                Self.record(links, of: relationship, entity: entity, into: &values)
            }
        }
        return values
    }

    private static func record(_ links: [(Int64, Int64)], of relationship: Relationship, entity: Entity, into values: inout [String: String]) {
        for (owner, targets) in Dictionary(grouping: links, by: \.0) {
            values["\(entity.id)/\(owner)/\(relationship.id)"] = targets.map(\.1).sorted().map(String.init).joined(separator: ",")
        }
    }

    /// What `snapshot` must read after migrating from `previous` holding `old`: kept rows and values,
    /// defaults where a value is new or a NULL became required, widened values unchanged (a snapshot
    /// writes integers and `Double`s as Swift does, as a widening to `String` does), links
    /// kept whatever their storage. Nil when the migration must be refused: an object with more
    /// than one target for a relationship that becomes to-one, a target shared by two objects
    /// for one that becomes one-to-one, values two rows hold in a unique attribute or compound
    /// constraint, or an object with no target for a required to-one.
    func expected(from old: [String: String], previous: EvolvingSchema) -> [String: String]? {
        var values: [String: String] = [:]
        for entity in entities {
            guard let before = previous.entities.first(where: { $0.id == entity.id }) else { continue }
            let rows = old.keys.filter { $0.hasPrefix("\(entity.id)/") && $0.split(separator: "/").count == 2 }
            for rowKey in rows {
                values[rowKey] = "row"
                for attribute in entity.storedAttributes {
                    let key = "\(rowKey)/\(attribute.id)"
                    let kept = before.attributes.contains { $0.id == attribute.id } ? old[key] : nil
                    if let kept, kept != "NULL" || attribute.isOptional {
                        // A case is kept under its new name; one the version removes, still in use, refuses it.
                        guard let value = sameCase(kept, of: attribute.type, in: previous) else { return nil }
                        // An `Int` narrowed to `Int16` refuses a value out of its range.
                        if attribute.type == "Int16", value != "NULL", Int16(value) == nil { return nil }
                        values[key] = value
                    } else if let value = attribute.defaultValue {
                        values[key] = Self.storedDefault(value, type: attribute.type)
                    } else {
                        // A required attribute with no value and no default to give it refuses.
                        guard attribute.isOptional else { return nil }
                        values[key] = "NULL"
                    }
                }
                for relationship in entity.relationships {
                    let key = "\(rowKey)/\(relationship.id)"
                    values[key] = before.relationships.contains { $0.id == relationship.id } ? old[key] ?? "NULL" : "NULL"
                }
            }
            for group in entity.attributes.filter(\.isUnique).map({ [$0.id] }) + entity.uniqueGroups {
                // Rows whose values in the group are all set (NULLs are not duplicates).
                let held = rows.map { row in group.map { values["\(row)/\($0)"] ?? "NULL" } }.filter { !$0.contains("NULL") }
                if Set(held).count != held.count { return nil }
            }
            for relationship in entity.relationships where relationship.isRequired {
                if rows.contains(where: { values["\($0)/\(relationship.id)"] == "NULL" }) { return nil }
            }
            for relationship in entity.relationships where relationship.kind != .manyToMany {
                let targets = rows.compactMap { values["\($0)/\(relationship.id)"] }.filter { $0 != "NULL" }
                if targets.contains(where: { $0.contains(",") }) { return nil }
                if relationship.kind == .oneToOne, Set(targets).count != targets.count { return nil }
            }
        }
        return values
    }

    /// The values a migration from `previous` holding `old` (`previousSchema`, resolved) must report
    /// as lost (SPEC §6: counted before anything happens): the rows of the entities this version
    /// removes, the values of the attributes it removes or makes transient, and the links of the
    /// relationships it removes, unless they lived in a table that goes with its rows (a key column
    /// of a removed entity's table). Links that change storage, and values that change type, are kept.
    func expectedLoss(from old: [String: String], previous: EvolvingSchema, previousSchema: ModelSchema) -> Int {
        var lost = 0
        for before in previous.entities {
            let rows = old.keys.filter { $0.hasPrefix("\(before.id)/") && $0.split(separator: "/").count == 2 }
            let after = entities.first { $0.id == before.id }
            if let after {
                for attribute in before.storedAttributes where !after.storedAttributes.contains(where: { $0.id == attribute.id }) {
                    lost += rows.filter { old["\($0)/\(attribute.id)"] != "NULL" }.count
                }
            } else {
                lost += rows.count
            }
            for relationship in before.relationships where after?.relationships.contains(where: { $0.id == relationship.id }) != true {
                let links = rows.compactMap { old["\($0)/\(relationship.id)"] }.filter { $0 != "NULL" }.map { $0.split(separator: ",").count }.reduce(0, +)
                let resolved = previousSchema.entity(named: before.name)?.relationships.first { $0.name == relationship.name }
                switch resolved?.storage {
                case .joinTable?: lost += links
                case .foreignKey?: if after != nil { lost += links }
                case .inverseForeignKey?: if entities.contains(where: { $0.id == relationship.target }) { lost += links }
                case nil: XCTFail("relationship \(before.name).\(relationship.name) is not in the resolved schema")
                }
            }
        }
        return lost
    }

    /// The name this version gives the case `previous` names `value` in enumeration `type`: nil
    /// when this version removed it; `value` itself when `type` is no enumeration (or for NULL).
    private func sameCase(_ value: String, of type: String, in previous: EvolvingSchema) -> String? {
        guard value != "NULL", let before = previous.enums.first(where: { $0.name == type }) else { return value }
        let id = before.cases.first { $0.name == value }!.id
        return enums.first { $0.name == type }?.cases.first { $0.id == id }?.name
    }

    /// A default as a snapshot reads it: as the app stores the value (an enumeration's case as it is).
    private static func storedDefault(_ value: String, type: String) -> String {
        DefaultValueTests.stored(value, as: type)!.testText
    }

    /// `snapshot` of the same store in PostgreSQL (schema `namespace`), values written as SQLite's are.
    func postgresSnapshot(_ url: String, namespace: String, schema: ModelSchema) throws -> [String: String] {
        var values: [String: String] = [:]
        for entity in entities {
            let stored = entity.storedAttributes
            let columns = stored.map { attribute -> (String, String) in
                let column = SQLDialect.postgresql.quote(Self.column(of: attribute, in: entity, schema))
                let text = switch attribute.type {
                case "Bool": "\(column)::int::text"
                case "Date": "(extract(epoch FROM \(column)) - 978307200)::text"
                case "Data": "upper(encode(\(column), 'hex'))"
                default: "\(column)::text"
                }
                return (String(attribute.id), text)
            }
            let select = (["id::text"] + columns.map { "coalesce(\($0.1), 'NULL')" }).joined(separator: " || '|' || ")
            let output = try PostgresServer.psqlRaw(url, "SELECT \(select) FROM \(namespace).\(SQLDialect.postgresql.quote(Self.table(of: entity, schema)));")
            for line in output.split(separator: "\n") {
                let fields = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
                guard let id = fields.first else { continue }
                values["\(entity.id)/\(id)"] = "row"
                for (index, column) in columns.enumerated() {
                    // As SQLite's snapshot writes the value: a `Double` (or a `Date`'s seconds, or a
                    // `Float` widened) as Swift writes it (PostgreSQL writes 5.0 as `5`), a `Decimal`
                    // as the app stores it (PostgreSQL keeps a scale: `12.50`), a UUID in upper case.
                    let field = fields[index + 1]
                    let value = switch stored[index].type {
                    case _ where field == "NULL": field
                    case "Double", "Date": String(Double(field)!)
                    case "Float": String(Double(Float(field)!))
                    case "Decimal": Decimal(string: field, locale: Locale(identifier: "en_US_POSIX"))!.description
                    case "UUID": field.uppercased()
                    default: field
                    }
                    values["\(entity.id)/\(id)/\(column.0)"] = value
                }
                for relationship in entity.relationships { values["\(entity.id)/\(id)/\(relationship.id)"] = "NULL" }
            }
            for relationship in entity.relationships {
                let sql = "SET search_path TO \(namespace); SELECT links.* FROM (\(Self.linksSQL(entity.name, relationship.name, in: schema, dialect: .postgresql))) AS links;"
                let links = try PostgresServer.psqlRaw(url, sql).split(separator: "\n").compactMap { line -> (Int64, Int64)? in
                    let fields = line.split(separator: "|").compactMap { Int64($0) }
                    return fields.count == 2 ? (fields[0], fields[1]) : nil
                }
                Self.record(links, of: relationship, entity: entity, into: &values)
            }
        }
        return values
    }
}
