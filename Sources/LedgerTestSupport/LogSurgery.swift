import PostgresNIO

/// What a superuser (or a failover to a standby that lacked them) can do to the log, for tests of
/// what catches it: the events past `position` gone, with their tree nodes (unless
/// `keepingTree`), the head moved back. With `keepingCheckpoints` false the checkpoints over them
/// go too, as on a standby that never had them; kept, they are what a backup restored beside them
/// would leave. The tree's edge (`ledger_tree_edge`) goes back with the nodes, as on a standby
/// that lacked them; kept with the tree (`keepingTree`), as a superuser's cut leaves it.
public func truncateLog(_ owner: PostgresClient, to position: Int64, keepingCheckpoints: Bool, keepingTree: Bool = false) async throws {
    let tables =
        ["ledger_events", "ledger_head"] + (keepingTree ? [] : ["ledger_tree_nodes"])
        + (keepingCheckpoints ? [] : ["ledger_checkpoints", "ledger_published_checkpoints"])
    var statements = tables.map { "ALTER TABLE \($0) DISABLE TRIGGER USER" }
    statements += [
        "DELETE FROM ledger_events WHERE position > \(position)",
        "UPDATE ledger_head SET position = \(position), hash = (SELECT hash FROM ledger_events WHERE position = \(position))",
    ]
    if !keepingTree {
        statements += [
            "DELETE FROM ledger_tree_nodes WHERE (index + 1) * (1::int8 << level) > \(position)",
            "DELETE FROM ledger_tree_edge WHERE size > \(position)",
        ]
    }
    if !keepingCheckpoints {
        statements += [
            "DELETE FROM ledger_published_checkpoints WHERE tree_size > \(position)",
            "DELETE FROM ledger_checkpoints WHERE tree_size > \(position)",
        ]
    }
    statements += tables.map { "ALTER TABLE \($0) ENABLE TRIGGER USER" }
    for statement in statements { try await owner.query(PostgresQuery(unsafeSQL: statement)) }
}
