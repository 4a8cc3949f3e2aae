import ArgumentParser
import Foundation
import ModelGenCore

/// Exit statuses: 0 success, 1 a refused delete, 2 usage or schema errors.
enum ExitStatus {
    static let refused: Int32 = 1
    static let schemaError: Int32 = 2
}

/// Reads a schema file and prints its diagnostics on standard error.
enum SchemaInput {
    static func read(_ path: String) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else {
            printError("error: cannot read schema file '\(path)': no such file or not readable")
            throw ExitCode(ExitStatus.schemaError)
        }
        return [UInt8](data)
    }

    /// Reads and resolves a schema, printing its diagnostics; exit 2 when it has an error.
    static func load(_ path: String) throws -> ModelSchema {
        let (model, diagnostics) = ModelGen.load(path: path, bytes: try read(path))
        report(diagnostics)
        guard let model else { throw ExitCode(ExitStatus.schemaError) }
        return model
    }

    /// The entity with this name; exit 2 with the near miss otherwise.
    static func entity(named name: String, in schema: ModelSchema) throws -> Entity {
        if let entity = schema.entity(named: name) { return entity }
        let names = schema.entities.map(\.name)
        let hint = NearMiss.suggestion(for: name, among: names).map { "; did you mean '\($0)'?" } ?? " (entities: \(names.joined(separator: ", ")))"
        printError("error: schema '\(schema.name)' has no entity '\(name)'\(hint)")
        throw ExitCode(ExitStatus.schemaError)
    }

    static func report(_ diagnostics: [Diagnostic]) {
        for diagnostic in diagnostics {
            printError(diagnostic.description)
        }
    }
}

func printError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}
