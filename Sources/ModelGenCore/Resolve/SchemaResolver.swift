import Foundation

/// Checks `SchemaSyntax` against itself and resolves it into a `ModelSchema`: types looked up,
/// inverses paired, storage chosen, SQL names given, collisions and hazards reported.
/// All diagnostics are collected; the schema is returned only when there is no error.
public struct SchemaResolver {
    /// Type names generated code cannot take: the modules it qualifies names with (every runtime
    /// and standard type is written `ModelGenRuntime.…`, `Swift.…` or `Foundation.…`, so entities
    /// may be named like any of them) and Swift's own special types; and `self`, which inside a
    /// class's own methods names the object, not the class (`\`self`.name`, the key path a model
    /// class writes for `#Predicate`, does not compile there).
    static let reservedTypeNames = [
        "Swift", "Foundation", "ModelGenRuntime", "ModelGenProgram", "ModelGenQuery", "Self", "self", "Any", "Type", "Protocol",
    ]
    /// Names of members that every generated model class already has, and names Swift key paths
    /// (`\Entity.name`, which `#Predicate` and `SortDescriptor` need) cannot reach.
    static let reservedMemberNames = [
        "id", "persistentModelID", "modelContext", "isDeleted", "hasChanges", "persistentBackingData", "hashValue",
        "self", "Self", "Type", "Protocol", "init", "deinit",
    ]
    /// Names of members that every generated model class and schema type has (theirs and their
    /// protocols'): inside the class or the schema type, such a name means the member, so an entity
    /// named so could not be named there (`\Entity.name` for `#Predicate`, `Entity.self` in the schema's models).
    static let reservedEntityNames = [
        "entity", "persistentBackingData", "propertyName", "persistentModelID", "modelContext", "isDeleted", "hasChanges",
        "hashValue", "hash", "models", "sqliteDDL", "postgreSQLTables", "deletionProgram", "canonicalSchema",
    ]
    /// Enum cases generated code cannot write as `Enum.case`.
    static let reservedCaseNames = ["self", "Self", "Protocol", "init"]

    private var diagnostics = DiagnosticCollector()
    private let syntax: SchemaSyntax
    /// Where each relationship was declared, keyed "Entity.name", for later diagnostics.
    private var relationshipSyntax: [String: RelationshipSyntax] = [:]
    /// Position of each entity by name (first declaration), for lookups.
    private var entityPositions: [String: Int] = [:]

    private init(syntax: SchemaSyntax) {
        self.syntax = syntax
    }

    public static func resolve(_ syntax: SchemaSyntax, sourceFile: String) -> (ModelSchema?, [Diagnostic]) {
        var resolver = SchemaResolver(syntax: syntax)
        let schema = resolver.resolveSchema(sourceFile: sourceFile)
        return (resolver.diagnostics.hasErrors ? nil : schema, resolver.diagnostics.diagnostics)
    }

    // MARK: - Schema

    private mutating func resolveSchema(sourceFile: String) -> ModelSchema {
        let schemaName = syntax.name?.value ?? ""
        if let name = syntax.name {
            checkTypeName(name, what: "schema name")
        }
        let enums = resolveEnums()
        // Looked up by every attribute's type: by name, the first declaration of a name winning.
        let enumsByName = Dictionary(enums.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let entityNames = uniqueNames(syntax.entities.map(\.name), what: "entity")
        for entity in syntax.entities {
            checkTypeName(entity.name, what: "entity name")
            if Self.reservedEntityNames.contains(entity.name.value) {
                diagnostics.error("""
                    entity name '\(entity.name.value)' is the name of a member of every generated model class or of the schema type, \
                    where it would name the member, not the class; choose another name (its table may keep the name: 'table: \(entity.name.value)')
                    """, at: entity.name.location)
            }
            if entity.name.value == schemaName {
                diagnostics.error("entity '\(entity.name.value)' has the same name as the schema; the generated schema type would collide with it", at: entity.name.location)
            }
            if enumsByName[entity.name.value] != nil {
                diagnostics.error("entity '\(entity.name.value)' has the same name as an enum", at: entity.name.location)
            }
        }
        let knownEntities = Set(entityNames)
        // Entities resolve independently of one another: on every core, diagnostics kept in order.
        let syntax = syntax
        let resolved = syntax.entities.concurrentMap { entity in
            var resolver = SchemaResolver(syntax: syntax)
            return (resolver.resolveEntity(entity, enums: enumsByName, entityNames: knownEntities), resolver.diagnostics.diagnostics)
        }
        var entities = resolved.map(\.0)
        for (_, entityDiagnostics) in resolved { diagnostics.append(contentsOf: entityDiagnostics) }
        for entity in syntax.entities {
            for relationship in entity.relationships {
                relationshipSyntax["\(entity.name.value).\(relationship.name.value)"] = relationship
            }
        }
        for (position, entity) in entities.enumerated() where entityPositions[entity.name] == nil {
            entityPositions[entity.name] = position
        }
        pairInverses(&entities)
        let joinTables = assignStorage(&entities)
        resolveConstraints(&entities)
        checkTables(entities, joinTables)
        checkColumns(entities)
        checkPostgreSQLLimits(entities, enums: enums)
        warnAboutHazards(entities)
        checkRequiredCycles(entities)
        return ModelSchema(name: schemaName, sourceFile: sourceFile, enums: enums, entities: entities, joinTables: joinTables)
    }

    /// Why a name is refused (`Naming.isIdentifier`), after the name.
    private static let notAnIdentifier = "is not a name a schema can use: use ASCII letters, digits and '_', not starting with a digit (names become Swift and SQL identifiers)"

    private mutating func checkTypeName(_ name: Located<String>, what: String) {
        if !Naming.isIdentifier(name.value) {
            diagnostics.error("\(what) '\(name.value)' \(Self.notAnIdentifier)", at: name.location)
        } else if Self.reservedTypeNames.contains(name.value) {
            diagnostics.error("\(what) '\(name.value)' is reserved: generated code qualifies names with the modules Swift, Foundation and ModelGenRuntime, Self, Any, Type and Protocol are Swift's own, and inside a class's methods self is the object; choose another name\(what == "entity name" ? " (its table may keep the name: 'table: \(name.value)')" : "")", at: name.location)
        } else if ScalarType(rawValue: name.value) != nil && what != "entity name" {
            diagnostics.error("\(what) '\(name.value)' is the name of a built-in attribute type; choose another name", at: name.location)
        }
    }

    /// Reports repeated names; returns the names in order.
    private mutating func uniqueNames(_ names: [Located<String>], what: String) -> [String] {
        var seen: Set<String> = []
        for name in names where !seen.insert(name.value).inserted {
            diagnostics.error("\(what) '\(name.value)' is declared twice", at: name.location)
        }
        return names.map(\.value)
    }

    private mutating func resolveEnums() -> [EnumType] {
        _ = uniqueNames(syntax.enums.map(\.name), what: "enum")
        return syntax.enums.map { syntax in
            checkTypeName(syntax.name, what: "enum name")
            if syntax.name.value == self.syntax.name?.value {
                diagnostics.error("enum '\(syntax.name.value)' has the same name as the schema; the generated schema type would collide with it", at: syntax.name.location)
            }
            if syntax.cases.isEmpty {
                diagnostics.error("enum '\(syntax.name.value)' has no cases", at: syntax.name.location)
            }
            for name in syntax.cases {
                if !Naming.isIdentifier(name.value) {
                    diagnostics.error("enum case '\(name.value)' of '\(syntax.name.value)' \(Self.notAnIdentifier)", at: name.location)
                } else if Self.reservedCaseNames.contains(name.value) {
                    diagnostics.error("enum case '\(name.value)' of '\(syntax.name.value)' cannot be written as '\(syntax.name.value).\(name.value)' in Swift, even in backticks; rename it", at: name.location)
                }
            }
            _ = uniqueNames(syntax.cases, what: "case of enum '\(syntax.name.value)'")
            return EnumType(name: syntax.name.value, cases: syntax.cases.map(\.value),
                            caseOriginalNames: syntax.caseOriginalNames.mapValues { $0.map(\.value) })
        }
    }

    // MARK: - Entities, attributes, relationships

    /// A type as written without spaces around it (`[ Book ]`); the text itself when it has none,
    /// which skips Foundation's trimming for nearly every type of a schema.
    private static func trimmingSpaces(_ type: String) -> String {
        guard type.first?.isWhitespace == true || type.last?.isWhitespace == true else { return type }
        return type.trimmingCharacters(in: .whitespaces)
    }

    private mutating func resolveEntity(_ entity: EntitySyntax, enums: [String: EnumType], entityNames: Set<String>) -> Entity {
        let memberNames = entity.attributes.map(\.name) + entity.relationships.map(\.name)
        _ = uniqueNames(memberNames.sorted { $0.location < $1.location }, what: "member of '\(entity.name.value)'")
        for member in memberNames {
            if !Naming.isIdentifier(member.value) {
                diagnostics.error("'\(member.value)' in '\(entity.name.value)' \(Self.notAnIdentifier)", at: member.location)
            } else if Self.reservedMemberNames.contains(member.value) {
                let reason = member.value == "id" ? "collides with the primary key 'id', which is added for you (an object's identity is its persistentModelID; an attribute of your own, such as a UUID, needs another name, as in 'uuid')"
                    : ["self", "Self", "Type", "Protocol", "init", "deinit"].contains(member.value) ? "cannot be named by a Swift key path, which #Predicate and SortDescriptor need"
                    : "collides with a member every generated model has"
                diagnostics.error("'\(member.value)' in '\(entity.name.value)' \(reason); rename it", at: member.location)
            } else if member.value == entity.name.value {
                diagnostics.error("""
                    '\(member.value)' in '\(entity.name.value)' has its entity's name: inside the class it would name the member, not the class \
                    (the key paths #Predicate and SortDescriptor need could not be written); rename it (its column may keep the name: 'column:')
                    """, at: member.location)
            }
        }
        let table = entity.table?.value ?? Naming.snakeCase(entity.name.value)
        let attributes = entity.attributes.compactMap { resolveAttribute($0, in: entity.name.value, enums: enums, entityNames: entityNames) }
        let relationships = entity.relationships.compactMap { resolveRelationship($0, in: entity.name.value, entityNames: entityNames) }
        return Entity(name: entity.name.value, tableName: table, attributes: attributes, relationships: relationships,
                      uniqueConstraints: [], indexes: [], originalNames: entity.originalNames.map(\.value))
    }

    private mutating func resolveAttribute(_ attribute: AttributeSyntax, in entity: String, enums: [String: EnumType], entityNames: Set<String>) -> Attribute? {
        var typeName = attribute.type.value
        typeName = Self.trimmingSpaces(typeName)
        let isOptional = typeName.hasSuffix("?")
        if isOptional { typeName.removeLast() }
        let type: AttributeType
        if let scalar = ScalarType(rawValue: typeName) {
            type = .scalar(scalar)
        } else if enums[typeName] != nil {
            type = .enumeration(typeName)
        } else {
            let bare = typeName.trimmingCharacters(in: CharacterSet(charactersIn: "[]?"))
            let known = ScalarType.allCases.map(\.rawValue) + syntax.enums.map(\.name.value)
            if entityNames.contains(bare) {
                diagnostics.error("attribute '\(attribute.name.value)' of '\(entity)' has type '\(attribute.type.value)', which is an entity; declare it under 'relationships'", at: attribute.type.location)
            } else {
                diagnostics.error("unknown type '\(attribute.type.value)' for attribute '\(attribute.name.value)' of '\(entity)'\(NearMiss.hint(for: typeName, among: known))", at: attribute.type.location)
            }
            return nil
        }
        let defaultValue = attribute.defaultValue.flatMap { resolveDefault($0, type: type, enums: enums, attribute: "\(entity).\(attribute.name.value)") }
        if attribute.transient?.value == true, !isOptional, defaultValue == nil {
            diagnostics.error("transient attribute '\(entity).\(attribute.name.value)' is not stored, so it needs a 'default' or an optional type", at: attribute.name.location)
        }
        return Attribute(name: attribute.name.value,
                         columnName: attribute.column?.value ?? Naming.snakeCase(attribute.name.value),
                         type: type, isOptional: isOptional,
                         isUnique: attribute.unique?.value ?? false, isIndexed: attribute.indexed?.value ?? false,
                         isTransient: attribute.transient?.value ?? false,
                         defaultValue: defaultValue, originalNames: attribute.originalNames.map(\.value))
    }

    /// True when the whole of `value` matches `pattern` (no line-end leniency, unlike `^…$`).
    private static func matchesWhole(_ value: String, _ pattern: String) -> Bool {
        value.range(of: "\\A(?:\(pattern))\\z", options: .regularExpression) != nil
    }

    /// Whether a number's text denotes zero (every digit of its mantissa is 0), decimal or hex.
    private static func isZeroLiteral(_ text: String) -> Bool {
        var body = Substring(text.lowercased())
        if body.first == "-" || body.first == "+" { body = body.dropFirst() }
        let isHex = body.hasPrefix("0x")
        if isHex { body = body.dropFirst(2) }
        let mantissa = body.prefix { $0 != (isHex ? "p" : "e") }
        return mantissa.allSatisfy { $0 == "0" || $0 == "." }
    }

    private mutating func resolveDefault(_ text: Located<String>, type: AttributeType, enums: [String: EnumType], attribute: String) -> DefaultValue? {
        func fail(_ expected: String) -> DefaultValue? {
            diagnostics.error("default '\(text.value)' of '\(attribute)' is not \(expected)", at: text.location)
            return nil
        }
        let value = text.value
        switch type {
        case let .enumeration(name):
            let cases = enums[name]?.cases ?? []
            guard cases.contains(value) else {
                diagnostics.error("default '\(value)' of '\(attribute)' is not a case of '\(name)'\(NearMiss.hint(for: value, among: cases))", at: text.location)
                return nil
            }
            return .enumCase(value)
        case let .scalar(scalar):
            switch scalar {
            case .string:
                // Neither database can hold a NUL in SQL text (SQLite ends the statement there).
                guard !value.unicodeScalars.contains("\0") else { return fail("a string without NUL characters (U+0000)") }
                return .string(value)
            case .url:
                // The generated initializer builds the default with URL(string:), which must not fail.
                guard let url = Foundation.URL(string: value) else { return fail("a URL that URL(string:) accepts") }
                // Kept as the app stores it (`https://x/a b` as `https://x/a%20b`).
                return .string(url.absoluteString)
            case .int, .int64, .int32, .int16:
                let range: ClosedRange<Int64> = scalar == .int32 ? Int64(Int32.min)...Int64(Int32.max)
                    : scalar == .int16 ? Int64(Int16.min)...Int64(Int16.max) : Int64.min...Int64.max
                guard let number = Int64(value), range.contains(number) else { return fail("a whole number that fits \(scalar.rawValue)") }
                return .integer(number)
            case .double, .float:
                guard let number = Double(value), number.isFinite else { return fail("a number") }
                // PostgreSQL refuses a literal its type cannot hold (a Float past 3.4028235e38; one
                // that rounds to zero), which Swift and SQLite would take as infinity or zero.
                let single = scalar == .float ? Float(value) : nil
                if scalar == .float, !(single?.isFinite ?? false) { return fail("a number within Float's range (at most 3.4028235e38)") }
                if (single.map { $0 == 0 } ?? (number == 0)), !Self.isZeroLiteral(value) {
                    return fail("a number \(scalar.rawValue) can hold: it rounds to zero")
                }
                // Kept as the app stores it: a `Float` as the `Double` it widens to (0.1 as 0.10000000149011612).
                return .real(single.map(Double.init) ?? number)
            case .bool:
                guard value == "true" || value == "false" else { return fail("true or false") }
                return .bool(value == "true")
            case .date:
                guard let date = ISO8601Date.date(from: value) else {
                    return fail("an ISO 8601 date such as 2024-01-31 or 2024-01-31T12:00:00Z")
                }
                // Swift, SQLite and PostgreSQL agree on the Gregorian calendar only after its
                // introduction; PostgreSQL's timestamps end with year 294276, four digits end here.
                let iso8601 = ISO8601Date.string(from: date)
                guard let year = Int(iso8601.prefix(4)), (1583...9999).contains(year) else {
                    return fail("a date in the years 1583 to 9999 (the Gregorian calendar in UTC)")
                }
                return .date(date.timeIntervalSinceReferenceDate, iso8601: iso8601)
            case .uuid:
                guard let uuid = UUID(uuidString: value) else { return fail("a UUID") }
                return .uuid(uuid.uuidString)
            case .data:
                guard let data = Data(base64Encoded: value) else { return fail("base64-encoded bytes") }
                return .data([UInt8](data))
            case .decimal:
                guard Self.matchesWhole(value, #"-?[0-9]+(\.[0-9]+)?"#) else { return fail("a decimal number such as 12.50") }
                // Foundation's Decimal keeps 38 significant digits; more would be rounded.
                let digits = value.filter(\.isNumber).drop { $0 == "0" }
                let significant = value.contains(".") ? digits.reversed().drop { $0 == "0" }.count : digits.count
                guard significant <= 38 else { return fail("a decimal number of at most 38 significant digits") }
                // Kept as the app stores it, its shortest digits (`12.50` as `12.5`, `-0.0` as `0`): a
                // unique index compares the stored text.
                guard let digits = DefaultValue.decimalDigits(value) else {
                    return fail("a decimal number Foundation's Decimal can hold (its exponent runs from -128 to 127)")
                }
                return .decimal(digits)
            }
        }
    }

    private mutating func resolveRelationship(_ relationship: RelationshipSyntax, in entity: String, entityNames: Set<String>) -> Relationship? {
        var typeName = Self.trimmingSpaces(relationship.type.value)
        let cardinality: Cardinality
        if typeName.hasPrefix("[") && typeName.hasSuffix("]?") {
            diagnostics.error("to-many relationship '\(entity).\(relationship.name.value)' is written '\(typeName)'; write '\(typeName.dropLast())' (an empty list means no objects)", at: relationship.type.location)
            return nil
        } else if typeName.hasPrefix("[") && typeName.hasSuffix("]") {
            typeName = Self.trimmingSpaces(String(typeName.dropFirst().dropLast()))
            cardinality = .toMany
        } else if typeName.hasSuffix("?") {
            typeName.removeLast()
            cardinality = .toOne(isOptional: true)
        } else {
            cardinality = .toOne(isOptional: false)
        }
        guard entityNames.contains(typeName) else {
            if ScalarType(rawValue: typeName) != nil || syntax.enums.contains(where: { $0.name.value == typeName }) {
                diagnostics.error("relationship '\(entity).\(relationship.name.value)' has type '\(relationship.type.value)', which is not an entity; declare it under 'attributes'", at: relationship.type.location)
            } else {
                diagnostics.error("unknown entity '\(typeName)' in the type of relationship '\(entity).\(relationship.name.value)'\(NearMiss.hint(for: typeName, among: syntax.entities.map(\.name.value)))", at: relationship.type.location)
            }
            return nil
        }
        var deleteRule = DeleteRule.nullify
        if let rule = relationship.deleteRule {
            if let parsed = DeleteRule(rawValue: rule.value) {
                deleteRule = parsed
            } else {
                let rules = DeleteRule.allCases.map(\.rawValue)
                diagnostics.error("unknown deleteRule '\(rule.value)' on '\(entity).\(relationship.name.value)'\(NearMiss.hint(for: rule.value, among: rules)) (expected one of \(rules.joined(separator: ", ")))", at: rule.location)
            }
        }
        for count in [relationship.minimumModelCount, relationship.maximumModelCount].compactMap({ $0 }) where cardinality != .toMany {
            diagnostics.error("'\(entity).\(relationship.name.value)' is a to-one relationship; minimumModelCount and maximumModelCount apply to to-many relationships only", at: count.location)
        }
        // A maximum of 0 is no maximum, as in SwiftData.
        if let minimum = relationship.minimumModelCount, let maximum = relationship.maximumModelCount, maximum.value > 0, minimum.value > maximum.value {
            diagnostics.error("minimumModelCount \(minimum.value) of '\(entity).\(relationship.name.value)' is greater than its maximumModelCount \(maximum.value)", at: minimum.location)
        }
        if let column = relationship.column, column.value.isEmpty {
            diagnostics.error("'column' of '\(entity).\(relationship.name.value)' is empty", at: column.location)
        }
        return Relationship(entity: entity, name: relationship.name.value, target: typeName, cardinality: cardinality,
                            inverse: relationship.inverse?.value, deleteRule: deleteRule,
                            minimumModelCount: relationship.minimumModelCount?.value,
                            maximumModelCount: relationship.maximumModelCount?.value,
                            originalNames: relationship.originalNames.map(\.value),
                            storage: .inverseForeignKey)
    }

    private func declared(_ relationship: Relationship) -> RelationshipSyntax? {
        relationshipSyntax["\(relationship.entity).\(relationship.name)"]
    }

    // MARK: - Inverses

    /// Checks each declared inverse and fills in the inverse that only the other side names.
    private mutating func pairInverses(_ entities: inout [Entity]) {
        var claimedBy: [String: String] = [:]
        for entityIndex in entities.indices {
            for relationshipIndex in entities[entityIndex].relationships.indices {
                let relationship = entities[entityIndex].relationships[relationshipIndex]
                guard let inverseName = relationship.inverse, let syntax = declared(relationship), let inverseSyntax = syntax.inverse else { continue }
                let qualified = "\(relationship.entity).\(relationship.name)"
                guard let target = entityPositions[relationship.target].map({ entities[$0] }) else { continue }
                guard let inverse = target.relationships.first(where: { $0.name == inverseName }) else {
                    entities[entityIndex].relationships[relationshipIndex].inverse = nil
                    // A declared inverse that failed to resolve has been reported already.
                    if relationshipSyntax["\(target.name).\(inverseName)"] != nil { continue }
                    let isAttribute = target.attributes.contains { $0.name == inverseName }
                    let hint = isAttribute ? "; '\(inverseName)' is an attribute, an inverse must be a relationship" : NearMiss.hint(for: inverseName, among: target.relationships.map(\.name))
                    diagnostics.error("inverse '\(inverseName)' of '\(qualified)' is not a relationship of '\(target.name)'\(hint)", at: inverseSyntax.location)
                    entities[entityIndex].relationships[relationshipIndex].inverse = nil
                    continue
                }
                if inverse.entity == relationship.entity && inverse.name == relationship.name {
                    diagnostics.error("relationship '\(qualified)' names itself as its inverse; declare a second relationship for the other direction", at: inverseSyntax.location)
                    entities[entityIndex].relationships[relationshipIndex].inverse = nil
                    continue
                }
                if inverse.target != relationship.entity {
                    diagnostics.error("inverse '\(target.name).\(inverseName)' of '\(qualified)' points at '\(inverse.target)', not at '\(relationship.entity)'", at: inverseSyntax.location)
                    entities[entityIndex].relationships[relationshipIndex].inverse = nil
                    continue
                }
                if let back = inverse.inverse, back != relationship.name {
                    diagnostics.error("'\(qualified)' names '\(target.name).\(inverseName)' as its inverse, but that relationship names '\(back)' as its own inverse", at: inverseSyntax.location)
                    entities[entityIndex].relationships[relationshipIndex].inverse = nil
                    continue
                }
                let key = "\(target.name).\(inverseName)"
                if let other = claimedBy[key], other != qualified {
                    diagnostics.error("'\(qualified)' and '\(other)' both name '\(key)' as their inverse; a relationship has one inverse", at: inverseSyntax.location)
                    continue
                }
                claimedBy[key] = qualified
                claimedBy[qualified] = key
            }
        }
        // Fill in the side that did not name its inverse.
        for entityIndex in entities.indices {
            for relationshipIndex in entities[entityIndex].relationships.indices {
                let relationship = entities[entityIndex].relationships[relationshipIndex]
                guard relationship.inverse == nil else { continue }
                let qualified = "\(relationship.entity).\(relationship.name)"
                if let partner = claimedBy[qualified], let dot = partner.firstIndex(of: ".") {
                    entities[entityIndex].relationships[relationshipIndex].inverse = String(partner[partner.index(after: dot)...])
                }
            }
        }
        // An inverse named on one side only, whose target side is claimed elsewhere, was reported above.
        for entityIndex in entities.indices {
            for relationshipIndex in entities[entityIndex].relationships.indices {
                let relationship = entities[entityIndex].relationships[relationshipIndex]
                if let inverse = relationship.inverse, claimedBy["\(relationship.entity).\(relationship.name)"] != "\(relationship.target).\(inverse)" {
                    entities[entityIndex].relationships[relationshipIndex].inverse = nil
                }
            }
        }
    }

    // MARK: - Storage

    /// Decides where every relationship's references live and creates the join tables.
    private mutating func assignStorage(_ entities: inout [Entity]) -> [JoinTable] {
        var joinTables: [JoinTable] = []
        let snapshot = entities
        let positions = entityPositions
        func find(_ entity: String, _ name: String) -> Relationship? {
            positions[entity].flatMap { snapshot[$0].relationships.first { $0.name == name } }
        }
        for entityIndex in entities.indices {
            let entity = entities[entityIndex]
            for relationshipIndex in entity.relationships.indices {
                let relationship = entity.relationships[relationshipIndex]
                let inverse = relationship.inverse.flatMap { find(relationship.target, $0) }
                let syntax = declared(relationship)
                let column = syntax?.column
                let storage: RelationshipStorage
                switch (relationship.cardinality, inverse?.cardinality) {
                case (.toOne, nil), (.toOne, .toMany?):
                    storage = .foreignKey(column: column?.value ?? Naming.snakeCase(relationship.name) + "_id", isUnique: false)
                case (.toMany, .toOne?):
                    if let column {
                        diagnostics.error("'\(relationship.entity).\(relationship.name)' is stored as the foreign key of its inverse '\(relationship.target).\(inverse!.name)'; set 'column' there", at: column.location)
                    }
                    storage = .inverseForeignKey
                case (.toOne, .toOne?):
                    storage = holdsOneToOneKey(relationship, inverse!)
                        ? .foreignKey(column: column?.value ?? Naming.snakeCase(relationship.name) + "_id", isUnique: true)
                        : .inverseForeignKey
                case (.toMany, nil), (.toMany, .toMany?):
                    let ownsTable = inverse.map { (relationship.entity, relationship.name) <= ($0.entity, $0.name) } ?? true
                    if ownsTable {
                        let table = joinTable(for: relationship, inverse: inverse, entities: snapshot, name: column?.value ?? inverse.flatMap { declared($0)?.column?.value })
                        joinTables.append(table)
                        storage = .joinTable(name: table.name)
                    } else {
                        let ownerName = declared(inverse!)?.column?.value ?? column?.value
                        storage = .joinTable(name: joinTable(for: inverse!, inverse: relationship, entities: snapshot, name: ownerName).name)
                    }
                }
                entities[entityIndex].relationships[relationshipIndex].storage = storage
            }
        }
        return joinTables
    }

    /// For a one-to-one pair, true when `relationship`'s side holds the key: the side with an
    /// explicit `column`; else the dependent side (the one the other cascades to); else the entity
    /// whose name sorts second (for a pair within one entity, the relationship whose name sorts second).
    private mutating func holdsOneToOneKey(_ relationship: Relationship, _ inverse: Relationship) -> Bool {
        let ownColumn = declared(relationship)?.column, inverseColumn = declared(inverse)?.column
        if let ownColumn, inverseColumn != nil {
            if (relationship.entity, relationship.name) < (inverse.entity, inverse.name) {
                diagnostics.error("both sides of the one-to-one pair '\(relationship.entity).\(relationship.name)' and '\(inverse.entity).\(inverse.name)' set 'column'; set it on the side that should hold the key", at: ownColumn.location)
            }
            return (relationship.entity, relationship.name) > (inverse.entity, inverse.name)
        }
        if ownColumn != nil { return true }
        if inverseColumn != nil { return false }
        let inverseCascades = inverse.deleteRule == .cascade, ownCascades = relationship.deleteRule == .cascade
        if inverseCascades != ownCascades { return inverseCascades }
        if relationship.entity != inverse.entity { return relationship.entity > inverse.entity }
        return relationship.name > inverse.name
    }

    private func joinTable(for relationship: Relationship, inverse: Relationship?, entities: [Entity], name: String?) -> JoinTable {
        let owner = entities[entityPositions[relationship.entity]!]
        let target = entities[entityPositions[relationship.target]!]
        let ownColumn = Naming.snakeCase(owner.name) + "_id"
        var targetColumn = Naming.snakeCase(target.name) + "_id"
        if targetColumn == ownColumn { targetColumn = Naming.snakeCase(relationship.name) + "_id" }
        return JoinTable(name: name ?? "\(owner.tableName)_\(Naming.snakeCase(relationship.name))",
                         entity: owner.name, relationship: relationship.name, table: owner.tableName, column: ownColumn,
                         target: target.name, targetTable: target.tableName, targetColumn: targetColumn, inverse: inverse?.name)
    }

    // MARK: - Constraints and collisions

    private mutating func resolveConstraints(_ entities: inout [Entity]) {
        for (index, entitySyntax) in syntax.entities.enumerated() where index < entities.count {
            let entity = entities[index]
            guard entity.name == entitySyntax.name.value else { continue }
            var columns: [(name: String, column: String)] = entity.storedAttributes.map { ($0.name, $0.columnName) }
            for relationship in entity.relationships {
                if case let .foreignKey(column, _) = relationship.storage { columns.append((relationship.name, column)) }
            }
            func resolveGroups(_ groups: [[Located<String>]], option: String) -> [[String]] {
                groups.map { group in
                    if group.count > PostgreSQLLimits.columnsPerIndex, let first = group.first {
                        diagnostics.error("'\(option)' of '\(entity.name)' groups \(group.count) columns; PostgreSQL's indexes take at most \(PostgreSQLLimits.columnsPerIndex): group fewer", at: first.location)
                    }
                    var listed: Set<String> = []
                    return group.compactMap { name -> String? in
                        guard listed.insert(name.value).inserted else {
                            diagnostics.error("'\(option)' of '\(entity.name)' lists '\(name.value)' twice in one group; name each column once", at: name.location)
                            return nil
                        }
                        if let match = columns.first(where: { $0.name == name.value }) { return match.column }
                        let problem = Self.columnlessMember(name.value, of: entity)
                            ?? "which is not a stored attribute or to-one relationship of '\(entity.name)'\(NearMiss.hint(for: name.value, among: columns.map(\.name)))"
                        diagnostics.error("'\(option)' of '\(entity.name)' names '\(name.value)', \(problem)", at: name.location)
                        return nil
                    }
                }
            }
            entities[index].uniqueConstraints = resolveGroups(entitySyntax.unique, option: "unique")
            entities[index].indexes = resolveGroups(entitySyntax.indexes, option: "indexes")
        }
    }

    /// Why `name`, a member of `entity`, has no column on its table for a `unique` or `indexes`
    /// group to name, and what to name instead; nil when `entity` has no such member.
    private static func columnlessMember(_ name: String, of entity: Entity) -> String? {
        if entity.attributes.contains(where: { $0.name == name && $0.isTransient }) {
            return "which is transient, so it has no column; name stored attributes and to-one relationships only"
        }
        guard let relationship = entity.relationships.first(where: { $0.name == name }) else { return nil }
        let inverse = "'\(relationship.target).\(relationship.inverse ?? "")'"
        switch relationship.storage {
        case let .joinTable(table):
            return "a to-many relationship stored in the join table '\(table)'; name stored attributes and to-one relationships only"
        case .inverseForeignKey where relationship.isToMany:
            return "a to-many relationship stored as the key of its inverse, \(inverse); name stored attributes and to-one relationships only"
        case .inverseForeignKey:
            return "a one-to-one whose key is stored on the other side, \(inverse); set 'column' on '\(entity.name).\(name)' to store the key in '\(entity.name)' instead, or name the pair in '\(relationship.target)'"
        case .foreignKey:
            return nil
        }
    }

    private mutating func checkTables(_ entities: [Entity], _ joinTables: [JoinTable]) {
        var owners: [String: String] = [:]
        for (entity, entitySyntax) in zip(entities, syntax.entities) {
            let location = entitySyntax.table?.location ?? entitySyntax.name.location
            if let problem = SQLNames.problem(with: entity.tableName) {
                diagnostics.error("table name '\(Naming.printable(entity.tableName))' of '\(entity.name)' \(problem); set 'table' to another name", at: location)
            } else if let prefix = SQLNames.reservedTablePrefixes.first(where: { entity.tableName.lowercased().hasPrefix($0) }) {
                diagnostics.error("table name '\(entity.tableName)' of '\(entity.name)' starts with '\(prefix)', which \(Self.prefixOwner(prefix)) reserves; set 'table' to another name", at: location)
            }
            if let other = owners[entity.tableName.lowercased()] {
                diagnostics.error("entities '\(other)' and '\(entity.name)' both map to table '\(entity.tableName)'; set 'table' on one of them", at: location)
            }
            owners[entity.tableName.lowercased()] = entity.name
        }
        for table in joinTables {
            let declaration = relationshipSyntax["\(table.entity).\(table.relationship)"]
            let location = declaration?.column?.location ?? declaration?.name.location ?? SourceLocation(file: syntax.file, line: 1, column: 1)
            if let problem = SQLNames.problem(with: table.name) {
                diagnostics.error("the join table name '\(Naming.printable(table.name))' of '\(table.entity).\(table.relationship)' \(problem); set 'column' on the relationship to name the join table", at: location)
            } else if let prefix = SQLNames.reservedTablePrefixes.first(where: { table.name.lowercased().hasPrefix($0) }) {
                diagnostics.error("the join table name '\(table.name)' of '\(table.entity).\(table.relationship)' starts with '\(prefix)', which \(Self.prefixOwner(prefix)) reserves; set 'column' on the relationship to name the join table", at: location)
            }
            if let other = owners[table.name.lowercased()] {
                diagnostics.error("the join table '\(table.name)' of '\(table.entity).\(table.relationship)' collides with the table of '\(other)'; set 'column' on the relationship to name the join table", at: location)
            }
            owners[table.name.lowercased()] = "\(table.entity).\(table.relationship)"
            for column in [table.column, table.targetColumn] {
                if let problem = SQLNames.problem(with: column) {
                    diagnostics.error("column '\(column)' of the join table of '\(table.entity).\(table.relationship)' \(problem); rename the entity", at: location)
                }
            }
            if table.column.lowercased() == table.targetColumn.lowercased() {
                diagnostics.error("the join table of '\(table.entity).\(table.relationship)' would store both ends in one column '\(table.column)' (a to-many relationship to its own entity, named like the entity); rename the relationship", at: location)
            }
        }
        // PostgreSQL names a primary key, its sequence and each UNIQUE index after the table; a
        // table of that name could not be created once they exist.
        for (entity, entitySyntax) in zip(entities, syntax.entities) {
            for implicit in SQLNames.implicitNames(of: entity.tableName, uniqueColumnGroups: entity.uniqueColumnGroups) where implicit.utf8.count <= SQLNames.maximumLength {
                guard let other = owners[implicit.lowercased()] else { continue }
                let location = entitySyntax.table?.location ?? entitySyntax.name.location
                diagnostics.error("the table of '\(other)' is named '\(implicit)', the name PostgreSQL gives to an index or sequence of table '\(entity.tableName)' (of '\(entity.name)'); set 'table' on one of them", at: location)
            }
        }
        for table in joinTables where (table.name + "_pkey").utf8.count <= SQLNames.maximumLength {
            if let other = owners[(table.name + "_pkey").lowercased()] {
                let location = relationshipSyntax["\(table.entity).\(table.relationship)"]?.name.location ?? SourceLocation(file: syntax.file, line: 1, column: 1)
                diagnostics.error("the table of '\(other)' is named '\(table.name)_pkey', the name PostgreSQL gives to the primary key of the join table of '\(table.entity).\(table.relationship)'; set 'table' or 'column' to rename one", at: location)
            }
        }
    }

    /// Who reserves a table-name prefix, for diagnostics.
    private static func prefixOwner(_ prefix: String) -> String {
        switch prefix {
        case "pg_": return "PostgreSQL (its catalogs are searched first, so the name would refer to them)"
        case "sqlite_": return "SQLite"
        default: return "ModelGen (for its temporary tables)"
        }
    }


    private mutating func checkColumns(_ entities: [Entity]) {
        for (entity, entitySyntax) in zip(entities, syntax.entities) {
            var owners: [String: String] = ["id": "the primary key"]
            func checkName(_ column: String, of what: String, at location: SourceLocation) {
                if let problem = SQLNames.problem(with: column) {
                    diagnostics.error("column '\(Naming.printable(column))' of \(what) \(problem); set 'column' to another name", at: location)
                } else if SQLNames.systemColumns.contains(column.lowercased()) {
                    diagnostics.error("column '\(column)' of \(what) is the name of a PostgreSQL system column (\(SQLNames.systemColumns.sorted().joined(separator: ", "))); set 'column' to another name", at: location)
                }
            }
            for attribute in entity.storedAttributes {
                let location = entitySyntax.attributes.first { $0.name.value == attribute.name }.map { $0.column?.location ?? $0.name.location } ?? entitySyntax.name.location
                checkName(attribute.columnName, of: "attribute '\(entity.name).\(attribute.name)'", at: location)
                // An attribute named `id` is refused by its name already (a `column` would not help).
                if let other = owners[attribute.columnName.lowercased()], attribute.name != "id" {
                    diagnostics.error("column '\(attribute.columnName)' of attribute '\(entity.name).\(attribute.name)' collides with \(other) in table '\(entity.tableName)'; set 'column' to rename it", at: location)
                }
                owners[attribute.columnName.lowercased()] = "attribute '\(attribute.name)'"
            }
            for relationship in entity.relationships {
                guard case let .foreignKey(column, _) = relationship.storage else { continue }
                let syntax = declared(relationship)
                let location = syntax?.column?.location ?? syntax?.name.location ?? entitySyntax.name.location
                checkName(column, of: "relationship '\(entity.name).\(relationship.name)'", at: location)
                if let other = owners[column.lowercased()] {
                    diagnostics.error("foreign-key column '\(column)' of relationship '\(entity.name).\(relationship.name)' collides with \(other) in table '\(entity.tableName)'; rename one, or set 'column'", at: location)
                }
                owners[column.lowercased()] = "the foreign key of relationship '\(relationship.name)'"
            }
        }
    }

    /// Every table fits PostgreSQL's limits (`PostgreSQLLimits`): its columns, and its largest row.
    private mutating func checkPostgreSQLLimits(_ entities: [Entity], enums: [EnumType]) {
        for (entity, entitySyntax) in zip(entities, syntax.entities) {
            let keys = entity.relationships.filter { if case .foreignKey = $0.storage { true } else { false } }.count
            let columns = 1 + entity.storedAttributes.count + keys
            let row = PostgreSQLLimits.largestRow(of: entity, enums: enums)
            let remedy = "move some attributes to an entity of their own, related one-to-one"
            if columns > PostgreSQLLimits.columnsPerTable {
                diagnostics.error("entity '\(entity.name)' needs \(columns) columns in table '\(entity.tableName)' (its id, \(entity.storedAttributes.count) stored attributes and \(keys) foreign keys); PostgreSQL's tables hold at most \(PostgreSQLLimits.columnsPerTable): \(remedy)", at: entitySyntax.name.location)
            } else if row > PostgreSQLLimits.rowBytes {
                diagnostics.error("a row of entity '\(entity.name)' takes up to \(row) bytes in PostgreSQL (every value present; a text, bytes or a decimal takes at most 24, longer ones being moved out of the row), more than the \(PostgreSQLLimits.rowBytes) a row may take: \(remedy)", at: entitySyntax.name.location)
            }
        }
    }

    private mutating func warnAboutHazards(_ entities: [Entity]) {
        for entity in entities {
            for relationship in entity.relationships {
                guard let location = declared(relationship)?.name.location else { continue }
                guard let inverseName = relationship.inverse else {
                    // A declared inverse that did not resolve is an error reported already.
                    if declared(relationship)?.inverse != nil { continue }
                    diagnostics.warning("relationship '\(entity.name).\(relationship.name)' has no inverse; references to a deleted '\(relationship.target)' are set to nil (refused when required), and the inverse cannot be kept in sync in memory", at: location)
                    continue
                }
                let inverse = entityPositions[relationship.target].flatMap { entities[$0].relationships.first { $0.name == inverseName } }
                if relationship.deleteRule == .nullify, inverse?.isRequired == true {
                    diagnostics.warning("'\(entity.name).\(relationship.name)' nullifies '\(relationship.target).\(inverseName)', which is required: deleting an object of '\(entity.name)' that still has \(relationship.isToMany ? "any '\(relationship.target)'" : "its '\(relationship.target)'") will be refused; use deleteRule cascade or deny, or make '\(inverseName)' optional", at: location)
                }
            }
        }
    }

    /// A cycle of required foreign keys across tables cannot be deleted without deferred
    /// constraints; such schemas are rejected with the cycle's path (one error per cycle).
    private mutating func checkRequiredCycles(_ entities: [Entity]) {
        var edges: [Relationship] = []
        for entity in entities {
            for relationship in entity.relationships where relationship.isRequired && relationship.target != entity.name {
                if case .foreignKey = relationship.storage { edges.append(relationship) }
            }
        }
        guard !edges.isEmpty else { return }
        let components = StronglyConnected.components(nodes: entities.map(\.name), edges: edges.map { ($0.entity, $0.target) })
        for component in components where component.count > 1 {
            let members = Set(component)
            // Walk the cycle from the component's first entity, following required keys inside it.
            var path: [Relationship] = []
            var current = component[0]
            var visited: Set<String> = []
            while visited.insert(current).inserted, let next = edges.first(where: { $0.entity == current && members.contains($0.target) }) {
                path.append(next)
                current = next.target
            }
            if let start = path.firstIndex(where: { $0.entity == current }) { path = Array(path[start...]) }
            let description = path.map { "\($0.entity).\($0.name) → \($0.target)" }.joined(separator: ", ")
            if let first = path.first, let location = declared(first)?.name.location {
                diagnostics.error("required to-one relationships form a cycle (\(description)); rows in such a cycle can be neither inserted nor deleted without deferred constraints: make one of them optional", at: location)
            }
        }
    }
}
