import Foundation
import XCTest

extension XCTestCase {
    /// Asserts that `body` stops the program (a precondition failure) with a message containing
    /// `message`. The stop would end the test process, so `body` runs in a child process of this
    /// test binary that runs only the calling test; the child knows it by an environment variable
    /// naming the assertion, and there runs `body` and, should it return, ends normally.
    func assertStopsTheProgram(saying message: String, file: StaticString = #filePath, line: UInt = #line, _ body: () throws -> Void) throws {
        let marker = "MODELGEN_TEST_CHILD_STOP"
        if let running = ProcessInfo.processInfo.environment[marker] {
            guard running == message else { return }
            try body()
            FileHandle.standardError.write(Data("returned without stopping\n".utf8))
            exit(0)
        }
        // XCTest names a test `Class.test` (Linux) or `-[Class test]`; the runner takes `Module.Class/test`.
        let testName = name.split(whereSeparator: { " .[]-".contains($0) }).last.map(String.init) ?? name
        let child = Process()
        child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        child.arguments = ["\(String(reflecting: type(of: self)))/\(testName)"]
        child.environment = ProcessInfo.processInfo.environment.merging([marker: message]) { $1 }
        let output = Pipe()
        child.standardOutput = output
        child.standardError = output
        try child.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        child.waitUntilExit()
        XCTAssertFalse(text.contains("returned without stopping"), "the program went on", file: file, line: line)
        XCTAssertNotEqual(child.terminationStatus, 0, "the child process ended normally", file: file, line: line)
        XCTAssertTrue(text.contains("Fatal error: " + message), "the stop does not say \"\(message)\":\n\(text)", file: file, line: line)
    }
}
