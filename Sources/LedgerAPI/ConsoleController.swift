import Foundation
import Hummingbird
import LedgerConsole
import LedgerDomain
import LedgerWire
import NIOCore

/// `GET /console`: the auditor's console (issues 31 and 41), static files served by the ledger
/// itself (`ConsoleFiles`, Sources/LedgerConsole/Console): the page, its style sheet, its ES modules and its icon.
/// The page holds no data: it signs in with a bearer token, kept in the browser tab only, and
/// reads the same API with it, so it shows exactly what the API shows that token. Nothing is
/// loaded from elsewhere (the policy says so to the browser).
///
/// `GET /console/{file}` serves the files `served` names, read once at start-up: a request only
/// looks its name up, so no path a client sends ever reaches the file system (`:file` is one path
/// segment; `..` is just a name that is not there), and a file left in the folder by mistake is
/// not published. Any other name, and the page itself under its own name, is the API's 404.
/// `ConsoleTests` checks the list against the folder and every module's imports.
/// `GET /favicon.ico` answers the icon browsers ask the root for (pages other than the console's
/// name none), as SVG: the same bytes as `/console/favicon.svg`, rather than a 204 that would
/// leave those pages iconless or a redirect that costs a second request.
struct ConsoleController {
    /// The files served: the page, its style sheet and icon, and its ES modules (`console.js`
    /// imports the others).
    static let served = [
        "console.html", "console.css", "favicon.svg", "console.js", "api.js", "audit.js", "collaboration.js", "collaborations.js",
        "dom.js", "health.js", "history.js", "members.js", "signin.js", "timeline.js", "ui.js", "windows.js",
    ]
    /// The types, by extension. ES modules must come with a JavaScript type or the browser
    /// refuses them (and `nosniff` forbids guessing).
    static let types = [
        "html": "text/html; charset=utf-8", "js": "text/javascript; charset=utf-8", "css": "text/css; charset=utf-8",
        "svg": "image/svg+xml",
    ]
    static let page = "console.html"
    static let icon = "favicon.svg"

    /// Name → (type, body) of each file `served` names that the bundle holds.
    static let files: [String: (type: String, body: ByteBuffer)] = {
        var files: [String: (String, ByteBuffer)] = [:]
        for name in served {
            guard let text = ConsoleFiles.text(name), let type = types[(name as NSString).pathExtension]
            else { continue }
            files[name] = (type, ByteBuffer(string: text))
        }
        return files
    }()

    func addRoutes(to router: Router<LedgerRequestContext>) {
        router.get("console") { _, _ in try Self.serve(Self.page) }
        router.get("console/:file") { _, context in
            let name = try context.parameters.require("file")
            guard name != Self.page else { throw Self.notFound(name) }
            return try Self.serve(name)
        }
        router.get("favicon.ico") { _, _ in try Self.serve(Self.icon) }
    }

    static func notFound(_ name: String) -> DomainError { DomainError(.routeNotFound, "no such console file: \(name)") }

    /// The file with the console's security headers: nothing from elsewhere, no framing, no
    /// guessing of types, no referrer.
    static func serve(_ name: String) throws -> Response {
        guard let file = files[name] else { throw notFound(name) }
        return Response(
            status: .ok,
            headers: [
                .contentType: file.type, .cacheControl: "no-cache",
                .init("Content-Security-Policy")!: "default-src 'self'; frame-ancestors 'none'",
                .init("X-Content-Type-Options")!: "nosniff", .init("Referrer-Policy")!: "no-referrer",
            ],
            body: .init(byteBuffer: file.body))
    }
}
