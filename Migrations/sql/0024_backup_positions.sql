-- How far each backup's WAL receiver had flushed, as the checkpointer last saw it (SPEC "Backups
-- and recovery"). Written on the primary, so it replicates: after a failover the new leader
-- knows how far the backup got, even where its slot had to be made afresh at the new leader's
-- WAL position (Patroni keeps permanent physical slots on the leader only). The replication
-- gate never counts a backup whose receiver is away past this position; a recorded backup whose
-- slot is gone holds checkpoints until `ledger backup --drop-slot` (or the operator) deletes
-- its row.
CREATE TABLE ledger_backup_positions (
    slot_name   text        PRIMARY KEY,
    flushed     int8        NOT NULL,
    updated_at  timestamptz NOT NULL DEFAULT now()
);

GRANT SELECT, INSERT, UPDATE ON ledger_backup_positions TO ledger_service;
