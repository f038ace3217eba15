-- Personal data out of the log (SPEC "Personal data and erasure"). From here on an account
-- appears in events as a pseudonym and a handle, name or title as a commitment; the mapping, the
-- plaintexts and the openings live in the erasable tables below, and an erasure deletes them.

-- Each subject: the account and its pseudonym. Deleting a subject deletes its values.
CREATE TABLE ledger_subjects (
    account     text        PRIMARY KEY,
    pseudonym   text        NOT NULL UNIQUE,
    created_at  timestamptz NOT NULL DEFAULT now()
);

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

-- Dead rows of erased subjects leave the files soon, not when a table has grown by a fifth.
ALTER TABLE ledger_subjects SET (autovacuum_vacuum_threshold = 0, autovacuum_vacuum_scale_factor = 0);
ALTER TABLE ledger_personal_values SET (autovacuum_vacuum_threshold = 0, autovacuum_vacuum_scale_factor = 0);

-- Accounts outside the log become pseudonyms too: every account the working tables and the
-- collaborations' inline states name gets a subject, and those tables and states name it by its
-- pseudonym from now on (the events before keep their plaintext).
INSERT INTO ledger_subjects (account, pseudonym)
SELECT a.account, 'psn-' || gen_random_uuid()::text
FROM (
    SELECT account FROM ledger_challenges UNION SELECT account FROM ledger_proof_requests
    UNION SELECT account FROM ledger_webhooks
    UNION SELECT s.state->>'owner' FROM ledger_streams s WHERE s.state IS NOT NULL
    UNION SELECT g.key FROM ledger_streams s, json_each(s.state->'grants') AS g WHERE s.state IS NOT NULL
) a
WHERE a.account IS NOT NULL
ON CONFLICT DO NOTHING;
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
-- account of an event before the format, as it is.
CREATE FUNCTION ledger_account(p_account text) RETURNS text LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN p_account IS NULL OR p_account NOT LIKE 'psn-%' THEN p_account
                ELSE coalesce((SELECT s.account FROM ledger_subjects s WHERE s.pseudonym = p_account), 'erased:' || p_account) END
$$;

-- Reads show a value: a commitment's plaintext, NULL once erased, or a plaintext value of an
-- event before the format, as it is.
CREATE FUNCTION ledger_value(p_value text) RETURNS text LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN p_value IS NULL OR p_value NOT LIKE 'commitment:%' THEN p_value
                ELSE (SELECT v.value FROM ledger_personal_values v WHERE v.commitment = p_value) END
$$;

-- The names an account goes by in the views: its pseudonym and (events before the format) itself.
CREATE FUNCTION ledger_account_names(p_account text) RETURNS text[] LANGUAGE sql STABLE AS $$
    SELECT array_remove(ARRAY[p_account, (SELECT s.pseudonym FROM ledger_subjects s WHERE s.account = p_account)], NULL)
$$;
