/// Migration warnings as compiler diagnostics, located in the new schema file.
extension ModelGen {
    /// Each warning at the `file:line:column` of the element it is about in the schema file
    /// (`path`, `bytes`): the attribute's or relationship's name, else the entity's, else the
    /// file's start.
    public static func diagnostics(for warnings: [MigrationPlan.Warning], path: String, bytes: [UInt8]) -> [Diagnostic] {
        var syntax: SchemaSyntax?
        if case let .success(root) = YAMLReader.read(bytes, file: path) {
            syntax = SchemaParser.parse(root, file: path).0
        }
        return warnings.map { warning in
            let entity = syntax?.entities.first { $0.name.value == warning.entity }
            let member = warning.element.flatMap { name in
                entity?.attributes.first { $0.name.value == name }?.name.location ?? entity?.relationships.first { $0.name.value == name }?.name.location
            }
            return .warning(warning.message, at: member ?? entity?.name.location ?? SourceLocation(file: path, line: 1, column: 1))
        }
    }
}
