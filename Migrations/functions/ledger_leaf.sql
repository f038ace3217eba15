-- An event's canonical bytes: the tree's leaf data and, after the previous hash, the chain's
-- input. Must match LedgerDomain.EventLeaf (the store tests compare the two).
CREATE OR REPLACE FUNCTION ledger_leaf(
    p_position int8, p_stream text, p_version int8, p_id uuid, p_type text, p_data text, p_metadata text,
    p_recorded_at timestamptz)
RETURNS bytea LANGUAGE sql STABLE STRICT AS $$
    SELECT int8send(p_position) || ledger_str(p_stream) || int8send(p_version) || uuid_send(p_id) || ledger_str(p_type)
        || ledger_str(p_data) || ledger_str(p_metadata) || int8send((extract(epoch FROM p_recorded_at) * 1000000)::int8)
$$;
