/// Every item of a paged list read, in the list's order, fetched a page at a time as it is
/// iterated (`for try await member in ledger.allMembers(of: id)`). Every page after the first
/// continues from the previous page's `nextCursor`, so the walk reads the list as it stood at
/// its first page: it neither skips nor repeats an item while writes go on.
public struct LedgerPages<Item: Sendable>: AsyncSequence, Sendable {
    public typealias Element = Item
    let fetch: @Sendable (_ cursor: String?) async throws -> (items: [Item], next: String?)

    init(_ fetch: @escaping @Sendable (_ cursor: String?) async throws -> (items: [Item], next: String?)) {
        self.fetch = fetch
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let fetch: @Sendable (_ cursor: String?) async throws -> (items: [Item], next: String?)
        var page: [Item] = []
        var index = 0
        var cursor: String?
        var fetched = false

        public mutating func next() async throws -> Item? {
            while index == page.count {
                if fetched && cursor == nil { return nil }
                (page, cursor) = try await fetch(cursor)
                index = 0
                fetched = true
            }
            defer { index += 1 }
            return page[index]
        }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(fetch: fetch) }
}
