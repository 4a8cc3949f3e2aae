// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "ModelGen",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "modelgen", targets: ["modelgen"]),
        .library(name: "ModelGenCore", targets: ["ModelGenCore"]),
        .library(name: "ModelGenRuntime", targets: ["ModelGenRuntime"]),
        // The same generated models on PostgreSQL, async, over PostgresNIO: a product of its own,
        // so that apps on SQLite alone never build PostgresNIO.
        .library(name: "ModelGenPostgres", targets: ["ModelGenPostgres"]),
        .plugin(name: "ModelGenPlugin", targets: ["ModelGenPlugin"]),
        .plugin(name: "GenerateModelsCommand", targets: ["GenerateModelsCommand"]),
    ],
    dependencies: [
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.0.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.65.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.5.0"),
        // The benchmark's peer (modelgen-bench only): a SQLite toolkit Swift developers use.
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.0.0"),
    ],
    targets: [
        // The compiler: parse → resolve (validate) → plan → emit. Pure, no file I/O.
        // Yams is here for the libyaml it vendors (module CYaml): the YAML reader works on libyaml's
        // events directly, so the tool needs no system YAML library on any platform.
        .target(name: "ModelGenCore", dependencies: ["Yams", "ModelGenDeletion", "ModelGenProgram", "ModelGenQuery", "ModelGenSchema"]),
        // The executable form of deletion plans, shared by the generator and the runtime. No dependencies.
        .target(name: "ModelGenProgram"),
        // What the generator and the runtime both write as SQL: the dialects and the predicate
        // language (`#Predicate` and `--where` lower to it; one renderer per dialect). No dependencies.
        .target(name: "ModelGenQuery"),
        // The resolved schema model (Codable: its canonical JSON is stored in every database), its
        // DDL and the migration planner: what the generator and the runtime both need, without
        // the YAML parser.
        .target(name: "ModelGenSchema", dependencies: ["ModelGenQuery"]),
        // The deletion planner and its SQL (SPEC §3): the generator emits the plans, and the
        // PostgreSQL backend renders a store's deletion functions from its schema at run time.
        .target(name: "ModelGenDeletion", dependencies: ["ModelGenProgram", "ModelGenQuery", "ModelGenSchema"]),
        // The system SQLite library (Debian: libsqlite3-dev).
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite", providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]),
        // What generated code and the CLI run against: SQLite access and the deletion executor.
        .target(name: "ModelGenRuntime", dependencies: ["CSQLite", "ModelGenProgram", "ModelGenQuery", "ModelGenSchema"]),
        // The PostgreSQL backend of the generated models: an async container and context over a
        // `PostgresClient`.
        .target(
            name: "ModelGenPostgres",
            dependencies: [
                "ModelGenRuntime", "ModelGenDeletion", "ModelGenSchema", "ModelGenQuery",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            // A context's async methods run where their caller runs (a context is used from one
            // task and holds non-Sendable model objects), as the closures they hand to PostgresNIO.
            swiftSettings: [.enableUpcomingFeature("NonisolatedNonsendingByDefault")]
        ),
        // The command-line tool: all file I/O lives here.
        .executableTarget(
            name: "modelgen",
            dependencies: [
                "ModelGenCore",
                "ModelGenRuntime",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // Runs `modelgen generate --swift-only` on every Schemas/*.yaml of the target it is applied to.
        .plugin(name: "ModelGenPlugin", capability: .buildTool(), dependencies: ["modelgen"]),
        // `swift package generate-models`: the same files written into each target's Generated/ folder.
        .plugin(
            name: "GenerateModelsCommand",
            capability: .command(
                intent: .custom(verb: "generate-models", description: "Write the Swift files generated from each target's Schemas/*.yaml into its Generated/ folder"),
                permissions: [.writeToPackageDirectory(reason: "writes the generated model code into the target's Generated/ folder")]
            ),
            dependencies: ["modelgen"]
        ),
        // The FitIQ benchmark workload, shared by the benchmark and the tests.
        .target(name: "FitIQWorkload", path: "Benchmarks/FitIQWorkload"),
        // `swift run -c release modelgen-bench`: see BENCHMARKS.md.
        .executableTarget(
            name: "modelgen-bench",
            dependencies: ["ModelGenCore", "ModelGenRuntime", "FitIQWorkload", "CSQLite", .product(name: "GRDB", package: "GRDB.swift")],
            path: "Benchmarks/ModelGenBench",
            exclude: ["Schemas"],
            plugins: ["ModelGenPlugin"]
        ),
        // What the test targets share: the seeded generator of every seeded test (`SeededRandom`).
        .target(name: "ModelGenTestSupport", path: "Tests/ModelGenTestSupport"),
        // Compiles the plugin-generated code of the example schemas and runs the seeds' flows on SQLite.
        .testTarget(
            name: "GeneratedModelTests",
            dependencies: ["ModelGenRuntime", "ModelGenCore", "ModelGenPostgres", "ModelGenTestSupport", "CSQLite", .product(name: "PostgresNIO", package: "postgres-nio")],
            exclude: ["Schemas"],
            plugins: ["ModelGenPlugin"]
        ),
        // Entities named Date, Data, URL and Error, and keyword names, in a module of their own.
        .testTarget(
            name: "NameClashTests",
            dependencies: ["ModelGenRuntime"],
            exclude: ["Schemas"],
            plugins: ["ModelGenPlugin"]
        ),
        .testTarget(
            name: "ModelGenCoreTests",
            dependencies: ["ModelGenCore", "ModelGenRuntime", "ModelGenTestSupport", "FitIQWorkload", "CSQLite"],
            exclude: ["Golden", "Fixtures"]
        ),
    ]
)
