-- ledger_member_fold gains p_after_position and two result columns (ledger_fold_touched_members
-- joins a stored member with the history after it): its file defines it again. IF EXISTS: on a
-- new database 0025 dropped it and no file has run yet.
DROP FUNCTION IF EXISTS ledger_member_fold(text, text, int8);
