/// A backup's physical replication slot, by name: `ledger_backup`, or `ledger_backup_<name>` for
/// more than one backup. The checkpointer's replication gate knows a backup by its slot's name,
/// whatever the replication mode (`ReplicationGate`), and a backup's WAL receiver by its
/// application name, so both rules are written here once. Deployments name theirs the same way
/// (Barman's `ledger_backup_barman`, deploy/).
public enum BackupSlot {
    /// The default slot, and the prefix (followed by `_`) of every other.
    public static let prefix = "ledger_backup"
    /// `prefix` and its followers as a SQL `LIKE` pattern (`_` escaped).
    public static let others = prefix + "\\_%"
    /// The application name a backup's WAL receiver connects with (`WALArchive`).
    public static let applicationName = prefix

    /// Whether `name` is a backup's slot: `prefix`, or `prefix_` and lower-case letters, digits or
    /// `_`, at most 63 bytes (PostgreSQL's limit for a slot's name).
    public static func isBackup(_ name: String) -> Bool {
        name.count <= 63 && name.allSatisfy { $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "_") }
            && (name == prefix || name.hasPrefix(prefix + "_"))
    }
}
