-- Checkpoints cover only replicated events (SPEC "High availability"). The checkpointer reads how
-- far each standby has flushed from pg_stat_replication, whose WAL positions PostgreSQL shows only
-- to members of pg_read_all_stats. Granting it needs a superuser; where the migrating role is
-- not one, an administrator runs the GRANT (the checkpointer refuses to sign, saying so, while
-- it cannot see its standbys).
DO $$
BEGIN
    IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
        GRANT pg_read_all_stats TO ledger_service;
    ELSE
        RAISE NOTICE 'not a superuser: run GRANT pg_read_all_stats TO ledger_service as one';
    END IF;
END;
$$;
