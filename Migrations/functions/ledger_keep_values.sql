-- Keeps the personal values of the requests this transaction appended (outcome 'ok'), after
-- ledger_append, which holds the head lock until the commit: value i belongs to request
-- p_requests[i] (1-based, as p_outcomes). A value whose subject is gone is not kept: an erasure
-- takes the head lock before it deletes anything, so a subject seen here stays until this commit,
-- and an event appended after its subject's erasure holds commitments no one can open, as if it
-- had come just before. PL/pgSQL, so its plan is kept for the session.
CREATE OR REPLACE FUNCTION ledger_keep_values(
    p_outcomes text[], p_requests int[], p_commitments text[], p_subjects text[], p_kinds text[], p_values text[], p_openings bytea[])
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO ledger_personal_values (commitment, pseudonym, kind, value, opening)
    SELECT v.commitment, v.subject, v.kind, v.value, v.opening
    FROM unnest(p_requests, p_commitments, p_subjects, p_kinds, p_values, p_openings) AS v(request, commitment, subject, kind, value, opening)
    WHERE p_outcomes[v.request] = 'ok' AND EXISTS (SELECT 1 FROM ledger_subjects s WHERE s.pseudonym = v.subject)
    ON CONFLICT (commitment) DO NOTHING;
END;
$$;
