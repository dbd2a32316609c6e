import AuthRPC
import AuthRPCSyntax
import Foundation
import Testing

@testable import AuthRPCCodeGen

/// The runtime (`ServiceConfig(json:)`) and the client generator (`ServiceConfig=` files) check
/// service configs with one validator: each document of the table is run through both, which must
/// accept it or refuse it alike, naming the same field. The generator is stricter in two ways only
/// (``ServiceConfigValidator/Strictness/authored``), listed apart.
@Suite("Service config: runtime and generator agree")
struct ServiceConfigAgreementTests {
    /// Both accept: (document, the services it configures, whether it has the default name).
    static let accepted: [(String, Set<String>, Bool)] = [
        ("{}", [], false),
        (#"{"methodConfig": null, "retryThrottling": null}"#, [], false),
        (
            #"{"methodConfig": [{"name": [{"service": "a.B"}], "timeout": ".5s", "waitForReady": null}]}"#,
            ["a.B"], false
        ),
        (#"{"methodConfig": [{"name": [{}], "timeout": "30s"}]}"#, [], true),
        (#"{"methodConfig": [{"name": [{"service": "", "method": null}]}]}"#, [], true),
        (
            #"{"methodConfig": [{"name": [{"service": "a.B", "method": "M"}, {"service": "c.D"}], "maxRequestMessageBytes": "4294967295", "maxResponseMessageBytes": 0}]}"#,
            ["a.B", "c.D"], false
        ),
        (
            #"{"methodConfig": [{"name": [{"service": "a.B"}], "retryPolicy": {"maxAttempts": 9, "initialBackoff": "0.1s", "maxBackoff": "2.000000001s", "backoffMultiplier": 1.3, "retryableStatusCodes": ["UNAVAILABLE", 4, "ABORTED"]}, "hedgingPolicy": null}]}"#,
            ["a.B"], false
        ),
        (
            #"{"methodConfig": [{"name": [{"service": "a.B"}], "hedgingPolicy": {"maxAttempts": 3, "hedgingDelay": "0s", "nonFatalStatusCodes": []}}]}"#,
            ["a.B"], false
        ),
        (
            #"{"loadBalancingConfig": [{"round_robin": {}}], "retryThrottling": {"maxTokens": 10, "tokenRatio": 0.1}, "unknown": [1]}"#,
            [], false
        ),
    ]

    /// Both refuse, naming this field; with a word of the runtime's problem.
    static let refused: [(String, String, String)] = [
        ("[]", "", "object"),
        (#"{"methodConfig": {}}"#, "methodConfig", "array"),
        (#"{"methodConfig": [3]}"#, "methodConfig[0]", "object"),
        (#"{"methodConfig": [{"name": [{"method": "M"}]}]}"#, "methodConfig[0].name[0].method", "service"),
        (#"{"methodConfig": [{"name": [{"service": 5}]}]}"#, "methodConfig[0].name[0].service", "string"),
        (
            #"{"methodConfig": [{"name": [{"service": "S"}]}, {"name": [{"service": "S"}]}]}"#,
            "methodConfig[1].name[0]", "twice"
        ),
        (#"{"methodConfig": [{"name": [{}]}, {"name": [{"service": ""}]}]}"#, "methodConfig[1].name[0]", "twice"),
        (#"{"methodConfig": [{"name": [{"service": "S"}], "timeout": "1m"}]}"#, "methodConfig[0].timeout", "duration"),
        (
            #"{"methodConfig": [{"name": [{"service": "S"}], "timeout": "1.0000000001s"}]}"#, "methodConfig[0].timeout",
            "duration"
        ),
        // The generator used to accept these three; a client embedding them could not load them.
        (
            #"{"methodConfig": [{"name": [{"service": "S"}], "timeout": "0s"}]}"#, "methodConfig[0].timeout",
            "longer than zero"
        ),
        (
            #"{"methodConfig": [{"name": [{"service": "S"}], "timeout": "315576000001s"}]}"#, "methodConfig[0].timeout",
            "duration"
        ),
        (
            #"{"methodConfig": [{"name": [{"service": "S"}], "maxRequestMessageBytes": 4294967296}]}"#,
            "methodConfig[0].maxRequestMessageBytes", "4294967295"
        ),
        (
            #"{"methodConfig": [{"name": [{"service": "S"}], "waitForReady": 1}]}"#, "methodConfig[0].waitForReady",
            "true or false"
        ),
        (
            #"{"methodConfig": [{"name": [{"service": "S"}], "retryPolicy": {"maxAttempts": 1, "initialBackoff": "1s", "maxBackoff": "1s", "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}}]}"#,
            "methodConfig[0].retryPolicy.maxAttempts", "from 2"
        ),
        (
            #"{"methodConfig": [{"name": [{"service": "S"}], "retryPolicy": {"maxAttempts": 3, "initialBackoff": "0s", "maxBackoff": "1s", "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}}]}"#,
            "methodConfig[0].retryPolicy.initialBackoff", "longer than zero"
        ),
        (
            #"{"methodConfig": [{"name": [{"service": "S"}], "retryPolicy": {"maxAttempts": 3, "initialBackoff": "1s", "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}}]}"#,
            "methodConfig[0].retryPolicy.maxBackoff", "required"
        ),
        (
            #"{"methodConfig": [{"name": [{"service": "S"}], "retryPolicy": {"maxAttempts": 3, "initialBackoff": "1s", "maxBackoff": "1s", "backoffMultiplier": true, "retryableStatusCodes": ["UNAVAILABLE"]}}]}"#,
            "methodConfig[0].retryPolicy.backoffMultiplier", "number"
        ),
        (
            #"{"methodConfig": [{"name": [{"service": "S"}], "retryPolicy": {"maxAttempts": 3, "initialBackoff": "1s", "maxBackoff": "1s", "backoffMultiplier": 0, "retryableStatusCodes": ["UNAVAILABLE"]}}]}"#,
            "methodConfig[0].retryPolicy.backoffMultiplier", "greater than zero"
        ),
        (
            #"{"methodConfig": [{"name": [{"service": "S"}], "retryPolicy": {"maxAttempts": 3, "initialBackoff": "1s", "maxBackoff": "1s", "backoffMultiplier": 2, "retryableStatusCodes": []}}]}"#,
            "methodConfig[0].retryPolicy.retryableStatusCodes", "empty"
        ),
        (
            #"{"methodConfig": [{"name": [{"service": "S"}], "retryPolicy": {"maxAttempts": 3, "initialBackoff": "1s", "maxBackoff": "1s", "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE", "SLOW"]}}]}"#,
            "methodConfig[0].retryPolicy.retryableStatusCodes[1]", "status code"
        ),
        // OK is no failure to retry: the generator used to accept it.
        (
            #"{"methodConfig": [{"name": [{"service": "S"}], "retryPolicy": {"maxAttempts": 3, "initialBackoff": "1s", "maxBackoff": "1s", "backoffMultiplier": 2, "retryableStatusCodes": ["OK"]}}]}"#,
            "methodConfig[0].retryPolicy.retryableStatusCodes[0]", "other than OK"
        ),
        (
            #"{"methodConfig": [{"name": [{"service": "S"}], "retryPolicy": {}, "hedgingPolicy": {}}]}"#,
            "methodConfig[0].hedgingPolicy", "only one"
        ),
        (
            #"{"methodConfig": [{"name": [{"service": "S"}], "hedgingPolicy": {"maxAttempts": 1}}]}"#,
            "methodConfig[0].hedgingPolicy.maxAttempts", "from 2"
        ),
        // The generator used to check no retryThrottling at all.
        (#"{"retryThrottling": {"maxTokens": 0, "tokenRatio": 1}}"#, "retryThrottling.maxTokens", "from 1"),
        (#"{"retryThrottling": {"maxTokens": 10, "tokenRatio": 0.0001}}"#, "retryThrottling.tokenRatio", "0.001"),
    ]

    /// The runtime accepts, the generator refuses: (document, the field it names).
    static let authoredOnly: [(String, String)] = [
        (#"{"methodConfig": [{"timeout": "1s"}]}"#, "methodConfig[0].name"),
        (#"{"methodConfig": [{"name": [], "timeout": "1s"}]}"#, "methodConfig[0].name"),
        (#"{"methodConfig": [{"name": [{"service": "S", "verb": "M"}]}]}"#, "methodConfig[0].name[0]"),
    ]

    /// The generator's verdict: the file's services, or its error's text.
    static func generator(_ json: String) -> Result<ServiceConfigFile, GeneratorError> {
        Result { () throws(GeneratorError) in try ServiceConfigFile(path: "config.json", data: Data(json.utf8)) }
    }

    static func runtime(_ json: String) -> Result<ServiceConfig, ServiceConfigError> {
        Result { () throws(ServiceConfigError) in try ServiceConfig(json: json) }
    }

    @Test("both accept", arguments: accepted.indices)
    func bothAccept(index: Int) throws {
        let (json, services, everyService) = Self.accepted[index]
        #expect(throws: Never.self) { try Self.runtime(json).get() }
        let file = try Self.generator(json).get()
        #expect(file.services == services)
        #expect(file.configuresEveryService == everyService)
    }

    @Test("both refuse, naming the same field", arguments: refused.indices)
    func bothRefuse(index: Int) {
        let (json, field, word) = Self.refused[index]
        guard case .failure(let runtime) = Self.runtime(json) else {
            Issue.record("the runtime accepted \(json)")
            return
        }
        #expect(runtime.field == field)
        #expect(runtime.problem.contains(word), "\(runtime)")
        guard case .failure(let generator) = Self.generator(json) else {
            Issue.record("the generator accepted \(json)")
            return
        }
        let place = field.isEmpty ? "" : "\(field): "
        #expect(
            "\(generator)".hasPrefix(
                "ServiceConfig=config.json is not a valid service config: \(place)\(runtime.problem);"
            ),
            "\(generator)"
        )
    }

    @Test("the generator alone refuses a nameless entry and an unknown key in a name", arguments: authoredOnly.indices)
    func generatorStricter(index: Int) {
        let (json, field) = Self.authoredOnly[index]
        #expect(throws: Never.self) { try Self.runtime(json).get() }
        guard case .failure(let generator) = Self.generator(json) else {
            Issue.record("the generator accepted \(json)")
            return
        }
        #expect("\(generator)".contains("is not a valid service config: \(field): "), "\(generator)")
    }
}
