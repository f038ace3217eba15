-- A member's state looks at both ends of its window (ledger_member_state gains `p_not_before`:
-- a granted identity before its window's start is 'scheduled'). The three-argument form goes;
-- its file now defines the four-argument one (a fresh database has neither yet: function files
-- are applied after the numbered migrations).
DROP FUNCTION IF EXISTS ledger_member_state(text, timestamptz, timestamptz);
