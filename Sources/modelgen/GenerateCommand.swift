import ArgumentParser
import Foundation
import ModelGenCore

struct GenerateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate",
        abstract: "Write the generated files for a schema into a directory.",
        discussion: """
        Writes <Base>.sqlite.sql, <Base>.postgresql.sql (with the deletion functions), \
        <Base>+Models.swift, <Base>+Schema.swift and <Base>+Deletion.swift, where <Base> is the \
        schema file's name without .yaml. A file is rewritten only when its bytes change. Nothing is written when the \
        schema has an error.
        """
    )

    @Argument(help: "The schema file (YAML).")
    var schema: String

    @Option(name: .shortAndLong, help: "The directory to write into (created if missing).")
    var output: String

    @Flag(help: "Write nothing; exit 1 and list the files that are missing or differ.")
    var check = false

    @Option(help: "A directory whose Models.swift.mustache replaces the default template (see 'modelgen templates dump').")
    var templates: String?

    @Flag(help: "Write only the Swift files (what the build plugin compiles).")
    var swiftOnly = false

    func run() throws {
        var modelsTemplate: TemplateFile?
        if let templates {
            let path = URL(fileURLWithPath: templates).appendingPathComponent("Models.swift.mustache").path
            guard let data = FileManager.default.contents(atPath: path) else {
                printError("error: cannot read template '\(path)'")
                throw ExitCode(ExitStatus.schemaError)
            }
            modelsTemplate = TemplateFile(path: path, text: String(decoding: data, as: UTF8.self))
        }
        var compilation = ModelGen.generate(path: schema, bytes: try SchemaInput.read(schema), modelsTemplate: modelsTemplate)
        SchemaInput.report(compilation.diagnostics)
        guard !compilation.hasErrors else { throw ExitCode(ExitStatus.schemaError) }
        if swiftOnly { compilation.files.removeAll { !$0.name.hasSuffix(".swift") } }
        let directory = URL(fileURLWithPath: output, isDirectory: true)
        if check {
            let stale = compilation.files.filter { file in
                FileManager.default.contents(atPath: directory.appendingPathComponent(file.name).path) != file.bytes
            }
            for file in stale {
                printError("error: \(directory.appendingPathComponent(file.name).path) is out of date; run 'modelgen generate \(schema) --output \(output)'")
            }
            if !stale.isEmpty { throw ExitCode(1) }
            return
        }
        try OutputWriter.write(compilation.files, to: directory)
    }
}
