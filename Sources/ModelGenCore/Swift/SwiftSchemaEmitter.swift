import ModelGenQuery
import ModelGenProgram

/// Writes `<Base>+Schema.swift`: each model's `EntityDescription`, and the schema type listing the
/// models and carrying the SQLite and PostgreSQL DDL. Swift code, not a template: it is metadata,
/// not API.
public struct SwiftSchemaEmitter {
    public let schema: ModelSchema
    public let sourceFile: String

    public init(schema: ModelSchema, sourceFile: String) {
        self.schema = schema
        self.sourceFile = sourceFile
    }

    public func render(header: String, sqliteDDL: String, postgreSQLTables: String) -> String {
        let q = SQLDialect.sqlite.quote
        var lines = ["// \(header)", "", "import ModelGenRuntime"]
        for entity in schema.entities {
            lines.append("")
            lines.append("extension \(Naming.swiftIdentifier(entity.name)) {")
            lines.append("    /// Entity `\(entity.name)` of \(sourceFile): table `\(entity.tableName)`.")
            lines.append("    public static let entity = ModelGenRuntime.EntityDescription(")
            lines.append("        name: \(SwiftTypes.stringLiteral(entity.name)),")
            lines.append("        table: \(SwiftTypes.stringLiteral(q(entity.tableName))),")
            lines += SwiftTypes.listArgumentLines("attributes", entity.attributes.map { attribute in
                let column = attribute.isTransient ? "nil" : SwiftTypes.stringLiteral(q(attribute.columnName))
                return "ModelGenRuntime.AttributeDescription(name: \(SwiftTypes.stringLiteral(attribute.name)), column: \(column), isUnique: \(attribute.isUnique))"
            })
            lines += SwiftTypes.listArgumentLines("relationships", entity.relationships.map { relationship in
                "ModelGenRuntime.RelationshipDescription(\n"
                    + "                name: \(SwiftTypes.stringLiteral(relationship.name)), target: \(SwiftTypes.stringLiteral(relationship.target)),\n"
                    + "                isToMany: \(relationship.isToMany), isOptional: \(!relationship.isRequired), inverse: \(relationship.inverse.map(SwiftTypes.stringLiteral) ?? "nil"),\n"
                    + "                deleteRule: \(SwiftTypes.stringLiteral(relationship.deleteRule.rawValue)), storage: \(storage(relationship))\(modelCounts(relationship)))"
            }, last: true)
            lines.append("    )")
            lines.append("}")
        }
        let typeName = Naming.swiftIdentifier(schema.name)
        lines.append("")
        lines.append("/// The `\(schema.name)` schema of \(sourceFile): pass it to `ModelContainer(for:configurations:)`.")
        lines.append("public enum \(typeName): ModelGenRuntime.ModelSchemaDefinition {")
        lines.append("    /// The model classes, in schema order.")
        lines.append("    public static var models: [any ModelGenRuntime.PersistentModel.Type] {")
        lines.append("        [" + schema.entities.map { Naming.swiftIdentifier($0.name) + ".self" }.joined(separator: ", ") + "]")
        lines.append("    }")
        lines.append("")
        lines.append("    /// The SQLite DDL (the same as `\(schema.sourceFile).sqlite.sql`).")
        lines += SwiftTypes.rawStringLiteralLines("    public static let sqliteDDL = ", sqliteDDL.hasSuffix("\n") ? String(sqliteDDL.dropLast()) : sqliteDDL)
        lines.append("")
        lines.append("    /// The PostgreSQL tables and indexes (the first part of `\(schema.sourceFile).postgresql.sql`).")
        lines += SwiftTypes.rawStringLiteralLines("    public static let postgreSQLTables = ", postgreSQLTables.hasSuffix("\n") ? String(postgreSQLTables.dropLast()) : postgreSQLTables)
        lines.append("")
        lines.append("    /// The schema in canonical form, recorded in every store so that a later version can migrate it.")
        lines += SwiftTypes.rawStringLiteralLines("    public static let canonicalSchema = ", schema.canonicalJSON)
        lines.append("}")
        return (lines + [""]).concatenated(separator: "\n")
    }

    /// The bounds of a to-many relationship, as arguments after `storage:` (none when unbounded).
    private func modelCounts(_ relationship: Relationship) -> String {
        let (minimum, maximum) = relationship.modelCountBounds
        return [("minimumModelCount", minimum), ("maximumModelCount", maximum)]
            .compactMap { label, count in count.map { ",\n                \(label): \($0)" } }
            .joined()
    }

    private func storage(_ relationship: Relationship) -> String {
        let q = SQLDialect.sqlite.quote
        switch schema.links(of: relationship) {
        case let .column(column):
            return ".column(\(SwiftTypes.stringLiteral(q(column))))"
        case let .inverseColumn(column):
            return ".inverseColumn(\(SwiftTypes.stringLiteral(q(column))))"
        case let .joinTable(name, own, other):
            return ".joinTable(\(SwiftTypes.stringLiteral(q(name))), ownColumn: \(SwiftTypes.stringLiteral(q(own))), targetColumn: \(SwiftTypes.stringLiteral(q(other))))"
        case nil:
            return ".inverseColumn(\"\")"
        }
    }
}

/// Writes `<Base>+Deletion.swift`: each entity's deletion plan as a `DeletionProgram` literal the
/// runtime runs, planned here at generation time.
public struct SwiftDeletionEmitter {
    public let schema: ModelSchema
    /// One plan per entity, in schema order (`DeletionPlanner.plans()`).
    public let plans: [DeletionPlan]
    public let sourceFile: String

    public init(schema: ModelSchema, plans: [DeletionPlan], sourceFile: String) {
        self.schema = schema
        self.plans = plans
        self.sourceFile = sourceFile
    }

    public func render(header: String) -> String {
        // The file's lines, each ended by a line break.
        var text = ""
        func line(_ content: String) {
            text += content
            text += "\n"
        }
        line("// \(header)")
        line("")
        line("import ModelGenRuntime")
        line("")
        line("extension \(Naming.swiftIdentifier(schema.name)) {")
        line("    /// The safe-deletion program of an entity, planned from \(sourceFile) (see `modelgen plan`).")
        line("    public static func deletionProgram(for entity: Swift.String) -> ModelGenRuntime.DeletionProgram? {")
        line("        switch entity {")
        for (index, entity) in schema.entities.enumerated() {
            line("        case \(literal: entity.name): return deletionProgram\(index)")
        }
        line("        default: return nil")
        line("        }")
        line("    }")
        // One piece per program, concatenated once into an allocation of the file's exact size.
        let renderer = DeletionSQLRenderer(schema: schema, dialect: .sqlite)
        let programs = schema.entities.indices.map { index in
            programLiteral(index: index, entity: schema.entities[index], program: renderer.program(for: plans[index]))
        }
        return ([text] + programs + ["}\n"]).concatenated()
    }

    /// `deletionProgram<index>`: the program as a Swift literal, each line ended by a line break.
    private func programLiteral(index: Int, entity: Entity, program: DeletionProgram) -> String {
        var text = ""
        func line(_ content: String) {
            text += content
            text += "\n"
        }
        line("")
        line("    /// Deleting `\(entity.name)`: \(program.statementCount) set-based statement\(program.statementCount == 1 ? "" : "s").")
        line("    private static let deletionProgram\(index) = ModelGenRuntime.DeletionProgram(")
        func list(_ name: String, _ elements: [String], last: Bool = false) {
            for text in SwiftTypes.listArgumentLines(name, elements, last: last) { line(text) }
        }
        list("targets", program.targets.map { ".init(entity: \(literal: $0.entity), table: \(literal: $0.table), closureTable: \(literal: $0.closureTable))" })
        list("edges", program.edges.map { ".init(source: \(literal: $0.source), relationship: \(literal: $0.relationship), target: \(literal: $0.target))" })
        list("collections", program.collections.map { collection in
            switch collection {
            case let .once(sql): ".once(\(literal: sql))"
            case let .untilStable(statements): ".untilStable([\(literals: statements)])"
            }
        })
        list("checks", program.checks.map { check in
            ".init(kind: .\(check.kind.rawValue), subject: \(literal: check.subject), other: \(literal: check.other), relationship: \(literal: check.relationship), rule: \(literal: check.rule),\n"
                + "                  sql: \(literal: check.sql))"
        })
        list("nullifications", program.nullifications.map { ".init(relationship: \(literal: $0.relationship), sql: \(literal: $0.sql))" })
        line("        detachments: [\(literals: program.detachments)],")
        line("        joinRowRemovals: [\(literals: program.joinRowRemovals)],")
        list("deletions", program.deletions.map { ".init(entity: \(literal: $0.entity), sql: \(literal: $0.sql))" }, last: program.wholeTable == nil)
        if let wholeTable = program.wholeTable {
            line("        wholeTable: .init(")
            line("            orphanCounts: [\(literals: wholeTable.orphanCounts)],")
            line("            deletions: [\(wholeTable.deletions.map { ".init(entity: \(literal: $0.entity), sql: \(literal: $0.sql))" }.joined(separator: ", "))]")
            line("        )")
        }
        line("    )")
        return text
    }
}

extension DefaultStringInterpolation {
    /// `\(literal: text)`: `text` as a Swift string literal, written straight into the string
    /// being built (the emitters write millions of them for a large schema).
    mutating func appendInterpolation(literal text: String) {
        if SwiftTypes.needsEscaping(text) {
            appendLiteral(SwiftTypes.stringLiteral(text))
        } else {
            appendLiteral("\"")
            appendLiteral(text)
            appendLiteral("\"")
        }
    }

    /// `\(literals: texts)`: Swift string literals separated by `, `.
    mutating func appendInterpolation(literals texts: [String]) {
        for (index, text) in texts.enumerated() {
            if index > 0 { appendLiteral(", ") }
            appendInterpolation(literal: text)
        }
    }
}
