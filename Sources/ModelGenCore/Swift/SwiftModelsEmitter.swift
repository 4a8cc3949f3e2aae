import Foundation
import Mustache

/// Renders `<Base>+Models.swift` from the `Models.swift.mustache` template.
///
/// The template context (documented in README "Templates"): `header`, `sourceFile`, `enums`
/// (`name`, `swiftName`, `cases` with `name`, `swiftName`, `enumName`) and `entities` (`name`, `swiftName`,
/// `attributes`, `relationships`, `initParameters`, `transientDefaults`), each attribute with
/// `name`, `swiftName`, `index`, `schemaType`, `swiftType`, `parameterName`, `isTransient`, and each
/// relationship with `name`, `swiftName`, `index`, `schemaType`, `swiftType`, `getter`, `setter`,
/// `inverseDescription`, `deleteRule`; `entitySwiftName` is available inside both lists.
public struct SwiftModelsEmitter {
    public struct TemplateError: Error, CustomStringConvertible {
        public var description: String
    }

    public let schema: ModelSchema
    public let sourceFile: String

    public init(schema: ModelSchema, sourceFile: String) {
        self.schema = schema
        self.sourceFile = sourceFile
    }

    /// Renders with `template` (the default template when nil).
    public func render(header: String, template: String? = nil) throws -> String {
        let mustache: MustacheTemplate
        do {
            mustache = try MustacheTemplate(string: template ?? DefaultTemplates.models)
        } catch {
            throw TemplateError(description: "cannot parse the Models.swift.mustache template: \(error)")
        }
        return mustache.render(context(header: header))
    }

    func context(header: String) -> [String: Any] {
        [
            "header": header,
            "sourceFile": sourceFile,
            "enums": schema.enums.map { enumeration in
                ["name": enumeration.name, "swiftName": Naming.swiftIdentifier(enumeration.name),
                 "cases": enumeration.cases.map { ["name": $0, "swiftName": Naming.swiftIdentifier($0), "enumName": enumeration.name] }] as [String: Any]
            },
            "entities": schema.entities.map(entityContext),
        ]
    }

    private func entityContext(_ entity: Entity) -> [String: Any] {
        let entitySwiftName = Naming.swiftIdentifier(entity.name)
        let attributes = entity.attributes.enumerated().map { index, attribute -> [String: Any] in
            [
                "name": attribute.name, "swiftName": Naming.swiftIdentifier(attribute.name), "index": index,
                "schemaType": schemaType(attribute), "swiftType": SwiftTypes.swiftType(attribute),
                "parameterName": Naming.swiftIdentifier(attribute.name), "isTransient": attribute.isTransient,
                "entitySwiftName": entitySwiftName,
            ]
        }
        let relationships = entity.relationships.enumerated().map { index, relationship -> [String: Any] in
            let target = Naming.swiftIdentifier(relationship.target)
            let swiftType: String = switch relationship.cardinality {
            case .toMany: "[\(target)]"
            case .toOne: "\(target)?"
            }
            return [
                "name": relationship.name, "swiftName": Naming.swiftIdentifier(relationship.name), "index": index,
                "schemaType": relationship.isToMany ? "[\(relationship.target)]" : relationship.target + (relationship.isRequired ? "" : "?"),
                "swiftType": swiftType,
                "getter": relationship.isToMany ? "toMany" : "toOne",
                "setter": relationship.isToMany ? "setToMany" : "setToOne",
                "inverseDescription": relationship.inverse.map { "`\(relationship.target).\($0)`" } ?? "none",
                "deleteRule": relationship.deleteRule.rawValue,
                "entitySwiftName": entitySwiftName,
            ]
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
        let transientDefaults = entity.attributes.enumerated().filter { $0.element.isTransient }.map { index, attribute -> [String: Any] in
            ["index": index, "swiftType": SwiftTypes.swiftType(attribute),
             "value": attribute.defaultValue.map { SwiftTypes.literal($0, type: attribute.type) } ?? "nil"]
        }
        return [
            "name": entity.name, "swiftName": entitySwiftName,
            "attributes": attributes, "relationships": relationships,
            "initParameters": parameters.joined(separator: ", "),
            "transientDefaults": transientDefaults,
        ]
    }

    private func schemaType(_ attribute: Attribute) -> String {
        let base: String = switch attribute.type {
        case let .scalar(scalar): scalar.rawValue
        case let .enumeration(name): name
        }
        return base + (attribute.isOptional ? "?" : "")
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
        case let .real(number): return "\(number)"
        case let .bool(flag): return flag ? "true" : "false"
        case let .date(seconds, _): return "Foundation.Date(timeIntervalSince1970: \(seconds))"
        case let .uuid(text): return "Foundation.UUID(uuidString: \(stringLiteral(text)))!"
        case let .data(bytes): return "Foundation.Data([\(bytes.map { String(format: "0x%02X", $0) }.joined(separator: ", "))])"
        case let .decimal(text): return "Foundation.Decimal(string: \(stringLiteral(text)), locale: Foundation.Locale(identifier: \"en_US_POSIX\"))!"
        case let .enumCase(name): return "." + Naming.swiftIdentifier(name)
        }
    }

    static func stringLiteral(_ text: String) -> String {
        // Most texts (names, SQL without quoted identifiers) need no escaping at all.
        if !text.utf8.contains(where: { $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "\"") || $0 < 0x20 || $0 == 0x7F }) {
            return "\"" + text + "\""
        }
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

    /// A multi-line raw string literal holding `text` exactly.
    static func rawStringLiteral(_ text: String) -> String {
        var hashes = "#"
        while text.contains("\"" + hashes) || text.contains("\\" + hashes) { hashes += "#" }
        return "\(hashes)\"\"\"\n\(text)\n\"\"\"\(hashes)"
    }
}
