-- For the expiry service (LedgerProjections.ExpiryService): the collaborations, at most
-- `p_limit`, with a window due at `p_now`: an identity still invited or granted whose not_after
-- has come. Most overdue first. One range of proj_members_due (index only: it carries the
-- collaboration); the service decides each collaboration on its own state, never on this view.
CREATE OR REPLACE FUNCTION ledger_due_expiries(p_now timestamptz, p_limit int) RETURNS TABLE (collaboration_id text)
LANGUAGE sql STABLE AS $$
    SELECT m.collaboration_id
    FROM proj_members m
    WHERE m.not_after IS NOT NULL AND m.state IN ('invited', 'granted') AND m.not_after <= p_now
    GROUP BY m.collaboration_id
    ORDER BY min(m.not_after), m.collaboration_id
    LIMIT p_limit
$$;
