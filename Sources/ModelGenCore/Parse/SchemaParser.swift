import Foundation

/// Turns a located YAML tree into `SchemaSyntax`, reporting every shape error: unknown keys
/// (with the near miss), wrong kinds of node, values that are not booleans or integers.
public struct SchemaParser {
    static let topLevelKeys = ["schema", "enums", "entities"]
    static let entityKeys = ["attributes", "relationships", "table", "unique", "indexes", "originalName"]
    static let attributeKeys = ["type", "unique", "default", "indexed", "transient", "originalName", "column"]
    static let relationshipKeys = ["type", "inverse", "deleteRule", "minimumModelCount", "maximumModelCount", "originalName", "column"]

    private var diagnostics = DiagnosticCollector()
    private let file: String

    private init(file: String) {
        self.file = file
    }

    /// Parses the tree; the syntax is partial when diagnostics contain errors.
    public static func parse(_ root: YAMLNode, file: String) -> (SchemaSyntax, [Diagnostic]) {
        var parser = SchemaParser(file: file)
        let syntax = parser.parseSchema(root)
        return (syntax, parser.diagnostics.diagnostics)
    }

    private mutating func parseSchema(_ root: YAMLNode) -> SchemaSyntax {
        var schema = SchemaSyntax(file: file)
        guard let pairs = mapping(root, "the schema file", example: "schema: Zoo\nentities: …") else { return schema }
        var sawEntities = false
        for (key, value) in checkedKeys(pairs, allowed: Self.topLevelKeys, context: "the schema") {
            switch key.value {
            case "schema":
                schema.name = string(value, "'schema'")
            case "enums":
                if value.isNull { continue }
                for (name, cases) in mapping(value, "'enums'", example: "Diet: [herbivorous, carnivorous]") ?? [] {
                    guard let enumName = keyName(name) else { continue }
                    schema.enums.append(parseEnum(enumName, cases))
                }
            case "entities":
                sawEntities = true
                if value.isNull { continue }
                let named = (mapping(value, "'entities'", example: "Animal:\n  attributes: …") ?? []).compactMap { name, body in
                    keyName(name).map { (name: $0, body: body) }
                }
                // Entities parse independently of one another: on every core, kept in order.
                let file = file
                let parsed = named.concurrentMap { entity in
                    var parser = SchemaParser(file: file)
                    return (parser.parseEntity(entity.name, entity.body), parser.diagnostics.diagnostics)
                }
                schema.entities += parsed.map(\.0)
                for (_, entityDiagnostics) in parsed { diagnostics.append(contentsOf: entityDiagnostics) }
            default:
                break
            }
        }
        if schema.name == nil {
            diagnostics.error("the schema has no 'schema:' key naming it; add for example 'schema: Zoo'", at: root.location)
        }
        if !sawEntities {
            diagnostics.error("the schema has no 'entities:' key; declare at least one entity", at: root.location)
        }
        return schema
    }

    private mutating func parseEntity(_ name: Located<String>, _ body: YAMLNode) -> EntitySyntax {
        var entity = EntitySyntax(name: name)
        if body.isNull { return entity }
        guard let pairs = mapping(body, "entity '\(name.value)'", example: "attributes:\n    name: String") else { return entity }
        for (key, value) in checkedKeys(pairs, allowed: Self.entityKeys, context: "entity '\(name.value)'") {
            switch key.value {
            case "table":
                entity.table = string(value, "'table'")
            case "originalName":
                entity.originalNames = names(value, "'originalName'")
            case "unique":
                entity.unique = nameGroups(value, "'unique'")
            case "indexes":
                entity.indexes = nameGroups(value, "'indexes'")
            case "attributes":
                if value.isNull { continue }
                for (attributeName, attributeBody) in mapping(value, "the attributes of '\(name.value)'", example: "name: String") ?? [] {
                    guard let attributeName = keyName(attributeName) else { continue }
                    if let attribute = parseAttribute(attributeName, attributeBody) {
                        entity.attributes.append(attribute)
                    }
                }
            case "relationships":
                if value.isNull { continue }
                for (relationshipName, relationshipBody) in mapping(value, "the relationships of '\(name.value)'", example: "category: { type: AnimalCategory?, inverse: animals }") ?? [] {
                    guard let relationshipName = keyName(relationshipName) else { continue }
                    if let relationship = parseRelationship(relationshipName, relationshipBody) {
                        entity.relationships.append(relationship)
                    }
                }
            default:
                break
            }
        }
        return entity
    }

    private mutating func parseAttribute(_ name: Located<String>, _ body: YAMLNode) -> AttributeSyntax? {
        if case let .scalar(text, _) = body.value, !body.isNull {
            return AttributeSyntax(name: name, type: Located(text, at: body.location))
        }
        guard let pairs = mapping(body, "attribute '\(name.value)'", example: "{ type: String, unique: true }") else { return nil }
        var type: Located<String>?
        var attribute = AttributeSyntax(name: name, type: Located("", at: body.location))
        for (key, value) in checkedKeys(pairs, allowed: Self.attributeKeys, context: "attribute '\(name.value)'") {
            switch key.value {
            case "type": type = string(value, "'type'")
            case "unique": attribute.unique = bool(value, "'unique'")
            case "indexed": attribute.indexed = bool(value, "'indexed'")
            case "transient": attribute.transient = bool(value, "'transient'")
            case "default": attribute.defaultValue = string(value, "'default'", allowEmpty: true)
            case "originalName": attribute.originalNames = names(value, "'originalName'")
            case "column": attribute.column = string(value, "'column'")
            default: break
            }
        }
        guard let type else {
            if !pairs.contains(where: { $0.key.scalar == "type" }) {
                diagnostics.error("attribute '\(name.value)' has no 'type'", at: name.location)
            }
            return nil
        }
        attribute.type = type
        return attribute
    }

    private mutating func parseRelationship(_ name: Located<String>, _ body: YAMLNode) -> RelationshipSyntax? {
        if !body.isNull, let type = relationshipType(body) {
            return RelationshipSyntax(name: name, type: type)
        }
        guard case let .mapping(pairs) = body.value else {
            _ = mapping(body, "relationship '\(name.value)'", example: "{ type: AnimalCategory?, inverse: animals }")
            return nil
        }
        var relationship = RelationshipSyntax(name: name, type: Located("", at: body.location))
        var type: Located<String>?
        for (key, value) in checkedKeys(pairs, allowed: Self.relationshipKeys, context: "relationship '\(name.value)'") {
            switch key.value {
            case "type":
                type = relationshipType(value)
                if type == nil {
                    diagnostics.error("'type' of relationship '\(name.value)' must be an entity name such as 'Animal', 'Animal?' or '[Animal]', found \(value.kindDescription)", at: value.location)
                }
            case "inverse": relationship.inverse = string(value, "'inverse'")
            case "deleteRule": relationship.deleteRule = string(value, "'deleteRule'")
            case "minimumModelCount": relationship.minimumModelCount = integer(value, "'minimumModelCount'")
            case "maximumModelCount": relationship.maximumModelCount = integer(value, "'maximumModelCount'")
            case "originalName": relationship.originalNames = names(value, "'originalName'")
            case "column": relationship.column = string(value, "'column'")
            default: break
            }
        }
        guard let type else {
            if !pairs.contains(where: { $0.key.scalar == "type" }) {
                diagnostics.error("relationship '\(name.value)' has no 'type'", at: name.location)
            }
            return nil
        }
        relationship.type = type
        return relationship
    }

    /// `Animal`, `Animal?`, `"[Animal]"` or the YAML list `[Animal]`, as one string.
    private func relationshipType(_ node: YAMLNode) -> Located<String>? {
        switch node.value {
        case let .scalar(text, _) where !node.isNull:
            return Located(text, at: node.location)
        case let .sequence(items) where items.count == 1:
            guard let target = items[0].scalar, !items[0].isNull else { return nil }
            return Located("[\(target)]", at: items[0].location)
        default:
            return nil
        }
    }

    // MARK: - Shapes

    private mutating func mapping(_ node: YAMLNode, _ what: String, example: String) -> [(key: YAMLNode, value: YAMLNode)]? {
        if case let .mapping(pairs) = node.value { return pairs }
        diagnostics.error("\(what) must be a mapping, found \(node.kindDescription); for example: \(example.replacingOccurrences(of: "\n", with: " "))", at: node.location)
        return nil
    }

    /// The pairs whose keys are allowed; unknown and non-scalar keys are reported.
    private mutating func checkedKeys(_ pairs: [(key: YAMLNode, value: YAMLNode)], allowed: [String], context: String) -> [(key: Located<String>, value: YAMLNode)] {
        var result: [(key: Located<String>, value: YAMLNode)] = []
        for (key, value) in pairs {
            guard let name = key.scalar else {
                diagnostics.error("a key in \(context) must be a plain name, found \(key.kindDescription)", at: key.location)
                continue
            }
            guard allowed.contains(name) else {
                let options = allowed.map { "'\($0)'" }.joined(separator: ", ")
                diagnostics.error("unknown key '\(name)' in \(context)\(NearMiss.hint(for: name, among: allowed)) (expected one of \(options))", at: key.location)
                continue
            }
            result.append((Located(name, at: key.location), value))
        }
        return result
    }

    private mutating func keyName(_ key: YAMLNode) -> Located<String>? {
        guard let name = key.scalar, !key.isNull else {
            diagnostics.error("expected a name here, found \(key.kindDescription)", at: key.location)
            return nil
        }
        return Located(name, at: key.location)
    }

    private mutating func string(_ node: YAMLNode, _ what: String, allowEmpty: Bool = false) -> Located<String>? {
        guard let text = node.scalar, allowEmpty || !node.isNull else {
            diagnostics.error("\(what) must be a single value, found \(node.kindDescription)", at: node.location)
            return nil
        }
        return Located(text, at: node.location)
    }

    private mutating func bool(_ node: YAMLNode, _ what: String) -> Located<Bool>? {
        switch node.scalar {
        case "true", "True", "TRUE", "yes": return Located(true, at: node.location)
        case "false", "False", "FALSE", "no": return Located(false, at: node.location)
        default:
            diagnostics.error("\(what) must be true or false, found \(node.scalar.map { "'\($0)'" } ?? node.kindDescription)", at: node.location)
            return nil
        }
    }

    private mutating func integer(_ node: YAMLNode, _ what: String) -> Located<Int>? {
        guard let text = node.scalar, let value = Int(text), value >= 0 else {
            diagnostics.error("\(what) must be a whole number ≥ 0, found \(node.scalar.map { "'\($0)'" } ?? node.kindDescription)", at: node.location)
            return nil
        }
        return Located(value, at: node.location)
    }

    private mutating func stringList(_ node: YAMLNode, _ what: String) -> [Located<String>] {
        guard case let .sequence(items) = node.value else {
            diagnostics.error("\(what) must be a list such as [a, b], found \(node.kindDescription)", at: node.location)
            return []
        }
        return items.compactMap { string($0, "an entry of \(what)") }
    }

    /// `[small, {large: {originalName: big}}]`: cases, each a name or, in the long form, a name
    /// with its `originalName` (a name or a list).
    private mutating func parseEnum(_ name: Located<String>, _ node: YAMLNode) -> EnumSyntax {
        guard case let .sequence(items) = node.value else {
            diagnostics.error("the cases of enum '\(name.value)' must be a list such as [a, b], found \(node.kindDescription)", at: node.location)
            return EnumSyntax(name: name, cases: [])
        }
        var syntax = EnumSyntax(name: name, cases: [])
        for item in items {
            guard case let .mapping(pairs) = item.value else {
                if let value = string(item, "an entry of the cases of enum '\(name.value)'") { syntax.cases.append(value) }
                continue
            }
            guard pairs.count == 1, let caseName = keyName(pairs[0].key) else {
                diagnostics.error("a case in the long form is written {name: {originalName: old}}", at: item.location)
                continue
            }
            syntax.cases.append(caseName)
            for (key, value) in checkedKeys(mapping(pairs[0].value, "case '\(caseName.value)'", example: "{originalName: old}") ?? [], allowed: ["originalName"], context: "case '\(caseName.value)'") where key.value == "originalName" {
                syntax.caseOriginalNames[caseName.value] = names(value, "'originalName'")
            }
        }
        return syntax
    }

    /// `old` or `[older, old]`: one name or a list of them.
    private mutating func names(_ node: YAMLNode, _ what: String) -> [Located<String>] {
        if case .sequence = node.value { return stringList(node, what) }
        return string(node, what).map { [$0] } ?? []
    }

    /// `[[a, b], c]`: a list of groups, where a single name is a group of one.
    private mutating func nameGroups(_ node: YAMLNode, _ what: String) -> [[Located<String>]] {
        guard case let .sequence(items) = node.value else {
            diagnostics.error("\(what) must be a list of lists of names such as [[firstName, lastName]], found \(node.kindDescription)", at: node.location)
            return []
        }
        return items.compactMap { item in
            if case .sequence = item.value {
                let names = stringList(item, "a group in \(what)")
                if names.isEmpty { diagnostics.error("a group in \(what) is empty", at: item.location) }
                return names.isEmpty ? nil : names
            }
            return string(item, "an entry of \(what)").map { [$0] }
        }
    }
}
