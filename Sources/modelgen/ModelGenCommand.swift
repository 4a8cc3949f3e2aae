import ArgumentParser

@main
struct ModelGenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "modelgen",
        abstract: "Generate SQL, Swift models and safe-deletion plans from a YAML schema.",
        version: "0.1.0",
        subcommands: [ValidateCommand.self, GenerateCommand.self]
    )
}
