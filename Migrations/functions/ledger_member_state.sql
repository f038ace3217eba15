-- A member's state as of `p_at`: the fold's state (by the events), except that an identity still
-- invited or granted whose window ended by then is 'expired', whether or not its AccessExpired
-- is in the log yet (it is appended at or after the window's end), and a granted identity whose
-- window starts after `p_at` is 'scheduled' (it grants nothing until then: SPEC "A window holds
-- at both ends"). `p_at` NULL: by the events only (members at a position). Inlined by the planner.
CREATE OR REPLACE FUNCTION ledger_member_state(p_state text, p_not_before timestamptz, p_not_after timestamptz, p_at timestamptz)
RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN p_state IN ('invited', 'granted') AND p_not_after <= p_at THEN 'expired'
                WHEN p_state = 'granted' AND p_not_before > p_at THEN 'scheduled'
                ELSE p_state END
$$;
