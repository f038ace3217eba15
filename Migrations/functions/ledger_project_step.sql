-- One projector step in one statement (ProjectorWorker.applyRange), in the caller's transaction:
-- the leases of p_names taken or renewed for p_owner (their rows locked, so a worker whose lease
-- another took meanwhile applies nothing), then each leased projection's range
-- (checkpoint, min(checkpoint + p_limit, head)] applied with its function, in name order, and
-- its checkpoint moved. One row per range applied.
-- The transaction's commit does not wait for its WAL flush (`synchronous_commit` off for it):
-- views and checkpoints are derived, and a crash that loses the commit loses both together, so
-- the range is applied again, once.
CREATE OR REPLACE FUNCTION ledger_project_step(p_owner text, p_lease interval, p_names text[], p_limit int8)
RETURNS TABLE (projection text, from_position int8, to_position int8)
LANGUAGE plpgsql AS $$
DECLARE
    head int8;
    leased record;
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    SELECT h.position INTO head FROM ledger_head h;
    FOR leased IN
        WITH l AS (
            UPDATE ledger_projections p SET owner = p_owner, lease_until = now() + p_lease
            WHERE p.name = ANY (p_names) AND ledger_may_lease(p.status, p.owner, p.lease_until, p_owner)
            RETURNING p.name, p.position)
        SELECT l.name, l.position FROM l ORDER BY l.name
    LOOP
        CONTINUE WHEN head <= leased.position;
        projection := leased.name;
        from_position := leased.position;
        to_position := least(head, leased.position + p_limit);
        -- The projections of `Projection.apply` (Sources/LedgerProjections/Projections.swift): the
        -- two name the same functions, and change together. No ELSE: a projection this function
        -- does not know fails the step (CASE_NOT_FOUND), and stops it as poison would, visibly.
        CASE leased.name
            WHEN 'collaborations' THEN PERFORM ledger_project_collaborations(from_position, to_position);
            WHEN 'membership' THEN PERFORM ledger_project_membership(from_position, to_position);
            WHEN 'highlights' THEN PERFORM ledger_project_highlights(from_position, to_position);
        END CASE;
        UPDATE ledger_projections p SET position = to_position, updated_at = now() WHERE p.name = leased.name;
        RETURN NEXT;
    END LOOP;
END;
$$;
