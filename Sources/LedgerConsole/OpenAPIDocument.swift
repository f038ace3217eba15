import Foundation

/// The HTTP API's contract (Sources/LedgerConsole/openapi.yaml), served at `/openapi.yaml`;
/// `OpenAPITests` keep it in step with the routers.
public enum OpenAPIDocument {
    public static let text: String = {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "yaml"),
            let text = try? String(contentsOf: url, encoding: .utf8)
        else { return "openapi: 3.1.0\n" }
        return text
    }()
}
