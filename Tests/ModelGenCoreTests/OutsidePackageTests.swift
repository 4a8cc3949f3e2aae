import Foundation
import XCTest

/// ModelGen as an app uses it: a package of its own (`Fixtures/OutsidePackage`) that depends on
/// this one by path, applies the build plugin to a target holding two schemas of its own, links
/// both runtime products, and runs the same model code on SQLite and on PostgreSQL (only the
/// container and the `await`s differ). Both backends must print the same lines.
///
/// The package is built in `.build/outside-package` of this repository, so a second run is an
/// incremental build; the first (every CI run) builds PostgresNIO and its dependencies once more,
/// which takes several minutes.
final class OutsidePackageTests: XCTestCase {
    func testAnOutsidePackageGeneratesItsModelsWithThePluginAndRunsThemOnBothBackends() throws {
        let url = try PostgresServer.requireURL()
        let package = TestSupport.repositoryRoot.appendingPathComponent(".build/outside-package")
        let sources = package.appendingPathComponent("Sources")
        try? FileManager.default.removeItem(at: sources)
        try FileManager.default.createDirectory(at: package, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: TestSupport.fixturesDirectory.appendingPathComponent("OutsidePackage/Sources"), to: sources)
        // `package:` names the dependency by the last component of its path: the folder this
        // repository was cloned into.
        let identity = TestSupport.repositoryRoot.lastPathComponent
        let manifest = """
            // swift-tools-version:6.1
            import PackageDescription

            let package = Package(
                name: "ShopApp",
                platforms: [.macOS(.v14)],
                dependencies: [.package(path: \(literal(TestSupport.repositoryRoot.path)))],
                targets: [
                    .executableTarget(
                        name: "ShopApp",
                        dependencies: [
                            .product(name: "ModelGenRuntime", package: \(literal(identity))),
                            .product(name: "ModelGenPostgres", package: \(literal(identity))),
                        ],
                        exclude: ["Schemas"],
                        plugins: [.plugin(name: "ModelGenPlugin", package: \(literal(identity)))]
                    ),
                ]
            )

            """
        try manifest.write(to: package.appendingPathComponent("Package.swift"), atomically: true, encoding: .utf8)

        let build = try TestSupport.run(URL(fileURLWithPath: "/usr/bin/env"), ["swift", "build", "--package-path", package.path])
        XCTAssertEqual(build.status, 0, "the outside package did not build:\n" + String((build.standardOutput + build.standardError).suffix(4_000)))
        guard build.status == 0 else { return }
        let generated = package.appendingPathComponent(".build/plugins/outputs")
        let files = FileManager.default.enumerator(at: generated, includingPropertiesForKeys: nil)?.compactMap { ($0 as? URL)?.lastPathComponent } ?? []
        XCTAssertEqual(Set(files.filter { $0.hasSuffix(".swift") }), [
            "Shop+Models.swift", "Shop+Schema.swift", "Shop+Deletion.swift", "Notes+Models.swift", "Notes+Schema.swift", "Notes+Deletion.swift",
        ], "the plugin generates three files per schema")

        let run = try TestSupport.run(package.appendingPathComponent(".build/debug/ShopApp"), [], environment: ["MODELGEN_TEST_POSTGRES_URL": url])
        XCTAssertEqual(run.status, 0, run.standardError)
        let lines = run.standardOutput.split(separator: "\n").map(String.init)
        let sqlite = lines.filter { $0.hasPrefix("sqlite: ") }.map { $0.dropFirst("sqlite: ".count) }
        let postgresql = lines.filter { $0.hasPrefix("postgresql: ") }.map { $0.dropFirst("postgresql: ".count) }
        XCTAssertEqual(sqlite, [
            #"open orders: ["19.99 6BA7B810-9DAD-11D1-80B4-00C04FD430C8 ann@example.com 1700000000.25"]"#,
            "deleting products refused: 1 blocker",
            "orders left: 0, products left: 1",
            "folders left: 0, notes left: 0",
        ], run.standardOutput)
        XCTAssertEqual(postgresql, sqlite, "the same model code printed something else on PostgreSQL")
    }

    /// `text` as a Swift string literal.
    private func literal(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}
