-- For the log-health page: how many windows that may still fall due (an identity invited or
-- granted) ended more than a second before `p_now`: expiries the service is late with (it
-- appends each within a second of its end while it runs), as the membership view stands.
CREATE OR REPLACE FUNCTION ledger_expiry_overdue(p_now timestamptz) RETURNS int8
LANGUAGE sql STABLE AS $$
    SELECT count(*) FROM proj_members m
    WHERE m.not_after IS NOT NULL AND m.state IN ('invited', 'granted') AND m.not_after <= p_now - interval '1 second'
$$;
