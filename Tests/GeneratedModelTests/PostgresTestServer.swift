import Foundation
import ModelGenPostgres
import PostgresNIO
import XCTest

/// The PostgreSQL server of the tests (`MODELGEN_TEST_POSTGRES_URL`, which `.ci/run` sets), with a
/// schema of its own per test: a `PostgresClient` whose `search_path` is a new schema, dropped after.
enum PostgresTestServer {
    /// The server's address, or an `XCTSkip` saying how to run the test; in CI a missing server fails.
    static func configuration(searchPath: String? = nil, database: String? = nil) throws -> PostgresClient.Configuration {
        guard let text = ProcessInfo.processInfo.environment["MODELGEN_TEST_POSTGRES_URL"] else {
            if ProcessInfo.processInfo.environment["CI"] == "true" {
                XCTFail("CI=true but MODELGEN_TEST_POSTGRES_URL is not set: .ci/run must start PostgreSQL")
            }
            throw XCTSkip("no PostgreSQL server: set MODELGEN_TEST_POSTGRES_URL (as .ci/run does) to run this test")
        }
        guard let url = URLComponents(string: text), let host = url.host else { throw XCTSkip("MODELGEN_TEST_POSTGRES_URL is not a URL: \(text)") }
        let database = database ?? url.path.split(separator: "/").first.map(String.init)
        var configuration = PostgresClient.Configuration(host: host, port: url.port ?? 5432, username: url.user ?? "postgres", password: url.password, database: database, tls: .disable)
        if let searchPath { configuration.options.additionalStartupParameters = [("search_path", searchPath)] }
        return configuration
    }

    /// A database of the server whose collation is linguistic (ICU `en-US`, where "a" < "B"), as
    /// most installations' are; the server's default database may sort by code point.
    static let linguisticDatabase = "modelgen_test_linguistic"

    /// Runs `body` with a running client on a new, empty schema (its `search_path`), dropped after;
    /// in `linguisticDatabase` (created when missing) if `linguistic`.
    static func withClient<T>(linguistic: Bool = false, _ body: (PostgresClient) async throws -> T) async throws -> T {
        let schema = "mg_runtime_" + UUID().uuidString.prefix(8).lowercased()
        if linguistic { try await createLinguisticDatabase() }
        let database = linguistic ? linguisticDatabase : nil
        let admin = PostgresClient(configuration: try configuration(database: database))
        let client = PostgresClient(configuration: try configuration(searchPath: schema, database: database))
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await admin.run() }
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            _ = try await admin.query(PostgresQuery(unsafeSQL: "CREATE SCHEMA \(schema)")).collect()
            do {
                let result = try await body(client)
                _ = try await admin.query(PostgresQuery(unsafeSQL: "DROP SCHEMA \(schema) CASCADE")).collect()
                return result
            } catch {
                _ = try? await admin.query(PostgresQuery(unsafeSQL: "DROP SCHEMA \(schema) CASCADE")).collect()
                throw error
            }
        }
    }
}

extension PostgresTestServer {
    private static func createLinguisticDatabase() async throws {
        let admin = PostgresClient(configuration: try configuration())
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await admin.run() }
            defer { group.cancelAll() }
            guard try await admin.scalar("SELECT count(*) FROM pg_database WHERE datname = '\(linguisticDatabase)'") == 0 else { return }
            _ = try await admin.query(PostgresQuery(unsafeSQL: """
                CREATE DATABASE \(linguisticDatabase) TEMPLATE template0 ENCODING 'UTF8' LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'
                """)).collect()
        }
    }
}

extension PostgresClient {
    /// The first column of the first row, as an integer.
    func scalar(_ sql: String) async throws -> Int64 {
        for try await value in try await query(PostgresQuery(unsafeSQL: sql)).decode(Int64.self) { return value }
        return 0
    }
}

/// `XCTAssertEqual` for a value that is awaited.
func assertEqual<T: Equatable>(_ expression: @autoclosure () async throws -> T, _ expected: @autoclosure () throws -> T, _ message: String = "",
                               file: StaticString = #filePath, line: UInt = #line) async throws {
    let value = try await expression()
    XCTAssertEqual(value, try expected(), message, file: file, line: line)
}
