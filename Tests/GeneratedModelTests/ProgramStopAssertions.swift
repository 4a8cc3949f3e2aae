import Foundation
import XCTest

extension XCTestCase {
    /// Runs `body` in a child process of this test binary that runs only the calling test, and
    /// returns the child's exit status and what it wrote. The child knows `body` by `name` (an
    /// environment variable): there this runs `body` and ends the process, or, for another name,
    /// returns nil, and the caller returns too.
    func runInChildProcess(_ name: String, _ body: () throws -> Void) throws -> (status: Int32, output: String)? {
        let marker = "MODELGEN_TEST_CHILD"
        if let running = ProcessInfo.processInfo.environment[marker] {
            guard running == name else { return nil }
            try body()
            FileHandle.standardError.write(Data("returned without stopping\n".utf8))
            exit(0)
        }
        // XCTest names a test `Class.test` (Linux) or `-[Class test]`; the runner takes `Module.Class/test`.
        let testName = self.name.split(whereSeparator: { " .[]-".contains($0) }).last.map(String.init) ?? self.name
        let child = Process()
        child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        child.arguments = ["\(String(reflecting: type(of: self)))/\(testName)"]
        child.environment = ProcessInfo.processInfo.environment.merging([marker: name]) { $1 }
        let output = Pipe()
        child.standardOutput = output
        child.standardError = output
        try child.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        child.waitUntilExit()
        return (child.terminationStatus, text)
    }

    /// Asserts that `body` stops the program (a precondition failure) with a message containing
    /// `message` (run in a child process: the stop ends the process).
    func assertStopsTheProgram(saying message: String, file: StaticString = #filePath, line: UInt = #line, _ body: () throws -> Void) throws {
        guard let child = try runInChildProcess(message, body) else { return }
        XCTAssertFalse(child.output.contains("returned without stopping"), "the program went on", file: file, line: line)
        XCTAssertNotEqual(child.status, 0, "the child process ended normally", file: file, line: line)
        XCTAssertTrue(child.output.contains("Fatal error: " + message), "the stop does not say \"\(message)\":\n\(child.output)", file: file, line: line)
    }
}
