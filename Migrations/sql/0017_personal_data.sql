-- Personal data out of the log (SPEC "Personal data and erasure"). From here on an account
-- appears in events as a pseudonym and a handle, name or title as a commitment; the mapping, the
-- plaintexts and the openings live in the erasable tables below, and an erasure deletes them.

-- Each subject: the account and its pseudonym. Deleting a subject deletes its values.
CREATE TABLE ledger_subjects (
    account     text        PRIMARY KEY,
    pseudonym   text        NOT NULL UNIQUE,
    created_at  timestamptz NOT NULL DEFAULT now()
);

-- The account's pseudonym, made on its first use (again after an erasure: a new subject).
CREATE FUNCTION ledger_subject(p_account text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    found text;
BEGIN
    SELECT pseudonym INTO found FROM ledger_subjects WHERE account = p_account;
    IF found IS NOT NULL THEN
        RETURN found;
    END IF;
    INSERT INTO ledger_subjects (account, pseudonym) VALUES (p_account, 'psn-' || gen_random_uuid()::text)
        ON CONFLICT (account) DO NOTHING RETURNING pseudonym INTO found;
    RETURN coalesce(found, (SELECT pseudonym FROM ledger_subjects WHERE account = p_account));
END;
$$;

-- Each committed value: the commitment as events hold it (`commitment:<base64>`), the subject it
-- belongs to, the plaintext and its opening.
CREATE TABLE ledger_personal_values (
    commitment  text        PRIMARY KEY,
    pseudonym   text        NOT NULL REFERENCES ledger_subjects (pseudonym) ON DELETE CASCADE,
    kind        text        NOT NULL CHECK (kind IN ('title', 'handle', 'name')),
    value       text        NOT NULL,
    opening     bytea       NOT NULL CHECK (octet_length(opening) = 32),
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ledger_personal_values_pseudonym ON ledger_personal_values (pseudonym);

-- Keeps the personal values of the requests this transaction appended (outcome 'ok'), after
-- ledger_append, which holds the head lock until the commit: value i belongs to request
-- p_requests[i] (1-based, as p_outcomes). A value whose subject is gone is not kept: an erasure
-- takes the head lock before it deletes anything, so a subject seen here stays until this commit,
-- and an event appended after its subject's erasure holds commitments no one can open, as if it
-- had come just before. PL/pgSQL, so its plan is kept for the session.
CREATE FUNCTION ledger_keep_values(
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

-- ledger_append_committed (0007) with the requests' personal values kept in the same
-- transaction: a commitment costs no round trip of its own, and an append without values nothing.
CREATE PROCEDURE ledger_append_and_keep(
    p_streams text[], p_expected int8[], p_states text[], p_counts int[],
    p_ids uuid[], p_types text[], p_data text[], p_metadata text[],
    p_value_requests int[], p_commitments text[], p_subjects text[], p_kinds text[], p_values text[], p_openings bytea[],
    INOUT outcomes text[] DEFAULT NULL, INOUT first_positions int8[] DEFAULT NULL,
    INOUT last_positions int8[] DEFAULT NULL, INOUT stream_versions int8[] DEFAULT NULL)
LANGUAGE plpgsql AS $$
BEGIN
    SELECT array_agg(a.outcome ORDER BY a.request), array_agg(coalesce(a.first_position, -1) ORDER BY a.request),
           array_agg(coalesce(a.last_position, -1) ORDER BY a.request), array_agg(coalesce(a.stream_version, -1) ORDER BY a.request)
        INTO outcomes, first_positions, last_positions, stream_versions
        FROM ledger_append(p_streams, p_expected, p_states, p_counts, p_ids, p_types, p_data, p_metadata) AS a;
    IF cardinality(p_value_requests) > 0 THEN
        PERFORM ledger_keep_values(outcomes, p_value_requests, p_commitments, p_subjects, p_kinds, p_values, p_openings);
    END IF;
    COMMIT;
END;
$$;

-- Erasures, to answer a repeated request as the first: the account only as a keyed hash
-- (HMAC-SHA256 under ledger_privacy_key), never in plaintext.
CREATE TABLE ledger_erasures (
    account_hash  bytea       PRIMARY KEY,
    pseudonym     text        NOT NULL UNIQUE,
    answer        text        NOT NULL,
    erased_at     timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE ledger_privacy_key (
    only_row  boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    key       bytea   NOT NULL
);
INSERT INTO ledger_privacy_key (key) VALUES (uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid()));

-- Where the format starts: events before this position keep their plaintext (an erasure names
-- the ones it could not erase).
CREATE TABLE ledger_privacy_format (
    only_row         boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    pseudonyms_from  int8    NOT NULL
);
INSERT INTO ledger_privacy_format (pseudonyms_from) SELECT position + 1 FROM ledger_head;

-- The services vacuum these two tables right after an erasure (LedgerStore's PrivacyOffice), which
-- only an owner may: ledger_service owns them. Where the migrating role cannot hand them over, they
-- stay its own and autovacuum does it (below).
DO $$
BEGIN
    ALTER TABLE ledger_subjects OWNER TO ledger_service;
    ALTER TABLE ledger_personal_values OWNER TO ledger_service;
    EXECUTE format('GRANT ALL ON ledger_subjects, ledger_personal_values TO %I', current_user);
EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'ledger_subjects and ledger_personal_values stay with %: autovacuum cleans them after an erasure', current_user;
END;
$$;

-- Dead rows of erased subjects leave the files soon, not when a table has grown by a fifth.
ALTER TABLE ledger_subjects SET (autovacuum_vacuum_threshold = 0, autovacuum_vacuum_scale_factor = 0);
ALTER TABLE ledger_personal_values SET (autovacuum_vacuum_threshold = 0, autovacuum_vacuum_scale_factor = 0);

-- Accounts outside the log become pseudonyms too: every account the working tables and the
-- collaborations' inline states name gets a subject, and those tables and states name it by its
-- pseudonym from now on (the events before keep their plaintext).
SELECT ledger_subject(a.account)
FROM (
    SELECT account FROM ledger_challenges UNION SELECT account FROM ledger_proof_requests
    UNION SELECT account FROM ledger_webhooks
    UNION SELECT s.state->>'owner' FROM ledger_streams s WHERE s.state IS NOT NULL
    UNION SELECT g.key FROM ledger_streams s, json_each(s.state->'grants') AS g WHERE s.state IS NOT NULL
) a
WHERE a.account IS NOT NULL;
UPDATE ledger_challenges c SET account = s.pseudonym FROM ledger_subjects s WHERE s.account = c.account;
UPDATE ledger_proof_requests r SET account = s.pseudonym FROM ledger_subjects s WHERE s.account = r.account;
UPDATE ledger_webhooks w SET account = s.pseudonym FROM ledger_subjects s WHERE s.account = w.account;

-- A collaboration's inline state with every account replaced by its pseudonym.
CREATE FUNCTION ledger_pseudonymize_state(p_state jsonb) RETURNS jsonb LANGUAGE sql STABLE AS $$
    SELECT jsonb_set(jsonb_set(jsonb_set(p_state,
        '{owner}', to_jsonb(coalesce((SELECT pseudonym FROM ledger_subjects WHERE account = p_state->>'owner'), p_state->>'owner'))),
        '{grants}', coalesce((SELECT jsonb_object_agg(coalesce(s.pseudonym, g.key), g.value)
                              FROM jsonb_each(p_state->'grants') AS g LEFT JOIN ledger_subjects s ON s.account = g.key), '{}'::jsonb)),
        '{identities}', coalesce((SELECT jsonb_object_agg(i.key, CASE WHEN i.value->>'account' IS NULL THEN i.value
                                          ELSE jsonb_set(i.value, '{account}', to_jsonb(coalesce(s.pseudonym, i.value->>'account'))) END)
                                  FROM jsonb_each(p_state->'identities') AS i LEFT JOIN ledger_subjects s ON s.account = i.value->>'account'),
                                 '{}'::jsonb))
$$;
UPDATE ledger_streams SET state = ledger_pseudonymize_state(state::jsonb)::json WHERE state IS NOT NULL;
DROP FUNCTION ledger_pseudonymize_state(jsonb);

-- Reads show an account: a live subject's, `erased:<pseudonym>` once erased, or a plaintext
-- account of an event before the format, as it is. Two functions: the outer one, free of
-- subqueries, is inlined into the reads, and the lookup runs only for pseudonyms, in PL/pgSQL,
-- whose plan is kept for the session (an SQL function's body is planned again in every statement
-- that calls it: ~0.05 ms each).
CREATE FUNCTION ledger_subject_account(p_pseudonym text) RETURNS text LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN coalesce((SELECT s.account FROM ledger_subjects s WHERE s.pseudonym = p_pseudonym), 'erased:' || p_pseudonym);
END;
$$;
CREATE FUNCTION ledger_account(p_account text) RETURNS text LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN p_account LIKE 'psn-%' THEN ledger_subject_account(p_account) ELSE p_account END
$$;

-- Reads show a value: a commitment's plaintext, NULL once erased, or a plaintext value of an
-- event before the format, as it is (inlined the same way).
CREATE FUNCTION ledger_committed_value(p_commitment text) RETURNS text LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN (SELECT v.value FROM ledger_personal_values v WHERE v.commitment = p_commitment);
END;
$$;
CREATE FUNCTION ledger_value(p_value text) RETURNS text LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN p_value LIKE 'commitment:%' THEN ledger_committed_value(p_value) ELSE p_value END
$$;

-- The names an account goes by in the views: its pseudonym and (events before the format) itself.
CREATE FUNCTION ledger_account_names(p_account text) RETURNS text[] LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN array_remove(ARRAY[p_account, (SELECT s.pseudonym FROM ledger_subjects s WHERE s.account = p_account)], NULL);
END;
$$;
