import Foundation
import ModelGenCore

/// Times `validate` (parse and resolve) and `generate` (every output, in memory) on synthetic
/// schemas: entities of 8 attributes and 2 relationships each (a cascading to-many `children` and
/// its inverse `parent`), in groups of 10 whose cascades form a chain closed into a cycle.
enum GeneratorBenchmark {
    /// One run of each stage of `generate` on the largest schema, to show where the time goes.
    static func printStages(entities: Int) {
        let bytes = Array(schema(entities: entities).utf8)
        var start = DispatchTime.now()
        guard let model = ModelGen.load(path: "Synthetic.yaml", bytes: bytes).0 else { return }
        var stages: [(String, Double)] = [("parse + resolve", Measure.elapsed(since: start))]
        func time(_ name: String, _ work: () throws -> String) rethrows {
            start = DispatchTime.now()
            _ = try work()
            stages.append((name, Measure.elapsed(since: start)))
        }
        var plans: [DeletionPlan] = []
        time("deletion plans") {
            plans = DeletionPlanner(schema: model).plans()
            return ""
        }
        var sqliteDDL = ""
        time("SQLite DDL") {
            sqliteDDL = DDLGenerator(schema: model, dialect: .sqlite).render(header: "")
            return sqliteDDL
        }
        var postgresDDL = ""
        time("PostgreSQL DDL") {
            postgresDDL = DDLGenerator(schema: model, dialect: .postgresql).render(header: "")
            return postgresDDL
        }
        time("PostgreSQL functions") { PostgreSQLDeletionFunctions(schema: model, plans: plans).functions().joined(separator: "\n\n") }
        time("+Models.swift") { SwiftModelsEmitter(schema: model, sourceFile: "Synthetic.yaml").render(header: "") }
        time("+Schema.swift") { SwiftSchemaEmitter(schema: model, sourceFile: "Synthetic.yaml").render(header: "", sqliteDDL: sqliteDDL, postgreSQLTables: postgresDDL) }
        time("+Deletion.swift") { SwiftDeletionEmitter(schema: model, plans: plans, sourceFile: "Synthetic.yaml").render(header: "") }
        print("stages at \(entities) entities: " + stages.map { "\($0.0) \(format($0.1)) s" }.joined(separator: ", "))
    }

    static func schema(entities count: Int) -> String {
        var yaml = "schema: Synthetic\nentities:\n"
        for index in 0..<count {
            let groupStart = index - index % 10
            let next = index + 1 < min(groupStart + 10, count) ? index + 1 : groupStart
            let previous = index == groupStart ? min(groupStart + 9, count - 1) : index - 1
            yaml += """
              E\(index):
                attributes:
                  name: String
                  code: { type: String, unique: true }
                  count: Int
                  amount: Double?
                  flag: { type: Bool, default: false }
                  createdAt: Date
                  token: UUID?
                  note: { type: String, indexed: true }
                relationships:
                  children: { type: [E\(next)], inverse: parent, deleteRule: cascade }
                  parent: { type: E\(previous)?, inverse: children }

            """
        }
        return yaml
    }

    static func run(sizes: [Int], repetitions: Int) {
        print("\nGenerator (release build recommended): median of \(repetitions) runs (\(3 * repetitions) below 10,000 entities, where one run is short and noise weighs more), the sizes interleaved in every repetition, in process, outputs kept in memory")
        print(pad(["entities", "YAML bytes", "validate s", "generate s", "output bytes"], [9, 11, 11, 11, 13]))
        let inputs = sizes.map { Array(schema(entities: $0).utf8) }
        var validate = [[Double]](repeating: [], count: sizes.count), generate = validate
        var outputBytes = [Int](repeating: 0, count: sizes.count)
        // Every repetition runs every size, so that a slow spell of the machine weighs on all sizes
        // alike and the 10,000 / 1,000 ratio compares like with like.
        for _ in 0..<repetitions {
            for (index, size) in sizes.enumerated() {
                for _ in 0..<(size < 10_000 ? 3 : 1) {
                    var start = DispatchTime.now()
                    let (loaded, diagnostics) = ModelGen.load(path: "Synthetic.yaml", bytes: inputs[index])
                    validate[index].append(Measure.elapsed(since: start))
                    precondition(loaded != nil, "the synthetic schema must be valid: \(diagnostics.prefix(3))")
                    start = DispatchTime.now()
                    let compilation = ModelGen.generate(path: "Synthetic.yaml", bytes: inputs[index])
                    generate[index].append(Measure.elapsed(since: start))
                    precondition(!compilation.hasErrors)
                    outputBytes[index] = compilation.files.reduce(0) { $0 + $1.byteCount }
                }
            }
        }
        var generateTimes: [Int: Double] = [:]
        for (index, size) in sizes.enumerated() {
            generateTimes[size] = median(generate[index])
            print(pad([String(size), String(inputs[index].count), format(median(validate[index])), format(median(generate[index])), String(outputBytes[index])], [9, 11, 11, 11, 13]))
        }
        if let size = sizes.max() {
            printStages(entities: size)
        }
        if let large = generateTimes[10_000], let medium = generateTimes[1_000] {
            print("generate 10,000 / 1,000 entities: \(format(large / medium))×")
        }
    }
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
}

func format(_ value: Double) -> String { String(format: "%.3f", value) }

func pad(_ cells: [String], _ widths: [Int]) -> String {
    zip(cells, widths).map { $0.padding(toLength: max($1, $0.count), withPad: " ", startingAt: 0) }.joined(separator: " ")
}
