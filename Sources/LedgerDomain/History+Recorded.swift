import LedgerWire

extension History.Entry {
    /// A collaboration's event as clients see it (the history endpoint, the change feed, webhook
    /// deliveries): the actor from its metadata, its data as JSON, their personal values as
    /// `disclosure` shows them. Throws for an event of another stream or whose data is not JSON.
    public init(_ recorded: RecordedEvent, disclosure: Disclosure) throws {
        guard let collaborationId = Streams.collaborationId(of: recorded.streamId) else {
            throw DomainError.invalid("event \(recorded.position) is not a collaboration's")
        }
        let (data, actor) = try disclosure.show(recorded)
        self.init(
            position: recorded.position, collaborationId: collaborationId, version: recorded.version, type: recorded.type,
            time: recorded.recordedAt, actor: actor, data: data)
    }
}
