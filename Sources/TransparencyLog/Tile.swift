/// A tile of C2SP `tlog-tiles`: the hashes of one height-8 subtree of the log's Merkle tree, or
/// (an entry bundle) the entries of 256 leaves.
///
/// A hash tile at level `L`, index `N`, holds the hashes of the level-`8L` nodes `N·256 ..<
/// N·256 + width` (level 0: leaf hashes): 32 bytes each, no framing. An entry bundle `N` holds
/// the entries of leaves `N·256 ..< N·256 + width`, each a big-endian uint16 length and the
/// bytes. A full tile is 256 wide and never changes; a partial one (`.p/<W>`, 1 to 255) is a
/// prefix of it. Paths: `tile/<L>/<N>[.p/<W>]` and `tile/entries/<N>[.p/<W>]`, `N` in 3-digit
/// groups, all but the last prefixed with `x` (1234067 → `x001/x234/067`).
public struct Tile: Hashable, Sendable, CustomStringConvertible {
    public static let height = 8
    public static let fullWidth = 256

    /// The hash level (0 to 63), or nil for an entry bundle.
    public var level: Int?
    public var index: Int64
    /// 1 to 256.
    public var width: Int

    public init(level: Int?, index: Int64, width: Int) {
        self.level = level
        self.index = index
        self.width = width
    }

    public var isFull: Bool { width == Self.fullWidth }
    public var isEntries: Bool { level == nil }

    public var path: String {
        var n = index
        var text = Self.group(n % 1000)
        n /= 1000
        while n > 0 {
            text = "x" + Self.group(n % 1000) + "/" + text
            n /= 1000
        }
        return "tile/" + (level.map(String.init) ?? "entries") + "/" + text + (isFull ? "" : ".p/\(width)")
    }

    public var description: String { path }

    /// Parses a tile path strictly: every group 3 digits, `x` on all but the last, a width of
    /// 1 to 255 without leading zeroes, a level of 0 to 63 without leading zeroes. Nil otherwise.
    public init?(path: String) {
        var parts = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.count >= 3, parts[0] == "tile" else { return nil }
        if parts[1] == "entries" {
            level = nil
        } else {
            guard let l = Self.decimal(parts[1]), l <= 63 else { return nil }
            level = Int(l)
        }
        width = Self.fullWidth
        if parts.count >= 4, parts[parts.count - 2].hasSuffix(".p") {
            guard let w = Self.decimal(parts[parts.count - 1]), w >= 1, w < Self.fullWidth else { return nil }
            width = Int(w)
            parts.removeLast()
            parts[parts.count - 1].removeLast(2)
        }
        let groups = parts[2...]
        guard !groups.isEmpty, groups.count <= 7 else { return nil }
        var n: Int64 = 0
        for (i, group) in groups.enumerated() {
            let last = i == groups.count - 1
            guard group.hasPrefix("x") != last else { return nil }
            let digits = last ? Substring(group) : group.dropFirst()
            guard digits.count == 3, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int64(digits) else { return nil }
            let (times, overflow) = n.multipliedReportingOverflow(by: 1000)
            guard !overflow, times <= Int64.max - value else { return nil }
            n = times + value
        }
        index = n
        guard self.path == path else { return nil }  // one spelling per tile (no "x000/001")
    }

    // MARK: Which tiles a tree has

    /// How many entries tile `index` at `level` (nil: the entry bundle) holds in a tree of
    /// `treeSize` leaves: 256, fewer for the last (partial) one, 0 past the tree.
    public static func width(level: Int?, index: Int64, treeSize: Int64) -> Int {
        // Any index a path can name (up to Int64.max) is asked about: a start past Int64 is past
        // every tree, not a trap.
        let below = treeSize >> (height * (level ?? 0))  // complete nodes at the tile's base level
        let (start, overflow) = index.multipliedReportingOverflow(by: Int64(fullWidth))
        guard index >= 0, !overflow, below > start else { return 0 }
        return Int(min(Int64(fullWidth), below - start))
    }

    /// The tile whose hashes give node `node` of a tree of `treeSize` leaves, at the width that
    /// tree has it: level `node.level / 8`, where the node is the root of `2^(node.level % 8)`
    /// consecutive hashes.
    public static func holding(_ node: MerkleTree.Node, treeSize: Int64) -> Tile {
        let level = node.level / height
        let first = node.index << (node.level % height)
        let index = first / Int64(fullWidth)
        return Tile(level: level, index: index, width: width(level: level, index: index, treeSize: treeSize))
    }

    /// The hash of `node` from the bytes of the tile `holding` it (at least as wide as it
    /// needs); nil if they are too short.
    public func hash(of node: MerkleTree.Node, data: [UInt8]) -> MerkleTree.Hash? {
        let k = node.level % Self.height
        let offset = Int((node.index << k) % Int64(Self.fullWidth))
        let count = 1 << k
        guard data.count >= (offset + count) * 32 else { return nil }
        var hashes = (offset..<offset + count).map { Array(data[$0 * 32..<($0 + 1) * 32]) }
        while hashes.count > 1 {
            hashes = stride(from: 0, to: hashes.count, by: 2).map { MerkleTree.nodeHash(hashes[$0], hashes[$0 + 1]) }
        }
        return hashes[0]
    }

    /// The hashes an entry bundle's entries give (level 0's): its entries, each `SHA256(0x00 ||
    /// entry)`, concatenated. Nil when the bundle is malformed (a length past its end).
    public static func leafHashes(ofBundle bundle: [UInt8]) -> [UInt8]? {
        entries(ofBundle: bundle)?.flatMap(MerkleTree.leafHash)
    }

    /// An entry bundle's entries (each a big-endian 16-bit length, then that many bytes). Nil when
    /// the bundle is malformed (a length past its end).
    public static func entries(ofBundle bundle: [UInt8]) -> [[UInt8]]? {
        var out: [[UInt8]] = []
        var at = 0
        while at < bundle.count {
            guard at + 2 <= bundle.count else { return nil }
            let length = Int(bundle[at]) << 8 | Int(bundle[at + 1])
            guard at + 2 + length <= bundle.count else { return nil }
            out.append(Array(bundle[at + 2..<at + 2 + length]))
            at += 2 + length
        }
        return out
    }

    /// An entry bundle of `entries` (each at most 65,535 bytes).
    public static func bundle(_ entries: [[UInt8]]) -> [UInt8] {
        var out: [UInt8] = []
        for entry in entries {
            precondition(entry.count <= Int(UInt16.max), "an entry is at most 65,535 bytes")
            out += [UInt8(entry.count >> 8), UInt8(entry.count & 0xFF)] + entry
        }
        return out
    }

    /// The tiles a tree of `treeSize` leaves needs to give the hashes of `ranges` (ranges an
    /// inclusion or consistency proof names, `MerkleTree.inclusionRanges` and the like).
    public static func needed(for ranges: [Range<Int64>], treeSize: Int64) -> Set<Tile> {
        Set(ranges.flatMap(MerkleTree.nodes(covering:)).map { holding($0, treeSize: treeSize) })
    }

    /// The hashes of `ranges` from `tiles` (the bytes of each tile `needed` names); nil if one
    /// is missing or short.
    public static func hashes(of ranges: [Range<Int64>], treeSize: Int64, tiles: [Tile: [UInt8]]) -> [MerkleTree.Hash]? {
        var out: [MerkleTree.Hash] = []
        for range in ranges {
            let hash = MerkleTree.hash(of: range) { node in
                let tile = holding(node, treeSize: treeSize)
                return tiles[tile].flatMap { tile.hash(of: node, data: $0) }
            }
            guard let hash else { return nil }
            out.append(hash)
        }
        return out
    }

    static func group(_ n: Int64) -> String {
        let digits = String(n)
        return String(repeating: "0", count: 3 - digits.count) + digits
    }

    /// A decimal without sign or leading zeroes (but "0").
    static func decimal(_ text: String) -> Int64? {
        guard !text.isEmpty, text.allSatisfy({ $0.isASCII && $0.isNumber }), text == "0" || !text.hasPrefix("0") else { return nil }
        return Int64(text)
    }
}
