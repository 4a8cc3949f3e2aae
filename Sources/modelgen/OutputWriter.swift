import ArgumentParser
import Foundation
import ModelGenCore

/// Writes generated files, touching only those whose bytes change (so builds stay incremental).
enum OutputWriter {
    /// Writes the files that changed, all or none: each is first written in full to a temporary
    /// file beside it, and only when every one is written are they renamed over the old files
    /// (a rename within a directory is atomic). A failure removes the temporary files, so a disk
    /// that fills up halfway leaves the old outputs as they were.
    static func write(_ files: [GeneratedFile], to directory: URL) throws {
        var staged: [(temporary: URL, final: URL)] = []
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            for file in files {
                let url = directory.appendingPathComponent(file.name)
                let bytes = file.bytes
                if FileManager.default.contents(atPath: url.path) == bytes { continue }
                let temporary = directory.appendingPathComponent(".\(file.name).modelgen-\(ProcessInfo.processInfo.processIdentifier)")
                staged.append((temporary, url))
                try bytes.write(to: temporary)
            }
            // A directory in a file's place would make its rename fail after others succeeded.
            for (_, final) in staged {
                var isDirectory: ObjCBool = false
                if FileManager.default.fileExists(atPath: final.path, isDirectory: &isDirectory), isDirectory.boolValue {
                    throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: final.path, NSLocalizedDescriptionKey: "'\(final.lastPathComponent)' is a directory"])
                }
            }
            for (temporary, final) in staged {
                guard rename(temporary.path, final.path) == 0 else {
                    throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: final.path, NSLocalizedDescriptionKey: String(cString: strerror(errno))])
                }
            }
        } catch {
            for (temporary, _) in staged { try? FileManager.default.removeItem(at: temporary) }
            printError("error: cannot write to '\(directory.path)': \(error.localizedDescription); no file was changed")
            throw ExitCode(ExitStatus.schemaError)
        }
    }
}

extension GeneratedFile {
    /// The text's UTF-8 bytes, copied part by part into one buffer of their exact size.
    var bytes: Data {
        var bytes = Data(capacity: byteCount)
        for var part in parts { part.withUTF8 { bytes.append($0) } }
        return bytes
    }
}
