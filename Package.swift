// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "ModelGen",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "modelgen", targets: ["modelgen"]),
        .library(name: "ModelGenCore", targets: ["ModelGenCore"]),
        .library(name: "ModelGenRuntime", targets: ["ModelGenRuntime"]),
    ],
    dependencies: [
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.0.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
    ],
    targets: [
        // The compiler: parse → resolve (validate) → plan → emit. Pure, no file I/O.
        .target(name: "ModelGenCore", dependencies: ["Yams", "ModelGenProgram"]),
        // The executable form of deletion plans, shared by the generator and the runtime. No dependencies.
        .target(name: "ModelGenProgram"),
        // The system SQLite library (Debian: libsqlite3-dev).
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite", providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]),
        // What generated code and the CLI run against: SQLite access and the deletion executor.
        .target(name: "ModelGenRuntime", dependencies: ["CSQLite", "ModelGenProgram"]),
        // The command-line tool: all file I/O lives here.
        .executableTarget(
            name: "modelgen",
            dependencies: [
                "ModelGenCore",
                "ModelGenRuntime",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(
            name: "ModelGenCoreTests",
            dependencies: ["ModelGenCore", "ModelGenRuntime", "modelgen"],
            exclude: ["Golden", "Fixtures"]
        ),
    ]
)
