/// The default templates, embedded so that `modelgen` needs no resource files. They are copies of
/// `Templates/`; a test checks that the copies are equal (`modelgen templates dump DIR` writes them out).
public enum DefaultTemplates {
    /// `Templates/Models.swift.mustache`.
    public static let models = #"""
// {{header}}

import Foundation
import ModelGenRuntime
{{#enums}}

/// Generated from enum `{{name}}` in {{sourceFile}}.
public enum {{swiftName}}: Swift.String, Swift.Codable, Swift.CaseIterable, Swift.Sendable, ModelGenRuntime.PersistentValue {
{{#cases}}
    /// Case `{{name}}` of enum `{{enumName}}` in {{sourceFile}}.
    case {{swiftName}}
{{/cases}}
}
{{/enums}}
{{#entities}}

/// Generated from entity `{{name}}` in {{sourceFile}}.
public final class {{swiftName}}: ModelGenRuntime.PersistentModel {
    public let persistentBackingData: ModelGenRuntime.ModelBackingData
{{#attributes}}

    /// Attribute `{{name}}: {{schemaType}}`{{#isTransient}} (transient: not stored){{/isTransient}}.
    public var {{swiftName}}: {{swiftType}} {
        get { persistentBackingData.attribute({{index}}) }
        set { persistentBackingData.setAttribute({{index}}, newValue) }
    }
{{/attributes}}
{{#relationships}}

    /// Relationship `{{name}}: {{schemaType}}`, inverse {{inverseDescription}}, delete rule `{{deleteRule}}`{{#bounds}}, {{bounds}} (checked by save){{/bounds}}.
    public var {{swiftName}}: {{swiftType}} {
        get { persistentBackingData.{{getter}}({{index}}) }
        set { persistentBackingData.{{setter}}({{index}}, newValue) }
{{#isToMany}}
        _modify { yield &persistentBackingData[toMany: {{index}}] }
{{/isToMany}}
    }
{{/relationships}}

    /// Creates a new `{{name}}`; insert it into a `ModelContext` to save it.
    public init({{initParameters}}) {
        persistentBackingData = ModelGenRuntime.ModelBackingData(entity: Self.entity)
        persistentBackingData.attach(self)
{{#attributes}}
        self.{{swiftName}} = {{parameterName}}
{{/attributes}}
    }

    deinit {
        persistentBackingData.modelDidEnd()
    }

    /// Creates the object for a row a `ModelContext` loads.
    public required init(backingData: ModelGenRuntime.ModelBackingData) {
        persistentBackingData = backingData
{{#transientDefaults}}
        persistentBackingData.setInitialValue({{index}}, {{value}} as {{swiftType}})
{{/transientDefaults}}
    }

    /// The stored property a key path names, for `#Predicate` and `SortDescriptor`.
    public static func propertyName(for keyPath: Swift.AnyKeyPath) -> Swift.String? {
        switch keyPath {
{{#attributes}}
        case \{{entitySwiftName}}.{{swiftName}}: return "{{name}}"
{{/attributes}}
{{#relationships}}
        case \{{entitySwiftName}}.{{swiftName}}: return "{{name}}"
{{/relationships}}
        default: return nil
        }
    }
{{#hasRelatedProperties}}

    /// A key path through a to-one relationship to a stored attribute of the object it refers to,
    /// for `SortDescriptor` (`\{{swiftName}}.relationship?.attribute`): the relationship, its target and the attribute.
    public static func relatedPropertyName(for keyPath: Swift.AnyKeyPath) -> (relationship: Swift.String, target: any ModelGenRuntime.PersistentModel.Type, property: Swift.String)? {
        switch keyPath {
{{#relatedProperties}}
        case \{{entitySwiftName}}.{{relationshipSwiftName}}?.{{swiftName}}: return ("{{relationshipName}}", {{targetSwiftName}}.self, "{{name}}")
{{/relatedProperties}}
        default: return nil
        }
    }
{{/hasRelatedProperties}}
}
{{/entities}}

"""#

    /// File name and text of every default template.
    public static let all: [(name: String, text: String)] = [("Models.swift.mustache", models)]
}
