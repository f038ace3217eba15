import Foundation

extension EmbeddedPostgres {
    /// A cluster whose owner's password file is gone (a data folder restored without its secrets):
    /// a new password would not be the cluster's, and its login would be refused.
    public struct MissingPassword: Error, CustomStringConvertible {
        /// The password file that is missing, and the cluster it is the owner's password of.
        public let file: String
        public let cluster: String

        public var description: String {
            "\(file) is missing: the embedded PostgreSQL in \(cluster) takes its owner's password from it"
        }
    }

    /// Throws `MissingPassword` where the cluster exists but its password file does not (a new
    /// one is made only with a new cluster).
    func checkPasswordKept() throws {
        let fm = FileManager.default
        if fm.fileExists(atPath: clusterPath + "/PG_VERSION"), !fm.fileExists(atPath: passwordPath) {
            throw MissingPassword(file: passwordPath, cluster: clusterPath)
        }
    }

    /// The first login, which also makes the database if missing. Refused, it says which password
    /// file the login came from; a server this instance started for it is stopped again.
    func logIn(_ settings: DatabaseSettings) async throws {
        do {
            try await DatabaseFailure.explaining(
                "starting the embedded PostgreSQL in \(clusterPath)", on: settings.with(database: "postgres"),
                passwordSource: "the password file \(passwordPath)"
            ) { try await ensureDatabase(settings) }
        } catch {
            try? await stop()
            throw error
        }
    }
}
