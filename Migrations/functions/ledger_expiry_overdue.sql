-- For the log-health page and the `ledger_expiry_overdue` gauge: how many windows that may still
-- fall due (an identity invited or granted, as ledger_next_due reads them) ended more than a
-- second before `p_now`: expiries the service is late with (it appends each within a second of
-- its end while it runs). Read from the streams whose next end is that late
-- (ledger_streams_next_due) and their inline states: the log's own rows, never a view that lags.
CREATE OR REPLACE FUNCTION ledger_expiry_overdue(p_now timestamptz) RETURNS int8
LANGUAGE sql STABLE AS $$
    SELECT count(*) FROM ledger_streams s, json_each(s.state -> 'identities') AS i
    WHERE s.next_due_at <= p_now - interval '1 second'
      AND i.value ->> 'status' IN ('invited', 'granted')
      AND (i.value ->> 'notAfter')::timestamptz <= p_now - interval '1 second'
$$;
