import Foundation
import HTTPTypes
import Hummingbird
import LedgerDomain
import LedgerLog
import LedgerWire
import NIOCore
import TransparencyLog

/// The log for anyone, as C2SP `tlog-tiles` serves it under `/tlog`: the latest published
/// checkpoint, hash tiles and entry bundles. The checkpoint and hash tiles need no token; entry
/// bundles (the events' leaves) need an auditor's unless `LEDGER_PUBLIC_ENTRIES=yes`. A full
/// tile anyone may read never changes and is cached for a year; a bundle that needs a token is
/// `private, no-store` with `Vary: Authorization`; a partial tile and the checkpoint are not cached.
struct TileController {
    let tiles: TileStore
    let latest: LatestCheckpoint
    let publicEntries: Bool

    func addRoutes(to group: RouterGroup<LedgerRequestContext>) {
        group.get("checkpoint", use: checkpoint)
        group.get("tile/**", use: tile)
    }

    @Sendable func checkpoint(_ request: Request, context: LedgerRequestContext) async throws -> Response {
        guard let published = try await latest.get() else { throw DomainError(.noCheckpoint, "no checkpoint has been published yet") }
        return Response(
            status: .ok, headers: [.contentType: "text/plain; charset=utf-8", .cacheControl: "no-cache"],
            body: .init(byteBuffer: ByteBuffer(string: published.note)))
    }

    @Sendable func tile(_ request: Request, context: LedgerRequestContext) async throws -> Response {
        let path = "tile/" + context.parameters.getCatchAll().joined(separator: "/")
        // A path that names no tile names no resource: 404, as for a tile past the tree.
        guard let tile = Tile(path: path) else {
            throw DomainError(
                .notFound, "\(path) is not a tile path: tile/<L>/<N>[.p/<W>] or tile/entries/<N>[.p/<W>], N in x-prefixed 3-digit groups")
        }
        if tile.isEntries, !publicEntries {
            let caller = try context.requireCaller()
            guard caller.isAuditor else {
                throw DomainError(.notAuditor, "entry bundles are for auditors (LEDGER_PUBLIC_ENTRIES is not set)")
            }
        }
        guard let bytes = try await tiles.read(tile) else {
            throw DomainError(.notFound, "\(tile.path) is past the latest published checkpoint")
        }
        var headers: HTTPFields = [
            .contentType: "application/octet-stream", .cacheControl: Self.cacheControl(tile, publicEntries: publicEntries),
        ]
        if tile.isEntries, !publicEntries { headers[.vary] = "Authorization" }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: bytes))
    }

    /// A bundle that needs a token is never kept by a shared cache (the first auditor's fetch
    /// would publish every leaf behind a CDN); what anyone may read is immutable once full.
    static func cacheControl(_ tile: Tile, publicEntries: Bool) -> String {
        if tile.isEntries, !publicEntries { return "private, no-store" }
        return tile.isFull ? "public, max-age=31536000, immutable" : "no-cache"
    }
}
