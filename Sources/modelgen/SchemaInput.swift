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

    static func report(_ diagnostics: [Diagnostic]) {
        for diagnostic in diagnostics {
            printError(diagnostic.description)
        }
    }
}

func printError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}
