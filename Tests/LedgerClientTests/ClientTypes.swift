import LedgerClient

// The SDK's types where the domain has one of the same name (this file imports only the SDK).
typealias SDKShareOptions = ShareOptions
typealias SDKHighlightKind = HighlightKind
