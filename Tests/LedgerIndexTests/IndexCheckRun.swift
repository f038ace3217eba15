import Foundation
import LedgerIndex

/// Runs `scripts/index-check` with `python3` and answers its exit status and everything it
/// printed (standard output and error, interleaved).
enum IndexCheckRun {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/index-check")

    /// The script on `leaves` (the base64 of each then a newline: an empty leaf is an empty line)
    /// and `roots` ("N ROOT" lines). With `withoutCScanner`, Python runs it with its C JSON module
    /// blocked, so `json` falls back on its pure-Python scanner.
    static func run(leaves: [[UInt8]], roots: [(Int, Hash256)], withoutCScanner: Bool = false) async throws -> (
        status: Int32, output: String
    ) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("index-check-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (leavesFile, rootsFile) = (folder.appendingPathComponent("leaves"), folder.appendingPathComponent("roots"))
        try leaves.map { Data($0).base64EncodedString() + "\n" }.joined().write(to: leavesFile, atomically: true, encoding: .utf8)
        try roots.map { "\($0.0) \($0.1.base64)\n" }.joined().write(to: rootsFile, atomically: true, encoding: .utf8)
        guard withoutCScanner else { return try await run([script.path, leavesFile.path, rootsFile.path]) }
        let blocked =
            "import runpy, sys; sys.modules['_json'] = None; sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')"
        return try await run(["-c", blocked, script.path, leavesFile.path, rootsFile.path])
    }

    /// `python3` with `arguments`.
    static func run(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        let outputFile = FileManager.default.temporaryDirectory.appendingPathComponent("index-check-\(UUID().uuidString).out")
        _ = FileManager.default.createFile(atPath: outputFile.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: outputFile) }
        let output = try FileHandle(forWritingTo: outputFile)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3"] + arguments
        process.standardOutput = output
        process.standardError = output
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do { try process.run() } catch { continuation.resume(throwing: error) }
        }
        try output.close()
        return (status, try String(contentsOf: outputFile, encoding: .utf8))
    }
}
