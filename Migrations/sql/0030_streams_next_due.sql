-- Each collaboration's next window end on its stream row (issue 48): the earliest `notAfter` of
-- an identity still invited or granted, NULL when none. The expiry service walks this index
-- instead of the membership view, so what it finds due is the log's own state, never a view
-- that lags it. Every write of a state keeps it, in the same statement (the trigger of
-- Migrations/functions/ledger_stream_next_due.sql, which also wakes the service).
ALTER TABLE ledger_streams ADD COLUMN next_due_at timestamptz;
CREATE INDEX ledger_streams_next_due ON ledger_streams (next_due_at) WHERE next_due_at IS NOT NULL;

-- The streams written before this migration (the same rule as ledger_next_due, written out here
-- because the function files run after the numbered migrations).
UPDATE ledger_streams s SET next_due_at = (
    SELECT min((i.value ->> 'notAfter')::timestamptz) FROM json_each(s.state -> 'identities') AS i
    WHERE i.value ->> 'status' IN ('invited', 'granted') AND i.value ->> 'notAfter' IS NOT NULL)
WHERE s.state IS NOT NULL AND strpos(s.state::text, '"notAfter"') > 0;
