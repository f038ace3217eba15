-- A string as the hash chain and the log's leaves (ledger_leaf) encode it: u32 length + UTF-8.
-- Must match LedgerDomain.HashChain, which `ledger log verify` uses to walk the chain.
-- STABLE, not IMMUTABLE: an IMMUTABLE declaration over a STABLE body (convert_to) cannot be
-- inlined, and calling it cost a sixth of a single-event append. Inlined, it is part of the
-- hash expression.
CREATE OR REPLACE FUNCTION ledger_str(value text) RETURNS bytea LANGUAGE sql STABLE STRICT AS $$
    SELECT int4send(octet_length(value)) || convert_to(value, 'UTF8')
$$;
