-- The current schema in one place (Flyway's repeatable migrations). Every SQL function's current
-- definition lives in Migrations/functions, one file per function; the migrator applies a file
-- again whenever its checksum differs from the one recorded here, after the numbered migrations
-- and in their transaction. Numbered migrations keep tables and data, and what a file cannot do
-- by CREATE OR REPLACE: dropping a function, or an old signature after a file changed it.
CREATE TABLE ledger_repeatable_migrations (
    name        text        PRIMARY KEY,
    checksum    text        NOT NULL,
    applied_at  timestamptz NOT NULL DEFAULT now()
);

-- The services read it at start-up (they refuse a schema that is behind); only the migrating
-- owner writes it, as ledger_migrations.
GRANT SELECT ON ledger_repeatable_migrations TO ledger_service;
REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON ledger_repeatable_migrations FROM ledger_service;
