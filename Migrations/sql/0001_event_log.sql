-- The append-only event log: the only source of truth.
CREATE TABLE ledger_events (
    position     bigint      PRIMARY KEY,
    stream_id    text        NOT NULL,
    version      bigint      NOT NULL CHECK (version >= 1),
    event_id     uuid        NOT NULL UNIQUE,
    event_type   text        NOT NULL,
    -- json (not jsonb) keeps the exact bytes that the hash covers.
    data         json        NOT NULL,
    metadata     json        NOT NULL,
    recorded_at  timestamptz NOT NULL,
    hash         bytea       NOT NULL CHECK (octet_length(hash) = 32),
    UNIQUE (stream_id, version)
);

-- Current version of each stream, plus the writer's inline state snapshot (decisions are
-- taken on this, updated in the same transaction as the append).
CREATE TABLE ledger_streams (
    stream_id  text   PRIMARY KEY,
    version    bigint NOT NULL,
    state      json,
    position   bigint NOT NULL
);

-- The head of the log. Appenders lock this single row, which serialises commits in
-- position order: no reader can see position N+1 before N is visible.
CREATE TABLE ledger_head (
    id        boolean PRIMARY KEY DEFAULT true CHECK (id),
    position  bigint  NOT NULL,
    hash      bytea   NOT NULL
);
INSERT INTO ledger_head (id, position, hash) VALUES (true, 0, decode(repeat('00', 32), 'hex'));

-- Append-only, enforced by the database for every role.
CREATE FUNCTION ledger_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'ledger_events is append-only: % refused', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$;

CREATE TRIGGER ledger_events_no_update BEFORE UPDATE ON ledger_events
    FOR EACH ROW EXECUTE FUNCTION ledger_refuse_change();
CREATE TRIGGER ledger_events_no_delete BEFORE DELETE ON ledger_events
    FOR EACH ROW EXECUTE FUNCTION ledger_refuse_change();
CREATE TRIGGER ledger_events_no_truncate BEFORE TRUNCATE ON ledger_events
    FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse_change();

-- Wake readers when events commit (NOTIFY is delivered on commit only).
CREATE FUNCTION ledger_notify_append() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('ledger_events', (SELECT max(position) FROM new_rows)::text);
    RETURN NULL;
END;
$$;

CREATE TRIGGER ledger_events_notify AFTER INSERT ON ledger_events
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION ledger_notify_append();
