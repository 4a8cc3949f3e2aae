import ArgumentParser
import ModelGenCore

struct PlanCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plan",
        abstract: "Print the deletion plan of each entity and the schema's delete hazards."
    )

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text, json, mermaid
    }

    @Argument(help: "The schema file (YAML).")
    var schema: String

    @Option(help: "Only this entity's plan.")
    var entity: String?

    @Option(help: "text, json or mermaid (a flowchart of the relationships and their rules).")
    var format: Format = .text

    func run() throws {
        let model = try SchemaInput.load(schema)
        let names = try entity.map { [try SchemaInput.entity(named: $0, in: model).name] } ?? model.entities.map(\.name)
        let description = DeletionPlanDescription(schema: model)
        switch format {
        case .text: print(description.text(entities: names), terminator: "")
        case .json: print(description.json(entities: names), terminator: "")
        case .mermaid: print(description.mermaid(), terminator: "")
        }
    }
}
