-- The tables each projection owns (rebuild copies and swaps these).
CREATE OR REPLACE FUNCTION ledger_projection_tables(p_name text) RETURNS text[]
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE p_name
        WHEN 'collaborations' THEN ARRAY['proj_collaborations']
        WHEN 'membership' THEN ARRAY['proj_access_history', 'proj_members']
        WHEN 'highlights' THEN ARRAY['proj_highlights']
    END
$$;
