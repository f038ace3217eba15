/// Runs `body`, then stops the embedded cluster if this process started it, also on error.
public func stopping<T: Sendable>(_ embedded: EmbeddedPostgres?, _ body: () async throws -> T) async throws -> T {
    do {
        let result = try await body()
        try await embedded?.stop()
        return result
    } catch {
        try? await embedded?.stop()
        throw error
    }
}
