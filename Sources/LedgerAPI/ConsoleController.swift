import Foundation
import Hummingbird
import LedgerConsole
import LedgerDomain
import LedgerWire
import NIOCore

/// `GET /console`: the auditor's console (issues 31 and 41), static files served by the ledger
/// itself (`ConsoleFiles`, Sources/LedgerConsole/Console): the page, its style sheet, its ES modules and its icon.
/// The page holds no data: it signs in, through the identity provider `provider` names (issue 69;
/// `GET /console/provider.json` tells the page), or with a pasted bearer token where there is
/// none; keeps the token in the browser tab only, and reads the same API with it, so it shows
/// exactly what the API shows that token. Nothing is loaded from elsewhere, and nothing fetched
/// from anywhere but this ledger and the provider's origin (the policy says so to the browser).
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
    /// Where the page signs in; nil: a pasted token.
    let provider: ConsoleProvider?
    /// The Content-Security-Policy of every console file (`ConsoleProvider.contentSecurityPolicy`).
    let policy: String

    init(provider: ConsoleProvider?) {
        self.provider = provider
        self.policy = ConsoleProvider.contentSecurityPolicy(provider)
    }

    /// The files served: the page, its style sheet and icon, and its ES modules (`console.js`
    /// imports the others).
    static let served = [
        "console.html", "console.css", "favicon.svg", "console.js", "api.js", "audit.js", "collaboration.js", "collaborations.js",
        "dom.js", "health.js", "history.js", "members.js", "oidc.js", "signin.js", "timeline.js", "ui.js", "windows.js",
        "proven.js", "verified.js", "lookup.js", "link.js", "note.js", "merkle.js", "leaf.js", "prefix.js", "times.js", "json.js",
        "shards.js",
    ]
    /// The types, by extension. ES modules must come with a JavaScript type or the browser
    /// refuses them (and `nosniff` forbids guessing).
    static let types = [
        "html": "text/html; charset=utf-8", "js": "text/javascript; charset=utf-8", "css": "text/css; charset=utf-8",
        "svg": "image/svg+xml",
    ]
    static let page = "console.html"
    /// Not a file: the sign-in's provider, from the configuration (`ConsoleProvider.document`).
    static let providerDocument = "provider.json"
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
        router.get("console") { _, _ in try serve(Self.page) }
        router.get("console/:file") { _, context in
            let name = try context.parameters.require("file")
            guard name != Self.page else { throw Self.notFound(name) }
            if name == Self.providerDocument {
                return respond("application/json", ConsoleProvider.document(provider), cache: "no-store")
            }
            return try serve(name)
        }
        router.get("favicon.ico") { _, _ in try serve(Self.icon) }
    }

    static func notFound(_ name: String) -> DomainError { DomainError(.routeNotFound, "no such console file: \(name)") }

    /// The file with the console's security headers.
    func serve(_ name: String) throws -> Response {
        guard let file = Self.files[name] else { throw Self.notFound(name) }
        return respond(file.type, file.body)
    }

    /// A 200 with the console's security headers: the policy, no guessing of types, no referrer.
    func respond(_ type: String, _ body: ByteBuffer, cache: String = "no-cache") -> Response {
        Response(
            status: .ok,
            headers: [
                .contentType: type, .cacheControl: cache, .init("Content-Security-Policy")!: policy,
                .init("X-Content-Type-Options")!: "nosniff", .init("Referrer-Policy")!: "no-referrer",
            ],
            body: .init(byteBuffer: body))
    }
}
