-- Where the stored tree's events end, as recorded when it was built (SPEC "Never sign over a
-- rewritten log"): the position the checkpointer last integrated and the chain hash of the event
-- there, which commits to every event up to it. Before it integrates again the checkpointer
-- checks that the event at that position is still there with that hash; a log cut below it, or
-- rewritten at or below it (even where it has since grown past it again), is refused.
-- One row, written with the tree's nodes by the checkpointer (the serving role).
CREATE TABLE ledger_tree_edge (
    id boolean PRIMARY KEY DEFAULT true CHECK (id),
    size int8 NOT NULL CHECK (size > 0),
    chain_hash bytea NOT NULL
);
GRANT SELECT, INSERT, UPDATE ON ledger_tree_edge TO ledger_service;
REVOKE DELETE, TRUNCATE ON ledger_tree_edge FROM ledger_service;
