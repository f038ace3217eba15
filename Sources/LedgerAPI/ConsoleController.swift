import Foundation
import Hummingbird
import LedgerDomain
import LedgerWire
import NIOCore

/// `GET /console`: the auditor's console (issue 31), three static files served by the ledger
/// itself (Sources/LedgerAPI/Console). The page holds no data: it signs in with a bearer token,
/// kept in the browser tab only, and reads the same API with it, so it shows exactly what the
/// API shows that token. Nothing is loaded from elsewhere (the policy says so to the browser).
struct ConsoleController {
    static let files: [String: (type: String, body: ByteBuffer)] = {
        var files: [String: (String, ByteBuffer)] = [:]
        for (name, type) in [("console.html", "text/html; charset=utf-8"), ("console.js", "text/javascript; charset=utf-8"),
                             ("console.css", "text/css; charset=utf-8")] {
            let url = Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Console")
            let text = url.flatMap { try? String(contentsOf: $0, encoding: .utf8) } ?? ""
            files[name] = (type, ByteBuffer(string: text))
        }
        return files
    }()

    func addRoutes(to router: Router<LedgerRequestContext>) {
        router.get("console") { _, _ in Self.serve("console.html") }
        router.get("console/:file") { _, context in
            let name = try context.parameters.require("file")
            guard name != "console.html", Self.files[name] != nil else { throw DomainError(.routeNotFound, "no such console file: \(name)") }
            return Self.serve(name)
        }
    }

    static func serve(_ name: String) -> Response {
        let file = files[name]!
        return Response(
            status: .ok,
            headers: [
                .contentType: file.type, .cacheControl: "no-cache", .init("Content-Security-Policy")!: "default-src 'self'; frame-ancestors 'none'",
                .init("X-Content-Type-Options")!: "nosniff", .init("Referrer-Policy")!: "no-referrer",
            ],
            body: .init(byteBuffer: file.body))
    }
}
