import LedgerBackup
import Testing

/// The one rule for a backup's slot name, which `ledger backup --slot` checks and the
/// replication gate counts by.
@Suite("Backup slots")
struct BackupSlotTests {
    @Test("ledger_backup and ledger_backup_<name> are backups; anything else is refused")
    func names() {
        for name in ["ledger_backup", "ledger_backup_2", "ledger_backup_barman", "ledger_backup_a_b"] {
            #expect(BackupSlot.isBackup(name), "\(name)")
        }
        for name in [
            "", "ledger", "ledger_backups", "ledger_backupx", "Ledger_backup", "ledger_backup_Bar", "ledger_backup-2",
            "ledger_backup_é", "ledger_backup ", "patroni_node1", "ledger_backup_" + String(repeating: "a", count: 50),
        ] {
            #expect(!BackupSlot.isBackup(name), "\(name)")
        }
        #expect(BackupSlot.isBackup("ledger_backup_" + String(repeating: "a", count: 49)), "63 bytes, PostgreSQL's limit")
        #expect(BackupSlot.others == #"ledger_backup\_%"#, "the LIKE pattern escapes its _")
    }
}
