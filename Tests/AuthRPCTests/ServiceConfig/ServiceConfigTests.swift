import Testing

@testable import AuthRPC

/// Loading gRPC's service-config JSON: what each field becomes, which method config a call
/// gets, and the error (naming the field) for each way a config can be wrong.
@Suite("Service config")
struct ServiceConfigTests {
    static let example = """
        {
          "loadBalancingConfig": [{"round_robin": {}}],
          "methodConfig": [
            {"name": [{}], "timeout": "30s"},
            {"name": [{"service": "pkg.Svc"}], "timeout": "1.5s", "waitForReady": true,
             "maxRequestMessageBytes": 1024, "maxResponseMessageBytes": "2048"},
            {"name": [{"service": "pkg.Svc", "method": "Get"}, {"service": "other.Svc", "method": "Put"}],
             "retryPolicy": {"maxAttempts": 9, "initialBackoff": ".1s", "maxBackoff": "2.000000001s",
                             "backoffMultiplier": 1.5, "retryableStatusCodes": ["UNAVAILABLE", 8, "ABORTED"]}},
            {"name": [{"service": "pkg.Svc", "method": "List"}], "unknownField": {"ignored": [1, 2]}}
          ],
          "retryThrottling": {"maxTokens": 10, "tokenRatio": 0.1}
        }
        """

    @Test("every field of the JSON form becomes its setting")
    func parsesFields() throws {
        let config = try ServiceConfig(json: Self.example)
        #expect(config.methodConfigs.count == 4)
        #expect(config.methodConfigs[0].names == [MethodConfig.Name()])
        #expect(config.methodConfigs[0].timeout == .seconds(30))
        let service = config.methodConfigs[1]
        #expect(service.timeout == .milliseconds(1500))
        #expect(service.waitForReady == true)
        #expect(service.maxRequestMessageBytes == 1024)
        #expect(service.maxResponseMessageBytes == 2048)
        let retry = try #require(config.methodConfigs[2].retryPolicy)
        #expect(retry.maxAttempts == 5)  // 9 counts as 5
        #expect(retry.initialBackoff == .milliseconds(100))
        #expect(retry.maxBackoff == .seconds(2) + .nanoseconds(1))
        #expect(retry.backoffMultiplier == 1.5)
        #expect(retry.retryableStatusCodes == [.unavailable, .resourceExhausted, .aborted])
        #expect(config.retryThrottling == RetryThrottling(maxTokens: 10, tokenRatio: 0.1))
    }

    @Test("a call gets the config of its method, else its service, else the default")
    func matching() throws {
        let config = try ServiceConfig(json: Self.example)
        func timeout(_ service: String, _ method: String) -> Duration? {
            config.methodConfig(for: MethodDescriptor(service: service, method: method))?.timeout
        }
        #expect(config.methodConfig(for: MethodDescriptor(service: "pkg.Svc", method: "Get"))?.retryPolicy != nil)
        #expect(config.methodConfig(for: MethodDescriptor(service: "other.Svc", method: "Put"))?.retryPolicy != nil)
        #expect(timeout("pkg.Svc", "Get") == nil)  // the method's own config has no timeout
        #expect(timeout("pkg.Svc", "Other") == .milliseconds(1500))
        #expect(timeout("other.Svc", "Get") == .seconds(30))
        #expect(timeout("pkg.svc", "Get") == .seconds(30))  // names are case-sensitive
        let noDefault = try ServiceConfig(json: #"{"methodConfig": [{"name": [{"service": "a.B"}]}]}"#)
        #expect(noDefault.methodConfig(for: MethodDescriptor(service: "c.D", method: "E")) == nil)
        // A method config without names applies to nothing.
        let unnamed = try ServiceConfig(json: #"{"methodConfig": [{"timeout": "1s"}]}"#)
        #expect(unnamed.methodConfig(for: MethodDescriptor(service: "a.B", method: "C")) == nil)
        #expect(try ServiceConfig(json: "{}").methodConfigs.isEmpty)
    }

    @Test("empty strings and null mean an absent service or method")
    func emptyNames() throws {
        let config = try ServiceConfig(
            json: #"{"methodConfig": [{"name": [{"service": "", "method": null}], "timeout": "2s"}]}"#
        )
        #expect(config.methodConfig(for: MethodDescriptor(service: "x.Y", method: "Z"))?.timeout == .seconds(2))
    }

    /// (config, the field named, a word of the problem)
    static let malformedConfigs: [(String, String, String)] = [
        ("not json", "", "JSON"),
        ("[]", "", "object"),
        (#"{"methodConfig": {}}"#, "methodConfig", "array"),
        (#"{"methodConfig": [3]}"#, "methodConfig[0]", "object"),
        (#"{"methodConfig": [{"name": {"service": "a"}}]}"#, "methodConfig[0].name", "array"),
        (#"{"methodConfig": [{"name": [{"service": 5}]}]}"#, "methodConfig[0].name[0].service", "string"),
        (#"{"methodConfig": [{"name": [{"method": "M"}]}]}"#, "methodConfig[0].name[0].method", "service"),
        (
            #"{"methodConfig": [{"name": [{"service": "a.B", "method": "M"}]}, {"name": [{"service": "a.B", "method": "M"}]}]}"#,
            "methodConfig[1].name[0]", "twice"
        ),
        (
            #"{"methodConfig": [{"name": [{"service": "a.B"}, {"service": "a.B"}]}]}"#, "methodConfig[0].name[1]",
            "twice"
        ),
        (#"{"methodConfig": [{"name": [{}]}, {"name": [{"service": ""}]}]}"#, "methodConfig[1].name[0]", "twice"),
        (#"{"methodConfig": [{"timeout": 5}]}"#, "methodConfig[0].timeout", "string"),
        (#"{"methodConfig": [{"timeout": "5"}]}"#, "methodConfig[0].timeout", "duration"),
        (#"{"methodConfig": [{"timeout": "0s"}]}"#, "methodConfig[0].timeout", "longer than zero"),
        (#"{"methodConfig": [{"waitForReady": "yes"}]}"#, "methodConfig[0].waitForReady", "true or false"),
        (#"{"methodConfig": [{"maxResponseMessageBytes": -1}]}"#, "methodConfig[0].maxResponseMessageBytes", "integer"),
        (#"{"methodConfig": [{"maxRequestMessageBytes": 1.5}]}"#, "methodConfig[0].maxRequestMessageBytes", "integer"),
        (
            #"{"methodConfig": [{"maxRequestMessageBytes": 4294967296}]}"#, "methodConfig[0].maxRequestMessageBytes",
            "4294967295"
        ),
        (#"{"methodConfig": [{"retryPolicy": {}}]}"#, "methodConfig[0].retryPolicy.maxAttempts", "required"),
        (
            #"{"methodConfig": [{"retryPolicy": {"maxAttempts": 1, "initialBackoff": "1s", "maxBackoff": "1s", "backoffMultiplier": 1, "retryableStatusCodes": ["UNAVAILABLE"]}}]}"#,
            "methodConfig[0].retryPolicy.maxAttempts", "from 2"
        ),
        (
            #"{"methodConfig": [{"retryPolicy": {"maxAttempts": 2, "initialBackoff": "0s", "maxBackoff": "1s", "backoffMultiplier": 1, "retryableStatusCodes": ["UNAVAILABLE"]}}]}"#,
            "methodConfig[0].retryPolicy.initialBackoff", "longer than zero"
        ),
        (
            #"{"methodConfig": [{"retryPolicy": {"maxAttempts": 2, "initialBackoff": "1s", "backoffMultiplier": 1, "retryableStatusCodes": ["UNAVAILABLE"]}}]}"#,
            "methodConfig[0].retryPolicy.maxBackoff", "required"
        ),
        (
            #"{"methodConfig": [{"retryPolicy": {"maxAttempts": 2, "initialBackoff": "1s", "maxBackoff": "1s", "backoffMultiplier": 0, "retryableStatusCodes": ["UNAVAILABLE"]}}]}"#,
            "methodConfig[0].retryPolicy.backoffMultiplier", "greater than zero"
        ),
        (
            #"{"methodConfig": [{"retryPolicy": {"maxAttempts": 2, "initialBackoff": "1s", "maxBackoff": "1s", "backoffMultiplier": 1, "retryableStatusCodes": []}}]}"#,
            "methodConfig[0].retryPolicy.retryableStatusCodes", "empty"
        ),
        (
            #"{"methodConfig": [{"retryPolicy": {"maxAttempts": 2, "initialBackoff": "1s", "maxBackoff": "1s", "backoffMultiplier": 1, "retryableStatusCodes": ["UNAVAILABLE", "NOT_A_CODE"]}}]}"#,
            "methodConfig[0].retryPolicy.retryableStatusCodes[1]", "status code"
        ),
        (
            #"{"methodConfig": [{"retryPolicy": {"maxAttempts": 2, "initialBackoff": "1s", "maxBackoff": "1s", "backoffMultiplier": 1, "retryableStatusCodes": ["OK"]}}]}"#,
            "methodConfig[0].retryPolicy.retryableStatusCodes[0]", "other than OK"
        ),
        (
            #"{"methodConfig": [{"retryPolicy": {"maxAttempts": 2, "initialBackoff": "1s", "maxBackoff": "1s", "backoffMultiplier": 1, "retryableStatusCodes": [17]}}]}"#,
            "methodConfig[0].retryPolicy.retryableStatusCodes[0]", "status code"
        ),
        (
            #"{"methodConfig": [{"retryPolicy": {"maxAttempts": 2, "initialBackoff": "1s", "maxBackoff": "1s", "backoffMultiplier": 1, "retryableStatusCodes": ["UNAVAILABLE"]}, "hedgingPolicy": {"maxAttempts": 2}}]}"#,
            "methodConfig[0].hedgingPolicy", "only one"
        ),
        (
            #"{"methodConfig": [{"hedgingPolicy": {"maxAttempts": 1}}]}"#, "methodConfig[0].hedgingPolicy.maxAttempts",
            "from 2"
        ),
        (#"{"retryThrottling": {"maxTokens": 0, "tokenRatio": 1}}"#, "retryThrottling.maxTokens", "from 1"),
        (#"{"retryThrottling": {"maxTokens": 10}}"#, "retryThrottling.tokenRatio", "required"),
        (#"{"retryThrottling": {"maxTokens": 10, "tokenRatio": 0.0001}}"#, "retryThrottling.tokenRatio", "0.001"),
        (
            #"{"retryThrottling": {"maxTokens": 10, "tokenRatio": -1}}"#, "retryThrottling.tokenRatio",
            "greater than zero"
        ),
    ]

    @Test("a malformed config is refused at load, naming the field", arguments: malformedConfigs.indices)
    func malformed(index: Int) {
        let (json, field, word) = Self.malformedConfigs[index]
        #expect {
            _ = try ServiceConfig(json: json)
        } throws: { error in
            guard let error = error as? ServiceConfigError else { return false }
            return error.field == field && error.problem.contains(word)
                && "\(error)".hasPrefix("invalid service config: \(field.isEmpty ? "" : "\(field): ")")
        }
    }

    @Test("a hedging policy is checked but its method makes one attempt")
    func hedgingAccepted() throws {
        let config = try ServiceConfig(
            json:
                #"{"methodConfig": [{"name": [{}], "hedgingPolicy": {"maxAttempts": 3, "hedgingDelay": "0.5s", "nonFatalStatusCodes": ["UNAVAILABLE"]}}]}"#
        )
        #expect(config.methodConfigs[0].retryPolicy == nil)
    }

    @Test("text from the config is shown bounded and printable in errors")
    func hostileText() {
        let long = String(repeating: "x", count: 500) + "\u{1B}[2J"
        #expect {
            _ = try ServiceConfig(json: #"{"methodConfig": [{"timeout": "\#(long)"}]}"#)
        } throws: { error in
            let text = "\(error)"
            return !text.contains("\u{1B}") && text.count < 300
        }
        #expect {
            _ = try ServiceConfig(json: #"{"methodConfig": [{"timeout": "\u001b[31m"}]}"#)
        } throws: { error in
            !"\(error)".contains("\u{1B}") && "\(error)".contains("\\u{1B}")
        }
    }

    @Test("configs built in code are checked the same way")
    func programmatic() throws {
        let name = MethodConfig.Name(service: "a.B", method: "C")
        #expect(throws: ServiceConfigError.self) {
            try ServiceConfig(methodConfigs: [MethodConfig(names: [name]), MethodConfig(names: [name])])
        }
        #expect(throws: ServiceConfigError.self) {
            try ServiceConfig(methodConfigs: [MethodConfig(names: [.init(method: "C")])])
        }
        #expect(throws: ServiceConfigError.self) {
            try ServiceConfig(methodConfigs: [MethodConfig(names: [name], timeout: .zero)])
        }
        #expect(throws: ServiceConfigError.self) {
            try ServiceConfig(retryThrottling: RetryThrottling(maxTokens: 5, tokenRatio: 0))
        }
        let disabled = try ServiceConfig(methodConfigs: [MethodConfig(names: [name], retryPolicy: .disabled)])
        #expect(disabled.methodConfig(for: MethodDescriptor(service: "a.B", method: "C"))?.retryPolicy == .disabled)
    }

    @Test("the caller's options win; the config fills in what they leave unset")
    func callerWins() throws {
        let policy = RetryPolicy(
            maxAttempts: 3,
            initialBackoff: .seconds(1),
            maxBackoff: .seconds(1),
            backoffMultiplier: 1
        )
        let config = MethodConfig(
            names: [],
            timeout: .seconds(5),
            waitForReady: true,
            maxRequestMessageBytes: 10,
            maxResponseMessageBytes: 20,
            retryPolicy: policy
        )
        var unset = CallOptions()
        unset.applyDefaults(from: config)
        #expect(unset.timeout == .seconds(5))
        #expect(unset.retryPolicy == policy)
        #expect(unset.maxRequestMessageBytes == 10)
        #expect(unset.maxResponseMessageBytes == 20)
        #expect(unset.waitForReady)
        var set = CallOptions(
            timeout: .seconds(60),
            maxResponseMessageBytes: 4 << 20,
            maxRequestMessageBytes: 100,
            retryPolicy: .disabled,
            waitForReady: false
        )
        set.applyDefaults(from: config)
        #expect(!set.waitForReady)
        #expect(set.timeout == .seconds(60))
        #expect(set.retryPolicy == .disabled)
        #expect(set.maxRequestMessageBytes == 100)
        #expect(set.maxResponseMessageBytes == 4 << 20)
        var defaults = CallOptions()
        defaults.applyDefaults(from: MethodConfig(names: []))
        #expect(defaults.maxResponseMessageBytes == 4 << 20)
        #expect(defaults.timeout == nil)
        #expect(!defaults.waitForReady)
    }
}
