import Foundation
import PackagePlugin

/// Generates `<Base>+Models.swift`, `<Base>+Schema.swift` and `<Base>+Deletion.swift` for every
/// `*.yaml` file in the target's `Schemas/` folder, with the `modelgen` tool built from source.
/// A `Templates/Models.swift.mustache` in the target overrides the default template.
@main
struct ModelGenPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        guard let target = target as? SourceModuleTarget else { return [] }
        return try commands(targetDirectory: target.directoryURL, workDirectory: context.pluginWorkDirectoryURL,
                            tool: try context.tool(named: "modelgen").url)
    }

    /// One command per schema; every file the tool reads is an input, every file it writes an output.
    func commands(targetDirectory: URL, workDirectory: URL, tool: URL) throws -> [Command] {
        let schemasDirectory = targetDirectory.appendingPathComponent("Schemas")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: schemasDirectory.path)) ?? []
        let template = targetDirectory.appendingPathComponent("Templates/Models.swift.mustache")
        let hasTemplate = FileManager.default.fileExists(atPath: template.path)
        return names.filter { $0.hasSuffix(".yaml") }.sorted().map { name in
            let schema = schemasDirectory.appendingPathComponent(name)
            let base = String(name.dropLast(".yaml".count))
            let output = workDirectory.appendingPathComponent(base)
            var arguments = ["generate", schema.path, "--output", output.path, "--swift-only"]
            if hasTemplate { arguments += ["--templates", template.deletingLastPathComponent().path] }
            return .buildCommand(
                displayName: "modelgen \(name)",
                executable: tool,
                arguments: arguments,
                inputFiles: [schema] + (hasTemplate ? [template] : []),
                outputFiles: ["+Models.swift", "+Schema.swift", "+Deletion.swift"].map { output.appendingPathComponent(base + $0) }
            )
        }
    }
}

#if canImport(XcodeProjectPlugin)
import XcodeProjectPlugin

extension ModelGenPlugin: XcodeBuildToolPlugin {
    /// In an Xcode project the target's folder is where its files are; the convention is the same.
    func createBuildCommands(context: XcodePluginContext, target: XcodeTarget) throws -> [Command] {
        guard let directory = target.inputFiles.first(where: { $0.url.pathComponents.contains("Schemas") })?.url
            .deletingLastPathComponent().deletingLastPathComponent() else { return [] }
        return try commands(targetDirectory: directory, workDirectory: context.pluginWorkDirectoryURL,
                            tool: try context.tool(named: "modelgen").url)
    }
}
#endif
