-- Erasure with no way back, and no free text in leaves (SPEC "Personal data and erasure").

-- Nothing links an erased person back. ledger_erasures kept each erased account's keyed hash
-- beside its pseudonym, and the key sat in ledger_privacy_key: whoever held the database could
-- hash candidate accounts and find each erased person's pseudonym. Both go, rows and files (a
-- dropped table's files are removed at commit). A repeated erasure now finds nothing held and
-- answers {"held": false}, as for an account never known; no record of an erasure is kept
-- beyond its PersonalDataErased event (the pseudonym, a reason reference, the requester's
-- pseudonym).
DROP TABLE ledger_erasures;
DROP TABLE ledger_privacy_key;

-- The local identifier and the share options' summary, group titles and option titles become
-- commitments like titles, their plaintexts and openings kept here under the subject.
ALTER TABLE ledger_personal_values DROP CONSTRAINT ledger_personal_values_kind_check;
ALTER TABLE ledger_personal_values ADD CONSTRAINT ledger_personal_values_kind_check
    CHECK (kind IN ('title', 'handle', 'name', 'localIdentifier', 'summary', 'groupTitle', 'optionTitle'));

-- A start's share options (proj_collaborations.share_options, the event's own JSON) as reads
-- show them: the summary and every group's and option's title through ledger_value (the
-- plaintext, NULL once erased, or a plaintext of an event before commitments as it is);
-- identifiers, kinds and selections as they are.
CREATE FUNCTION ledger_share_options(p_options json) RETURNS json LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN p_options IS NULL OR json_typeof(p_options) <> 'object' THEN p_options ELSE json_build_object(
        'summary', ledger_value(p_options->>'summary'),
        'groups', coalesce((
            SELECT json_agg(json_build_object(
                'identifier', g.value->'identifier', 'title', ledger_value(g.value->>'title'), 'kind', g.value->'kind',
                'options', coalesce((
                    SELECT json_agg(json_build_object(
                        'identifier', o.value->'identifier', 'title', ledger_value(o.value->>'title'), 'selected', o.value->'selected')
                        ORDER BY o.n)
                    FROM json_array_elements(g.value->'options') WITH ORDINALITY AS o(value, n)), '[]'::json))
                ORDER BY g.n)
            FROM json_array_elements(p_options->'groups') WITH ORDINALITY AS g(value, n)), '[]'::json))
    END
$$;

-- Where the free-text format starts: events before it may hold client-chosen free text in
-- plaintext (a local identifier, share options' texts, an idempotency key, a request id), so
-- public entry bundles are refused on a log that holds any (LedgerStore's PrivacyFormat).
ALTER TABLE ledger_privacy_format ADD COLUMN free_texts_from int8;
UPDATE ledger_privacy_format SET free_texts_from = (SELECT position + 1 FROM ledger_head);
ALTER TABLE ledger_privacy_format ALTER COLUMN free_texts_from SET NOT NULL;
