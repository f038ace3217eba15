/// The stored index does not hold what its tables promise: a row that is not a node, a state
/// row missing, a log with a hole where the folder reads. The operation that meets one stops and
/// writes nothing.
public struct IndexStoreError: Error, Hashable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) { self.description = description }
}
