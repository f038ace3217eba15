/// The authenticated caller.
public struct Caller: Sendable, Equatable {
    public var account: String
    public var roles: Set<String>
    public var isAuditor: Bool { roles.contains("auditor") }
    /// May erase and export personal data (SPEC "Personal data and erasure").
    public var isPrivacyOfficer: Bool { roles.contains("privacy") }

    public init(account: String, roles: Set<String> = []) {
        self.account = account
        self.roles = roles
    }

    /// The operator at the command line (`ledger audit`): reads like an auditor.
    public static let operatorAuditor = Caller(account: "operator", roles: ["auditor"])
}
