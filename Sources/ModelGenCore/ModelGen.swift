@_exported import ModelGenDeletion
@_exported import ModelGenQuery
@_exported import ModelGenSchema

/// A file the generator produces, in memory; the CLI and the plugin write it.
///
/// The text is kept in the pieces it was rendered in (`parts`): the PostgreSQL file of a large
/// schema is mostly functions rendered one by one on every core (hundreds of megabytes at 10,000
/// entities), which a writer copies out piece by piece instead of first into one string.
public struct GeneratedFile: Equatable, Sendable {
    public var name: String
    /// The text, piece by piece, in order.
    public var parts: [String]

    public init(name: String, contents: String) {
        self.init(name: name, parts: [contents])
    }

    public init(name: String, parts: [String]) {
        self.name = name
        self.parts = parts
    }

    /// The whole text, joined into one string (a copy).
    public var contents: String { parts.concatenated() }

    /// The length of the text in UTF-8 bytes.
    public var byteCount: Int { parts.reduce(0) { $0 + $1.utf8.count } }

    /// Same name, same bytes, however the texts are split into parts.
    public static func == (lhs: GeneratedFile, rhs: GeneratedFile) -> Bool {
        lhs.name == rhs.name && lhs.byteCount == rhs.byteCount
            && lhs.parts.lazy.flatMap(\.utf8).elementsEqual(rhs.parts.lazy.flatMap(\.utf8))
    }
}

/// A template that replaces a default one: its path (for diagnostics) and its text.
public struct TemplateFile: Sendable {
    public var path: String
    public var text: String

    public init(path: String, text: String) {
        self.path = path
        self.text = text
    }
}

/// The result of compiling one schema: all diagnostics (sorted), and the files when there is no error.
public struct Compilation: Sendable {
    public var diagnostics: [Diagnostic]
    public var schema: ModelSchema?
    public var files: [GeneratedFile]

    public var hasErrors: Bool { diagnostics.contains { $0.severity == .error } }
}

/// The pipeline: bytes → YAML tree → syntax → resolved schema → generated files.
/// Pure: no file system, no clock, no environment; the same input gives the same bytes.
public enum ModelGen {
    /// `Zoo.yaml` → `Zoo`: the base of every output name, known before the file is read.
    public static func baseName(ofSchemaFile path: String) -> String {
        var name = path.split(separator: "/").last.map(String.init) ?? path
        for suffix in [".yaml", ".yml"] where name.hasSuffix(suffix) {
            name.removeLast(suffix.count)
            break
        }
        return name
    }

    /// The names of the files `generate` writes for a schema file, in order.
    public static func outputFileNames(forSchemaFile path: String) -> [String] {
        let base = baseName(ofSchemaFile: path)
        return ["\(base).sqlite.sql", "\(base).postgresql.sql", "\(base)+Models.swift", "\(base)+Schema.swift", "\(base)+Deletion.swift"]
    }

    /// Parses and resolves a schema. `path` is used in diagnostics exactly as given.
    public static func load(path: String, bytes: [UInt8]) -> (ModelSchema?, [Diagnostic]) {
        var diagnostics = DiagnosticCollector()
        switch YAMLReader.read(bytes, file: path) {
        case let .failure(diagnostic):
            return (nil, [diagnostic])
        case let .success(root):
            let (syntax, parseDiagnostics) = SchemaParser.parse(root, file: path)
            diagnostics.append(contentsOf: parseDiagnostics)
            let (schema, resolveDiagnostics) = SchemaResolver.resolve(syntax, sourceFile: Naming.printable(baseName(ofSchemaFile: path)))
            diagnostics.append(contentsOf: resolveDiagnostics)
            return (diagnostics.hasErrors ? nil : schema, diagnostics.sorted)
        }
    }

    /// Compiles a schema into its output files; no files when there is an error.
    /// `modelsTemplate` overrides the default `Models.swift.mustache`.
    public static func generate(path: String, bytes: [UInt8], modelsTemplate: TemplateFile? = nil) -> Compilation {
        let (schema, diagnostics) = load(path: path, bytes: bytes)
        guard let schema else { return Compilation(diagnostics: diagnostics, schema: nil, files: []) }
        var parsedTemplate: MustacheTemplate?
        if let modelsTemplate {
            do {
                parsedTemplate = try MustacheTemplate(modelsTemplate.text)
            } catch {
                let location = SourceLocation(file: modelsTemplate.path, line: error.line, column: error.column)
                let message = "cannot parse the Models.swift.mustache template: \(error.message)"
                return Compilation(diagnostics: diagnostics + [.error(message, at: location)], schema: schema, files: [])
            }
        }
        let template = parsedTemplate
        // Written into comments of every file: control characters escaped.
        let fileName = Naming.printable(path.split(separator: "/").last.map(String.init) ?? path)
        let header = "Generated by modelgen from \(fileName). Do not edit."
        let names = outputFileNames(forSchemaFile: path)
        let plans = DeletionPlanner(schema: schema).plans()
        // The PostgreSQL functions, the longest part, on every core; then the files, which are
        // independent of one another (+Schema.swift embeds the DDL), side by side.
        let ddl = [SQLDialect.sqlite, .postgresql].concurrentMap { DDLGenerator(schema: schema, dialect: $0).render(header: header) }
        let (sqliteDDL, postgreSQLTables) = (ddl[0], ddl[1])
        let functions = PostgreSQLDeletionFunctions(schema: schema, plans: plans).functions()
        // In the order of `outputFileNames(forSchemaFile:)`, after the SQLite DDL.
        let renderers: [@Sendable () -> String] = [
            { SwiftModelsEmitter(schema: schema, sourceFile: fileName).render(header: header, template: template) },
            { SwiftSchemaEmitter(schema: schema, sourceFile: fileName).render(header: header, sqliteDDL: sqliteDDL, postgreSQLTables: postgreSQLTables) },
            { SwiftDeletionEmitter(schema: schema, plans: plans, sourceFile: fileName).render(header: header) },
        ]
        let parts = [[sqliteDDL], PostgreSQLDeletionFunctions.fileParts(tables: postgreSQLTables, functions: functions)] + renderers.concurrentMap { [$0()] }
        let files = zip(names, parts).map { GeneratedFile(name: $0, parts: $1) }
        return Compilation(diagnostics: diagnostics, schema: schema, files: files)
    }
}
