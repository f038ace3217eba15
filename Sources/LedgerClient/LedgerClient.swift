import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The Participant Ledger from an app: one typed async call per v1 endpoint, plus the calls
/// the collaboration action handlers make (`prepareCollaboration`, `updateParticipants`,
/// `challenge(for:)`, `submitProof`). Errors the server answers are thrown as `LedgerError`.
public struct LedgerClient: Sendable {
    public let baseURL: URL
    let token: @Sendable () async throws -> String
    let transport: any LedgerTransport
    /// Attempts of a start call on transport errors and 5xx answers (same idempotency key).
    public var startAttempts: Int = 4
    /// Where the log's checkpoint and tiles are: `/tlog`; on shards, shard k's log is at
    /// `/tlog/shard/k` (`shardLog(_:)`).
    var tlog = "/tlog"

    /// - Parameters:
    ///   - baseURL: where the ledger listens, e.g. `https://ledger.example.com`.
    ///   - token: the bearer token of the signed-in account; asked for before every call, so it may refresh.
    public init(baseURL: URL, session: URLSession = .shared, token: @escaping @Sendable () async throws -> String) {
        self.init(baseURL: baseURL, transport: URLSessionTransport(session: session), token: token)
    }

    /// A client over another transport than URLSession (the benchmarks use a NIO connection).
    public init(baseURL: URL, transport: any LedgerTransport, token: @escaping @Sendable () async throws -> String) {
        self.baseURL = baseURL
        self.transport = transport
        self.token = token
    }

    public init(baseURL: URL, session: URLSession = .shared, token: String) {
        self.init(baseURL: baseURL, session: session, token: { token })
    }

    // MARK: The handlers' calls

    /// `SWStartCollaborationAction`: starts the collaboration and returns the universal link and
    /// identifier for `action.fulfill(using:collaborationIdentifier:)`. Retried on transport errors
    /// with one idempotency key, so a retry never starts a second collaboration.
    ///
    /// - Parameter defaultAccess: an ISO 8601 duration (`"P7D"`, `"PT12H"`, `"P1DT12H"`; 1 second
    ///   to 100 years): every identity later added without a window of its own may prove access for
    ///   that long from the moment it is added. Nil: such identities have no window. Anything else
    ///   is refused with 400 `invalid_window`.
    public func prepareCollaboration(
        localIdentifier: String, title: String, initiator: Initiator, options: ShareOptions? = nil, defaultAccess: String? = nil,
        idempotencyKey: String = UUID().uuidString
    ) async throws -> PreparedCollaboration {
        let body = StartRequest(
            localIdentifier: localIdentifier, title: title, initiatorHandle: initiator.handle, initiatorName: initiator.name,
            shareOptions: options, defaultAccess: defaultAccess.map(DefaultAccessBody.init(duration:)))
        var attempt = 0
        while true {
            attempt += 1
            do {
                let answer: StartResponse = try await send(
                    "POST", "/v1/collaborations", body: body, headers: ["Idempotency-Key": idempotencyKey])
                guard let url = URL(string: answer.universalLink) else {
                    throw LedgerError(status: 200, code: "bad_response", message: "universal link is not a URL")
                }
                return PreparedCollaboration(url: url, identifier: answer.collaborationId, position: answer.position)
            } catch let error where attempt < startAttempts && Self.isRetryable(error) {
                try await Task.sleep(for: .milliseconds(100 << attempt))
            }
        }
    }

    /// `SWUpdateCollaborationParticipantsAction`: adds and removes identities by root hash
    /// (`SWPerson.Identity.rootHash`), and sets access windows. Owner only.
    ///
    /// - Parameters:
    ///   - added: identities added without a window of their own (they get the start's
    ///     `defaultAccess`, if it gave one).
    ///   - addedWithWindows: identities added with a window ("until Friday", "from Monday for a week").
    ///   - removed: identities removed; an account they granted is revoked.
    ///   - windows: new windows for current identities (invited or granted), replacing theirs; an
    ///     `IdentityWindow` with neither bound clears the window. An identity may not be both
    ///     added or removed and given a window in one update (400 `conflicting_identities`), nor
    ///     be given one unless it is current (422 `unknown_identity`).
    ///   All four together hold at most 1,000 identities.
    public func updateParticipants(
        added: [Data] = [], addedWithWindows: [IdentityWindow] = [], removed: [Data] = [], windows: [IdentityWindow] = [],
        in collaborationID: String
    ) async throws -> ParticipantsUpdate {
        // Windowed entries first: an identity named twice is added once, with the first entry's window.
        let entries =
            addedWithWindows.map {
                ParticipantsRequest.Added(rootHash: $0.rootHash.base64EncodedString(), notBefore: $0.notBefore, notAfter: $0.notAfter)
            } + added.map { ParticipantsRequest.Added(rootHash: $0.base64EncodedString()) }
        let body = ParticipantsRequest(
            adding: entries, removed: removed.map { $0.base64EncodedString() },
            windows: windows.isEmpty
                ? nil
                : windows.map {
                    ParticipantsRequest.Window(rootHash: $0.rootHash.base64EncodedString(), notBefore: $0.notBefore, notAfter: $0.notAfter)
                })
        let answer: ParticipantsResponse = try await send(
            "POST", "/v1/collaborations/\(try Self.segment(collaborationID))/participants", body: body)
        return ParticipantsUpdate(
            added: answer.added.compactMap { Data(base64Encoded: $0) }, removed: answer.removed.compactMap { Data(base64Encoded: $0) },
            revokedAccounts: answer.revokedAccounts, windowsChanged: answer.windowsChanged.compactMap { Data(base64Encoded: $0) },
            position: answer.position)
    }

    /// A fresh single-use challenge for the signed-in account on a collaboration (the
    /// `getSignedIdentityProof(for:using:)` input).
    public func challenge(for collaborationID: String) async throws -> Challenge {
        let answer: ChallengeResponse = try await send("POST", "/v1/challenges", body: ChallengeRequest(collaborationId: collaborationID))
        guard let data = Data(base64Encoded: answer.challenge) else {
            throw LedgerError(status: 201, code: "bad_response", message: "challenge is not base64")
        }
        return Challenge(id: answer.challengeId, collaborationID: collaborationID, data: data, expiresAt: answer.expiresAt)
    }

    /// Submits `SWSignedPersonIdentityProof`'s parts. Granted, or pending if the verifier did
    /// not answer in time; a refusal throws `LedgerError` (`proof_rejected`, with `reason`).
    public func submitProof(
        publicKey: Data, publicKeyIndex: Int, inclusionHashes: [Data], signature: Data, challenge: Challenge
    ) async throws -> ProofResult {
        try await submitProof(
            publicKey: publicKey, publicKeyIndex: publicKeyIndex, inclusionHashes: inclusionHashes, signature: signature,
            challengeID: challenge.id, in: challenge.collaborationID)
    }

    public func submitProof(
        publicKey: Data, publicKeyIndex: Int, inclusionHashes: [Data], signature: Data, challengeID: String,
        in collaborationID: String
    ) async throws -> ProofResult {
        guard publicKeyIndex >= 0 else {
            throw LedgerError(status: 0, code: "invalid_inclusion_path", message: "publicKeyIndex must not be negative")
        }
        let body = ProofRequest(
            challengeId: challengeID, signature: signature.base64EncodedString(),
            proof: .init(
                publicKey: publicKey.base64EncodedString(), publicKeyIndex: UInt64(publicKeyIndex),
                inclusionHashes: inclusionHashes.map { $0.base64EncodedString() }))
        let answer: ProofAnswer = try await send(
            "POST", "/v1/collaborations/\(try Self.segment(collaborationID))/proofs", body: body)
        return try Self.result(answer)
    }

    /// The verdict of a pending proof, by the request id `submitProof` returned.
    public func proofStatus(requestID: String, in collaborationID: String) async throws -> ProofResult {
        let answer: ProofAnswer = try await send(
            "GET", "/v1/collaborations/\(try Self.segment(collaborationID))/proofs/\(try Self.segment(requestID))")
        return try Self.result(answer)
    }

    static func result(_ answer: ProofAnswer) throws -> ProofResult {
        if answer.status == "granted", let rootHash = answer.rootHash, let hash = Data(base64Encoded: rootHash),
            let account = answer.accountId, let position = answer.position
        {
            return .granted(rootHash: hash, accountID: account, position: position)
        }
        if answer.status == "pending", let requestId = answer.requestId, let statusUrl = answer.statusUrl {
            return .pending(requestID: requestId, statusURL: statusUrl)
        }
        throw LedgerError(status: 200, code: "bad_response", message: "unexpected proof answer \(answer.status)")
    }

    // MARK: Commands

    /// Posts a highlight notice (`SWHighlightChangeEvent` and friends); returns its log position.
    @discardableResult
    public func postHighlight(
        _ kind: HighlightKind, trigger: String? = nil, mentioning rootHash: Data? = nil, in collaborationID: String
    ) async throws -> Int64 {
        let answer: PositionResponse = try await send(
            "POST", "/v1/collaborations/\(try Self.segment(collaborationID))/highlights",
            body: HighlightRequest(kind: kind.rawValue, trigger: trigger, mentionedRootHash: rootHash?.base64EncodedString()))
        return answer.position
    }

    /// True when the server is up (`/health`) and its schema current (`/ready`).
    public func isReady() async -> Bool {
        let answer: HealthResponse? = try? await send("GET", "/ready", authenticated: false)
        return answer?.status == "ready"
    }

    // MARK: Transport

    func send<Answer: Decodable>(
        _ method: String, _ path: String, query: [String: String?] = [:], body: (some Encodable)? = nil as String?,
        headers: [String: String] = [:], authenticated: Bool = true
    ) async throws -> Answer {
        let (data, status) = try await exchange(method, path, query: query, body: body, headers: headers, authenticated: authenticated)
        do {
            return try Self.decoder.decode(Answer.self, from: data)
        } catch {
            throw LedgerError(status: status, code: "bad_response", message: "cannot decode \(Answer.self): \(error)")
        }
    }

    /// One request; the body of a 2xx answer, else a `LedgerError` from its error document.
    func exchange(
        _ method: String, _ path: String, query: [String: String?] = [:], body: (some Encodable)? = nil as String?,
        headers: [String: String] = [:], authenticated: Bool = true
    ) async throws -> (body: Data, status: Int) {
        guard var components = URLComponents(url: baseURL.appendingPathComponent(path), resolvingAgainstBaseURL: false) else {
            throw LedgerError(status: 0, code: "bad_url", message: "cannot build a URL from \(baseURL) and \(path)")
        }
        let items = query.compactMap { name, value in value.map { URLQueryItem(name: name, value: $0) } }.sorted { $0.name < $1.name }
        if !items.isEmpty { components.queryItems = items }
        guard let url = components.url else { throw LedgerError(status: 0, code: "bad_url", message: "invalid query for \(path)") }
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if authenticated { request.setValue("Bearer \(try await token())", forHTTPHeaderField: "Authorization") }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        if let body {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = try Self.encoder.encode(body)
        }
        let (data, status) = try await transport.send(request)
        guard (200..<300).contains(status) else {
            if let error = try? Self.decoder.decode(ErrorBody.self, from: data) {
                var refusal = LedgerError(status: status, code: error.error.code, message: error.error.message, reason: error.error.reason)
                if error.error.code == "cut_short" { refusal.shards = try? Self.decoder.decode(CutShort.self, from: data).shards }
                throw refusal
            }
            throw LedgerError(
                status: status, code: "http_\(status)", message: String(decoding: data.prefix(512), as: UTF8.self))
        }
        return (data, status)
    }

    static func isRetryable(_ error: any Error) -> Bool {
        if let error = error as? LedgerError { return error.status >= 500 }
        return error is URLError
    }

    /// Ids go into paths; anything that is not a plain id is refused before it is sent.
    static func segment(_ id: String) throws -> String {
        guard !id.isEmpty, id.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" }) else {
            throw LedgerError(status: 0, code: "invalid_id", message: "\(id) is not an id")
        }
        return id
    }

    static func formatDate(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    static let encoder = JSONEncoder()
    static let decoder = APIJSON.decoder()
}

/// What carries the client's requests: an HTTP request in, the response's body and status out.
public protocol LedgerTransport: Sendable {
    func send(_ request: URLRequest) async throws -> (body: Data, status: Int)

    /// A response read as it arrives (the change feed): its status once the head is in, then
    /// the body in pieces until the server ends it. Cancelling the consumer closes the connection.
    func stream(_ request: URLRequest) async throws -> (status: Int, body: AsyncThrowingStream<Data, any Error>)
}

extension LedgerTransport {
    /// By default, through a URLSession of its own.
    public func stream(_ request: URLRequest) async throws -> (status: Int, body: AsyncThrowingStream<Data, any Error>) {
        try await URLSessionStream.open(request)
    }
}

/// The default transport.
public struct URLSessionTransport: LedgerTransport {
    let session: URLSession

    public init(session: URLSession) {
        self.session = session
    }

    public func send(_ request: URLRequest) async throws -> (body: Data, status: Int) {
        let (data, response) = try await session.data(for: request)
        return (data, (response as? HTTPURLResponse)?.statusCode ?? 0)
    }
}
