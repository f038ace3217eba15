-- Keeps ledger_streams.next_due_at with the state, in the statement that writes it (every append:
-- ledger_append, ledger_append_write), and wakes the expiry service (NOTIFY ledger_expiry, sent
-- at the commit) when a stream's next window end is new or earlier than it was: the service
-- sleeps until the earliest end it has seen, and only this or its own beat wakes it sooner.
-- The triggers' WHEN clauses keep the hot path out of PL/pgSQL: the function runs only for a
-- state that names a window end, or one that replaces a state that had a next end (a start, a
-- highlight, a stream without state never call it). An upsert fires the insert trigger before
-- it finds the row: a stream that exists is left to the update trigger.
CREATE OR REPLACE FUNCTION ledger_stream_next_due() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' AND EXISTS (SELECT 1 FROM ledger_streams s WHERE s.stream_id = NEW.stream_id) THEN
        RETURN NEW;
    END IF;
    NEW.next_due_at := ledger_next_due(NEW.state);
    IF NEW.next_due_at IS NOT NULL AND (TG_OP = 'INSERT' OR OLD.next_due_at IS NULL OR NEW.next_due_at < OLD.next_due_at) THEN
        PERFORM pg_notify('ledger_expiry', '');
    END IF;
    RETURN NEW;
END;
$$;

CREATE OR REPLACE TRIGGER ledger_streams_next_due_insert BEFORE INSERT ON ledger_streams
    FOR EACH ROW WHEN (strpos(NEW.state::text, '"notAfter"') > 0)
    EXECUTE FUNCTION ledger_stream_next_due();
CREATE OR REPLACE TRIGGER ledger_streams_next_due_update BEFORE UPDATE ON ledger_streams
    FOR EACH ROW WHEN (NEW.state::text IS DISTINCT FROM OLD.state::text
                       AND (OLD.next_due_at IS NOT NULL OR strpos(NEW.state::text, '"notAfter"') > 0))
    EXECUTE FUNCTION ledger_stream_next_due();
