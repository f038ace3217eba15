-- Keeps ledger_streams.next_due_at with the state, in the statement that writes it (every append:
-- ledger_append, ledger_append_write), and wakes the expiry service (NOTIFY ledger_expiry, sent
-- at the commit) when a stream's next window end is new or earlier than it was: the service
-- sleeps until the earliest end it has seen, and only this or its own beat wakes it sooner.
-- An upsert fires the insert trigger before it finds the row: a stream that exists is left to
-- the update trigger, which recomputes only when the state changed.
CREATE OR REPLACE FUNCTION ledger_stream_next_due() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        IF EXISTS (SELECT 1 FROM ledger_streams s WHERE s.stream_id = NEW.stream_id) THEN
            RETURN NEW;
        END IF;
    ELSIF NEW.state::text IS NOT DISTINCT FROM OLD.state::text THEN
        NEW.next_due_at := OLD.next_due_at;
        RETURN NEW;
    END IF;
    NEW.next_due_at := ledger_next_due(NEW.state);
    IF NEW.next_due_at IS NOT NULL AND (TG_OP = 'INSERT' OR OLD.next_due_at IS NULL OR NEW.next_due_at < OLD.next_due_at) THEN
        PERFORM pg_notify('ledger_expiry', '');
    END IF;
    RETURN NEW;
END;
$$;

CREATE OR REPLACE TRIGGER ledger_streams_next_due BEFORE INSERT OR UPDATE ON ledger_streams
    FOR EACH ROW EXECUTE FUNCTION ledger_stream_next_due();
