-- A collaboration's next window end, from its inline state (LedgerDomain.CollaborationState, as
-- the store keeps it): the earliest `notAfter` of an identity still invited or granted; NULL when
-- none. `CollaborationDecisions.expiries` decides an expiry for exactly the identities this finds
-- due (a store test holds the two together).
CREATE OR REPLACE FUNCTION ledger_next_due(p_state json) RETURNS timestamptz
LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN strpos(p_state::text, '"notAfter"') > 0 THEN (
        SELECT min((i.value ->> 'notAfter')::timestamptz) FROM json_each(p_state -> 'identities') AS i
        WHERE i.value ->> 'status' IN ('invited', 'granted') AND i.value ->> 'notAfter' IS NOT NULL)
    END
$$;
