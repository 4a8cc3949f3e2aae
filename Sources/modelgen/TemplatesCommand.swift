import ArgumentParser
import Foundation
import ModelGenCore

struct TemplatesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "templates",
        abstract: "Work with the templates of the generated Swift code.",
        subcommands: [Dump.self]
    )

    struct Dump: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write the default templates into a directory, to edit and pass to 'generate --templates'."
        )

        @Argument(help: "The directory to write into (created if missing).")
        var directory: String

        func run() throws {
            try OutputWriter.write(DefaultTemplates.all.map { GeneratedFile(name: $0.name, contents: $0.text) },
                                   to: URL(fileURLWithPath: directory, isDirectory: true))
        }
    }
}
