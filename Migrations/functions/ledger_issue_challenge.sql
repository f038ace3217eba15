-- Issues a recipient's challenge in one round trip: only on a collaboration that exists (else
-- nothing is stored and expires_micros stays NULL: the API's 404), bound to the caller's
-- pseudonym (made on its first use), expiring p_lifetime seconds after the database's clock
-- (SPEC "One clock"), and committed before the CALL answers, so a challenge answered to a
-- client is durable (a statement's answer in autocommit comes before its commit).
CREATE OR REPLACE PROCEDURE ledger_issue_challenge(
    p_challenge_id uuid, p_collaboration_id text, p_account text, p_challenge bytea, p_lifetime float8,
    INOUT expires_micros int8 DEFAULT NULL)
LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM ledger_streams WHERE stream_id = ledger_collaboration_stream(p_collaboration_id)) THEN
        INSERT INTO ledger_challenges (challenge_id, collaboration_id, account, challenge, expires_at)
        VALUES (p_challenge_id, p_collaboration_id, ledger_subject(p_account), p_challenge,
                date_trunc('milliseconds', clock_timestamp()) + p_lifetime * interval '1 second')
        RETURNING (extract(epoch FROM expires_at) * 1000000)::int8 INTO expires_micros;
    END IF;
    COMMIT;
END;
$$;
