-- The schema cannot drift unseen: each function file's record keeps a digest of what applying it
-- left in the database (md5 of the pg_get_functiondef of every function of its name, in
-- signature order), taken right after it is applied. `ensureCurrent` and `ledger migrate`
-- compare it with the database's definitions now: a body changed outside its file is applied
-- again by `ledger migrate` (refused by the servers until then), and a function of schema public
-- that no file defines is refused.
ALTER TABLE ledger_repeatable_migrations ADD COLUMN definition text;

-- What no file defines any more: the procedure appends stopped calling (ledger_append_and_keep
-- replaced it), and a function whose file was deleted without a DROP.
DROP PROCEDURE IF EXISTS ledger_append_committed(text[], int8[], text[], int[], uuid[], text[], text[], text[], text[], int8[], int8[], int8[]);
DROP FUNCTION IF EXISTS ledger_due_expiries(timestamptz, int);
DELETE FROM ledger_repeatable_migrations WHERE name IN ('ledger_append_committed.sql', 'ledger_due_expiries.sql');
