import ArgumentParser
import Foundation
import ModelGenCore

/// Writes generated files, touching only those whose bytes change (so builds stay incremental).
enum OutputWriter {
    static func write(_ files: [GeneratedFile], to directory: URL) throws {
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            for file in files {
                let url = directory.appendingPathComponent(file.name)
                let bytes = Data(file.contents.utf8)
                if FileManager.default.contents(atPath: url.path) == bytes { continue }
                try bytes.write(to: url, options: .atomic)
            }
        } catch {
            printError("error: cannot write to '\(directory.path)': \(error.localizedDescription)")
            throw ExitCode(ExitStatus.schemaError)
        }
    }
}
