-- For the expiry service's status: the earliest end of a window that may still fall due (an
-- identity invited or granted), due or not; NULL if none. The first entry of
-- ledger_streams_next_due: the log's own state, not a view.
CREATE OR REPLACE FUNCTION ledger_next_expiry() RETURNS timestamptz
LANGUAGE sql STABLE AS $$
    SELECT min(s.next_due_at) FROM ledger_streams s WHERE s.next_due_at IS NOT NULL
$$;
