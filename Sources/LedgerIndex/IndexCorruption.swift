/// A node store whose nodes cannot be a tree `PrefixTree` wrote (a leaf off its key's path, a
/// parent at depth 256, an answer for a position not asked), or a bug reaching a position it
/// did not read. The operation that meets one stops, and writes nothing.
public struct IndexCorruption: Error, Hashable, CustomStringConvertible {
    public var description: String
}
