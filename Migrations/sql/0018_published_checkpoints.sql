-- Published checkpoints (SPEC "Public verification: tiles and witnesses"). The checkpointer
-- signs every tree it builds (ledger_checkpoints); a checkpoint is published, and only then
-- served anywhere (/tlog/checkpoint, /v1/log/checkpoint, evidence), once the witness policy's
-- quorum has cosigned it, with their cosignatures in its note. Without a policy it is
-- published as it is signed. Append-only, as the log.
CREATE TABLE ledger_published_checkpoints (
    tree_size     bigint      PRIMARY KEY REFERENCES ledger_checkpoints (tree_size),
    note          text        NOT NULL,
    published_at  timestamptz NOT NULL DEFAULT now()
);
INSERT INTO ledger_published_checkpoints (tree_size, note, published_at)
SELECT tree_size, note, signed_at FROM ledger_checkpoints;

CREATE TRIGGER ledger_published_checkpoints_no_update BEFORE UPDATE ON ledger_published_checkpoints
    FOR EACH ROW EXECUTE FUNCTION ledger_refuse_change();
CREATE TRIGGER ledger_published_checkpoints_no_delete BEFORE DELETE ON ledger_published_checkpoints
    FOR EACH ROW EXECUTE FUNCTION ledger_refuse_change();
CREATE TRIGGER ledger_published_checkpoints_no_truncate BEFORE TRUNCATE ON ledger_published_checkpoints
    FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse_change();
GRANT SELECT, INSERT ON ledger_published_checkpoints TO ledger_service;
REVOKE UPDATE, DELETE, TRUNCATE ON ledger_published_checkpoints FROM ledger_service;
