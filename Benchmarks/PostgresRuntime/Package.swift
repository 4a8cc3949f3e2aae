// swift-tools-version:6.1
// The runtime on PostgreSQL beside raw PostgresNIO and Fluent (issue 14; BENCHMARKS.md). A package
// of its own so that ModelGen's build and CI never compile Fluent (about 8 minutes on 2 cores):
//
//   cd Benchmarks/PostgresRuntime && swift run -c release postgres-runtime-bench --postgres URL [--sizes 10000,100000] [--repetitions 3]
import Foundation
import PackageDescription

// ModelGen is this repository; SwiftPM names a path dependency by its folder's name.
let modelGen = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardizedFileURL.lastPathComponent

let package = Package(
    name: "PostgresRuntime",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(path: "../.."),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.0"),
        .package(url: "https://github.com/vapor/fluent-kit.git", from: "1.52.0"),
        .package(url: "https://github.com/vapor/fluent-postgres-driver.git", from: "2.14.0"),
    ],
    targets: [
        .executableTarget(
            name: "postgres-runtime-bench",
            dependencies: [
                .product(name: "ModelGenPostgres", package: modelGen),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "FluentKit", package: "fluent-kit"),
                .product(name: "FluentPostgresDriver", package: "fluent-postgres-driver"),
            ],
            exclude: ["Schemas"],
            plugins: [.plugin(name: "ModelGenPlugin", package: modelGen)]
        ),
    ]
)
