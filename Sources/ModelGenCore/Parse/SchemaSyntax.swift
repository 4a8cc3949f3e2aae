/// The schema as written: names and option values with their positions, not yet checked
/// against each other. `SchemaParser` builds it; `SchemaResolver` checks and resolves it.
public struct SchemaSyntax: Sendable {
    public var file: String
    public var name: Located<String>?
    public var enums: [EnumSyntax] = []
    public var entities: [EntitySyntax] = []
}

public struct EnumSyntax: Sendable {
    public var name: Located<String>
    public var cases: [Located<String>]
    /// Names the cases had in earlier versions, by case.
    public var caseOriginalNames: [String: [Located<String>]] = [:]
}

public struct EntitySyntax: Sendable {
    public var name: Located<String>
    public var table: Located<String>?
    /// Compound unique constraints: each a list of attribute or relationship names.
    public var unique: [[Located<String>]] = []
    public var indexes: [[Located<String>]] = []
    /// Names in earlier versions of the schema.
    public var originalNames: [Located<String>] = []
    public var attributes: [AttributeSyntax] = []
    public var relationships: [RelationshipSyntax] = []
}

public struct AttributeSyntax: Sendable {
    public var name: Located<String>
    /// The type as written, `?` included: `String`, `Diet`, `Double?`.
    public var type: Located<String>
    public var unique: Located<Bool>?
    public var indexed: Located<Bool>?
    public var transient: Located<Bool>?
    /// The default's text; `isQuoted` tells `"1"` from `1`.
    public var defaultValue: Located<String>?
    /// Names in earlier versions of the schema.
    public var originalNames: [Located<String>] = []
    public var column: Located<String>?
}

public struct RelationshipSyntax: Sendable {
    public var name: Located<String>
    /// The type as written, normalised so that the YAML list form `[Animal]` reads `"[Animal]"`.
    public var type: Located<String>
    public var inverse: Located<String>?
    public var deleteRule: Located<String>?
    public var minimumModelCount: Located<Int>?
    public var maximumModelCount: Located<Int>?
    /// Names in earlier versions of the schema.
    public var originalNames: [Located<String>] = []
    public var column: Located<String>?
}
