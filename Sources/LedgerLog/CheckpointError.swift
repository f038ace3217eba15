/// Why the log's tree or checkpoints cannot be read or signed now: the log is not what the tree
/// says (events missing or removed), the schema is behind, a tile cannot be made, or no
/// checkpoint came in time. Not a fork (`ForkRefusal`): the checkpointer logs it and tries again.
public struct CheckpointError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}
