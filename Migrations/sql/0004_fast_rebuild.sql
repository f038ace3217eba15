-- Faster folds, and a bulk path for `ledger projections rebuild`.
--
-- * Each event's JSON is parsed once (json_to_record), not once per field read: data and
--   metadata are `json` (the exact hashed bytes), so every ->> parsed the whole text again.
-- * The membership fold is split in two steps: appending the range's membership events to
--   the access history, then folding the history rows of a range onto the current members.
--   A rebuild runs the first step over the whole log (into tables without indexes, on several
--   connections), then the second once, then builds the indexes; the live worker runs both
--   per batch as before.
-- * The fold picks "the last X of an identity" with max(ARRAY[position, value]) instead of
--   array_agg(... ORDER BY position DESC)[1]: same answer (positions are unique), but no sort
--   per identity and per column.

CREATE OR REPLACE FUNCTION ledger_project_collaborations(p_from int8, p_to int8, p_suffix text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format($q$
        INSERT INTO %I (collaboration_id, local_identifier, title, initiator_handle, initiator_name, owner,
                        universal_link, share_options, started_at, started_position)
        SELECT d."collaborationId", d."localIdentifier", d.title, d."initiatorHandle", d."initiatorName", d.owner,
               d."universalLink", d."shareOptions", e.recorded_at, e.position
        FROM ledger_events e,
             json_to_record(e.data) AS d("collaborationId" text, "localIdentifier" text, title text, "initiatorHandle" text,
                                         "initiatorName" text, owner text, "universalLink" text, "shareOptions" json)
        WHERE e.position > $1 AND e.position <= $2 AND e.event_type = 'CollaborationStarted'
          AND e.stream_id LIKE 'collaboration-%%'
        $q$, 'proj_collaborations' || p_suffix) USING p_from, p_to;
END;
$$;

CREATE OR REPLACE FUNCTION ledger_project_highlights(p_from int8, p_to int8, p_suffix text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format($q$
        INSERT INTO %I (position, collaboration_id, kind, trigger, mentioned_root_hash, account, at)
        SELECT e.position, substr(e.stream_id, 15), d.kind, d.trigger, d."mentionedRootHash", d.account, e.recorded_at
        FROM ledger_events e,
             json_to_record(e.data) AS d(kind text, trigger text, "mentionedRootHash" text, account text)
        WHERE e.position > $1 AND e.position <= $2 AND e.event_type = 'HighlightPosted'
          AND e.stream_id LIKE 'collaboration-%%'
        $q$, 'proj_highlights' || p_suffix) USING p_from, p_to;
END;
$$;

-- Membership, step 1: the range's membership events, appended to the access history.
CREATE FUNCTION ledger_project_access_history(p_from int8, p_to int8, p_suffix text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format($q$
        INSERT INTO %I (position, collaboration_id, root_hash, change, account, reason, actor, at)
        SELECT e.position, substr(e.stream_id, 15), d."rootHash",
               CASE e.event_type WHEN 'IdentityAdded' THEN 'invited' WHEN 'AccessGranted' THEN 'granted'
                                 WHEN 'IdentityRemoved' THEN 'removed' ELSE 'revoked' END,
               CASE WHEN e.event_type = 'IdentityAdded' THEN NULL ELSE d.account END,
               d.reason, m.actor, e.recorded_at
        FROM ledger_events e,
             json_to_record(e.data) AS d("rootHash" text, account text, reason text),
             json_to_record(e.metadata) AS m(actor text)
        WHERE e.position > $1 AND e.position <= $2
          AND e.event_type IN ('IdentityAdded', 'AccessGranted', 'IdentityRemoved', 'AccessRevoked')
          AND e.stream_id LIKE 'collaboration-%%'
        $q$, 'proj_access_history' || p_suffix) USING p_from, p_to;
END;
$$;

-- Membership, step 2: the history rows of positions (from, to] folded per identity onto the
-- current members. For each identity, within the range: the state is the last of
-- invited/granted/removed; a re-invitation clears the grant and removal before it; the
-- account is the last grant's unless an invitation or revocation came after it.
--
-- p_bulk: the members table holds none of these identities yet (a rebuild's single fold
-- over the whole history): plain insert, no merge. p_part/p_parts: fold only the identities
-- of collaborations whose hash falls in this part, so a rebuild can fold on several
-- connections at once (p_parts = 1: all).
CREATE FUNCTION ledger_fold_members(p_from int8, p_to int8, p_suffix text, p_bulk boolean, p_part int, p_parts int)
RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    -- Per identity: [position, value] of its last change of each kind; positions are unique,
    -- so max() of these arrays is the last one. States: 1 invited, 2 granted, 3 removed.
    batch text := $q$
        SELECT collaboration_id, root_hash,
            max(ARRAY[position, CASE change WHEN 'invited' THEN 1 WHEN 'granted' THEN 2 ELSE 3 END])
                FILTER (WHERE change <> 'revoked') AS st,
            max(ARRAY[position, (extract(epoch FROM at) * 1000000)::int8]) FILTER (WHERE change = 'invited') AS inv,
            max(ARRAY[position, (extract(epoch FROM at) * 1000000)::int8]) FILTER (WHERE change = 'granted') AS gr,
            max(ARRAY[position, (extract(epoch FROM at) * 1000000)::int8]) FILTER (WHERE change = 'removed') AS rm,
            -- The last grant's account, behind its zero-padded position.
            max((lpad(position::text, 20, '0') || coalesce(account, '')) COLLATE "C")
                FILTER (WHERE change = 'granted') AS gr_account,
            max(position) FILTER (WHERE change IN ('invited', 'granted', 'revoked')) AS account_pos,
            max(position) AS last_pos
        FROM %1$I
        WHERE position > $1 AND position <= $2 AND ($4 = 1 OR abs(hashtext(collaboration_id) %% $4) = $3)
        GROUP BY collaboration_id, root_hash
    $q$;
    -- Columns of the batch, decoded.
    decoded text := $q$
        SELECT collaboration_id, root_hash,
            (ARRAY['invited', 'granted', 'removed'])[st[2]] AS state,
            account_pos IS NOT NULL AS account_touched,
            CASE WHEN account_pos = gr[1] THEN substr(gr_account, 21) END AS account,
            inv[1] AS inv_pos, timestamptz 'epoch' + inv[2] * interval '1 microsecond' AS inv_at,
            gr[1] AS gr_pos, timestamptz 'epoch' + gr[2] * interval '1 microsecond' AS gr_at,
            rm[1] AS rm_pos, timestamptz 'epoch' + rm[2] * interval '1 microsecond' AS rm_at,
            last_pos
        FROM ($q$ || batch || $q$) a
    $q$;
BEGIN
    IF p_bulk THEN
        EXECUTE format($q$
            INSERT INTO %2$I (collaboration_id, root_hash, state, account, invited_at, invited_position,
                              granted_at, granted_position, removed_at, removed_position, position)
            SELECT b.collaboration_id, b.root_hash, b.state, b.account, b.inv_at, b.inv_pos,
                   CASE WHEN b.gr_pos > coalesce(b.inv_pos, 0) THEN b.gr_at END,
                   CASE WHEN b.gr_pos > coalesce(b.inv_pos, 0) THEN b.gr_pos END,
                   CASE WHEN b.rm_pos > coalesce(b.inv_pos, 0) THEN b.rm_at END,
                   CASE WHEN b.rm_pos > coalesce(b.inv_pos, 0) THEN b.rm_pos END,
                   b.last_pos
            FROM ($q$ || decoded || $q$) b
            $q$, 'proj_access_history' || p_suffix, 'proj_members' || p_suffix) USING p_from, p_to, p_part, p_parts;
        RETURN;
    END IF;
    EXECUTE format($q$
        INSERT INTO %2$I AS m (collaboration_id, root_hash, state, account, invited_at, invited_position,
                               granted_at, granted_position, removed_at, removed_position, position)
        SELECT b.collaboration_id, b.root_hash, coalesce(b.state, o.state),
               CASE WHEN b.account_touched THEN b.account ELSE o.account END,
               coalesce(b.inv_at, o.invited_at), coalesce(b.inv_pos, o.invited_position),
               CASE WHEN b.gr_pos > coalesce(b.inv_pos, 0) THEN b.gr_at WHEN b.inv_pos IS NOT NULL THEN NULL ELSE o.granted_at END,
               CASE WHEN b.gr_pos > coalesce(b.inv_pos, 0) THEN b.gr_pos WHEN b.inv_pos IS NOT NULL THEN NULL ELSE o.granted_position END,
               CASE WHEN b.rm_pos > coalesce(b.inv_pos, 0) THEN b.rm_at WHEN b.inv_pos IS NOT NULL THEN NULL ELSE o.removed_at END,
               CASE WHEN b.rm_pos > coalesce(b.inv_pos, 0) THEN b.rm_pos WHEN b.inv_pos IS NOT NULL THEN NULL ELSE o.removed_position END,
               b.last_pos
        FROM ($q$ || decoded || $q$) b LEFT JOIN %2$I o USING (collaboration_id, root_hash)
        ON CONFLICT (collaboration_id, root_hash) DO UPDATE SET
            state = excluded.state, account = excluded.account, invited_at = excluded.invited_at,
            invited_position = excluded.invited_position, granted_at = excluded.granted_at,
            granted_position = excluded.granted_position, removed_at = excluded.removed_at,
            removed_position = excluded.removed_position, position = excluded.position
        $q$, 'proj_access_history' || p_suffix, 'proj_members' || p_suffix) USING p_from, p_to, p_part, p_parts;
END;
$$;

CREATE OR REPLACE FUNCTION ledger_project_membership(p_from int8, p_to int8, p_suffix text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM ledger_project_access_history(p_from, p_to, p_suffix);
    PERFORM ledger_fold_members(p_from, p_to, p_suffix, false, 0, 1);
END;
$$;

-- Members of one collaboration as they stood at a position (time travel), folded from the
-- access history with the same rules as ledger_fold_members.
CREATE OR REPLACE FUNCTION ledger_members_at(p_collaboration text, p_position int8)
RETURNS TABLE (root_hash text, state text, account text, invited_at timestamptz, granted_at timestamptz)
LANGUAGE sql STABLE AS $$
    SELECT a.root_hash, (ARRAY['invited', 'granted', 'removed'])[a.st[2]],
           CASE WHEN a.account_pos = a.gr[1] THEN substr(a.gr_account, 21) END,
           timestamptz 'epoch' + a.inv[2] * interval '1 microsecond',
           CASE WHEN a.gr[1] > coalesce(a.inv[1], 0) THEN timestamptz 'epoch' + a.gr[2] * interval '1 microsecond' END
    FROM (
        SELECT h.root_hash,
            max(ARRAY[h.position, CASE h.change WHEN 'invited' THEN 1 WHEN 'granted' THEN 2 ELSE 3 END])
                FILTER (WHERE h.change <> 'revoked') AS st,
            max(ARRAY[h.position, (extract(epoch FROM h.at) * 1000000)::int8]) FILTER (WHERE h.change = 'invited') AS inv,
            max(ARRAY[h.position, (extract(epoch FROM h.at) * 1000000)::int8]) FILTER (WHERE h.change = 'granted') AS gr,
            max((lpad(h.position::text, 20, '0') || coalesce(h.account, '')) COLLATE "C")
                FILTER (WHERE h.change = 'granted') AS gr_account,
            max(h.position) FILTER (WHERE h.change IN ('invited', 'granted', 'revoked')) AS account_pos
        FROM proj_access_history h
        WHERE h.collaboration_id = p_collaboration AND h.position <= p_position
        GROUP BY h.root_hash
    ) a
    WHERE a.st[2] <> 3
    ORDER BY a.root_hash
$$;
