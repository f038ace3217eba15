-- A collaboration's inline state holds every identity it has had, and every command rewrites it
-- whole: a state of 50 kB (about 750 identities) is compressed again on every participant add.
-- pglz, the default, took 1.35 ms an update of such a row where lz4 takes 0.7 ms, and lz4
-- compresses it smaller (34 against 37 kB; issue 47, docs/BENCHMARKS.md). States written from now
-- on are compressed with lz4; those already stored stay pglz until their next write, and both
-- read alike. A server built without lz4 keeps pglz.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY (enumvals)) THEN
        ALTER TABLE ledger_streams ALTER COLUMN state SET COMPRESSION lz4;
    END IF;
END;
$$;
