import Foundation
import PackagePlugin

/// `swift package generate-models [--target NAME …]`: writes the Swift files for every
/// `Schemas/*.yaml` of the package's targets into the target's `Generated/` folder, for teams
/// that commit generated code instead of using the build plugin.
@main
struct GenerateModelsCommand: CommandPlugin {
    func performCommand(context: PluginContext, arguments: [String]) async throws {
        var extractor = ArgumentExtractor(arguments)
        let selected = extractor.extractOption(named: "target")
        let known = context.package.targets.map(\.name)
        for name in selected where !known.contains(name) {
            throw GenerateModelsError(message: "no target named '\(name)' in package '\(context.package.displayName)'; its targets are \(known.sorted().joined(separator: ", "))")
        }
        let tool = try context.tool(named: "modelgen").url
        var generated = 0
        for target in context.package.targets where selected.isEmpty || selected.contains(target.name) {
            guard let target = target as? SourceModuleTarget else { continue }
            let schemas = target.directoryURL.appendingPathComponent("Schemas")
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: schemas.path)) ?? []).filter { $0.hasSuffix(".yaml") }.sorted()
            for name in names {
                let process = Process()
                process.executableURL = tool
                process.arguments = ["generate", schemas.appendingPathComponent(name).path,
                                     "--output", target.directoryURL.appendingPathComponent("Generated").path, "--swift-only"]
                try process.run()
                process.waitUntilExit()
                guard process.terminationStatus == 0 else {
                    throw GenerateModelsError(message: "modelgen failed on \(target.name)/Schemas/\(name) (its diagnostics are above)")
                }
                print("Generated \(target.name)/Generated/ from Schemas/\(name)")
                generated += 1
            }
            if !names.isEmpty {
                // PackagePlugin does not say which plugins a target applies, so this is a note, not a check.
                print("note: if target '\(target.name)' also applies the ModelGenPlugin build plugin, remove the plugin (or Generated/): both produce these files, and the build fails with 'multiple producers'")
            }
        }
        if generated == 0 {
            throw GenerateModelsError(message: "no schema found: put *.yaml files in a Schemas/ folder of \(selected.isEmpty ? "a target" : "target \(selected.joined(separator: ", "))")")
        }
    }
}

struct GenerateModelsError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
