import Foundation
import Testing
import TransparencyLog

/// C2SP `tlog-tiles`: the paths of the specification's examples (and Tessera's), every
/// malformed path refused, the tiles a tree has, and proofs computed from tiles equal to the
/// tree's own.
struct TileTests {
    @Test func pathsAsTheSpecificationWritesThem() {
        let cases: [(Tile, String)] = [
            (Tile(level: 0, index: 0, width: 256), "tile/0/000"),
            (Tile(level: 0, index: 5, width: 256), "tile/0/005"),
            (Tile(level: 0, index: 1000, width: 256), "tile/0/x001/000"),
            (Tile(level: 0, index: 1234, width: 256), "tile/0/x001/234"),
            (Tile(level: 1, index: 1_234_067, width: 256), "tile/1/x001/x234/067"),
            (Tile(level: 0, index: 273, width: 112), "tile/0/273.p/112"),
            (Tile(level: 15, index: 123_456_789, width: 41), "tile/15/x123/x456/789.p/41"),
            (Tile(level: nil, index: 123_456_789, width: 256), "tile/entries/x123/x456/789"),
            (Tile(level: nil, index: 0, width: 5), "tile/entries/000.p/5"),
        ]
        for (tile, path) in cases {
            #expect(tile.path == path)
            #expect(Tile(path: path) == tile, "\(path)")
        }
    }

    @Test func malformedPathsAreRefused() {
        for bad in [
            "tile/0/1", "tile/0/0001", "tile/0/x001", "tile/0/001/234", "tile/0/x000/001", "tile/00/000", "tile/64/000",
            "tile/-1/000", "tile/0/000.p/0", "tile/0/000.p/256", "tile/0/000.p/012", "tile/0/000.p/", "tile/0/000.p",
            "tile/data/000", "tile/entries", "tile/0", "tiles/0/000", "tile/0/00a", "tile/0/x001/x002/x003/x004/x005/x006/x007/000",
            "tile/0/+01", "tile//000",
        ] {
            #expect(Tile(path: bad) == nil, "\(bad)")
        }
    }

    /// The specification's example: a tree of 70,000 leaves.
    @Test func theTilesOfATree() {
        #expect(Tile.width(level: 0, index: 272, treeSize: 70_000) == 256)
        #expect(Tile.width(level: 0, index: 273, treeSize: 70_000) == 112)
        #expect(Tile.width(level: 0, index: 274, treeSize: 70_000) == 0)
        #expect(Tile.width(level: 1, index: 0, treeSize: 70_000) == 256)
        #expect(Tile.width(level: 1, index: 1, treeSize: 70_000) == 17)
        #expect(Tile.width(level: 2, index: 0, treeSize: 70_000) == 1)
        #expect(Tile.width(level: nil, index: 273, treeSize: 70_000) == 112)
        #expect(Tile.width(level: 1, index: 0, treeSize: 256) == 1)
        #expect(Tile.width(level: 0, index: 0, treeSize: 0) == 0)
    }

    /// Tiles built from a tree's leaves give the same proofs as the tree, for many sizes.
    @Test func proofsFromTiles() throws {
        let leaves = (0..<1_100).map { MerkleTree.leafHash(Array("leaf \($0)".utf8)) }
        func level(_ h: Int) -> [MerkleTree.Hash] {  // the full nodes of height h
            stride(from: 0, to: leaves.count - (1 << h) + 1, by: 1 << h).map {
                MerkleTree.root(leafHashes: leaves[$0..<$0 + (1 << h)])
            }
        }
        let levels = [level(0), level(8)]
        for size in [1, 2, 3, 255, 256, 257, 511, 512, 1_000, 1_100] as [Int64] {
            var tiles: [Tile: [UInt8]] = [:]
            for l in 0..<2 {
                for index in 0...5 as ClosedRange<Int64> {
                    let width = Tile.width(level: l, index: index, treeSize: size)
                    guard width > 0 else { continue }
                    let start = Int(index) * 256
                    tiles[Tile(level: l, index: index, width: width)] = levels[l][start..<start + width].flatMap { $0 }
                }
            }
            let root = MerkleTree.root(leafHashes: leaves[..<Int(size)])
            #expect(Tile.hashes(of: [0..<size], treeSize: size, tiles: tiles) == [root], "size \(size)")
            for leaf in Set([0, size / 2, size - 1]) {
                let ranges = MerkleTree.inclusionRanges(leaf: leaf, size: size)
                #expect(Tile.needed(for: ranges, treeSize: size).allSatisfy { tiles[$0] != nil })
                let path = try #require(Tile.hashes(of: ranges, treeSize: size, tiles: tiles))
                try MerkleProof.verifyInclusion(leafIndex: leaf, treeSize: size, leafHash: leaves[Int(leaf)], proof: path, root: root)
            }
            if size > 3 {
                let old = size / 3
                let proof = try #require(Tile.hashes(of: MerkleTree.consistencyRanges(from: old, to: size), treeSize: size, tiles: tiles))
                try MerkleProof.verifyConsistency(
                    size1: old, size2: size, root1: MerkleTree.root(leafHashes: leaves[..<Int(old)]), root2: root, proof: proof)
            }
        }
    }

    @Test func entryBundles() {
        let entries: [[UInt8]] = [[], [1, 2, 3], Array(repeating: 7, count: 300)]
        let bundle = Tile.bundle(entries)
        #expect(bundle.count == 2 * 3 + 303)
        #expect(Tile.leafHashes(ofBundle: bundle) == entries.flatMap(MerkleTree.leafHash))
        #expect(Tile.leafHashes(ofBundle: Array(bundle.dropLast())) == nil)
        #expect(Tile.leafHashes(ofBundle: bundle + [0]) == nil)
        #expect(Tile.entries(ofBundle: bundle) == entries)
        #expect(Tile.entries(ofBundle: []) == [])
        #expect(Tile.entries(ofBundle: Array(bundle.dropLast())) == nil)
    }
}
