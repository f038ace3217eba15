-- Time-bound access (SPEC "Time-bound access"). An identity may carry an access window
-- (`notBefore`, `notAfter`), set by its `IdentityAdded` or a later `AccessWindowChanged`; at
-- `notAfter` the expiry service appends `AccessExpired`, after which the identity is 'expired'.
--
-- The access history gains two changes, 'window' (AccessWindowChanged) and 'expired'
-- (AccessExpired, its `dueAt` in not_after), and the window of 'invited' and 'window' rows; the
-- members gain the state 'expired' and the window in force (that of the identity's last
-- 'invited' or 'window' row). Events from before windows have none: the new columns stay NULL,
-- which is what the fold gives for them, so nothing is folded again.
ALTER TABLE proj_access_history ADD COLUMN not_before timestamptz, ADD COLUMN not_after timestamptz;
ALTER TABLE proj_access_history DROP CONSTRAINT proj_access_history_change_check;
ALTER TABLE proj_access_history ADD CONSTRAINT proj_access_history_change_check
    CHECK (change IN ('invited', 'granted', 'removed', 'revoked', 'window', 'expired'));

ALTER TABLE proj_members ADD COLUMN not_before timestamptz, ADD COLUMN not_after timestamptz;
ALTER TABLE proj_members DROP CONSTRAINT proj_members_state_check;
ALTER TABLE proj_members ADD CONSTRAINT proj_members_state_check
    CHECK (state IN ('invited', 'granted', 'removed', 'expired'));

-- The windows that may still fall due (an identity invited or granted, with an end): what the
-- expiry service asks for (ExpiryQueries.due, ledger_next_expiry, ledger_expiry_overdue), one
-- short range of this index, however many members the ledger holds; with the collaboration
-- included, the due collaborations are an index-only scan. A rebuild builds it on the fresh
-- members table under this name, like every index of a live table (LedgerProjections.Rebuild).
CREATE INDEX proj_members_due ON proj_members (not_after) INCLUDE (collaboration_id)
    WHERE not_after IS NOT NULL AND state IN ('invited', 'granted');

-- Result types that change (the window added): the files define them again.
DROP FUNCTION ledger_members_page(text, text, int8, int8);
DROP FUNCTION ledger_member_fold(text, text, int8);
