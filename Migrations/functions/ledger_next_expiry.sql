-- For the expiry service: the earliest end of a window that may still fall due (an identity
-- invited or granted), due or not; NULL if none. The first entry of proj_members_due.
CREATE OR REPLACE FUNCTION ledger_next_expiry() RETURNS timestamptz
LANGUAGE sql STABLE AS $$
    SELECT min(m.not_after) FROM proj_members m WHERE m.not_after IS NOT NULL AND m.state IN ('invited', 'granted')
$$;
