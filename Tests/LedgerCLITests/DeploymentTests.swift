import Foundation
import LedgerConfiguration
import LedgerDomain
import LedgerPostgres
import LedgerStore
import LedgerTestSupport
import Testing

/// No Docker engine runs here, so the compose file is checked against the real CLI: every
/// service's command must be a `ledger` subcommand whose help lists each flag it passes.
@Suite("Deployment files")
struct DeploymentTests {
    /// `service name -> command` from the compose file's `command: [...]` lines.
    static func composeCommands() throws -> [String: [String]] {
        let text = try String(contentsOf: Repository.root.appendingPathComponent("docker-compose.yml"), encoding: .utf8)
        var result: [String: [String]] = [:]
        var service: String?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("  "), !line.hasPrefix("   "), line.hasSuffix(":") {
                service = String(line.dropFirst(2).dropLast())
            } else if !line.hasPrefix(" ") {
                service = nil
            } else if let service, let range = line.range(of: "command: [") {
                let list = line[range.upperBound...].dropLast()  // without the closing bracket
                result[service] = list.split(separator: ",").map {
                    $0.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                }
            }
        }
        return result
    }

    /// docker-compose.yml: migrate, api, two projectors, two verifiers, a delivery worker, a
    /// checkpointer, one image, each a real ledger subcommand with real flags; migrations as the
    /// owner, services as ledger_app, the token key wherever a role needs it.
    @Test("docker-compose.yml runs real ledger subcommands with real flags, each role with its login")
    func composeMatchesCLI() async throws {
        let commands = try Self.composeCommands()
        let roles = commands.values.compactMap { $0.count > 1 ? $0[1] : nil }
        #expect(roles.filter { $0 == "migrate" }.count == 1)
        #expect(roles.filter { $0 == "api" }.count == 1)
        #expect(roles.filter { $0 == "project" }.count == 2)
        #expect(roles.filter { $0 == "verifier" }.count == 2)
        #expect(roles.filter { $0 == "checkpointer" }.count == 1)
        #expect(roles.filter { $0 == "deliver" }.count == 1)
        let binary = ledgerBinary()
        try #require(FileManager.default.isExecutableFile(atPath: binary), "build the ledger executable first: \(binary)")
        for (service, command) in commands {
            #expect(command.first == "ledger", "\(service)")
            let help = try await ProcessRunner.check(binary, [command[1], "--help"])
            for flag in command.dropFirst(2) where flag.hasPrefix("--") {
                #expect(help.contains(flag), "\(service): `ledger \(command[1])` has no \(flag)")
            }
        }
        let compose = try String(contentsOf: Repository.root.appendingPathComponent("docker-compose.yml"), encoding: .utf8)
        #expect(compose.contains("LEDGER_DATABASE_URL") && compose.contains("healthcheck"))
        // The roles that refuse to start without the deployment's token key have it.
        let needKey = roles.filter { ["api", "project", "verifier", "deliver"].contains($0) }.count
        #expect(compose.components(separatedBy: "LEDGER_JWT_SECRET: ${LEDGER_JWT_SECRET").count - 1 == needKey)
        // One named image for every role.
        #expect(compose.components(separatedBy: "image: participant-ledger\n").count - 1 == commands.count)
        // Least privilege: exactly one service (migrate) connects as the owner.
        #expect(compose.components(separatedBy: "postgres://ledger:").count - 1 == 1)
        #expect(compose.components(separatedBy: "LEDGER_DATABASE_URL: postgres://ledger_app:").count - 1 == commands.count - 1)
        // The API reads from the hot standby, which streams from the primary.
        #expect(compose.contains("LEDGER_READ_DATABASE_URL: postgres://ledger_app:") && compose.contains("postgres-standby:"))
        let standby = try String(contentsOf: Repository.root.appendingPathComponent("deploy/postgres/standby.sh"), encoding: .utf8)
        #expect(standby.contains("pg_basebackup") && standby.contains(" -R "))
        #expect(compose.contains("LEDGER_SIGNING_KEY_FILE") && compose.contains("deploy/postgres/ledger-roles.sh"))
        let dockerfile = try String(contentsOf: Repository.root.appendingPathComponent("Dockerfile"), encoding: .utf8)
        #expect(dockerfile.contains("--product ledger"))
    }
}
