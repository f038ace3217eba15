import LedgerConfiguration
import LedgerDeviceSimulator
import LedgerDomain
import LedgerWire
import TransparencyLog

extension JSONValue {
    public var string: String? { if case .string(let s) = self { return s } else { return nil } }
    public var int: Int64? { if case .number(let n) = self { return Int64(n) } else { return nil } }
    public var array: [JSONValue] { if case .array(let a) = self { return a } else { return [] } }
    public var errorCode: String? { self["error"]?["code"]?.string }
}

/// A start body with share options of both kinds.
public let startBody = #"""
    {"localIdentifier":"doc-1","title":"Trip plan","initiatorHandle":"devin@example.com","initiatorName":"Devin",
     "shareOptions":{"summary":"Anyone can edit","groups":[
       {"identifier":"permission","title":"Permission","kind":"picker","options":[
         {"identifier":"rw","title":"Can make changes","selected":true},{"identifier":"ro","title":"Read only","selected":false}]},
       {"identifier":"extra","title":"Additional Settings","kind":"switches","options":[
         {"identifier":"mentions","title":"Allow mentions","selected":true},{"identifier":"comments","title":"Allow comments","selected":false}]}]}}
    """#

extension LedgerConfiguration {
    /// Defaults, with port 0, reads waiting up to 20 s for the projector (a test machine running
    /// every suite at once may lag far more than the 2 s a production read waits), webhooks
    /// to plain http (receivers on loopback), and no index recorder.
    public static func testing(_ change: (inout LedgerConfiguration) -> Void = { _ in }) -> LedgerConfiguration {
        var configuration = LedgerConfiguration()
        configuration.port = 0
        configuration.readWait = .seconds(20)
        configuration.webhooksAllowHTTP = true
        configuration.webhooksAllowPrivate = true  // the tests' receivers listen on loopback
        // Off: a record a second would join every test's log; the index's own tests turn it on.
        configuration.index = false
        change(&configuration)
        return configuration
    }
}

/// A recipient's device answering a challenge, as `getSignedIdentityProof` would.
public func proofBody(_ person: SimulatedPerson, device: Int = 0, challenge: JSONValue, der: Bool = true) -> String {
    let bytes = Base64.decode(challenge["challenge"]!.string!)!
    let proof = person.proof(device: device)
    return """
        {"challengeId":"\(challenge["challengeId"]!.string!)","signature":"\(Base64.encode(person.sign(bytes, device: device, der: der)))",
         "proof":{"publicKey":"\(Base64.encode(proof.publicKey))","publicKeyIndex":\(proof.publicKeyIndex),
                  "inclusionHashes":[\(proof.inclusionHashes.map { "\"\(Base64.encode($0))\"" }.joined(separator: ","))]}}
        """
}
