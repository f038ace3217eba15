-- The membership projection for the events in (p_from, p_to]: step 1 appends them to the access
-- history, step 2 folds every identity they touched again. Writes where the search path leads,
-- as ledger_project_collaborations.
CREATE OR REPLACE FUNCTION ledger_project_membership(p_from int8, p_to int8) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM ledger_project_access_history(p_from, p_to);
    PERFORM ledger_fold_touched_members(p_from, p_to);
END;
$$;
