import ArgumentParser
import Foundation

@main
struct ModelGenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "modelgen",
        abstract: "Generate SQL, Swift models and safe-deletion plans from a YAML schema.",
        discussion: "Exit status: 0 success; 1 a refused delete or migration, or a stale --check; 2 usage or schema errors, a missing database.",
        version: "0.1.0",
        subcommands: [ValidateCommand.self, GenerateCommand.self, PlanCommand.self, DeleteCommand.self, MigrateCommand.self, TemplatesCommand.self]
    )

    /// Runs the command; usage errors exit with status 2 (ArgumentParser's default is 64).
    static func main() {
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch {
            if exitCode(for: error) == .validationFailure {
                printError(fullMessage(for: error))
                Foundation.exit(ExitStatus.schemaError)
            }
            exit(withError: error)
        }
    }
}
