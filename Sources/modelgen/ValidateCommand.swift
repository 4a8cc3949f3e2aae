import ArgumentParser
import ModelGenCore

struct ValidateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check a schema and print its diagnostics; exit 0 when it has no error."
    )

    @Argument(help: "The schema file (YAML).")
    var schema: String

    func run() throws {
        let (model, diagnostics) = ModelGen.load(path: schema, bytes: try SchemaInput.read(schema))
        SchemaInput.report(diagnostics)
        if model == nil { throw ExitCode(ExitStatus.schemaError) }
    }
}
