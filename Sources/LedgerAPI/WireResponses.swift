import Hummingbird
import LedgerWire

// The wire bodies (LedgerWire) the handlers answer with, encoded by the request context's
// encoder (LedgerRequestContext: RFC 3339 dates).
extension StartResponse: ResponseEncodable {}
extension ParticipantsResponse: ResponseEncodable {}
extension PositionResponse: ResponseEncodable {}
extension ChallengeResponse: ResponseEncodable {}
extension ProofAnswer: ResponseEncodable {}
extension HealthResponse: ResponseEncodable {}
extension Collaboration: ResponseEncodable {}
extension Members: ResponseEncodable {}
extension History: ResponseEncodable {}
extension Highlights: ResponseEncodable {}
extension MyCollaborations: ResponseEncodable {}
extension AccessAudit: ResponseEncodable {}
extension Webhook: ResponseEncodable {}
extension Webhooks: ResponseEncodable {}
extension CollaborationList: ResponseEncodable {}
extension LogStatus: ResponseEncodable {}
