import Foundation
import LedgerConfiguration
import LedgerPostgres
import Testing

/// Every setting read once into one typed value: defaults written once, malformed values named.
struct ConfigurationDefaultsTests {
    @Test("the defaults parse, and each lands in its field")
    func defaults() throws {
        let configuration = try LedgerConfiguration(environment: [:])
        #expect(configuration.host == "127.0.0.1" && configuration.port == 8080)
        #expect(configuration.baseURL == "http://127.0.0.1:8080")
        #expect(configuration.origin == "127.0.0.1/ledger")
        #expect(configuration.bodyLimit == 1_048_576 && configuration.readWait == .seconds(2) && configuration.verdictWait == .seconds(5))
        #expect(configuration.challengeLifetime == .seconds(120) && configuration.verifierGroup == 64)
        #expect(configuration.databaseURL == nil && !configuration.tokenKeysConfigured && !configuration.webhooksAllowHTTP)
        #expect(!configuration.webhooksAllowPrivate, "webhooks reach public addresses only unless allowed")
        #expect(configuration.jwtAccountClaim == "sub" && configuration.jwtRolesClaim == "roles" && configuration.logLevel == "info")
        #expect(configuration.jwtRolesSeparator == nil, "a roles claim written as one string is read only on request")
        #expect(configuration.followInterval == NotificationHub.followInterval, "the workers' own default is the setting's")
        // Each default is the catalogue's: the table and the value cannot disagree.
        for setting in LedgerSettings.all where setting.defaultValue != nil {
            #expect(setting.problem(with: setting.defaultValue!) == nil, "\(setting.variable)")
            #expect(setting.defaultText == "`\(setting.defaultValue!)`")
        }
    }

    @Test("values from the environment override the defaults; an empty one counts as unset")
    func environment() throws {
        let configuration = try LedgerConfiguration(environment: [
            "LEDGER_PORT": "9000", "LEDGER_READ_WAIT": "0.5", "LEDGER_WEBHOOKS_ALLOW_HTTP": "yes", "LEDGER_HOST": "",
            "LEDGER_PUBLIC_BASE_URL": "https://ledger.example.com", "LEDGER_LOG_FORMAT": "JSON", "LEDGER_WEBHOOKS_ALLOW_PRIVATE": "yes",
        ])
        #expect(configuration.port == 9000 && configuration.readWait == .milliseconds(500) && configuration.webhooksAllowHTTP)
        #expect(configuration.webhooksAllowPrivate)
        #expect(configuration.host == "127.0.0.1")
        #expect(configuration.origin == "ledger.example.com/ledger" && configuration.jsonLogs)
    }

    /// An identity provider's keys (LEDGER_JWKS_URL or LEDGER_JWKS_FILE) without
    /// LEDGER_JWT_AUDIENCE refuse to start, naming it, beside any other problem; with an audience
    /// they parse.
    @Test("provider keys without LEDGER_JWT_AUDIENCE refuse to start, naming it beside other problems")
    func audienceRequired() throws {
        let providers: [[String: String]] = [
            ["LEDGER_JWKS_URL": "https://idp.example/.well-known/jwks.json"], ["LEDGER_JWKS_FILE": "/etc/ledger/jwks.json"],
            ["LEDGER_JWKS_URL": "https://idp.example/jwks.json", "LEDGER_JWT_AUDIENCE": ""],
            ["LEDGER_JWKS_FILE": "/etc/ledger/jwks.json", "LEDGER_JWT_AUDIENCE": "  ", "LEDGER_JWT_ISSUER": "https://idp.example"],
        ]
        for environment in providers {
            #expect {
                try LedgerConfiguration(environment: environment)
            } throws: { error in
                let text = "\(error)"
                return error is LedgerSettings.Malformed && text.contains("refusing to start") && text.contains("LEDGER_JWT_AUDIENCE")
            }
        }
        // Named beside a malformed value: every problem at once.
        #expect {
            try LedgerConfiguration(environment: ["LEDGER_JWKS_FILE": "/etc/ledger/jwks.json", "LEDGER_PORT": "80x"])
        } throws: { error in
            let text = "\(error)"
            return text.contains("LEDGER_JWT_AUDIENCE") && text.contains("LEDGER_PORT='80x'")
        }
        let configured = try LedgerConfiguration(environment: [
            "LEDGER_JWKS_URL": "https://idp.example/jwks.json", "LEDGER_JWT_AUDIENCE": "ledger-app",
        ])
        #expect(configured.jwtAudience == "ledger-app" && configured.tokenKeysConfigured)
        // The shared secret needs no audience.
        #expect(try LedgerConfiguration(environment: ["LEDGER_JWT_SECRET": String(repeating: "k", count: 40)]).jwtAudience == nil)
    }

    /// `LEDGER_JWT_ROLES_SEPARATOR`: one character, which the token authority splits a string
    /// roles claim on; anything longer, or a letter or digit (which would split role names), refuses to start.
    @Test("the roles separator: one character other than a letter or digit, else refused, naming the value")
    func rolesSeparator() throws {
        for separator in [",", " ", ";", "|"] {
            #expect(
                try LedgerConfiguration(environment: ["LEDGER_JWT_ROLES_SEPARATOR": separator]).jwtRolesSeparator == Character(separator))
        }
        for separator in [", ", "a", "7", ",;"] {
            #expect {
                try LedgerConfiguration(environment: ["LEDGER_JWT_ROLES_SEPARATOR": separator])
            } throws: { error in
                "\(error)".contains("LEDGER_JWT_ROLES_SEPARATOR='\(separator)' is not one character other than a letter or a digit")
            }
        }
    }

    @Test("every malformed value is named at once, secrets and URLs without their value")
    func malformed() {
        #expect {
            try LedgerConfiguration(environment: [
                "LEDGER_PORT": "80x", "LEDGER_JWT_SECRET": "short", "LEDGER_DATABASE_URL": "mysql://u:secret@h/db",
            ])
        } throws: { error in
            let text = "\(error)"
            return text.contains("LEDGER_PORT='80x'") && text.contains("LEDGER_JWT_SECRET is 5 bytes long")
                && text.contains("LEDGER_DATABASE_URL is not a PostgreSQL URL") && !text.contains("secret@")
        }
        #expect {
            try LedgerConfiguration(environment: ["LEDGER_WEBHOOKS_ALLOW_PRIVATE": "maybe"])
        } throws: { error in
            "\(error)".contains("LEDGER_WEBHOOKS_ALLOW_PRIVATE='maybe'")
        }
    }
}
