-- A start's share options (proj_collaborations.share_options, the event's own JSON) as reads
-- show them: the summary and every group's and option's title through ledger_value (the
-- plaintext, NULL once erased, or a plaintext of an event before commitments as it is);
-- identifiers, kinds and selections as they are.
CREATE OR REPLACE FUNCTION ledger_share_options(p_options json) RETURNS json LANGUAGE sql STABLE AS $$
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
