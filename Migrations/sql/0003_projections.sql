-- Projections: views folded from the log by projector workers. Each projection is a SQL
-- function that applies the events of a position range (from, to] to its tables, set-based;
-- the worker calls it and moves the checkpoint in the same transaction. Table names take a
-- suffix so `ledger projections rebuild` can fold the whole log into fresh copies
-- (suffix '_next') while the current tables keep serving, then swap them in.

CREATE TABLE ledger_projections (
    name          text        PRIMARY KEY,
    -- Every event at or below this position is applied; nothing above it is.
    position      int8        NOT NULL DEFAULT 0,
    -- The worker holding the lease; another may take over once lease_until has passed.
    owner         text,
    lease_until   timestamptz,
    status        text        NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'stopped')),
    -- Why and where a projection stopped (an event it cannot apply).
    error         text,
    error_position int8,
    updated_at    timestamptz NOT NULL DEFAULT now()
);
INSERT INTO ledger_projections (name) VALUES ('collaborations'), ('membership'), ('highlights');

-- collaborations: one row per started collaboration.
CREATE TABLE proj_collaborations (
    collaboration_id  text        PRIMARY KEY,
    local_identifier  text        NOT NULL,
    title             text        NOT NULL,
    initiator_handle  text        NOT NULL,
    initiator_name    text,
    owner             text        NOT NULL,
    universal_link    text        NOT NULL,
    share_options     json,
    started_at        timestamptz NOT NULL,
    started_position  int8        NOT NULL
);
CREATE INDEX proj_collaborations_owner ON proj_collaborations (owner);

-- membership: the access history (one row per membership event: the time-travel source
-- and the audit trail) and the current members (identity, state, account, when and at
-- which positions it was invited, granted, removed).
CREATE TABLE proj_access_history (
    position          int8        PRIMARY KEY,
    collaboration_id  text        NOT NULL,
    root_hash         text        NOT NULL,
    change            text        NOT NULL CHECK (change IN ('invited', 'granted', 'removed', 'revoked')),
    account           text,
    reason            text,
    actor             text,
    at                timestamptz NOT NULL
);
CREATE INDEX proj_access_history_collaboration ON proj_access_history (collaboration_id, position);
CREATE INDEX proj_access_history_account ON proj_access_history (account, position) WHERE account IS NOT NULL;
CREATE INDEX proj_access_history_at ON proj_access_history (at);

CREATE TABLE proj_members (
    collaboration_id  text        NOT NULL,
    root_hash         text        NOT NULL,
    state             text        NOT NULL CHECK (state IN ('invited', 'granted', 'removed')),
    account           text,
    invited_at        timestamptz,
    invited_position  int8,
    granted_at        timestamptz,
    granted_position  int8,
    removed_at        timestamptz,
    removed_position  int8,
    position          int8        NOT NULL,
    PRIMARY KEY (collaboration_id, root_hash)
);
CREATE INDEX proj_members_account ON proj_members (account) WHERE account IS NOT NULL;

-- highlights: posted notices (membership notices are read from the access history).
CREATE TABLE proj_highlights (
    position             int8        PRIMARY KEY,
    collaboration_id     text        NOT NULL,
    kind                 text        NOT NULL,
    trigger              text,
    mentioned_root_hash  text,
    account              text        NOT NULL,
    at                   timestamptz NOT NULL
);
CREATE INDEX proj_highlights_collaboration ON proj_highlights (collaboration_id, position);

-- The tables each projection owns (rebuild copies and swaps these).
CREATE FUNCTION ledger_projection_tables(p_name text) RETURNS text[]
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE p_name
        WHEN 'collaborations' THEN ARRAY['proj_collaborations']
        WHEN 'membership' THEN ARRAY['proj_access_history', 'proj_members']
        WHEN 'highlights' THEN ARRAY['proj_highlights']
    END
$$;

CREATE FUNCTION ledger_project_collaborations(p_from int8, p_to int8, p_suffix text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format($q$
        INSERT INTO %I (collaboration_id, local_identifier, title, initiator_handle, initiator_name, owner,
                        universal_link, share_options, started_at, started_position)
        SELECT e.data->>'collaborationId', e.data->>'localIdentifier', e.data->>'title', e.data->>'initiatorHandle',
               e.data->>'initiatorName', e.data->>'owner', e.data->>'universalLink', e.data->'shareOptions',
               e.recorded_at, e.position
        FROM ledger_events e
        WHERE e.position > $1 AND e.position <= $2 AND e.event_type = 'CollaborationStarted'
          AND e.stream_id LIKE 'collaboration-%%'
        $q$, 'proj_collaborations' || p_suffix) USING p_from, p_to;
END;
$$;

CREATE FUNCTION ledger_project_highlights(p_from int8, p_to int8, p_suffix text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format($q$
        INSERT INTO %I (position, collaboration_id, kind, trigger, mentioned_root_hash, account, at)
        SELECT e.position, substr(e.stream_id, 15), e.data->>'kind', e.data->>'trigger', e.data->>'mentionedRootHash',
               e.data->>'account', e.recorded_at
        FROM ledger_events e
        WHERE e.position > $1 AND e.position <= $2 AND e.event_type = 'HighlightPosted'
          AND e.stream_id LIKE 'collaboration-%%'
        $q$, 'proj_highlights' || p_suffix) USING p_from, p_to;
END;
$$;

-- Membership: append the range's membership events to the history, then fold them per
-- identity onto the current members. Within the range, for each identity: the state is
-- the last of invited/granted/removed; a re-invitation clears the grant and removal before
-- it; the account is the last grant's unless an invitation or revocation came after it.
CREATE FUNCTION ledger_project_membership(p_from int8, p_to int8, p_suffix text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format($q$
        INSERT INTO %I (position, collaboration_id, root_hash, change, account, reason, actor, at)
        SELECT e.position, substr(e.stream_id, 15), e.data->>'rootHash',
               CASE e.event_type WHEN 'IdentityAdded' THEN 'invited' WHEN 'AccessGranted' THEN 'granted'
                                 WHEN 'IdentityRemoved' THEN 'removed' ELSE 'revoked' END,
               CASE WHEN e.event_type = 'IdentityAdded' THEN NULL ELSE e.data->>'account' END,
               e.data->>'reason', e.metadata->>'actor', e.recorded_at
        FROM ledger_events e
        WHERE e.position > $1 AND e.position <= $2
          AND e.event_type IN ('IdentityAdded', 'AccessGranted', 'IdentityRemoved', 'AccessRevoked')
          AND e.stream_id LIKE 'collaboration-%%'
        $q$, 'proj_access_history' || p_suffix) USING p_from, p_to;

    EXECUTE format($q$
        WITH batch AS (
            SELECT collaboration_id, root_hash,
                (array_agg(change ORDER BY position DESC) FILTER (WHERE change <> 'revoked'))[1] AS state,
                max(position) FILTER (WHERE change = 'invited') AS inv_pos,
                (array_agg(at ORDER BY position DESC) FILTER (WHERE change = 'invited'))[1] AS inv_at,
                max(position) FILTER (WHERE change = 'granted') AS gr_pos,
                (array_agg(at ORDER BY position DESC) FILTER (WHERE change = 'granted'))[1] AS gr_at,
                max(position) FILTER (WHERE change = 'removed') AS rm_pos,
                (array_agg(at ORDER BY position DESC) FILTER (WHERE change = 'removed'))[1] AS rm_at,
                bool_or(change IN ('invited', 'granted', 'revoked')) AS account_touched,
                (array_agg(CASE WHEN change = 'granted' THEN account END ORDER BY position DESC)
                    FILTER (WHERE change IN ('invited', 'granted', 'revoked')))[1] AS account,
                max(position) AS last_pos
            FROM %1$I
            WHERE position > $1 AND position <= $2
            GROUP BY collaboration_id, root_hash
        )
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
        FROM batch b LEFT JOIN %2$I o USING (collaboration_id, root_hash)
        ON CONFLICT (collaboration_id, root_hash) DO UPDATE SET
            state = excluded.state, account = excluded.account, invited_at = excluded.invited_at,
            invited_position = excluded.invited_position, granted_at = excluded.granted_at,
            granted_position = excluded.granted_position, removed_at = excluded.removed_at,
            removed_position = excluded.removed_position, position = excluded.position
        $q$, 'proj_access_history' || p_suffix, 'proj_members' || p_suffix) USING p_from, p_to;
END;
$$;

-- Members of one collaboration as they stood at a position (time travel), folded from the
-- access history with the same rules as ledger_project_membership.
CREATE FUNCTION ledger_members_at(p_collaboration text, p_position int8)
RETURNS TABLE (root_hash text, state text, account text, invited_at timestamptz, granted_at timestamptz)
LANGUAGE sql STABLE AS $$
    SELECT a.root_hash, a.state, a.account, a.inv_at, CASE WHEN a.gr_pos > coalesce(a.inv_pos, 0) THEN a.gr_at END
    FROM (
        SELECT h.root_hash,
            (array_agg(h.change ORDER BY h.position DESC) FILTER (WHERE h.change <> 'revoked'))[1] AS state,
            max(h.position) FILTER (WHERE h.change = 'invited') AS inv_pos,
            (array_agg(h.at ORDER BY h.position DESC) FILTER (WHERE h.change = 'invited'))[1] AS inv_at,
            max(h.position) FILTER (WHERE h.change = 'granted') AS gr_pos,
            (array_agg(h.at ORDER BY h.position DESC) FILTER (WHERE h.change = 'granted'))[1] AS gr_at,
            (array_agg(CASE WHEN h.change = 'granted' THEN h.account END ORDER BY h.position DESC)
                FILTER (WHERE h.change IN ('invited', 'granted', 'revoked')))[1] AS account
        FROM proj_access_history h
        WHERE h.collaboration_id = p_collaboration AND h.position <= p_position
        GROUP BY h.root_hash
    ) a
    WHERE a.state <> 'removed'
    ORDER BY a.root_hash
$$;
