-- Challenges handed to recipients' devices: single use, bound to an account and a
-- collaboration, expiring.
CREATE TABLE ledger_challenges (
    challenge_id      uuid        PRIMARY KEY,
    collaboration_id  text        NOT NULL,
    account           text        NOT NULL,
    challenge         bytea       NOT NULL,
    expires_at        timestamptz NOT NULL,
    used_by_request   uuid
);

-- Durable proof requests: stored before they are decided, decided exactly once (the
-- verdict event's id derives from the request id).
CREATE TABLE ledger_proof_requests (
    request_id         uuid        PRIMARY KEY,
    collaboration_id   text        NOT NULL,
    account            text        NOT NULL,
    challenge_id       uuid        NOT NULL,
    signature          bytea       NOT NULL,
    public_key         bytea       NOT NULL,
    public_key_index   bigint      NOT NULL,
    inclusion_hashes   bytea[]     NOT NULL,
    created_at         timestamptz NOT NULL DEFAULT now(),
    status             text        NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'granted', 'rejected')),
    reason             text,
    root_hash          bytea,
    decided_position   bigint,
    decided_at         timestamptz
);
CREATE INDEX ledger_proof_requests_pending ON ledger_proof_requests (created_at) WHERE status = 'pending';
