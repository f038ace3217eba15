/// Stream ids: a collaboration's events are the stream `collaboration-<id>`.
public enum Streams {
    public static let collaborationPrefix = "collaboration-"

    /// The stream of collaboration `id`; SQL's `ledger_collaboration_stream`, tested equal.
    public static func collaboration(_ id: String) -> String { collaborationPrefix + id }

    /// The collaboration whose stream `streamId` is; nil for any other stream. Read by Unicode
    /// scalars, as PostgreSQL compares text: SQL's `ledger_stream_collaboration` is the same rule,
    /// tested equal (`CollaborationStreamRuleTests`). (`hasPrefix` compares characters, and would
    /// answer nil for an id that begins with a combining mark.)
    public static func collaborationId(of streamId: String) -> String? {
        let scalars = streamId.unicodeScalars
        let prefix = collaborationPrefix.unicodeScalars
        return scalars.starts(with: prefix) ? String(scalars.dropFirst(prefix.count)) : nil
    }
}
