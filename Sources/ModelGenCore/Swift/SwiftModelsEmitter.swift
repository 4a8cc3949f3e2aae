import Foundation

/// Renders `<Base>+Models.swift` from the `Models.swift.mustache` template.
///
/// The template context (documented in README "Templates"): `header`, `sourceFile`, `enums`
/// (`name`, `swiftName`, `cases` with `name`, `swiftName`, `enumName`) and `entities` (`name`, `swiftName`,
/// `attributes`, `relationships`, `initParameters`, `transientDefaults`), each attribute with
/// `name`, `swiftName`, `index`, `schemaType`, `swiftType`, `parameterName`, `isTransient`, and each
/// relationship with `name`, `swiftName`, `index`, `schemaType`, `swiftType`, `getter`, `setter`,
/// `inverseDescription`, `deleteRule`, `bounds`; `entitySwiftName` is available inside both lists.
/// `relatedProperties` (and the flag `hasRelatedProperties`) lists, for each to-one relationship
/// whose key is on the entity's table, the stored attributes of its target: `name`, `swiftName`,
/// `relationshipName`, `relationshipSwiftName`, `targetSwiftName`, `entitySwiftName`.
public struct SwiftModelsEmitter {
    public let schema: ModelSchema
    public let sourceFile: String

    public init(schema: ModelSchema, sourceFile: String) {
        self.schema = schema
        self.sourceFile = sourceFile
    }

    /// Renders with `template` (the default template when nil).
    public func render(header: String, template: MustacheTemplate? = nil) -> String {
        (template ?? Self.defaultTemplate).render(context(header: header))
    }

    /// `DefaultTemplates.models`, parsed once; a test renders it, so it always parses.
    static let defaultTemplate = try! MustacheTemplate(DefaultTemplates.models)

    func context(header: String) -> TemplateValue {
        .object([
            "header": .text(header),
            "sourceFile": .text(sourceFile),
            "enums": .list(schema.enums.map { enumeration in
                .object([
                    "name": .text(enumeration.name), "swiftName": .text(Naming.swiftIdentifier(enumeration.name)),
                    "cases": .list(enumeration.cases.map {
                        .object(["name": .text($0), "swiftName": .text(Naming.swiftIdentifier($0)), "enumName": .text(enumeration.name)])
                    }),
                ])
            }),
            "entities": .list(schema.entities.map(entityContext)),
        ])
    }

    private func entityContext(_ entity: Entity) -> TemplateValue {
        let entitySwiftName = TemplateValue.text(Naming.swiftIdentifier(entity.name))
        let attributes = entity.attributes.enumerated().map { index, attribute -> TemplateValue in
            let swiftName = TemplateValue.text(Naming.swiftIdentifier(attribute.name))
            return .object([
                "name": .text(attribute.name), "swiftName": swiftName, "index": .text(String(index)),
                "schemaType": .text(schemaType(attribute)), "swiftType": .text(SwiftTypes.swiftType(attribute)),
                "parameterName": swiftName, "isTransient": .bool(attribute.isTransient),
                "entitySwiftName": entitySwiftName,
            ])
        }
        let relationships = entity.relationships.enumerated().map { index, relationship -> TemplateValue in
            let target = Naming.swiftIdentifier(relationship.target)
            let swiftType: String = switch relationship.cardinality {
            case .toMany: "[\(target)]"
            case .toOne: "\(target)?"
            }
            return .object([
                "name": .text(relationship.name), "swiftName": .text(Naming.swiftIdentifier(relationship.name)), "index": .text(String(index)),
                "schemaType": .text(relationship.isToMany ? "[\(relationship.target)]" : relationship.target + (relationship.isRequired ? "" : "?")),
                "swiftType": .text(swiftType),
                "getter": .text(relationship.isToMany ? "toMany" : "toOne"),
                "setter": .text(relationship.isToMany ? "setToMany" : "setToOne"),
                "isToMany": .bool(relationship.isToMany),
                "inverseDescription": .text(relationship.inverse.map { "`\(relationship.target).\($0)`" } ?? "none"),
                "deleteRule": .text(relationship.deleteRule.rawValue),
                "bounds": Self.bounds(relationship).map(TemplateValue.text) ?? .bool(false),
                "entitySwiftName": entitySwiftName,
            ])
        }
        let parameters = entity.attributes.map { attribute -> String in
            var parameter = "\(Naming.swiftIdentifier(attribute.name)): \(SwiftTypes.swiftType(attribute))"
            if let value = attribute.defaultValue {
                parameter += " = " + SwiftTypes.literal(value, type: attribute.type)
            } else if attribute.isOptional {
                parameter += " = nil"
            }
            return parameter
        }
        let transientDefaults = entity.attributes.enumerated().filter { $0.element.isTransient }.map { index, attribute -> TemplateValue in
            .object([
                "index": .text(String(index)), "swiftType": .text(SwiftTypes.swiftType(attribute)),
                "value": .text(attribute.defaultValue.map { SwiftTypes.literal($0, type: attribute.type) } ?? "nil"),
            ])
        }
        // Each stored attribute of each object a to-one relationship whose key is on this entity's
        // table refers to, for sorts through the relationship.
        let relatedProperties = entity.relationships.flatMap { relationship -> [TemplateValue] in
            guard case .foreignKey = relationship.storage, let target = schema.entity(named: relationship.target) else { return [] }
            return target.attributes.filter { !$0.isTransient }.map { attribute in
                .object([
                    "name": .text(attribute.name), "swiftName": .text(Naming.swiftIdentifier(attribute.name)),
                    "relationshipName": .text(relationship.name), "relationshipSwiftName": .text(Naming.swiftIdentifier(relationship.name)),
                    "targetSwiftName": .text(Naming.swiftIdentifier(target.name)), "entitySwiftName": entitySwiftName,
                ])
            }
        }
        return .object([
            "name": .text(entity.name), "swiftName": entitySwiftName,
            "attributes": .list(attributes), "relationships": .list(relationships),
            "relatedProperties": .list(relatedProperties), "hasRelatedProperties": .bool(!relatedProperties.isEmpty),
            "initParameters": .text(parameters.joined(separator: ", ")),
            "transientDefaults": .list(transientDefaults),
        ])
    }

    private func schemaType(_ attribute: Attribute) -> String {
        let base: String = switch attribute.type {
        case let .scalar(scalar): scalar.rawValue
        case let .enumeration(name): name
        }
        return base + (attribute.isOptional ? "?" : "")
    }

    /// A to-many relationship's bounds in words (`1 to 3 objects`, `at least 1 object`, `at most
    /// 2 objects`), or nil when it has none (0 is none, as in SwiftData).
    static func bounds(_ relationship: Relationship) -> String? {
        let (minimum, maximum) = relationship.modelCountBounds
        func objects(_ count: Int) -> String { count == 1 ? "object" : "objects" }
        switch (minimum, maximum) {
        case let (minimum?, maximum?): return "\(minimum) to \(maximum) \(objects(maximum))"
        case let (minimum?, nil): return "at least \(minimum) \(objects(minimum))"
        case let (nil, maximum?): return "at most \(maximum) \(objects(maximum))"
        case (nil, nil): return nil
        }
    }
}

/// Swift spellings of schema types and default values; standard types are module-qualified, so
/// an entity named `Date`, `Data`, `URL` or `String` cannot break the generated code.
enum SwiftTypes {
    static func swiftType(_ attribute: Attribute) -> String {
        let base: String = switch attribute.type {
        case let .enumeration(name): Naming.swiftIdentifier(name)
        case let .scalar(scalar):
            switch scalar {
            case .string, .int, .int64, .int32, .int16, .double, .float, .bool: "Swift.\(scalar.rawValue)"
            case .date, .uuid, .data, .decimal, .url: "Foundation.\(scalar.rawValue)"
            }
        }
        return base + (attribute.isOptional ? "?" : "")
    }

    static func literal(_ value: DefaultValue, type: AttributeType) -> String {
        switch value {
        case let .string(text):
            if case .scalar(.url) = type { return "Foundation.URL(string: \(stringLiteral(text)))!" }
            return stringLiteral(text)
        case let .integer(number): return String(number)
        case let .real(number):
            // A `Float` default is held as the `Double` it widens to; its own digits read better.
            if case .scalar(.float) = type { return "\(Float(number))" }
            return "\(number)"
        case let .bool(flag): return flag ? "true" : "false"
        case let .date(seconds, _): return "Foundation.Date(timeIntervalSinceReferenceDate: \(seconds))"
        case let .uuid(text): return "Foundation.UUID(uuidString: \(stringLiteral(text)))!"
        case let .data(bytes): return "Foundation.Data([\(bytes.map { String(format: "0x%02X", $0) }.joined(separator: ", "))])"
        case let .decimal(text): return "Foundation.Decimal(string: \(stringLiteral(text)), locale: Foundation.Locale(identifier: \"en_US_POSIX\"))!"
        case let .enumCase(name): return "." + Naming.swiftIdentifier(name)
        }
    }

    static func stringLiteral(_ text: String) -> String {
        // Most texts (names, SQL without quoted identifiers) need no escaping at all.
        if !needsEscaping(text) { return "\"" + text + "\"" }
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": result += "\\\\"
            case "\"": result += "\\\""
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F: result += "\\u{\(String(scalar.value, radix: 16))}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }

    /// Whether `text` holds a backslash, a double quote or a control character.
    static func needsEscaping(_ text: String) -> Bool {
        let special: (UInt8) -> Bool = { $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "\"") || $0 < 0x20 || $0 == 0x7F }
        return text.utf8.withContiguousStorageIfAvailable { $0.contains(where: special) } ?? text.utf8.contains(where: special)
    }

    /// The lines of an array argument, `name: [`, each element on a line of its own, `]` — or
    /// `name: []` when there are none — indented as an argument of a call at the type's level;
    /// followed by a comma unless it is the `last` argument.
    static func listArgumentLines(_ name: String, _ elements: [String], last: Bool = false) -> [String] {
        let end = last ? "" : ","
        guard !elements.isEmpty else { return ["        \(name): []\(end)"] }
        return ["        \(name): ["] + elements.map { "            \($0)," } + ["        ]\(end)"]
    }

    /// The lines of a multi-line raw string literal holding `text` exactly, the first one after
    /// `prefix`: `prefix#"""`, `text`, `"""#` (joined by line breaks they are the literal, and
    /// `text`, which may be a gigabyte of SQL, is not copied into a string of its own). The
    /// delimiter has one `#` more than the longest run of `#` after a `"` or `\` in the text,
    /// found in one pass over its bytes.
    static func rawStringLiteralLines(_ prefix: String, _ text: String) -> [String] {
        var longestRun = 0, run = 0, counting = false
        var text = text
        text.withUTF8 { bytes in
            for byte in bytes {
                if byte == UInt8(ascii: "#"), counting {
                    run += 1
                    longestRun = max(longestRun, run)
                } else {
                    counting = byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
                    run = 0
                }
            }
        }
        let hashes = String(repeating: "#", count: longestRun + 1)
        return [prefix + hashes + "\"\"\"", text, "\"\"\"" + hashes]
    }
}
