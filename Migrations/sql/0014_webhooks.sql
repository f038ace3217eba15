-- Webhooks: an owner's URL that gets a signed POST for each event of the collaborations it
-- owns (all of them, or the one named), in log order, at least once.
--
-- The delivery cursor lives here, not in a worker: a restarted or killed worker loses
-- nothing, and the next one resumes after `position`. Delivery workers (`ledger deliver`)
-- share the webhooks with leases, as the projectors share projections: one worker delivers a
-- webhook at a time, so its deliveries stay in log order.
CREATE TABLE ledger_webhooks (
    id                uuid        PRIMARY KEY,
    account           text        NOT NULL,
    -- NULL: every collaboration the account owns, including those it starts later.
    collaboration_id  text,
    url               text        NOT NULL,
    -- The HMAC-SHA256 key of the Ledger-Signature header, shown to the owner once.
    secret            text        NOT NULL,
    created_at        timestamptz NOT NULL DEFAULT now(),
    -- Every event at or below this position was delivered (or is not the webhook's).
    position          int8        NOT NULL,
    -- While deliveries fail: since when, how many times in a row, the last reason, the next
    -- try (exponential backoff). After a day of failures the webhook is disabled.
    failing_since     timestamptz,
    attempts          int         NOT NULL DEFAULT 0,
    last_error        text,
    next_attempt_at   timestamptz NOT NULL DEFAULT now(),
    disabled_at       timestamptz,
    -- The delivery worker holding the webhook; another may take over once lease_until passed.
    owner             text,
    lease_until       timestamptz
);
CREATE INDEX ledger_webhooks_account ON ledger_webhooks (account, created_at, id);
CREATE INDEX ledger_webhooks_due ON ledger_webhooks (next_attempt_at) WHERE disabled_at IS NULL;
