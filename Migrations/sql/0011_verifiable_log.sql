-- The verifiable log (SPEC "Verifiable log"): a Merkle tree over the events (RFC 9162 §2.1)
-- and the signed checkpoints of its roots, both append-only; and least privilege: the
-- services connect as members of ledger_service, which can read the log and append to it
-- only through the functions that keep the chain, never update, delete or truncate it.

-- An event's canonical bytes: the tree's leaf data and, after the previous hash, the chain's
-- input. Must match LedgerDomain.EventLeaf (the store tests compare the two).
CREATE FUNCTION ledger_leaf(
    p_position int8, p_stream text, p_version int8, p_id uuid, p_type text, p_data text, p_metadata text,
    p_recorded_at timestamptz)
RETURNS bytea LANGUAGE sql STABLE STRICT AS $$
    SELECT int8send(p_position) || ledger_str(p_stream) || int8send(p_version) || uuid_send(p_id) || ledger_str(p_type)
        || ledger_str(p_data) || ledger_str(p_metadata) || int8send((extract(epoch FROM p_recorded_at) * 1000000)::int8)
$$;

-- Full, aligned subtrees: node (level, index) is the hash of leaves
-- [index * 2^level, (index + 1) * 2^level), for levels 1 and up. Written by the checkpointer
-- as the log grows. Every hash a proof needs is a run of these
-- (LedgerDomain.MerkleTree.nodes(covering:)), so a proof is one lookup of O(log n) rows.
-- Level 0, the leaf hashes, is not stored: a leaf hash is a function of its event row
-- (SHA256(0x00 || ledger_leaf(...))), computed when a proof needs one. Storing it doubled
-- the rows the checkpointer writes (bench proofs: the inserts were 3/4 of a backfill).
-- The tree holds 2 x (number of level-1 rows) events, give or take a last odd one.
CREATE TABLE ledger_tree_nodes (
    level  smallint NOT NULL CHECK (level >= 1 AND level < 63),
    index  bigint   NOT NULL CHECK (index >= 0),
    hash   bytea    NOT NULL CHECK (octet_length(hash) = 32),
    PRIMARY KEY (level, index)
);

-- Every signed checkpoint (C2SP tlog-checkpoint), one per tree size.
CREATE TABLE ledger_checkpoints (
    tree_size  bigint      PRIMARY KEY CHECK (tree_size >= 0),
    root_hash  bytea       NOT NULL CHECK (octet_length(root_hash) = 32),
    note       text        NOT NULL,
    signed_at  timestamptz NOT NULL DEFAULT now()
);

CREATE OR REPLACE FUNCTION ledger_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$;

CREATE TRIGGER ledger_tree_nodes_no_update BEFORE UPDATE ON ledger_tree_nodes
    FOR EACH ROW EXECUTE FUNCTION ledger_refuse_change();
CREATE TRIGGER ledger_tree_nodes_no_delete BEFORE DELETE ON ledger_tree_nodes
    FOR EACH ROW EXECUTE FUNCTION ledger_refuse_change();
CREATE TRIGGER ledger_tree_nodes_no_truncate BEFORE TRUNCATE ON ledger_tree_nodes
    FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse_change();
CREATE TRIGGER ledger_checkpoints_no_update BEFORE UPDATE ON ledger_checkpoints
    FOR EACH ROW EXECUTE FUNCTION ledger_refuse_change();
CREATE TRIGGER ledger_checkpoints_no_delete BEFORE DELETE ON ledger_checkpoints
    FOR EACH ROW EXECUTE FUNCTION ledger_refuse_change();
CREATE TRIGGER ledger_checkpoints_no_truncate BEFORE TRUNCATE ON ledger_checkpoints
    FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse_change();

-- The serving role. A group role without login: deployments make their services' login
-- roles members of it (`ledger serve`'s embedded cluster creates ledger_app). Creating it
-- needs CREATEROLE; where the migrating role lacks that, an administrator creates it first.
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'ledger_service') THEN
        CREATE ROLE ledger_service NOLOGIN;
    END IF;
END;
$$;

-- Reads everywhere; writes to the working tables (challenges, proof requests, projections),
-- including those the owner creates later (a projection rebuild's fresh copies).
GRANT USAGE ON SCHEMA public TO ledger_service;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ledger_service;
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO ledger_service;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO ledger_service;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO ledger_service;

-- The log itself: read only. Appends go through the functions below, which run as the owner.
REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON ledger_events, ledger_head, ledger_streams, ledger_migrations FROM ledger_service;
-- The tree and the checkpoints: the checkpointer adds to them; nothing changes them.
REVOKE UPDATE, DELETE, TRUNCATE ON ledger_tree_nodes, ledger_checkpoints FROM ledger_service;

-- The append functions run with the owner's rights (the procedures that call them commit, so
-- they cannot be SECURITY DEFINER themselves), on this schema whatever the caller's path.
ALTER FUNCTION ledger_append(text[], int8[], text[], int[], uuid[], text[], text[], text[])
    SECURITY DEFINER SET search_path FROM CURRENT;
ALTER FUNCTION ledger_append_plan(text[], int8[], int[], uuid[])
    SECURITY DEFINER SET search_path FROM CURRENT;
ALTER FUNCTION ledger_append_write(int8[], text[], int8[], uuid[], text[], text[], text[], bytea[], int8, text[], int8[], text[], int8[])
    SECURITY DEFINER SET search_path FROM CURRENT;

-- The verifier keys the checkpointer has signed with (it adds its own when it starts), so
-- `GET /v1/log/key` can answer in every role without the signing key. Auditors take the
-- key from here once, or from the operator, and keep it: a key found here later proves
-- nothing by itself.
CREATE TABLE ledger_log_keys (
    verifier_key  text        PRIMARY KEY,
    added_at      timestamptz NOT NULL DEFAULT now()
);
REVOKE UPDATE, DELETE, TRUNCATE ON ledger_log_keys FROM ledger_service;
