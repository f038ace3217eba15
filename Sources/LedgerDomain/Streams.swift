/// Stream ids: a collaboration's events are the stream `collaboration-<id>`.
public enum Streams {
    public static let collaborationPrefix = "collaboration-"

    public static func collaboration(_ id: String) -> String { collaborationPrefix + id }

    /// The collaboration whose stream `streamId` is; nil for any other stream.
    public static func collaborationId(of streamId: String) -> String? {
        streamId.hasPrefix(collaborationPrefix) ? String(streamId.dropFirst(collaborationPrefix.count)) : nil
    }
}
