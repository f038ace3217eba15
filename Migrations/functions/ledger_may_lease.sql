-- Whether worker p_me may take or renew a projection's lease: the projection runs, and no other
-- worker holds an unexpired lease on it. The one rule for a projector's step
-- (ledger_project_step) and for recording a stop (ProjectorWorker.isolatePoison); one SQL
-- expression declared STABLE, so the planner inlines it and a step pays nothing for the call.
CREATE OR REPLACE FUNCTION ledger_may_lease(p_status text, p_owner text, p_lease_until timestamptz, p_me text)
RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT p_status = 'running' AND (p_owner IS NULL OR p_owner = p_me OR p_lease_until < now())
$$;
