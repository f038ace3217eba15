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

    /// Whether `account` lies in the namespace of pseudonyms: it begins with `psn-` or `erased:`
    /// in any case (ASCII letters; nothing else folds to them). Authentication refuses such an
    /// account (401 `reserved_account`), so no token can pass for a subject's pseudonym or for
    /// the name reads give an erased one.
    public static func isReserved(_ account: String) -> Bool {
        let prefixes = [PersonalData.pseudonymPrefix, PersonalData.erasedPrefix]
        let head = account.utf8.prefix(prefixes.map(\.utf8.count).max() ?? 0).map { byte in
            (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte
        }
        return prefixes.contains { head.starts(with: $0.utf8) }
    }
}
