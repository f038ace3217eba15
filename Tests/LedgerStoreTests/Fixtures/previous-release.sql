-- A database as the release before the repeatable function files left it (migrations 0001-0022):
-- `ledger serve` of commit d772261, then `ledger demo --url` against it (a start, identities,
-- proofs, highlights, a removal, an erasure: 17 events, checkpoints up to 17), dumped with
-- `pg_dump --no-owner --no-privileges`. psql's \restrict and \unrestrict lines are left out so
-- that any psql loads it. Never regenerate it from a newer release: it stands for that one.
--
-- PostgreSQL database dump
--


-- Dumped from database version 15.18 (Debian 15.18-0+deb12u1)
-- Dumped by pg_dump version 15.18 (Debian 15.18-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: ledger_rebuild; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA ledger_rebuild;


--
-- Name: ledger_account(text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.ledger_account(p_account text) RETURNS text
    LANGUAGE sql STABLE
    AS $$
    SELECT CASE WHEN p_account LIKE 'psn-%' THEN ledger_subject_account(p_account) ELSE p_account END
$$;


--
-- Name: ledger_account_names(text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.ledger_account_names(p_account text) RETURNS text[]
    LANGUAGE plpgsql STABLE
    AS $$
BEGIN
    IF lower(left(p_account, 4)) = 'psn-' OR lower(left(p_account, 7)) = 'erased:' THEN
        RETURN '{}'::text[];
    END IF;
    RETURN array_remove(ARRAY[
        CASE WHEN (SELECT f.pseudonyms_from FROM ledger_privacy_format f) > 1 THEN p_account END,
        (SELECT s.pseudonym FROM ledger_subjects s WHERE s.account = p_account)], NULL);
END;
$$;


--
-- Name: ledger_append(text[], bigint[], text[], integer[], uuid[], text[], text[], text[]); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.ledger_append(p_streams text[], p_expected bigint[], p_states text[], p_counts integer[], p_ids uuid[], p_types text[], p_data text[], p_metadata text[]) RETURNS TABLE(request integer, outcome text, first_position bigint, last_position bigint, stream_version bigint)
    LANGUAGE plpgsql SECURITY DEFINER
    SET plan_cache_mode TO 'force_custom_plan'
    SET search_path TO '$user', 'public'
    AS $$
DECLARE
    head_pos int8;
    head_hash bytea;
    at timestamptz := date_trunc('microseconds', clock_timestamp());
    offs int := 0;
    n int;
    i int;
    j int;
    k int;
    cur int8;
    slot int;
    first_pos int8;
    s_names text[];
    s_versions int8[];
    s_states text[];
    s_positions int8[];
    d_ids uuid[];
    d_streams text[];
    d_positions int8[];
    d_versions int8[];
    found_here int;
    r_positions int8[] := '{}';
    r_streams text[] := '{}';
    r_versions int8[] := '{}';
    r_hashes bytea[] := '{}';
    r_index int[] := '{}';
BEGIN
    SELECT h.position, h.hash INTO head_pos, head_hash FROM ledger_head h FOR UPDATE;
    SELECT coalesce(array_agg(s.stream_id), '{}'), coalesce(array_agg(s.version), '{}'),
           coalesce(array_agg(coalesce(s.state::text, '')), '{}'), coalesce(array_agg(s.position), '{}')
        INTO s_names, s_versions, s_states, s_positions
        FROM ledger_streams s WHERE s.stream_id = ANY (p_streams);
    SELECT coalesce(array_agg(e.event_id), '{}'), coalesce(array_agg(e.stream_id), '{}'),
           coalesce(array_agg(e.position), '{}'), coalesce(array_agg(e.version), '{}')
        INTO d_ids, d_streams, d_positions, d_versions
        FROM ledger_events e WHERE e.event_id = ANY (p_ids);

    FOR i IN 1 .. coalesce(array_length(p_streams, 1), 0) LOOP
        n := p_counts[i];
        request := i;
        first_position := NULL; last_position := NULL; stream_version := NULL;
        -- A retry: every id already stored in this stream. Answer as the first time.
        IF p_ids[offs + 1 : offs + n] && d_ids THEN
            found_here := 0;
            FOR j IN 1 .. n LOOP
                k := array_position(d_ids, p_ids[offs + j]);
                IF k IS NOT NULL AND d_streams[k] = p_streams[i] THEN
                    found_here := found_here + 1;
                    first_position := least(first_position, d_positions[k]);
                    last_position := greatest(last_position, d_positions[k]);
                    stream_version := greatest(stream_version, d_versions[k]);
                END IF;
            END LOOP;
            outcome := CASE WHEN found_here = n THEN 'duplicate' ELSE 'mismatch' END;
            offs := offs + n;
            RETURN NEXT;
            CONTINUE;
        END IF;
        slot := array_position(s_names, p_streams[i]);
        cur := CASE WHEN slot IS NULL THEN 0 ELSE s_versions[slot] END;
        IF p_expected[i] >= 0 AND p_expected[i] <> cur THEN
            outcome := 'conflict'; stream_version := cur;
            offs := offs + n;
            RETURN NEXT;
            CONTINUE;
        END IF;
        first_pos := head_pos + 1;
        FOR j IN 1 .. n LOOP
            k := offs + j;
            head_pos := head_pos + 1;
            head_hash := sha256(head_hash || ledger_leaf(
                head_pos, p_streams[i], cur + j, p_ids[k], p_types[k], p_data[k], p_metadata[k], at));
            r_positions := r_positions || head_pos;
            r_streams := r_streams || p_streams[i];
            r_versions := r_versions || (cur + j);
            r_hashes := r_hashes || head_hash;
            r_index := r_index || k;
            d_ids := d_ids || p_ids[k];
            d_streams := d_streams || p_streams[i];
            d_positions := d_positions || head_pos;
            d_versions := d_versions || (cur + j);
        END LOOP;
        IF slot IS NULL THEN
            s_names := s_names || p_streams[i];
            s_versions := s_versions || (cur + n);
            s_states := s_states || p_states[i];
            s_positions := s_positions || head_pos;
        ELSE
            s_versions[slot] := cur + n;
            s_states[slot] := CASE WHEN p_states[i] = '' THEN s_states[slot] ELSE p_states[i] END;
            s_positions[slot] := head_pos;
        END IF;
        outcome := 'ok'; first_position := first_pos; last_position := head_pos; stream_version := cur + n;
        offs := offs + n;
        RETURN NEXT;
    END LOOP;

    IF array_length(r_positions, 1) > 0 THEN
        INSERT INTO ledger_events (position, stream_id, version, event_id, event_type, data, metadata, recorded_at, hash)
            SELECT x.position, x.stream, x.version, p_ids[x.k], p_types[x.k], p_data[x.k]::json, p_metadata[x.k]::json, at, x.hash
            FROM unnest(r_positions, r_streams, r_versions, r_hashes, r_index) AS x(position, stream, version, hash, k);
        INSERT INTO ledger_streams AS s (stream_id, version, state, position)
            SELECT x.name, x.version, NULLIF(x.state, '')::json, x.position
            FROM unnest(s_names, s_versions, s_states, s_positions) AS x(name, version, state, position)
            WHERE x.name = ANY (r_streams)
            ON CONFLICT (stream_id) DO UPDATE
                SET version = excluded.version, state = COALESCE(excluded.state, s.state), position = excluded.position;
        UPDATE ledger_head SET position = head_pos, hash = head_hash;
        PERFORM pg_notify('ledger_events', head_pos::text);
    END IF;
END;
$$;


--
-- Name: ledger_append_and_keep(text[], bigint[], text[], integer[], uuid[], text[], text[], text[], integer[], text[], text[], text[], text[], bytea[], text[], bigint[], bigint[], bigint[]); Type: PROCEDURE; Schema: public; Owner: -
--

CREATE PROCEDURE public.ledger_append_and_keep(IN p_streams text[], IN p_expected bigint[], IN p_states text[], IN p_counts integer[], IN p_ids uuid[], IN p_types text[], IN p_data text[], IN p_metadata text[], IN p_value_requests integer[], IN p_commitments text[], IN p_subjects text[], IN p_kinds text[], IN p_values text[], IN p_openings bytea[], INOUT outcomes text[] DEFAULT NULL::text[], INOUT first_positions bigint[] DEFAULT NULL::bigint[], INOUT last_positions bigint[] DEFAULT NULL::bigint[], INOUT stream_versions bigint[] DEFAULT NULL::bigint[])
    LANGUAGE plpgsql
    AS $$
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


--
-- Name: ledger_append_committed(text[], bigint[], text[], integer[], uuid[], text[], text[], text[], text[], bigint[], bigint[], bigint[]); Type: PROCEDURE; Schema: public; Owner: -
--

CREATE PROCEDURE public.ledger_append_committed(IN p_streams text[], IN p_expected bigint[], IN p_states text[], IN p_counts integer[], IN p_ids uuid[], IN p_types text[], IN p_data text[], IN p_metadata text[], INOUT outcomes text[] DEFAULT NULL::text[], INOUT first_positions bigint[] DEFAULT NULL::bigint[], INOUT last_positions bigint[] DEFAULT NULL::bigint[], INOUT stream_versions bigint[] DEFAULT NULL::bigint[])
    LANGUAGE plpgsql
    AS $$
BEGIN
    SELECT array_agg(a.outcome ORDER BY a.request), array_agg(coalesce(a.first_position, -1) ORDER BY a.request),
           array_agg(coalesce(a.last_position, -1) ORDER BY a.request), array_agg(coalesce(a.stream_version, -1) ORDER BY a.request)
        INTO outcomes, first_positions, last_positions, stream_versions
        FROM ledger_append(p_streams, p_expected, p_states, p_counts, p_ids, p_types, p_data, p_metadata) AS a;
    COMMIT;
END;
$$;


--
-- Name: ledger_append_plan(text[], bigint[], integer[], uuid[]); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.ledger_append_plan(p_streams text[], p_expected bigint[], p_counts integer[], p_first_ids uuid[]) RETURNS TABLE(request integer, outcome text, first_position bigint, first_version bigint, head_hash bytea, at_micros bigint)
    LANGUAGE plpgsql SECURITY DEFINER
    SET plan_cache_mode TO 'force_custom_plan'
    SET search_path TO '$user', 'public'
    AS $$
DECLARE
    head_pos int8;
    -- Same instant as ledger_append takes: before the head lock.
    at timestamptz := date_trunc('microseconds', clock_timestamp());
    s_names text[];
    s_versions int8[];
    slot int;
    cur int8;
BEGIN
    SELECT h.position, h.hash INTO head_pos, head_hash FROM ledger_head h FOR UPDATE;
    IF EXISTS (SELECT 1 FROM ledger_events e WHERE e.event_id = ANY (p_first_ids)) THEN
        RAISE EXCEPTION 'a retried append: use ledger_append' USING ERRCODE = 'unique_violation';
    END IF;
    SELECT coalesce(array_agg(s.stream_id), '{}'), coalesce(array_agg(s.version), '{}')
        INTO s_names, s_versions
        FROM ledger_streams s WHERE s.stream_id = ANY (p_streams);
    at_micros := (extract(epoch FROM at) * 1000000)::int8;
    FOR i IN 1 .. coalesce(array_length(p_streams, 1), 0) LOOP
        request := i;
        slot := array_position(s_names, p_streams[i]);
        cur := CASE WHEN slot IS NULL THEN 0 ELSE s_versions[slot] END;
        IF p_expected[i] >= 0 AND p_expected[i] <> cur THEN
            -- first_version: the stream's current version, for the conflict's message.
            outcome := 'conflict'; first_position := NULL; first_version := cur;
        ELSE
            outcome := 'ok'; first_position := head_pos + 1; first_version := cur + 1;
            head_pos := head_pos + p_counts[i];
            IF slot IS NULL THEN
                s_names := s_names || p_streams[i];
                s_versions := s_versions || (cur + p_counts[i]);
            ELSE
                s_versions[slot] := cur + p_counts[i];
            END IF;
        END IF;
        RETURN NEXT;
    END LOOP;
END;
$$;


--
-- Name: ledger_append_write(bigint[], text[], bigint[], uuid[], text[], text[], text[], bytea[], bigint, text[], bigint[], text[], bigint[]); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.ledger_append_write(p_positions bigint[], p_streams text[], p_versions bigint[], p_ids uuid[], p_types text[], p_data text[], p_metadata text[], p_hashes bytea[], p_at_micros bigint, s_names text[], s_versions bigint[], s_states text[], s_positions bigint[]) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO '$user', 'public'
    AS $$
DECLARE
    n int := cardinality(p_positions);
BEGIN
    -- The head must be where the plan left it (same transaction, still locked): a check, not a race.
    UPDATE ledger_head SET position = p_positions[n], hash = p_hashes[n] WHERE position = p_positions[1] - 1;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'ledger_append_write: the head is not at position %', p_positions[1] - 1;
    END IF;
    INSERT INTO ledger_events (position, stream_id, version, event_id, event_type, data, metadata, recorded_at, hash)
        SELECT x.position, x.stream, x.version, x.id, x.type, x.data::json, x.metadata::json,
               timestamptz 'epoch' + p_at_micros * interval '1 microsecond', x.hash
        FROM unnest(p_positions, p_streams, p_versions, p_ids, p_types, p_data, p_metadata, p_hashes)
            AS x(position, stream, version, id, type, data, metadata, hash);
    INSERT INTO ledger_streams AS s (stream_id, version, state, position)
        SELECT x.name, x.version, NULLIF(x.state, '')::json, x.position
        FROM unnest(s_names, s_versions, s_states, s_positions) AS x(name, version, state, position)
        ON CONFLICT (stream_id) DO UPDATE
            SET version = excluded.version, state = COALESCE(excluded.state, s.state), position = excluded.position;
    PERFORM pg_notify('ledger_events', p_positions[n]::text);
END;
$$;


--
-- Name: ledger_commit_proofs(json, integer, interval, text[], bigint[], text[], integer[], uuid[], text[], text[], text[], bigint[], text[], integer[], integer); Type: PROCEDURE; Schema: public; Owner: -
--

CREATE PROCEDURE public.ledger_commit_proofs(IN p_requests json, IN p_rejection_limit integer, IN p_window interval, IN p_streams text[], IN p_expected bigint[], IN p_states text[], IN p_counts integer[], IN p_ids uuid[], IN p_types text[], IN p_data text[], IN p_metadata text[], INOUT first_positions bigint[] DEFAULT NULL::bigint[], INOUT throttled text[] DEFAULT NULL::text[], INOUT allowed integer[] DEFAULT NULL::integer[], INOUT retry_after integer DEFAULT NULL::integer)
    LANGUAGE plpgsql
    AS $$
DECLARE
    consumed int;
    refused int;
    decided int;
BEGIN
    PERFORM ledger_lock_head();

    SELECT array_agg(t.account), array_agg(t.allowed), max(t.retry) INTO throttled, allowed, retry_after
    FROM (
        SELECT g.account, greatest(0, p_rejection_limit - w.n)::int AS allowed,
               greatest(1, ceil(extract(epoch FROM coalesce(w.oldest + p_window - now(), interval '1 second'))))::int AS retry
        FROM (SELECT r.account, count(*) AS n FROM json_to_recordset(p_requests) AS r(account text, status text)
              WHERE r.status = 'rejected' GROUP BY r.account) g
        CROSS JOIN LATERAL (
            SELECT count(*) AS n, min(e.recorded_at) AS oldest FROM ledger_events e
            WHERE e.event_type = 'ProofRejected' AND e.data->>'account' = g.account AND e.recorded_at > now() - p_window) w
        WHERE w.n + g.n > p_rejection_limit) t;
    IF throttled IS NOT NULL THEN
        COMMIT;
        RETURN;
    END IF;

    -- Each request's subject still there (LP004): one erased since the read is made anew.
    IF EXISTS (SELECT 1 FROM json_to_recordset(p_requests) AS r(account text)
               WHERE NOT EXISTS (SELECT 1 FROM ledger_subjects s WHERE s.pseudonym = r.account)) THEN
        RAISE EXCEPTION 'a subject was erased since it was read' USING ERRCODE = 'LP004';
    END IF;

    UPDATE ledger_challenges c SET used_by_request = r.id
        FROM json_to_recordset(p_requests) AS r(id uuid, challenge uuid, consumes boolean)
        WHERE r.consumes AND c.challenge_id = r.challenge AND c.used_by_request IS NULL AND c.expires_at >= now();
    GET DIAGNOSTICS consumed = ROW_COUNT;
    IF consumed <> (SELECT count(*) FROM json_to_recordset(p_requests) AS r(consumes boolean) WHERE r.consumes) THEN
        RAISE EXCEPTION 'a challenge was used or expired since it was read' USING ERRCODE = 'LP001';
    END IF;

    SELECT count(*) FILTER (WHERE a.outcome <> 'ok'), array_agg(a.first_position ORDER BY a.request)
        INTO refused, first_positions
        FROM ledger_append(p_streams, p_expected, p_states, p_counts, p_ids, p_types, p_data, p_metadata) AS a;
    IF refused > 0 THEN
        RAISE EXCEPTION 'a collaboration changed since it was read' USING ERRCODE = 'LP002';
    END IF;

    WITH r AS (
        SELECT r.*, first_positions[r.append] + r."offset" AS position
        FROM json_to_recordset(p_requests) AS r(
            id uuid, collaboration text, account text, challenge uuid, stored boolean, signature text, "publicKey" text,
            index int8, hashes json, status text, reason text, "rootHash" text, append int, "offset" int)
    ), fresh AS (
        INSERT INTO ledger_proof_requests
            (request_id, collaboration_id, account, challenge_id, signature, public_key, public_key_index, inclusion_hashes,
             status, reason, root_hash, decided_position, decided_at)
        SELECT r.id, r.collaboration, r.account, r.challenge, decode(r.signature, 'base64'), decode(r."publicKey", 'base64'),
               r.index, ARRAY(SELECT decode(h, 'base64') FROM json_array_elements_text(r.hashes) WITH ORDINALITY AS e(h, n) ORDER BY n),
               r.status, r.reason, decode(r."rootHash", 'base64'), r.position, now()
        FROM r WHERE NOT r.stored
    ), stored AS (
        UPDATE ledger_proof_requests q
        SET status = r.status, reason = r.reason, root_hash = decode(r."rootHash", 'base64'), decided_position = r.position,
            decided_at = now()
        FROM r WHERE r.stored AND q.request_id = r.id AND q.status = 'pending'
        RETURNING q.request_id
    )
    SELECT count(*) INTO decided FROM (SELECT pg_notify('ledger_proof_verdicts', stored.request_id::text) FROM stored) n;
    IF decided <> (SELECT count(*) FROM json_to_recordset(p_requests) AS r(stored boolean) WHERE r.stored) THEN
        RAISE EXCEPTION 'a stored request was decided since it was read' USING ERRCODE = 'LP003';
    END IF;
    COMMIT;
END;
$$;


--
-- Name: ledger_committed_value(text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.ledger_committed_value(p_commitment text) RETURNS text
    LANGUAGE plpgsql STABLE
    AS $$
BEGIN
    RETURN (SELECT v.value FROM ledger_personal_values v WHERE v.commitment = p_commitment);
END;
$$;


--
-- Name: ledger_fold_all_members(bigint, integer, integer); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.ledger_fold_all_members(p_to bigint, p_part integer, p_parts integer) RETURNS void
    LANGUAGE plpgsql
    SET enable_seqscan TO 'off'
    SET enable_sort TO 'off'
    AS $$
BEGIN
    INSERT INTO proj_members (collaboration_id, root_hash, state, account, invited_at, invited_position,
                              granted_at, granted_position, removed_at, removed_position, position)
    SELECT c.collaboration_id, f.*
    FROM (SELECT DISTINCT collaboration_id FROM proj_access_history
          WHERE p_parts = 1 OR abs(hashtext(collaboration_id) % p_parts) = p_part) c
    CROSS JOIN LATERAL ledger_member_fold(c.collaboration_id, '', p_to) f;
END;
$$;


--
-- Name: ledger_fold_touched_members(bigint, bigint); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.ledger_fold_touched_members(p_from bigint, p_to bigint) RETURNS void
    LANGUAGE plpgsql
    SET enable_seqscan TO 'off'
    SET enable_sort TO 'off'
    AS $$
BEGIN
    INSERT INTO proj_members AS m (collaboration_id, root_hash, state, account, invited_at, invited_position,
                                   granted_at, granted_position, removed_at, removed_position, position)
    SELECT c.collaboration_id, f.*
    FROM (SELECT DISTINCT collaboration_id, root_hash FROM proj_access_history WHERE position > p_from AND position <= p_to) c
    -- In lateral subqueries, so the fold's arguments stay plain columns and the planner inlines it.
    CROSS JOIN LATERAL (
        SELECT coalesce(max(p.root_hash), '') AS before FROM proj_access_history p
        WHERE p.collaboration_id = c.collaboration_id AND p.root_hash < c.root_hash) b
    CROSS JOIN LATERAL (
        SELECT * FROM ledger_member_fold(c.collaboration_id, b.before, p_to) f ORDER BY f.root_hash LIMIT 1) f
    ON CONFLICT (collaboration_id, root_hash) DO UPDATE SET
        state = excluded.state, account = excluded.account, invited_at = excluded.invited_at,
        invited_position = excluded.invited_position, granted_at = excluded.granted_at,
        granted_position = excluded.granted_position, removed_at = excluded.removed_at,
        removed_position = excluded.removed_position, position = excluded.position;
END;
$$;


--
-- Name: ledger_keep_values(text[], integer[], text[], text[], text[], text[], bytea[]); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.ledger_keep_values(p_outcomes text[], p_requests integer[], p_commitments text[], p_subjects text[], p_kinds text[], p_values text[], p_openings bytea[]) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    INSERT INTO ledger_personal_values (commitment, pseudonym, kind, value, opening)
    SELECT v.commitment, v.subject, v.kind, v.value, v.opening
    FROM unnest(p_requests, p_commitments, p_subjects, p_kinds, p_values, p_openings) AS v(request, commitment, subject, kind, value, opening)
    WHERE p_outcomes[v.request] = 'ok' AND EXISTS (SELECT 1 FROM ledger_subjects s WHERE s.pseudonym = v.subject)
    ON CONFLICT (commitment) DO NOTHING;
END;
$$;


--
-- Name: ledger_leaf(bigint, text, bigint, uuid, text, text, text, timestamp with time zone); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.ledger_leaf(p_position bigint, p_stream text, p_version bigint, p_id uuid, p_type text, p_data text, p_metadata text, p_recorded_at timestamp with time zone) RETURNS bytea
    LANGUAGE sql STABLE STRICT
    AS $$
    SELECT int8send(p_position) || ledger_str(p_stream) || int8send(p_version) || uuid_send(p_id) || ledger_str(p_type)
        || ledger_str(p_data) || ledger_str(p_metadata) || int8send((extract(epoch FROM p_recorded_at) * 1000000)::int8)
$$;


--
-- Name: ledger_lock_head(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.ledger_lock_head() RETURNS void
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO '$user', 'public'
    AS $$
    SELECT FROM ledger_head FOR UPDATE
$$;


--
-- Name: ledger_member_fold(text, text, bigint); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.ledger_member_fold(p_collaboration text, p_after text, p_position bigint) RETURNS TABLE(root_hash text, state text, account text, invited_at timestamp with time zone, invited_position bigint, granted_at timestamp with time zone, granted_position bigint, removed_at timestamp with time zone, removed_position bigint, last_position bigint)
    LANGUAGE sql STABLE
    AS $$
    SELECT a.root_hash, (ARRAY['invited', 'granted', 'removed'])[a.st[2]],
           CASE WHEN a.account_pos = a.gr[1] THEN substr(a.gr_account, 21) END,
           timestamptz 'epoch' + a.inv[2] * interval '1 microsecond', a.inv[1],
           CASE WHEN a.gr[1] > coalesce(a.inv[1], 0) THEN timestamptz 'epoch' + a.gr[2] * interval '1 microsecond' END,
           CASE WHEN a.gr[1] > coalesce(a.inv[1], 0) THEN a.gr[1] END,
           CASE WHEN a.rm[1] > coalesce(a.inv[1], 0) THEN timestamptz 'epoch' + a.rm[2] * interval '1 microsecond' END,
           CASE WHEN a.rm[1] > coalesce(a.inv[1], 0) THEN a.rm[1] END,
           a.last_pos
    FROM (
        SELECT h.root_hash,
            max(ARRAY[h.position, CASE h.change WHEN 'invited' THEN 1 WHEN 'granted' THEN 2 ELSE 3 END])
                FILTER (WHERE h.change <> 'revoked') AS st,
            max(ARRAY[h.position, (extract(epoch FROM h.at) * 1000000)::int8]) FILTER (WHERE h.change = 'invited') AS inv,
            max(ARRAY[h.position, (extract(epoch FROM h.at) * 1000000)::int8]) FILTER (WHERE h.change = 'granted') AS gr,
            max(ARRAY[h.position, (extract(epoch FROM h.at) * 1000000)::int8]) FILTER (WHERE h.change = 'removed') AS rm,
            -- The last grant's account, behind its zero-padded position.
            max((lpad(h.position::text, 20, '0') || coalesce(h.account, '')) COLLATE "C") FILTER (WHERE h.change = 'granted')
                AS gr_account,
            max(h.position) FILTER (WHERE h.change IN ('invited', 'granted', 'revoked')) AS account_pos,
            max(h.position) AS last_pos
        FROM proj_access_history h
        WHERE h.collaboration_id = p_collaboration AND h.root_hash > p_after AND h.position <= p_position
        GROUP BY h.root_hash
    ) a
$$;


--
-- Name: ledger_members_page(text, text, bigint, bigint); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.ledger_members_page(p_collaboration text, p_after text, p_position bigint, p_limit bigint) RETURNS TABLE(root_hash text, state text, account text, invited_at timestamp with time zone, granted_at timestamp with time zone)
    LANGUAGE plpgsql STABLE
    SET enable_sort TO 'off'
    SET enable_bitmapscan TO 'off'
    AS $$
BEGIN
    RETURN QUERY
        SELECT f.root_hash, f.state, f.account, f.invited_at, f.granted_at
        FROM ledger_member_fold(p_collaboration, p_after, p_position) f
        WHERE f.state <> 'removed' ORDER BY f.root_hash LIMIT p_limit;
END;
$$;


--
-- Name: ledger_project_access_history(bigint, bigint); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.ledger_project_access_history(p_from bigint, p_to bigint) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    INSERT INTO proj_access_history (position, collaboration_id, root_hash, change, account, reason, actor, at)
    SELECT e.position, substr(e.stream_id, 15), d."rootHash",
           CASE e.event_type WHEN 'IdentityAdded' THEN 'invited' WHEN 'AccessGranted' THEN 'granted'
                             WHEN 'IdentityRemoved' THEN 'removed' ELSE 'revoked' END,
           CASE WHEN e.event_type = 'IdentityAdded' THEN NULL ELSE d.account END,
           d.reason, m.actor, e.recorded_at
    FROM ledger_events e,
         json_to_record(e.data) AS d("rootHash" text, account text, reason text),
         json_to_record(e.metadata) AS m(actor text)
    WHERE e.position > p_from AND e.position <= p_to
      AND e.event_type IN ('IdentityAdded', 'AccessGranted', 'IdentityRemoved', 'AccessRevoked')
      AND e.stream_id LIKE 'collaboration-%';
END;
$$;


--
-- Name: ledger_project_collaborations(bigint, bigint); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.ledger_project_collaborations(p_from bigint, p_to bigint) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    INSERT INTO proj_collaborations (collaboration_id, local_identifier, title, initiator_handle, initiator_name, owner,
                                     universal_link, share_options, started_at, started_position)
    SELECT d."collaborationId", d."localIdentifier", d.title, d."initiatorHandle", d."initiatorName", d.owner,
           d."universalLink", d."shareOptions", e.recorded_at, e.position
    FROM ledger_events e,
         json_to_record(e.data) AS d("collaborationId" text, "localIdentifier" text, title text, "initiatorHandle" text,
                                     "initiatorName" text, owner text, "universalLink" text, "shareOptions" json)
    WHERE e.position > p_from AND e.position <= p_to AND e.event_type = 'CollaborationStarted'
      AND e.stream_id LIKE 'collaboration-%';
END;
$$;


--
-- Name: ledger_project_highlights(bigint, bigint); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.ledger_project_highlights(p_from bigint, p_to bigint) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    INSERT INTO proj_highlights (position, collaboration_id, kind, trigger, mentioned_root_hash, account, at)
    SELECT e.position, substr(e.stream_id, 15), d.kind, d.trigger, d."mentionedRootHash", d.account, e.recorded_at
    FROM ledger_events e, json_to_record(e.data) AS d(kind text, trigger text, "mentionedRootHash" text, account text)
    WHERE e.position > p_from AND e.position <= p_to AND e.event_type = 'HighlightPosted'
      AND e.stream_id LIKE 'collaboration-%';
END;
$$;


--
-- Name: ledger_project_membership(bigint, bigint); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.ledger_project_membership(p_from bigint, p_to bigint) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM ledger_project_access_history(p_from, p_to);
    PERFORM ledger_fold_touched_members(p_from, p_to);
END;
$$;


--
-- Name: ledger_projection_tables(text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.ledger_projection_tables(p_name text) RETURNS text[]
    LANGUAGE sql IMMUTABLE
    AS $$
    SELECT CASE p_name
        WHEN 'collaborations' THEN ARRAY['proj_collaborations']
        WHEN 'membership' THEN ARRAY['proj_access_history', 'proj_members']
        WHEN 'highlights' THEN ARRAY['proj_highlights']
    END
$$;


--
-- Name: ledger_refuse_change(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.ledger_refuse_change() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$;


--
-- Name: ledger_share_options(json); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.ledger_share_options(p_options json) RETURNS json
    LANGUAGE sql STABLE
    AS $$
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


--
-- Name: ledger_str(text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.ledger_str(value text) RETURNS bytea
    LANGUAGE sql STABLE STRICT
    AS $$
    SELECT int4send(octet_length(value)) || convert_to(value, 'UTF8')
$$;


--
-- Name: ledger_subject(text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.ledger_subject(p_account text) RETURNS text
    LANGUAGE plpgsql
    AS $$
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


--
-- Name: ledger_subject_account(text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.ledger_subject_account(p_pseudonym text) RETURNS text
    LANGUAGE plpgsql STABLE
    AS $$
BEGIN
    RETURN coalesce((SELECT s.account FROM ledger_subjects s WHERE s.pseudonym = p_pseudonym), 'erased:' || p_pseudonym);
END;
$$;


--
-- Name: ledger_value(text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.ledger_value(p_value text) RETURNS text
    LANGUAGE sql STABLE
    AS $$
    SELECT CASE WHEN p_value LIKE 'commitment:%' THEN ledger_committed_value(p_value) ELSE p_value END
$$;


SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: ledger_challenges; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ledger_challenges (
    challenge_id uuid NOT NULL,
    collaboration_id text NOT NULL,
    account text NOT NULL,
    challenge bytea NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    used_by_request uuid
);


--
-- Name: ledger_checkpoints; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ledger_checkpoints (
    tree_size bigint NOT NULL,
    root_hash bytea NOT NULL,
    note text NOT NULL,
    signed_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT ledger_checkpoints_root_hash_check CHECK ((octet_length(root_hash) = 32)),
    CONSTRAINT ledger_checkpoints_tree_size_check CHECK ((tree_size >= 0))
);


--
-- Name: ledger_cursor_key; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ledger_cursor_key (
    only_row boolean DEFAULT true NOT NULL,
    key bytea NOT NULL,
    CONSTRAINT ledger_cursor_key_only_row_check CHECK (only_row)
);


--
-- Name: ledger_events; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ledger_events (
    "position" bigint NOT NULL,
    stream_id text NOT NULL,
    version bigint NOT NULL,
    event_id uuid NOT NULL,
    event_type text NOT NULL,
    data json NOT NULL,
    metadata json NOT NULL,
    recorded_at timestamp with time zone NOT NULL,
    hash bytea NOT NULL,
    CONSTRAINT ledger_events_hash_check CHECK ((octet_length(hash) = 32)),
    CONSTRAINT ledger_events_version_check CHECK ((version >= 1))
);


--
-- Name: ledger_head; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ledger_head (
    id boolean DEFAULT true NOT NULL,
    "position" bigint NOT NULL,
    hash bytea NOT NULL,
    CONSTRAINT ledger_head_id_check CHECK (id)
);


--
-- Name: ledger_log_keys; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ledger_log_keys (
    verifier_key text NOT NULL,
    added_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: ledger_migrations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ledger_migrations (
    name text NOT NULL,
    checksum text NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: ledger_personal_values; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ledger_personal_values (
    commitment text NOT NULL,
    pseudonym text NOT NULL,
    kind text NOT NULL,
    value text NOT NULL,
    opening bytea NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT ledger_personal_values_kind_check CHECK ((kind = ANY (ARRAY['title'::text, 'handle'::text, 'name'::text, 'localIdentifier'::text, 'summary'::text, 'groupTitle'::text, 'optionTitle'::text]))),
    CONSTRAINT ledger_personal_values_opening_check CHECK ((octet_length(opening) = 32))
)
WITH (autovacuum_vacuum_threshold='0', autovacuum_vacuum_scale_factor='0');


--
-- Name: ledger_privacy_format; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ledger_privacy_format (
    only_row boolean DEFAULT true NOT NULL,
    pseudonyms_from bigint NOT NULL,
    free_texts_from bigint NOT NULL,
    CONSTRAINT ledger_privacy_format_only_row_check CHECK (only_row)
);


--
-- Name: ledger_projections; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ledger_projections (
    name text NOT NULL,
    "position" bigint DEFAULT 0 NOT NULL,
    owner text,
    lease_until timestamp with time zone,
    status text DEFAULT 'running'::text NOT NULL,
    error text,
    error_position bigint,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT ledger_projections_status_check CHECK ((status = ANY (ARRAY['running'::text, 'stopped'::text])))
);


--
-- Name: ledger_proof_requests; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ledger_proof_requests (
    request_id uuid NOT NULL,
    collaboration_id text NOT NULL,
    account text NOT NULL,
    challenge_id uuid NOT NULL,
    signature bytea NOT NULL,
    public_key bytea NOT NULL,
    public_key_index bigint NOT NULL,
    inclusion_hashes bytea[] NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    status text DEFAULT 'pending'::text NOT NULL,
    reason text,
    root_hash bytea,
    decided_position bigint,
    decided_at timestamp with time zone,
    CONSTRAINT ledger_proof_requests_status_check CHECK ((status = ANY (ARRAY['pending'::text, 'granted'::text, 'rejected'::text, 'throttled'::text, 'refused'::text])))
);


--
-- Name: ledger_published_checkpoints; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ledger_published_checkpoints (
    tree_size bigint NOT NULL,
    note text NOT NULL,
    published_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: ledger_streams; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ledger_streams (
    stream_id text NOT NULL,
    version bigint NOT NULL,
    state json,
    "position" bigint NOT NULL
);


--
-- Name: ledger_subjects; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ledger_subjects (
    account text NOT NULL,
    pseudonym text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
)
WITH (autovacuum_vacuum_threshold='0', autovacuum_vacuum_scale_factor='0');


--
-- Name: ledger_tree_nodes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ledger_tree_nodes (
    level smallint NOT NULL,
    index bigint NOT NULL,
    hash bytea NOT NULL,
    CONSTRAINT ledger_tree_nodes_hash_check CHECK ((octet_length(hash) = 32)),
    CONSTRAINT ledger_tree_nodes_index_check CHECK ((index >= 0)),
    CONSTRAINT ledger_tree_nodes_level_check CHECK (((level >= 1) AND (level < 63)))
);


--
-- Name: ledger_webhooks; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ledger_webhooks (
    id uuid NOT NULL,
    account text NOT NULL,
    collaboration_id text,
    url text NOT NULL,
    secret text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    "position" bigint NOT NULL,
    failing_since timestamp with time zone,
    attempts integer DEFAULT 0 NOT NULL,
    last_error text,
    next_attempt_at timestamp with time zone DEFAULT now() NOT NULL,
    disabled_at timestamp with time zone,
    owner text,
    lease_until timestamp with time zone
);


--
-- Name: proj_access_history; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.proj_access_history (
    "position" bigint NOT NULL,
    collaboration_id text NOT NULL,
    root_hash text NOT NULL,
    change text NOT NULL,
    account text,
    reason text,
    actor text,
    at timestamp with time zone NOT NULL,
    CONSTRAINT proj_access_history_change_check CHECK ((change = ANY (ARRAY['invited'::text, 'granted'::text, 'removed'::text, 'revoked'::text])))
);


--
-- Name: proj_collaborations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.proj_collaborations (
    collaboration_id text NOT NULL,
    local_identifier text NOT NULL,
    title text NOT NULL,
    initiator_handle text NOT NULL,
    initiator_name text,
    owner text NOT NULL,
    universal_link text NOT NULL,
    share_options json,
    started_at timestamp with time zone NOT NULL,
    started_position bigint NOT NULL
);


--
-- Name: proj_highlights; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.proj_highlights (
    "position" bigint NOT NULL,
    collaboration_id text NOT NULL,
    kind text NOT NULL,
    trigger text,
    mentioned_root_hash text,
    account text NOT NULL,
    at timestamp with time zone NOT NULL
);


--
-- Name: proj_members; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.proj_members (
    collaboration_id text NOT NULL,
    root_hash text NOT NULL,
    state text NOT NULL,
    account text,
    invited_at timestamp with time zone,
    invited_position bigint,
    granted_at timestamp with time zone,
    granted_position bigint,
    removed_at timestamp with time zone,
    removed_position bigint,
    "position" bigint NOT NULL,
    CONSTRAINT proj_members_state_check CHECK ((state = ANY (ARRAY['invited'::text, 'granted'::text, 'removed'::text])))
);


--
-- Data for Name: ledger_challenges; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.ledger_challenges (challenge_id, collaboration_id, account, challenge, expires_at, used_by_request) FROM stdin;
52421a8a-8473-4a29-9c5a-d215c677e2a1	b03c98ce-cab3-5bb6-abd1-60391aa281fd	psn-6449a30d-dc43-4cf4-a741-349f5109bd02	\\xc97df01f05ada996e2d2f5ac9289b8a45dc80bcc325dded57f6848d973194e2c	2026-11-25 15:45:24.598133+00	3001556a-1454-4615-888a-55568c9343c6
4448d247-5a6d-42e0-8386-874771315c89	b03c98ce-cab3-5bb6-abd1-60391aa281fd	psn-6449a30d-dc43-4cf4-a741-349f5109bd02	\\x60b406872ff975604579da568be882b52215795d3593719b533e364a1932bc65	2026-11-25 15:45:24.716289+00	3375e712-1189-409e-9a34-a4080e6c0ba3
c5352275-0a0f-4025-a765-92e033872682	b03c98ce-cab3-5bb6-abd1-60391aa281fd	psn-a5afe385-2ff8-4cd0-a1c0-06678abbb9fa	\\xd49c9011432c4fe00e2710b9baacdc5ff5130d416cb283a379d599127d6f55c7	2026-11-25 15:45:24.767912+00	c580211a-884e-4a75-bc87-5b795e3cb980
20bd7085-b696-43b7-a47b-40c36e65d270	b03c98ce-cab3-5bb6-abd1-60391aa281fd	psn-d562bf26-101b-4a5c-86f8-2bc1acb9fd7d	\\x7012f2ed3467126366420ad7a974eafe39535ed8f047e6e941a7ffd2255226cd	2026-11-25 15:45:24.836046+00	0572c2b1-5130-449f-9113-309277c5caf6
a596acad-fd1f-4211-bebb-928034974c6e	b03c98ce-cab3-5bb6-abd1-60391aa281fd	psn-d562bf26-101b-4a5c-86f8-2bc1acb9fd7d	\\x72e2377b36ee461302a9eccc2e85c646737ad3c28f09fd7a9b9d5ea2c2496b6e	2026-11-25 15:45:24.916992+00	10c25ef3-9eb4-474d-a5ef-ce6e0754dffa
9d877e33-72d3-4752-b621-9ed0d6f23363	b03c98ce-cab3-5bb6-abd1-60391aa281fd	psn-d562bf26-101b-4a5c-86f8-2bc1acb9fd7d	\\x2c379e1d5255eed78a354c160dcd9f395107df81fc95c4f929fd80c297394479	2026-11-25 15:45:24.962483+00	1ce27eec-00dc-4aad-97e2-8a5c19d4f71c
0c10003d-3543-4fc7-a560-3262a6b40363	b03c98ce-cab3-5bb6-abd1-60391aa281fd	psn-eb9a1863-c0ff-4d1a-a0f6-9dc4bd8fd043	\\x51bfe49dba7a3ffd25be6fe7524239bc2a6c0eddff5f90238c31f1f558f64bbb	2026-11-25 15:45:25.034822+00	6221cfe7-6f12-4b1a-b401-09cd0cd469f8
89ca2269-23b7-40c8-892d-68379e146234	b03c98ce-cab3-5bb6-abd1-60391aa281fd	psn-6449a30d-dc43-4cf4-a741-349f5109bd02	\\xe2971c895ec4d1af2b8a2c8f9ee203d7491b741e9c02c68c1838bfe6563762a9	2026-11-25 15:45:25.246177+00	0b6fa62f-232e-4706-954c-50a4243e519c
\.


--
-- Data for Name: ledger_checkpoints; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.ledger_checkpoints (tree_size, root_hash, note, signed_at) FROM stdin;
0	\\xe3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855	127.0.0.1/ledger\n0\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n\n— 127.0.0.1/ledger 4yLKjuRH+m0tUoY8Up/TibnL+1B3QaPSaOeL4cBfQl98DDtB81E8jCPTnJS30zFCmbQkDJTV3b+ACS6ydZKxoa6MwQw=\n	2026-11-25 15:43:06.950031+00
1	\\x7b265819a3efcc6c15a47a7fcacaadd7d013f57d915498f54433eaaa5cdb6c55	127.0.0.1/ledger\n1\neyZYGaPvzGwVpHp/ysqt19AT9X2RVJj1RDPqqlzbbFU=\n\n— 127.0.0.1/ledger 4yLKjpR9BvPN/GftJlRnJHU0X72tYFZ5yV7pYbk0XK7xZ/f1iUEVHc4tODE4ozYS2MkME6vDszNsDSR8wWF8xkP57wM=\n	2026-11-25 15:43:24.593697+00
6	\\x9e54e4193d542b824b39ca5e31cba6a056415e1a923bb3069180ee6cce9589f7	127.0.0.1/ledger\n6\nnlTkGT1UK4JLOcpeMcumoFZBXhqSO7MGkYDubM6Vifc=\n\n— 127.0.0.1/ledger 4yLKjkvsbBM2Lz1IHYdrdyrFYkCQEL/P+4OXtmovZOq58NHW9ypYrSJC/46128O4DDfa+EBgKvENX0yEU2MtdNqIFgc=\n	2026-11-25 15:43:24.882044+00
11	\\xd015a9869f843f528fa6abf0dde8847400ecd0fd9226a361bd66a95d6024ea3f	127.0.0.1/ledger\n11\n0BWphp+EP1KPpqvw3eiEdADs0P2SJqNhvWapXWAk6j8=\n\n— 127.0.0.1/ledger 4yLKjrfSVsO+IiOQUURx05SYoUkDdMpYAkdOGM5rrEutOJPpUkhhU32EsQffgbWGoe5NBiSevcZzFD4D8bT7qcaPcAg=\n	2026-11-25 15:43:25.168032+00
16	\\x05180244e7e8b31a8f3c725942e93a78b306ede405e85aa2d84c655e89ac7adb	127.0.0.1/ledger\n16\nBRgCROfosxqPPHJZQuk6eLMG7eQF6Fqi2ExlXomsets=\n\n— 127.0.0.1/ledger 4yLKjpuoBrObyN+2oTA5w9IpQaTvzyQQfOd5TdPseS69JF/U+wZYJZrQyFnGp5TA2meTW4JsY6X/Y5p6OwShmXmg7gs=\n	2026-11-25 15:43:25.46355+00
17	\\x351604dc6904de90f93b26d6cd20397a039c3c3b3c9f813c82a54df0fa98f675	127.0.0.1/ledger\n17\nNRYE3GkE3pD5OybWzSA5egOcPDs8n4E8gqVN8PqY9nU=\n\n— 127.0.0.1/ledger 4yLKjscthnEeSe+TikyVzg0iGwop7Fe1CX6jEsmXX/SS2DUQFu9O1M05Og+jPVBMKwrz27GKWyYwdAYIThrdM8jS6AQ=\n	2026-11-25 15:43:25.7133+00
\.


--
-- Data for Name: ledger_cursor_key; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.ledger_cursor_key (only_row, key) FROM stdin;
t	\\x1b199fcfdbc148fbb0a8d39d3eb5e703ec406b3f226c4fde82371721c0e8b129
\.


--
-- Data for Name: ledger_events; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.ledger_events ("position", stream_id, version, event_id, event_type, data, metadata, recorded_at, hash) FROM stdin;
1	collaboration-b03c98ce-cab3-5bb6-abd1-60391aa281fd	1	b03c98ce-cab3-5bb6-abd1-60391aa281fd	CollaborationStarted	{"collaborationId":"b03c98ce-cab3-5bb6-abd1-60391aa281fd","initiatorHandle":"commitment:dPz9r5H8w0PeK5voeRKvtnlh8dZDYbjZnykxrhsDtaI=","initiatorName":"commitment:hXdwanc/3fXIU4cgPlWuTOIupdLXmeJjBStkEPK+r34=","localIdentifier":"commitment:KZmycX7XAbuklGikR0Z03N4ahZdc0BL56DNa4/zHOG8=","owner":"psn-ab1852b5-0215-4556-ae2d-afd23085628e","shareOptions":{"groups":[{"identifier":"permission","kind":"picker","options":[{"identifier":"rw","selected":true,"title":"commitment:F72q9Tz+0pfsDeRaZkoRcApOPtrnBSP2SiUEhjw1gNc="},{"identifier":"ro","selected":false,"title":"commitment:87r3rxEsPp4euetMjMsajzk49Z87XdNzP+tvAD0AEl0="}],"title":"commitment:y1Ibvm8lCwQEQ5vyY1xv/Fa2JYKz5vuiCJcnV1Cjr4I="}],"summary":"commitment:tUGqNbAMjqsg5GMiWoQJ3rPLpCmkdj3bJCMbFJ+n3lk="},"title":"commitment:9GArp+x7hCujJxahTt5wXu87AInbIKgNVRdL1ILmXDQ=","universalLink":"http://127.0.0.1:0/collaborations/b03c98ce-cab3-5bb6-abd1-60391aa281fd"}	{"actor":"psn-ab1852b5-0215-4556-ae2d-afd23085628e","correlationId":"491fcfeee18a93eb4b870990a2528fc6a805f06a7af536d3087ace7fdedb3dce","requestId":"40deba11884b146c576b88e844c60445"}	2026-11-25 15:43:24.432321+00	\\x59cbe4eb9d1d78e03495407a5a9c40df0fbf4eb1987f4319e5147764389c4b8b
2	collaboration-b03c98ce-cab3-5bb6-abd1-60391aa281fd	2	01a21360-3f6a-75a6-ac72-a0510ef4a924	IdentityAdded	{"rootHash":"zDda5s/xdiuTDIzQGImtrQspye6B5tXbwQ54riONUMs="}	{"actor":"psn-ab1852b5-0215-4556-ae2d-afd23085628e","requestId":"40deba11884b146c576b88e844c60446"}	2026-11-25 15:43:24.529958+00	\\x5e0c1c059b9ae3041a9d6432a3ab2c6f37c66a01d634053fd282767aff403116
3	collaboration-b03c98ce-cab3-5bb6-abd1-60391aa281fd	3	01a21360-3f6a-7d46-be67-0201b64c242a	IdentityAdded	{"rootHash":"3sBmHbh/8bplk9nmc3+amQPYg+i2NKZ/HfZAp9UXvX0="}	{"actor":"psn-ab1852b5-0215-4556-ae2d-afd23085628e","requestId":"40deba11884b146c576b88e844c60446"}	2026-11-25 15:43:24.529958+00	\\xd84fac62069e6167b06195001b595d7b51749e0014a8ba245ee8c9ae3845e5b3
4	collaboration-b03c98ce-cab3-5bb6-abd1-60391aa281fd	4	01a21360-3f6a-7dd4-8cb6-5b2a9a4c4d43	IdentityAdded	{"rootHash":"X+XGhqqlp2wV/Z0K5BscWrHfhn2w8WVXlIZQrpl4xuI="}	{"actor":"psn-ab1852b5-0215-4556-ae2d-afd23085628e","requestId":"40deba11884b146c576b88e844c60446"}	2026-11-25 15:43:24.529958+00	\\xc2b6b8e69c6e0188441daa8cec10d490fc8934ca11482939cb4571969b266ae5
5	collaboration-b03c98ce-cab3-5bb6-abd1-60391aa281fd	5	215254da-fb72-5f76-9445-e7e77eae3f68	AccessGranted	{"account":"psn-6449a30d-dc43-4cf4-a741-349f5109bd02","challenge":"yX3wHwWtqZbi0vWskom4pF3IC8wyXd7Vf2hI2XMZTiw=","challengeId":"52421a8a-8473-4a29-9c5a-d215c677e2a1","inclusionHashes":["cxHt+/6VVHgp/OGX+8YG8MSf5tf2kR43wNxgum3k0s4=","wYMQM5A/LNRA7e+1zWHbARwtQ8IPpBsmQvx9w0taOzw=","h0ZISslXGuUkg7NJ/8mMFLaUXdJgQx8JeJM71pAHNi0="],"proofRequestId":"3001556a-1454-4615-888a-55568c9343c6","publicKey":"BI4MMHpa1wOAlgLl6BpnUduU4hnrPuKYw3NtWIUHOoMmd2e4u4F88cvyRQ9kueTWPpPJWNyD0ensOzR5ddXPQu4=","publicKeyIndex":2,"rootHash":"zDda5s/xdiuTDIzQGImtrQspye6B5tXbwQ54riONUMs=","signature":"MEUCIA1feRM8+ccFrVbWCu2Vo3WizfskBkxyEU/wYmbrlXXqAiEA6ZlC2ZSbgN/4VfrfQXE5FSyFQWLOTCrsfXA9XFslLMs="}	{"actor":"psn-6449a30d-dc43-4cf4-a741-349f5109bd02","causationId":"3001556a-1454-4615-888a-55568c9343c6"}	2026-11-25 15:43:24.671036+00	\\x9fafe1caaadbb9ccfbceb4e0b9f10516f818dd12f214d605e750d19fd922248d
6	collaboration-b03c98ce-cab3-5bb6-abd1-60391aa281fd	6	ec05d1df-5989-544c-9960-9fa5f051b6dc	AccessGranted	{"account":"psn-6449a30d-dc43-4cf4-a741-349f5109bd02","challenge":"YLQGhy/5dWBFedpWi+iCtSIVeV01k3GbUz42ShkyvGU=","challengeId":"4448d247-5a6d-42e0-8386-874771315c89","inclusionHashes":["8BHrdNTikNx2Yb+cza188iUQBoYJ+etafSc5zfdho4E=","9K620KCNjibAVJgiF0Ju864A9LwH1P9snwMvb50qUiE=","+Xccdbv3j1gDVLXDH0r/VPifxjoVUY8a54HdjBrviwc="],"proofRequestId":"3375e712-1189-409e-9a34-a4080e6c0ba3","publicKey":"BKr2KxztZlyNB41dB7AhnoaBrXnDNcr7XayNWgnmhOkDhXhVHD0XE8y+E7x2ztpiD9Y4cElrT48inWC+8iV2hxQ=","publicKeyIndex":5,"rootHash":"zDda5s/xdiuTDIzQGImtrQspye6B5tXbwQ54riONUMs=","signature":"z3n5++I6toXUW+rECge/BYxIN8xHM/cz29hKOtJ5ZSIC7wrPVn++DQsVEe7GFgbIz/ofNSv8+92sjxGhO5L4CQ=="}	{"actor":"psn-6449a30d-dc43-4cf4-a741-349f5109bd02","causationId":"3375e712-1189-409e-9a34-a4080e6c0ba3"}	2026-11-25 15:43:24.749753+00	\\x488a82cbd6411e0250e5177e705641827fddf07edefbaf9c08bfaf87af10c2df
7	collaboration-b03c98ce-cab3-5bb6-abd1-60391aa281fd	7	669e4333-15c2-56a2-9128-f24c8af1d5ba	AccessGranted	{"account":"psn-a5afe385-2ff8-4cd0-a1c0-06678abbb9fa","challenge":"1JyQEUMsT+AOJxC5uqzcX/UTDUFssoOjedWZEn1vVcc=","challengeId":"c5352275-0a0f-4025-a765-92e033872682","inclusionHashes":["I90a44jYt7tugZN5bvJNGWIzHZ40UaIU5As0etQ1uh0=","2FYgcfLjbc+cqdq9trqEIeXJCbFRAoR+uBPVHpIn5L4=","2dPWF/omG6aJo3pAAlCfM/CSbSH8mmD9me9hnHmRDEI="],"proofRequestId":"c580211a-884e-4a75-bc87-5b795e3cb980","publicKey":"BG8FeNADLKPfdgtj1BpjbFrJzUUDaHWyKmcwLfhsHApU++vguYnf9eGi7RqAFbavb+5rcQawVfvQaAp2J72T9/g=","publicKeyIndex":3,"rootHash":"3sBmHbh/8bplk9nmc3+amQPYg+i2NKZ/HfZAp9UXvX0=","signature":"MEUCIQCHmKg0OV9w3JV/jAJLwAVPJIQTGIJxL3KDuhfjbbeVngIgGR3cmEoLGnDZzgpCCy7I93dg2yGEhy8ryJ8pglqhzp4="}	{"actor":"psn-a5afe385-2ff8-4cd0-a1c0-06678abbb9fa","causationId":"c580211a-884e-4a75-bc87-5b795e3cb980"}	2026-11-25 15:43:24.8114+00	\\xdcd10dc705ff099330ec63bedc360db78f5b76e9f8e8ed489895a1c412de1a9c
8	collaboration-b03c98ce-cab3-5bb6-abd1-60391aa281fd	8	7187aeb7-0d11-5326-bbe9-f4e6a1b53aa6	AccessGranted	{"account":"psn-d562bf26-101b-4a5c-86f8-2bc1acb9fd7d","challenge":"cBLy7TRnEmNmQgrXqXTq/jlTXtjwR+bpQaf/0iVSJs0=","challengeId":"20bd7085-b696-43b7-a47b-40c36e65d270","inclusionHashes":["gT1JKnJszlgFguQ8k0nUYWZr23ni/OrcsQ4XN/e2r98=","U12+YiZ5w6RWnLMR1FuTlZ2UmW40xnbUKDZvy5lvanQ=","hk293EQ56XcAR7c6I2Dx3uHPOCDhp/jYOTSri9kuAVE="],"proofRequestId":"0572c2b1-5130-449f-9113-309277c5caf6","publicKey":"BDwxoYy+kyekI2Xk6s32sv+H1X09+fOfp8MRGmism9H/JhvIkTScI3K9LYH8YgBaLXy1kHuaJFxT2n99RXMimdE=","publicKeyIndex":0,"rootHash":"X+XGhqqlp2wV/Z0K5BscWrHfhn2w8WVXlIZQrpl4xuI=","signature":"MEUCIQDQU0GDomjARLx53dPPpjp2j0mCRBFm3oktJg6unMlKJQIgfMKWo7mHISt4qLYvmOHQ1VIxQh53opV3dE8CI+po3+w="}	{"actor":"psn-d562bf26-101b-4a5c-86f8-2bc1acb9fd7d","causationId":"0572c2b1-5130-449f-9113-309277c5caf6"}	2026-11-25 15:43:24.877267+00	\\x4acf5bd9ab597a4366bcea31821988d105f4270a2f11a8e45bcbf65be709d867
9	collaboration-b03c98ce-cab3-5bb6-abd1-60391aa281fd	9	85202708-a662-55df-86a6-1854ccd38a91	AccessGranted	{"account":"psn-d562bf26-101b-4a5c-86f8-2bc1acb9fd7d","challenge":"cuI3ezbuRhMCqezMLoXGRnN608KPCf16m51eosJJa24=","challengeId":"a596acad-fd1f-4211-bebb-928034974c6e","inclusionHashes":["YxulZL7TiqUi1jfKgdUQlHo08/Q6II+Tvu61yxblP1Y=","U12+YiZ5w6RWnLMR1FuTlZ2UmW40xnbUKDZvy5lvanQ=","hk293EQ56XcAR7c6I2Dx3uHPOCDhp/jYOTSri9kuAVE="],"proofRequestId":"10c25ef3-9eb4-474d-a5ef-ce6e0754dffa","publicKey":"BEHD2DRhn/I35e3DCsmvE6z1GLyvG0q28nsIxjUyuijCNGSGpPBCRoMDZYE+PECjIwzndMQSjEGtzIoxzg5PB5Y=","publicKeyIndex":1,"rootHash":"X+XGhqqlp2wV/Z0K5BscWrHfhn2w8WVXlIZQrpl4xuI=","signature":"WixQjAaHoxROh9HDlRa/hYGyyxmUiSHFoWWXElBHligraJOwZFkcZddfQ3qci18uuJ9o6gfgnglJza9uS06wVg=="}	{"actor":"psn-d562bf26-101b-4a5c-86f8-2bc1acb9fd7d","causationId":"10c25ef3-9eb4-474d-a5ef-ce6e0754dffa"}	2026-11-25 15:43:24.938669+00	\\x9989390d6275fc5921ccd9d84aa0ae0c6ee7665088c23dc374f80f059b730d0e
10	collaboration-b03c98ce-cab3-5bb6-abd1-60391aa281fd	10	aea7ed4f-129b-5e5f-bbc9-87ec3e2f3f91	AccessGranted	{"account":"psn-d562bf26-101b-4a5c-86f8-2bc1acb9fd7d","challenge":"LDeeHVJV7teKNUwWDc2fOVEH34H8lcT5Kf2Awpc5RHk=","challengeId":"9d877e33-72d3-4752-b621-9ed0d6f23363","inclusionHashes":["UAMJb+UOvJtw6AJRcKcp9xzAOmEl3yPdf+0+6ioSG1s=","fqlTp+W7+zXHRDnvlwbWyhcDBRRF1Zlt2S1Qg2jfpXA=","Ecn5cAjNtWE+8dIrB255wNkkm1n7c7/Xy/cDLUAEUU0="],"proofRequestId":"1ce27eec-00dc-4aad-97e2-8a5c19d4f71c","publicKey":"BJ8s3rNCiQMV6kk+QQ0+l1vZbYGn90CwStfigjIPpUn/QGX1SA8TbesBWcwVuDT3qG842qKQMfZSjLeibes6XhM=","publicKeyIndex":7,"rootHash":"X+XGhqqlp2wV/Z0K5BscWrHfhn2w8WVXlIZQrpl4xuI=","signature":"MEQCIClDkh/zdLyPfIfpgXMv1WDrktYeToLWsgDd+OZmkQDmAiBaMvI4XhEdQKa9CMRj+OCTpYzZ3XJbLjLDN+VhLHxXJw=="}	{"actor":"psn-d562bf26-101b-4a5c-86f8-2bc1acb9fd7d","causationId":"1ce27eec-00dc-4aad-97e2-8a5c19d4f71c"}	2026-11-25 15:43:24.995064+00	\\x70dfa9a090983358318cad62a1cbd143c27b335c2ff5610cc5190ccc077d7b41
11	collaboration-b03c98ce-cab3-5bb6-abd1-60391aa281fd	11	b6c4fd43-d129-59d8-86b4-62b8c1ecfdee	ProofRejected	{"account":"psn-eb9a1863-c0ff-4d1a-a0f6-9dc4bd8fd043","challengeId":"0c10003d-3543-4fc7-a560-3262a6b40363","proofRequestId":"6221cfe7-6f12-4b1a-b401-09cd0cd469f8","reason":"identity_claimed_by_another_account","rootHash":"3sBmHbh/8bplk9nmc3+amQPYg+i2NKZ/HfZAp9UXvX0="}	{"actor":"psn-eb9a1863-c0ff-4d1a-a0f6-9dc4bd8fd043","causationId":"6221cfe7-6f12-4b1a-b401-09cd0cd469f8"}	2026-11-25 15:43:25.062316+00	\\x17e72dd3630b12012326c8f08c498965adec3227eadfe4c0363315e206e77d91
12	collaboration-b03c98ce-cab3-5bb6-abd1-60391aa281fd	12	01a21360-41a1-7404-9578-a86a213b17c0	HighlightPosted	{"account":"psn-6449a30d-dc43-4cf4-a741-349f5109bd02","kind":"change","trigger":"edit"}	{"actor":"psn-6449a30d-dc43-4cf4-a741-349f5109bd02","requestId":"40deba11884b146c576b88e844c60455"}	2026-11-25 15:43:25.096676+00	\\xce6734341bb0b947ff54cc4b0140bf623e1331ad53010d6113ff1705614e19f2
16	collaboration-b03c98ce-cab3-5bb6-abd1-60391aa281fd	16	c596f62e-ff37-5f35-a054-ad6de890128c	ProofRejected	{"account":"psn-6449a30d-dc43-4cf4-a741-349f5109bd02","challengeId":"89ca2269-23b7-40c8-892d-68379e146234","proofRequestId":"0b6fa62f-232e-4706-954c-50a4243e519c","reason":"identity_removed","rootHash":"zDda5s/xdiuTDIzQGImtrQspye6B5tXbwQ54riONUMs="}	{"actor":"psn-6449a30d-dc43-4cf4-a741-349f5109bd02","causationId":"0b6fa62f-232e-4706-954c-50a4243e519c"}	2026-11-25 15:43:25.278232+00	\\xcf109bbeb41f70dbcaf27b9fb11c8e2f1c6c4b6f2ec176a90e14fbbeefecb556
13	collaboration-b03c98ce-cab3-5bb6-abd1-60391aa281fd	13	01a21360-41cc-7ce3-8872-a6149e30ff39	HighlightPosted	{"account":"psn-d562bf26-101b-4a5c-86f8-2bc1acb9fd7d","kind":"mention","mentionedRootHash":"3sBmHbh/8bplk9nmc3+amQPYg+i2NKZ/HfZAp9UXvX0="}	{"actor":"psn-d562bf26-101b-4a5c-86f8-2bc1acb9fd7d","requestId":"40deba11884b146c576b88e844c60456"}	2026-11-25 15:43:25.135353+00	\\xfa83de1849b26763fab546b5b3ebdbcdaeb142f779b6ea46dea082c15f5563b8
14	collaboration-b03c98ce-cab3-5bb6-abd1-60391aa281fd	14	01a21360-422a-76ef-b7e2-ea91e2fdf31d	IdentityRemoved	{"account":"psn-6449a30d-dc43-4cf4-a741-349f5109bd02","rootHash":"zDda5s/xdiuTDIzQGImtrQspye6B5tXbwQ54riONUMs="}	{"actor":"psn-ab1852b5-0215-4556-ae2d-afd23085628e","requestId":"40deba11884b146c576b88e844c60459"}	2026-11-25 15:43:25.229733+00	\\xe00b821a49bb585f6b456edfc847f08bf617d9c2e4d28d7886a632729b570d8e
15	collaboration-b03c98ce-cab3-5bb6-abd1-60391aa281fd	15	01a21360-422a-7f3d-90b5-f39f759c4b4e	AccessRevoked	{"account":"psn-6449a30d-dc43-4cf4-a741-349f5109bd02","reason":"identity_removed","rootHash":"zDda5s/xdiuTDIzQGImtrQspye6B5tXbwQ54riONUMs="}	{"actor":"psn-ab1852b5-0215-4556-ae2d-afd23085628e","requestId":"40deba11884b146c576b88e844c60459"}	2026-11-25 15:43:25.229733+00	\\xc074819bddecdb612d7a8e9c563b7202de55f655ad4fbbb04d7cb3c9cd74f289
17	privacy	1	01a21360-4350-747c-b55c-8d999cc358b9	PersonalDataErased	{"pseudonym":"psn-a5afe385-2ff8-4cd0-a1c0-06678abbb9fa","reason":"DEMO-1","requester":"psn-0d72aec3-2b7f-46bc-968a-2f32775bc3d0"}	{"actor":"psn-0d72aec3-2b7f-46bc-968a-2f32775bc3d0"}	2026-11-25 15:43:25.521103+00	\\xa53e63140140f7013044301491a5729677d1cd7c95758768c64ba4260b799b80
\.


--
-- Data for Name: ledger_head; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.ledger_head (id, "position", hash) FROM stdin;
t	17	\\xa53e63140140f7013044301491a5729677d1cd7c95758768c64ba4260b799b80
\.


--
-- Data for Name: ledger_log_keys; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.ledger_log_keys (verifier_key, added_at) FROM stdin;
127.0.0.1/ledger+e322ca8e+Ac5bSUxUuXD89t5Y0UA+7ndXasT/RY1i5olyRmYMiFlO	2026-11-25 15:43:06.904109+00
\.


--
-- Data for Name: ledger_migrations; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.ledger_migrations (name, checksum, applied_at) FROM stdin;
0001_event_log.sql	95fd9d616a8aa575b2fdf8c776ecd5f81005680687f51238d73c49660a40c3cf	2026-11-25 15:43:06.001546+00
0002_challenges_and_proofs.sql	577b58bee8041870e6f54c908b33e50414747f8f8904a29109a9a4a6e426acb3	2026-11-25 15:43:06.001546+00
0003_projections.sql	936316ff483450091318c4dbe3d275e91fa25caab45af38700386ad67636ca43	2026-11-25 15:43:06.001546+00
0004_fast_rebuild.sql	934763c73179462bb50e80801e108bab98b0732587b33a83abca6d758f4cd764	2026-11-25 15:43:06.001546+00
0005_append_large_groups.sql	e4d015d5748dd6b3f0f9f49010e5f44c75befd5566e9977bf57c2743aecfcbee	2026-11-25 15:43:06.001546+00
0006_proof_claims.sql	271e2c65603c6b9a3157ab431868b682cba10feac640ada629ffbb7ba12451f9	2026-11-25 15:43:06.001546+00
0007_append_committed.sql	4f73fd4b44fad78eb4169fdb80199755f885e90ec6057c4726e7d81c2cfad01c	2026-11-25 15:43:06.001546+00
0008_members_at_from_current.sql	3e7b2d5475efa4dec517d2830b10399dab2866af8d1c89e0212e51a23a2cacb8	2026-11-25 15:43:06.001546+00
0009_append_cheaper_calls.sql	39b3f529ef968cadde4be666ab8d255e79e754d9f180ddf615159c5b47a2277b	2026-11-25 15:43:06.001546+00
0010_decide_proofs_in_one_commit.sql	4a54971f9d0f0c778587bf9e192bb9a14333412ab3ebb3b0af21ac6ec64b6dd3	2026-11-25 15:43:06.001546+00
0011_verifiable_log.sql	d318cbecb007d1a2f56912f47bbfef5059212d68da0da1d55923a241dcd8c30a	2026-11-25 15:43:06.001546+00
0012_two_proof_paths.sql	2e29c5b824e4c56c4c1f5e7b98af66879dcafa84d1f5bf0b95a94949c8d8d6f6	2026-11-25 15:43:06.001546+00
0013_paged_reads.sql	581f1818a0bcd2096c4daaffb8d24971117f65e2d9e4ca326855f0e9eb131334	2026-11-25 15:43:06.001546+00
0014_webhooks.sql	19fcb142239cc08abf9343766895b85d9730c3140badf88d82e0d618411c2304	2026-11-25 15:43:06.001546+00
0015_shared_throttle.sql	4e1d112bc9d740df9b7bbe12d30a7774904356a6a15b77b2bfd26e897f57b48a	2026-11-25 15:43:06.001546+00
0016_one_architecture.sql	09bacb1637e474edebc1fa1c2f998b36c246d68cc486a61471dc3f3b707bbe59	2026-11-25 15:43:06.001546+00
0017_personal_data.sql	ff4e952358de5552f29a033c4b5616a8462cf48c896a30accc0c8e40c8eee0a4	2026-11-25 15:43:06.001546+00
0018_published_checkpoints.sql	851640407bd0b2373cee6b076ede2174ee053b1709ec13a1ca0ac66c92666433	2026-11-25 15:43:06.001546+00
0019_replication_gate.sql	8524bbc7615884ad499e254e67fb8db064bd12c681ba525b7a09a9a7062c95f3	2026-11-25 15:43:06.001546+00
0020_erasure_without_way_back.sql	caf4ccb40f2f3d6d78e43f934e7e1f3de7e55626048feba8134e886b829be226	2026-11-25 15:43:06.001546+00
0021_erased_pending_proofs.sql	d631525910cb0e52567ddb7daa45a6cdc1c0b7cb3d9951deb75441022a50ae86	2026-11-25 15:43:06.001546+00
0022_callers_by_pseudonym.sql	e1ea69d8e460b3afe1a21dd3e524a8fc003138db5e0fe7575047221ccba877ef	2026-11-25 15:43:06.001546+00
\.


--
-- Data for Name: ledger_personal_values; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.ledger_personal_values (commitment, pseudonym, kind, value, opening, created_at) FROM stdin;
commitment:9GArp+x7hCujJxahTt5wXu87AInbIKgNVRdL1ILmXDQ=	psn-ab1852b5-0215-4556-ae2d-afd23085628e	title	Trip plan	\\x4156ce0a8ece397e91290562b0183f9d355fad5a0f31b7e289beceb6f10b44ca	2026-11-25 15:43:24.425845+00
commitment:dPz9r5H8w0PeK5voeRKvtnlh8dZDYbjZnykxrhsDtaI=	psn-ab1852b5-0215-4556-ae2d-afd23085628e	handle	devin@example.com	\\xd9e7c4f455f9b75a5e04b58fd069eee18d04e99be0c1c319a25ddebbd60c11eb	2026-11-25 15:43:24.425845+00
commitment:hXdwanc/3fXIU4cgPlWuTOIupdLXmeJjBStkEPK+r34=	psn-ab1852b5-0215-4556-ae2d-afd23085628e	name	Devin	\\x42aa27863f80fad1560a192200395b2980282fddaf1f65f4250053c43618438e	2026-11-25 15:43:24.425845+00
commitment:KZmycX7XAbuklGikR0Z03N4ahZdc0BL56DNa4/zHOG8=	psn-ab1852b5-0215-4556-ae2d-afd23085628e	localIdentifier	trip-plan.doc	\\x93f4fdc65968919496d6fda9c70f5601045cf17a995309da0ff620373d3e743c	2026-11-25 15:43:24.425845+00
commitment:tUGqNbAMjqsg5GMiWoQJ3rPLpCmkdj3bJCMbFJ+n3lk=	psn-ab1852b5-0215-4556-ae2d-afd23085628e	summary	Anyone can make changes	\\xfc53c15f8faeea8812f720bf0c301035db3feb8b3ec3f05c675f7e5ab98efe58	2026-11-25 15:43:24.425845+00
commitment:y1Ibvm8lCwQEQ5vyY1xv/Fa2JYKz5vuiCJcnV1Cjr4I=	psn-ab1852b5-0215-4556-ae2d-afd23085628e	groupTitle	Permission	\\x44a4f09d79b8de45ca01f36334abb6f1c90527d9c102ede03586ffa7d9b5964c	2026-11-25 15:43:24.425845+00
commitment:F72q9Tz+0pfsDeRaZkoRcApOPtrnBSP2SiUEhjw1gNc=	psn-ab1852b5-0215-4556-ae2d-afd23085628e	optionTitle	Can make changes	\\x21b8b4708d955575e025c51c06a8913bd75ecb81dd4cf439f8d24d15be5e96da	2026-11-25 15:43:24.425845+00
commitment:87r3rxEsPp4euetMjMsajzk49Z87XdNzP+tvAD0AEl0=	psn-ab1852b5-0215-4556-ae2d-afd23085628e	optionTitle	View only	\\x42a03de103778c55c8d72557c76bdc0ff08179952375edc2c91545a296072088	2026-11-25 15:43:24.425845+00
\.


--
-- Data for Name: ledger_privacy_format; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.ledger_privacy_format (only_row, pseudonyms_from, free_texts_from) FROM stdin;
t	1	1
\.


--
-- Data for Name: ledger_projections; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.ledger_projections (name, "position", owner, lease_until, status, error, error_position, updated_at) FROM stdin;
collaborations	17	projector-E65E9FFE	2026-11-25 15:43:38.62473+00	running	\N	\N	2026-11-25 15:43:25.532677+00
membership	17	projector-E65E9FFE	2026-11-25 15:43:38.62473+00	running	\N	\N	2026-11-25 15:43:25.532677+00
highlights	17	projector-E65E9FFE	2026-11-25 15:43:38.62473+00	running	\N	\N	2026-11-25 15:43:25.532677+00
\.


--
-- Data for Name: ledger_proof_requests; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.ledger_proof_requests (request_id, collaboration_id, account, challenge_id, signature, public_key, public_key_index, inclusion_hashes, created_at, status, reason, root_hash, decided_position, decided_at) FROM stdin;
3001556a-1454-4615-888a-55568c9343c6	b03c98ce-cab3-5bb6-abd1-60391aa281fd	psn-6449a30d-dc43-4cf4-a741-349f5109bd02	52421a8a-8473-4a29-9c5a-d215c677e2a1	\\x304502200d5f79133cf9c705ad56d60aed95a375a2cdfb24064c72114ff06266eb9575ea022100e99942d9949b80dff855fadf417139152c854162ce4c2aec7d703d5c5b252ccb	\\x048e0c307a5ad703809602e5e81a6751db94e219eb3ee298c3736d5885073a83267767b8bb817cf1cbf2450f64b9e4d63e93c958dc83d1e9ec3b347975d5cf42ee	2	{"\\\\x7311edfbfe95547829fce197fbc606f0c49fe6d7f6911e37c0dc60ba6de4d2ce","\\\\xc1831033903f2cd440edefb5cd61db011c2d43c20fa41b2642fc7dc34b5a3b3c","\\\\x8746484ac9571ae52483b349ffc98c14b6945dd260431f0978933bd69007362d"}	2026-11-25 15:43:24.658916+00	granted	\N	\\xcc375ae6cff1762b930c8cd01889adad0b29c9ee81e6d5dbc10e78ae238d50cb	5	2026-11-25 15:43:24.658916+00
3375e712-1189-409e-9a34-a4080e6c0ba3	b03c98ce-cab3-5bb6-abd1-60391aa281fd	psn-6449a30d-dc43-4cf4-a741-349f5109bd02	4448d247-5a6d-42e0-8386-874771315c89	\\xcf79f9fbe23ab685d45beac40a07bf058c4837cc4733f733dbd84a3ad279652202ef0acf567fbe0d0b1511eec61606c8cffa1f352bfcfbddac8f11a13b92f809	\\x04aaf62b1ced665c8d078d5d07b0219e8681ad79c335cafb5dac8d5a09e684e9038578551c3d1713ccbe13bc76ceda620fd63870496b4f8f229d60bef225768714	5	{"\\\\xf011eb74d4e290dc7661bf9ccdad7cf22510068609f9eb5a7d2739cdf761a381","\\\\xf4aeb6d0a08d8e26c054982217426ef3ae00f4bc07d4ff6c9f032f6f9d2a5221","\\\\xf9771c75bbf78f580354b5c31f4aff54f89fc63a15518f1ae781dd8c1aef8b07"}	2026-11-25 15:43:24.744765+00	granted	\N	\\xcc375ae6cff1762b930c8cd01889adad0b29c9ee81e6d5dbc10e78ae238d50cb	6	2026-11-25 15:43:24.744765+00
c580211a-884e-4a75-bc87-5b795e3cb980	b03c98ce-cab3-5bb6-abd1-60391aa281fd	psn-a5afe385-2ff8-4cd0-a1c0-06678abbb9fa	c5352275-0a0f-4025-a765-92e033872682	\\x30450221008798a834395f70dc957f8c024bc0054f2484131882712f7283ba17e36db7959e0220191ddc984a0b1a70d9ce0a420b2ec8f77760db2184872f2bc89f29825aa1ce9e	\\x046f0578d0032ca3df760b63d41a636c5ac9cd45036875b22a67302df86c1c0a54fbebe0b989dff5e1a2ed1a8015b6af6fee6b7106b055fbd0680a7627bd93f7f8	3	{"\\\\x23dd1ae388d8b7bb6e8193796ef24d1962331d9e3451a214e40b347ad435ba1d","\\\\xd8562071f2e36dcf9ca9dabdb6ba8421e5c909b15102847eb813d51e9227e4be","\\\\xd9d3d617fa261ba689a37a4002509f33f0926d21fc9a60fd99ef619c79910c42"}	2026-11-25 15:43:24.797868+00	granted	\N	\\xdec0661db87ff1ba6593d9e6737f9a9903d883e8b634a67f1df640a7d517bd7d	7	2026-11-25 15:43:24.797868+00
0572c2b1-5130-449f-9113-309277c5caf6	b03c98ce-cab3-5bb6-abd1-60391aa281fd	psn-d562bf26-101b-4a5c-86f8-2bc1acb9fd7d	20bd7085-b696-43b7-a47b-40c36e65d270	\\x3045022100d0534183a268c044bc79ddd3cfa63a768f4982441166de892d260eae9cc94a2502207cc296a3b987212b78a8b62f98e1d0d55231421e77a29577744f0223ea68dfec	\\x043c31a18cbe9327a42365e4eacdf6b2ff87d57d3df9f39fa7c3111a68ac9bd1ff261bc891349c2372bd2d81fc62005a2d7cb5907b9a245c53da7f7d45732299d1	0	{"\\\\x813d492a726cce580582e43c9349d461666bdb79e2fceadcb10e1737f7b6afdf","\\\\x535dbe622679c3a4569cb311d45b93959d94996e34c676d428366fcb996f6a74","\\\\x864dbddc4439e9770047b73a2360f1dee1cf3820e1a7f8d83934ab8bd92e0151"}	2026-11-25 15:43:24.875762+00	granted	\N	\\x5fe5c686aaa5a76c15fd9d0ae41b1c5ab1df867db0f16557948650ae9978c6e2	8	2026-11-25 15:43:24.875762+00
10c25ef3-9eb4-474d-a5ef-ce6e0754dffa	b03c98ce-cab3-5bb6-abd1-60391aa281fd	psn-d562bf26-101b-4a5c-86f8-2bc1acb9fd7d	a596acad-fd1f-4211-bebb-928034974c6e	\\x5a2c508c0687a3144e87d1c39516bf8581b2cb19948921c5a1659712504796282b6893b064591c65d75f437a9c8b5f2eb89f68ea07e09e0949cdaf6e4b4eb056	\\x0441c3d834619ff237e5edc30ac9af13acf518bcaf1b4ab6f27b08c63532ba28c2346486a4f04246830365813e3c40a3230ce774c4128c41adcc8a31ce0e4f0796	1	{"\\\\x631ba564bed38aa522d637ca81d510947a34f3f43a208f93beeeb5cb16e53f56","\\\\x535dbe622679c3a4569cb311d45b93959d94996e34c676d428366fcb996f6a74","\\\\x864dbddc4439e9770047b73a2360f1dee1cf3820e1a7f8d83934ab8bd92e0151"}	2026-11-25 15:43:24.936627+00	granted	\N	\\x5fe5c686aaa5a76c15fd9d0ae41b1c5ab1df867db0f16557948650ae9978c6e2	9	2026-11-25 15:43:24.936627+00
1ce27eec-00dc-4aad-97e2-8a5c19d4f71c	b03c98ce-cab3-5bb6-abd1-60391aa281fd	psn-d562bf26-101b-4a5c-86f8-2bc1acb9fd7d	9d877e33-72d3-4752-b621-9ed0d6f23363	\\x304402202943921ff374bc8f7c87e981732fd560eb92d61e4e82d6b200ddf8e6669100e602205a32f2385e111d40a6bd08c463f8e093a58cd9dd725b2e32c337e5612c7c5727	\\x049f2cdeb342890315ea493e410d3e975bd96d81a7f740b04ad7e282320fa549ff4065f5480f136deb0159cc15b834f7a86f38daa29031f6528cb7a26deb3a5e13	7	{"\\\\x5003096fe50ebc9b70e8025170a729f71cc03a6125df23dd7fed3eea2a121b5b","\\\\x7ea953a7e5bbfb35c74439ef9706d6ca1703051445d5996dd92d508368dfa570","\\\\x11c9f97008cdb5613ef1d22b076e79c0d9249b59fb73bfd7cbf7032d4004514d"}	2026-11-25 15:43:24.984804+00	granted	\N	\\x5fe5c686aaa5a76c15fd9d0ae41b1c5ab1df867db0f16557948650ae9978c6e2	10	2026-11-25 15:43:24.984804+00
6221cfe7-6f12-4b1a-b401-09cd0cd469f8	b03c98ce-cab3-5bb6-abd1-60391aa281fd	psn-eb9a1863-c0ff-4d1a-a0f6-9dc4bd8fd043	0c10003d-3543-4fc7-a560-3262a6b40363	\\x3046022100e1a6589f3358c337204b7055c7d4551cfc6adfacb2ff1a80722c5fd76986025c022100cc4523bd74f4d9947e8da3084ed5f063b1f054dde26b2a14c3ffef3139aad419	\\x046f0578d0032ca3df760b63d41a636c5ac9cd45036875b22a67302df86c1c0a54fbebe0b989dff5e1a2ed1a8015b6af6fee6b7106b055fbd0680a7627bd93f7f8	3	{"\\\\x23dd1ae388d8b7bb6e8193796ef24d1962331d9e3451a214e40b347ad435ba1d","\\\\xd8562071f2e36dcf9ca9dabdb6ba8421e5c909b15102847eb813d51e9227e4be","\\\\xd9d3d617fa261ba689a37a4002509f33f0926d21fc9a60fd99ef619c79910c42"}	2026-11-25 15:43:25.058664+00	rejected	identity_claimed_by_another_account	\\xdec0661db87ff1ba6593d9e6737f9a9903d883e8b634a67f1df640a7d517bd7d	11	2026-11-25 15:43:25.058664+00
0b6fa62f-232e-4706-954c-50a4243e519c	b03c98ce-cab3-5bb6-abd1-60391aa281fd	psn-6449a30d-dc43-4cf4-a741-349f5109bd02	89ca2269-23b7-40c8-892d-68379e146234	\\x304502210081937e0ce97858080c8c7bbfd13573513edd8371aa3b631f37315cf76d40508602202e38132013f3858bfc924ffe2c9a64f25c1af3e9f70dd4dcaff105f903048748	\\x048e0c307a5ad703809602e5e81a6751db94e219eb3ee298c3736d5885073a83267767b8bb817cf1cbf2450f64b9e4d63e93c958dc83d1e9ec3b347975d5cf42ee	2	{"\\\\x7311edfbfe95547829fce197fbc606f0c49fe6d7f6911e37c0dc60ba6de4d2ce","\\\\xc1831033903f2cd440edefb5cd61db011c2d43c20fa41b2642fc7dc34b5a3b3c","\\\\x8746484ac9571ae52483b349ffc98c14b6945dd260431f0978933bd69007362d"}	2026-11-25 15:43:25.273894+00	rejected	identity_removed	\\xcc375ae6cff1762b930c8cd01889adad0b29c9ee81e6d5dbc10e78ae238d50cb	16	2026-11-25 15:43:25.273894+00
\.


--
-- Data for Name: ledger_published_checkpoints; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.ledger_published_checkpoints (tree_size, note, published_at) FROM stdin;
0	127.0.0.1/ledger\n0\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n\n— 127.0.0.1/ledger 4yLKjuRH+m0tUoY8Up/TibnL+1B3QaPSaOeL4cBfQl98DDtB81E8jCPTnJS30zFCmbQkDJTV3b+ACS6ydZKxoa6MwQw=\n	2026-11-25 15:43:06.950031+00
1	127.0.0.1/ledger\n1\neyZYGaPvzGwVpHp/ysqt19AT9X2RVJj1RDPqqlzbbFU=\n\n— 127.0.0.1/ledger 4yLKjpR9BvPN/GftJlRnJHU0X72tYFZ5yV7pYbk0XK7xZ/f1iUEVHc4tODE4ozYS2MkME6vDszNsDSR8wWF8xkP57wM=\n	2026-11-25 15:43:24.593697+00
6	127.0.0.1/ledger\n6\nnlTkGT1UK4JLOcpeMcumoFZBXhqSO7MGkYDubM6Vifc=\n\n— 127.0.0.1/ledger 4yLKjkvsbBM2Lz1IHYdrdyrFYkCQEL/P+4OXtmovZOq58NHW9ypYrSJC/46128O4DDfa+EBgKvENX0yEU2MtdNqIFgc=\n	2026-11-25 15:43:24.882044+00
11	127.0.0.1/ledger\n11\n0BWphp+EP1KPpqvw3eiEdADs0P2SJqNhvWapXWAk6j8=\n\n— 127.0.0.1/ledger 4yLKjrfSVsO+IiOQUURx05SYoUkDdMpYAkdOGM5rrEutOJPpUkhhU32EsQffgbWGoe5NBiSevcZzFD4D8bT7qcaPcAg=\n	2026-11-25 15:43:25.168032+00
16	127.0.0.1/ledger\n16\nBRgCROfosxqPPHJZQuk6eLMG7eQF6Fqi2ExlXomsets=\n\n— 127.0.0.1/ledger 4yLKjpuoBrObyN+2oTA5w9IpQaTvzyQQfOd5TdPseS69JF/U+wZYJZrQyFnGp5TA2meTW4JsY6X/Y5p6OwShmXmg7gs=\n	2026-11-25 15:43:25.46355+00
17	127.0.0.1/ledger\n17\nNRYE3GkE3pD5OybWzSA5egOcPDs8n4E8gqVN8PqY9nU=\n\n— 127.0.0.1/ledger 4yLKjscthnEeSe+TikyVzg0iGwop7Fe1CX6jEsmXX/SS2DUQFu9O1M05Og+jPVBMKwrz27GKWyYwdAYIThrdM8jS6AQ=\n	2026-11-25 15:43:25.7133+00
\.


--
-- Data for Name: ledger_streams; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.ledger_streams (stream_id, version, state, "position") FROM stdin;
collaboration-b03c98ce-cab3-5bb6-abd1-60391aa281fd	16	{"collaborationId":"b03c98ce-cab3-5bb6-abd1-60391aa281fd","grants":{"psn-a5afe385-2ff8-4cd0-a1c0-06678abbb9fa":"3sBmHbh/8bplk9nmc3+amQPYg+i2NKZ/HfZAp9UXvX0=","psn-d562bf26-101b-4a5c-86f8-2bc1acb9fd7d":"X+XGhqqlp2wV/Z0K5BscWrHfhn2w8WVXlIZQrpl4xuI="},"identities":{"3sBmHbh/8bplk9nmc3+amQPYg+i2NKZ/HfZAp9UXvX0=":{"account":"psn-a5afe385-2ff8-4cd0-a1c0-06678abbb9fa","status":"granted"},"X+XGhqqlp2wV/Z0K5BscWrHfhn2w8WVXlIZQrpl4xuI=":{"account":"psn-d562bf26-101b-4a5c-86f8-2bc1acb9fd7d","status":"granted"},"zDda5s/xdiuTDIzQGImtrQspye6B5tXbwQ54riONUMs=":{"status":"removed"}},"owner":"psn-ab1852b5-0215-4556-ae2d-afd23085628e","title":"commitment:9GArp+x7hCujJxahTt5wXu87AInbIKgNVRdL1ILmXDQ="}	16
privacy	1	\N	17
\.


--
-- Data for Name: ledger_subjects; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.ledger_subjects (account, pseudonym, created_at) FROM stdin;
devin	psn-ab1852b5-0215-4556-ae2d-afd23085628e	2026-11-25 15:43:24.374292+00
alice	psn-6449a30d-dc43-4cf4-a741-349f5109bd02	2026-11-25 15:43:24.598805+00
carol	psn-d562bf26-101b-4a5c-86f8-2bc1acb9fd7d	2026-11-25 15:43:24.838389+00
mallory	psn-eb9a1863-c0ff-4d1a-a0f6-9dc4bd8fd043	2026-11-25 15:43:25.035256+00
privacy-officer	psn-0d72aec3-2b7f-46bc-968a-2f32775bc3d0	2026-11-25 15:43:25.487445+00
\.


--
-- Data for Name: ledger_tree_nodes; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.ledger_tree_nodes (level, index, hash) FROM stdin;
1	0	\\xb714ae052e6ec65224092006661ea330c84d824ad5ed68b4663c9a3eeeaf368a
1	1	\\xf5593655e32f7e0bbc5ae28ade3e6623e995cf2d49164a155923bc605a840b8e
2	0	\\xf24e6155567b92fe1e076f4911809d60be4007c5aa80fa8c2cd153a17e70ae9c
1	2	\\x09874268debfb7b9797b49ce47f7f705ff695050c12d4a69bf35a7ed985c61f4
1	3	\\xe81f210e27413a30754418a0d866caeadfaf4af2a48c5b9f8a74e65d7d9836bf
2	1	\\x50a2d3fe0b43289c68f4379966d6c97d64bb885d44190080a64be15ec0053e02
3	0	\\xc9a51ef232fec5f9c13937c5c5d128ca5b3fedc87b0e5e4260323aaa264102e2
1	4	\\xdf4e4502078f01515c153a2db0c2607fba8851098a45be0d8d906bd7d076d7ff
1	5	\\xca58aae349d9a1085683da1923d33f8d7093aa2ee5108b4fb145e95df45e3f7f
2	2	\\xbde89ca858dd48608898c8a7e9f22267bc665840de315af375ebd524e4983ad3
1	6	\\xd4e8dc2e07e9b6584b4dc264a23175dd323b12040089d00ff077ce6bed30a508
1	7	\\xef8a7864aee75a69dae736507bc7bbb4e6c3303f92e4a049b45bce4f8d4edbe1
2	3	\\x1c160194a877e69b944435e22fbaae1ad96b518f50defa6466e0bae190ee7ac2
3	1	\\x0331336f9dcc622108446e8f207b8126fd34669339d501eace349c988e9a4dc0
4	0	\\x05180244e7e8b31a8f3c725942e93a78b306ede405e85aa2d84c655e89ac7adb
\.


--
-- Data for Name: ledger_webhooks; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.ledger_webhooks (id, account, collaboration_id, url, secret, created_at, "position", failing_since, attempts, last_error, next_attempt_at, disabled_at, owner, lease_until) FROM stdin;
\.


--
-- Data for Name: proj_access_history; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.proj_access_history ("position", collaboration_id, root_hash, change, account, reason, actor, at) FROM stdin;
2	b03c98ce-cab3-5bb6-abd1-60391aa281fd	zDda5s/xdiuTDIzQGImtrQspye6B5tXbwQ54riONUMs=	invited	\N	\N	psn-ab1852b5-0215-4556-ae2d-afd23085628e	2026-11-25 15:43:24.529958+00
3	b03c98ce-cab3-5bb6-abd1-60391aa281fd	3sBmHbh/8bplk9nmc3+amQPYg+i2NKZ/HfZAp9UXvX0=	invited	\N	\N	psn-ab1852b5-0215-4556-ae2d-afd23085628e	2026-11-25 15:43:24.529958+00
4	b03c98ce-cab3-5bb6-abd1-60391aa281fd	X+XGhqqlp2wV/Z0K5BscWrHfhn2w8WVXlIZQrpl4xuI=	invited	\N	\N	psn-ab1852b5-0215-4556-ae2d-afd23085628e	2026-11-25 15:43:24.529958+00
5	b03c98ce-cab3-5bb6-abd1-60391aa281fd	zDda5s/xdiuTDIzQGImtrQspye6B5tXbwQ54riONUMs=	granted	psn-6449a30d-dc43-4cf4-a741-349f5109bd02	\N	psn-6449a30d-dc43-4cf4-a741-349f5109bd02	2026-11-25 15:43:24.671036+00
6	b03c98ce-cab3-5bb6-abd1-60391aa281fd	zDda5s/xdiuTDIzQGImtrQspye6B5tXbwQ54riONUMs=	granted	psn-6449a30d-dc43-4cf4-a741-349f5109bd02	\N	psn-6449a30d-dc43-4cf4-a741-349f5109bd02	2026-11-25 15:43:24.749753+00
7	b03c98ce-cab3-5bb6-abd1-60391aa281fd	3sBmHbh/8bplk9nmc3+amQPYg+i2NKZ/HfZAp9UXvX0=	granted	psn-a5afe385-2ff8-4cd0-a1c0-06678abbb9fa	\N	psn-a5afe385-2ff8-4cd0-a1c0-06678abbb9fa	2026-11-25 15:43:24.8114+00
8	b03c98ce-cab3-5bb6-abd1-60391aa281fd	X+XGhqqlp2wV/Z0K5BscWrHfhn2w8WVXlIZQrpl4xuI=	granted	psn-d562bf26-101b-4a5c-86f8-2bc1acb9fd7d	\N	psn-d562bf26-101b-4a5c-86f8-2bc1acb9fd7d	2026-11-25 15:43:24.877267+00
9	b03c98ce-cab3-5bb6-abd1-60391aa281fd	X+XGhqqlp2wV/Z0K5BscWrHfhn2w8WVXlIZQrpl4xuI=	granted	psn-d562bf26-101b-4a5c-86f8-2bc1acb9fd7d	\N	psn-d562bf26-101b-4a5c-86f8-2bc1acb9fd7d	2026-11-25 15:43:24.938669+00
10	b03c98ce-cab3-5bb6-abd1-60391aa281fd	X+XGhqqlp2wV/Z0K5BscWrHfhn2w8WVXlIZQrpl4xuI=	granted	psn-d562bf26-101b-4a5c-86f8-2bc1acb9fd7d	\N	psn-d562bf26-101b-4a5c-86f8-2bc1acb9fd7d	2026-11-25 15:43:24.995064+00
14	b03c98ce-cab3-5bb6-abd1-60391aa281fd	zDda5s/xdiuTDIzQGImtrQspye6B5tXbwQ54riONUMs=	removed	psn-6449a30d-dc43-4cf4-a741-349f5109bd02	\N	psn-ab1852b5-0215-4556-ae2d-afd23085628e	2026-11-25 15:43:25.229733+00
15	b03c98ce-cab3-5bb6-abd1-60391aa281fd	zDda5s/xdiuTDIzQGImtrQspye6B5tXbwQ54riONUMs=	revoked	psn-6449a30d-dc43-4cf4-a741-349f5109bd02	identity_removed	psn-ab1852b5-0215-4556-ae2d-afd23085628e	2026-11-25 15:43:25.229733+00
\.


--
-- Data for Name: proj_collaborations; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.proj_collaborations (collaboration_id, local_identifier, title, initiator_handle, initiator_name, owner, universal_link, share_options, started_at, started_position) FROM stdin;
b03c98ce-cab3-5bb6-abd1-60391aa281fd	commitment:KZmycX7XAbuklGikR0Z03N4ahZdc0BL56DNa4/zHOG8=	commitment:9GArp+x7hCujJxahTt5wXu87AInbIKgNVRdL1ILmXDQ=	commitment:dPz9r5H8w0PeK5voeRKvtnlh8dZDYbjZnykxrhsDtaI=	commitment:hXdwanc/3fXIU4cgPlWuTOIupdLXmeJjBStkEPK+r34=	psn-ab1852b5-0215-4556-ae2d-afd23085628e	http://127.0.0.1:0/collaborations/b03c98ce-cab3-5bb6-abd1-60391aa281fd	{"groups":[{"identifier":"permission","kind":"picker","options":[{"identifier":"rw","selected":true,"title":"commitment:F72q9Tz+0pfsDeRaZkoRcApOPtrnBSP2SiUEhjw1gNc="},{"identifier":"ro","selected":false,"title":"commitment:87r3rxEsPp4euetMjMsajzk49Z87XdNzP+tvAD0AEl0="}],"title":"commitment:y1Ibvm8lCwQEQ5vyY1xv/Fa2JYKz5vuiCJcnV1Cjr4I="}],"summary":"commitment:tUGqNbAMjqsg5GMiWoQJ3rPLpCmkdj3bJCMbFJ+n3lk="}	2026-11-25 15:43:24.432321+00	1
\.


--
-- Data for Name: proj_highlights; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.proj_highlights ("position", collaboration_id, kind, trigger, mentioned_root_hash, account, at) FROM stdin;
12	b03c98ce-cab3-5bb6-abd1-60391aa281fd	change	edit	\N	psn-6449a30d-dc43-4cf4-a741-349f5109bd02	2026-11-25 15:43:25.096676+00
13	b03c98ce-cab3-5bb6-abd1-60391aa281fd	mention	\N	3sBmHbh/8bplk9nmc3+amQPYg+i2NKZ/HfZAp9UXvX0=	psn-d562bf26-101b-4a5c-86f8-2bc1acb9fd7d	2026-11-25 15:43:25.135353+00
\.


--
-- Data for Name: proj_members; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.proj_members (collaboration_id, root_hash, state, account, invited_at, invited_position, granted_at, granted_position, removed_at, removed_position, "position") FROM stdin;
b03c98ce-cab3-5bb6-abd1-60391aa281fd	3sBmHbh/8bplk9nmc3+amQPYg+i2NKZ/HfZAp9UXvX0=	granted	psn-a5afe385-2ff8-4cd0-a1c0-06678abbb9fa	2026-11-25 15:43:24.529958+00	3	2026-11-25 15:43:24.8114+00	7	\N	\N	7
b03c98ce-cab3-5bb6-abd1-60391aa281fd	X+XGhqqlp2wV/Z0K5BscWrHfhn2w8WVXlIZQrpl4xuI=	granted	psn-d562bf26-101b-4a5c-86f8-2bc1acb9fd7d	2026-11-25 15:43:24.529958+00	4	2026-11-25 15:43:24.995064+00	10	\N	\N	10
b03c98ce-cab3-5bb6-abd1-60391aa281fd	zDda5s/xdiuTDIzQGImtrQspye6B5tXbwQ54riONUMs=	removed	\N	2026-11-25 15:43:24.529958+00	2	2026-11-25 15:43:24.749753+00	6	2026-11-25 15:43:25.229733+00	14	15
\.


--
-- Name: ledger_challenges ledger_challenges_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ledger_challenges
    ADD CONSTRAINT ledger_challenges_pkey PRIMARY KEY (challenge_id);


--
-- Name: ledger_checkpoints ledger_checkpoints_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ledger_checkpoints
    ADD CONSTRAINT ledger_checkpoints_pkey PRIMARY KEY (tree_size);


--
-- Name: ledger_cursor_key ledger_cursor_key_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ledger_cursor_key
    ADD CONSTRAINT ledger_cursor_key_pkey PRIMARY KEY (only_row);


--
-- Name: ledger_events ledger_events_event_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ledger_events
    ADD CONSTRAINT ledger_events_event_id_key UNIQUE (event_id);


--
-- Name: ledger_events ledger_events_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ledger_events
    ADD CONSTRAINT ledger_events_pkey PRIMARY KEY ("position");


--
-- Name: ledger_events ledger_events_stream_id_version_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ledger_events
    ADD CONSTRAINT ledger_events_stream_id_version_key UNIQUE (stream_id, version);


--
-- Name: ledger_head ledger_head_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ledger_head
    ADD CONSTRAINT ledger_head_pkey PRIMARY KEY (id);


--
-- Name: ledger_log_keys ledger_log_keys_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ledger_log_keys
    ADD CONSTRAINT ledger_log_keys_pkey PRIMARY KEY (verifier_key);


--
-- Name: ledger_migrations ledger_migrations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ledger_migrations
    ADD CONSTRAINT ledger_migrations_pkey PRIMARY KEY (name);


--
-- Name: ledger_personal_values ledger_personal_values_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ledger_personal_values
    ADD CONSTRAINT ledger_personal_values_pkey PRIMARY KEY (commitment);


--
-- Name: ledger_privacy_format ledger_privacy_format_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ledger_privacy_format
    ADD CONSTRAINT ledger_privacy_format_pkey PRIMARY KEY (only_row);


--
-- Name: ledger_projections ledger_projections_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ledger_projections
    ADD CONSTRAINT ledger_projections_pkey PRIMARY KEY (name);


--
-- Name: ledger_proof_requests ledger_proof_requests_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ledger_proof_requests
    ADD CONSTRAINT ledger_proof_requests_pkey PRIMARY KEY (request_id);


--
-- Name: ledger_published_checkpoints ledger_published_checkpoints_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ledger_published_checkpoints
    ADD CONSTRAINT ledger_published_checkpoints_pkey PRIMARY KEY (tree_size);


--
-- Name: ledger_streams ledger_streams_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ledger_streams
    ADD CONSTRAINT ledger_streams_pkey PRIMARY KEY (stream_id);


--
-- Name: ledger_subjects ledger_subjects_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ledger_subjects
    ADD CONSTRAINT ledger_subjects_pkey PRIMARY KEY (account);


--
-- Name: ledger_subjects ledger_subjects_pseudonym_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ledger_subjects
    ADD CONSTRAINT ledger_subjects_pseudonym_key UNIQUE (pseudonym);


--
-- Name: ledger_tree_nodes ledger_tree_nodes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ledger_tree_nodes
    ADD CONSTRAINT ledger_tree_nodes_pkey PRIMARY KEY (level, index);


--
-- Name: ledger_webhooks ledger_webhooks_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ledger_webhooks
    ADD CONSTRAINT ledger_webhooks_pkey PRIMARY KEY (id);


--
-- Name: proj_access_history proj_access_history_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.proj_access_history
    ADD CONSTRAINT proj_access_history_pkey PRIMARY KEY ("position");


--
-- Name: proj_collaborations proj_collaborations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.proj_collaborations
    ADD CONSTRAINT proj_collaborations_pkey PRIMARY KEY (collaboration_id);


--
-- Name: proj_highlights proj_highlights_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.proj_highlights
    ADD CONSTRAINT proj_highlights_pkey PRIMARY KEY ("position");


--
-- Name: proj_members proj_members_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.proj_members
    ADD CONSTRAINT proj_members_pkey PRIMARY KEY (collaboration_id, root_hash);


--
-- Name: ledger_events_rejections; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ledger_events_rejections ON public.ledger_events USING btree (((data ->> 'account'::text)), recorded_at) WHERE (event_type = 'ProofRejected'::text);


--
-- Name: ledger_personal_values_pseudonym; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ledger_personal_values_pseudonym ON public.ledger_personal_values USING btree (pseudonym);


--
-- Name: ledger_proof_requests_pending; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ledger_proof_requests_pending ON public.ledger_proof_requests USING btree (created_at) WHERE (status = 'pending'::text);


--
-- Name: ledger_webhooks_account; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ledger_webhooks_account ON public.ledger_webhooks USING btree (account, created_at, id);


--
-- Name: ledger_webhooks_due; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ledger_webhooks_due ON public.ledger_webhooks USING btree (next_attempt_at) WHERE (disabled_at IS NULL);


--
-- Name: proj_access_history_account; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX proj_access_history_account ON public.proj_access_history USING btree (account, "position") WHERE (account IS NOT NULL);


--
-- Name: proj_access_history_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX proj_access_history_at ON public.proj_access_history USING btree (at);


--
-- Name: proj_access_history_identity; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX proj_access_history_identity ON public.proj_access_history USING btree (collaboration_id, root_hash, "position");


--
-- Name: proj_access_history_time; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX proj_access_history_time ON public.proj_access_history USING btree (collaboration_id, at, "position");


--
-- Name: proj_collaborations_owner; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX proj_collaborations_owner ON public.proj_collaborations USING btree (owner);


--
-- Name: proj_highlights_collaboration; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX proj_highlights_collaboration ON public.proj_highlights USING btree (collaboration_id, "position");


--
-- Name: proj_members_account; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX proj_members_account ON public.proj_members USING btree (account) WHERE (account IS NOT NULL);


--
-- Name: ledger_checkpoints ledger_checkpoints_no_delete; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER ledger_checkpoints_no_delete BEFORE DELETE ON public.ledger_checkpoints FOR EACH ROW EXECUTE FUNCTION public.ledger_refuse_change();


--
-- Name: ledger_checkpoints ledger_checkpoints_no_truncate; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER ledger_checkpoints_no_truncate BEFORE TRUNCATE ON public.ledger_checkpoints FOR EACH STATEMENT EXECUTE FUNCTION public.ledger_refuse_change();


--
-- Name: ledger_checkpoints ledger_checkpoints_no_update; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER ledger_checkpoints_no_update BEFORE UPDATE ON public.ledger_checkpoints FOR EACH ROW EXECUTE FUNCTION public.ledger_refuse_change();


--
-- Name: ledger_events ledger_events_no_delete; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER ledger_events_no_delete BEFORE DELETE ON public.ledger_events FOR EACH ROW EXECUTE FUNCTION public.ledger_refuse_change();


--
-- Name: ledger_events ledger_events_no_truncate; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER ledger_events_no_truncate BEFORE TRUNCATE ON public.ledger_events FOR EACH STATEMENT EXECUTE FUNCTION public.ledger_refuse_change();


--
-- Name: ledger_events ledger_events_no_update; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER ledger_events_no_update BEFORE UPDATE ON public.ledger_events FOR EACH ROW EXECUTE FUNCTION public.ledger_refuse_change();


--
-- Name: ledger_published_checkpoints ledger_published_checkpoints_no_delete; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER ledger_published_checkpoints_no_delete BEFORE DELETE ON public.ledger_published_checkpoints FOR EACH ROW EXECUTE FUNCTION public.ledger_refuse_change();


--
-- Name: ledger_published_checkpoints ledger_published_checkpoints_no_truncate; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER ledger_published_checkpoints_no_truncate BEFORE TRUNCATE ON public.ledger_published_checkpoints FOR EACH STATEMENT EXECUTE FUNCTION public.ledger_refuse_change();


--
-- Name: ledger_published_checkpoints ledger_published_checkpoints_no_update; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER ledger_published_checkpoints_no_update BEFORE UPDATE ON public.ledger_published_checkpoints FOR EACH ROW EXECUTE FUNCTION public.ledger_refuse_change();


--
-- Name: ledger_tree_nodes ledger_tree_nodes_no_delete; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER ledger_tree_nodes_no_delete BEFORE DELETE ON public.ledger_tree_nodes FOR EACH ROW EXECUTE FUNCTION public.ledger_refuse_change();


--
-- Name: ledger_tree_nodes ledger_tree_nodes_no_truncate; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER ledger_tree_nodes_no_truncate BEFORE TRUNCATE ON public.ledger_tree_nodes FOR EACH STATEMENT EXECUTE FUNCTION public.ledger_refuse_change();


--
-- Name: ledger_tree_nodes ledger_tree_nodes_no_update; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER ledger_tree_nodes_no_update BEFORE UPDATE ON public.ledger_tree_nodes FOR EACH ROW EXECUTE FUNCTION public.ledger_refuse_change();


--
-- Name: ledger_personal_values ledger_personal_values_pseudonym_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ledger_personal_values
    ADD CONSTRAINT ledger_personal_values_pseudonym_fkey FOREIGN KEY (pseudonym) REFERENCES public.ledger_subjects(pseudonym) ON DELETE CASCADE;


--
-- Name: ledger_published_checkpoints ledger_published_checkpoints_tree_size_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ledger_published_checkpoints
    ADD CONSTRAINT ledger_published_checkpoints_tree_size_fkey FOREIGN KEY (tree_size) REFERENCES public.ledger_checkpoints(tree_size);


--
-- PostgreSQL database dump complete
--


