import SwiftProtobuf

extension ServiceConfig {
    /// Loads a service config from gRPC's JSON form (gRPC's `service_config.proto` through the
    /// proto3 JSON mapping; gRFC A6 for retries).
    ///
    /// Read: `methodConfig` (`name`, `timeout`, `waitForReady`, `maxRequestMessageBytes`,
    /// `maxResponseMessageBytes`, `retryPolicy`, `hedgingPolicy`) and `retryThrottling`. Other
    /// top-level fields (`loadBalancingConfig`, ...) are left to the parts of the channel that use
    /// them, and unknown fields are ignored, as gRPC does. Durations are proto3 JSON strings
    /// (`"1.5s"`, at most nine fractional digits); status codes are names (`"UNAVAILABLE"`) or
    /// numbers. A `hedgingPolicy` is checked but not applied: such a method makes one attempt.
    ///
    /// Checked as gRPC does: a retry policy has `maxAttempts` of at least 2 (more than 5 counts as
    /// 5), both backoffs longer than zero, a multiplier greater than zero and a non-empty set of
    /// codes; a method config has at most one of `retryPolicy` and `hedgingPolicy`; no name
    /// appears twice; a name with a method has a service; `retryThrottling` has `maxTokens` from 1
    /// to 1000 and a `tokenRatio` greater than zero.
    ///
    /// - Throws: ``ServiceConfigError`` naming the field at fault (`methodConfig[0].timeout`) and
    ///   what is wrong with it; with an empty field when the text is not a JSON object.
    public init(json: String) throws(ServiceConfigError) {
        let root: Google_Protobuf_Value
        do {
            root = try Google_Protobuf_Value(jsonUTF8Bytes: Array(json.utf8))
        } catch {
            throw ServiceConfigError(field: "", problem: "the text is not valid JSON (\(error))")
        }
        let reader = JSONReader(path: "")
        let object = try reader.object(root)
        var methodConfigs: [MethodConfig] = []
        if let list = try reader.optionalList(object, "methodConfig") {
            for (index, entry) in list.enumerated() {
                methodConfigs.append(try Self.methodConfig(entry, reader: reader.element("methodConfig", index)))
            }
        }
        var throttling: RetryThrottling?
        if let value = object["retryThrottling"], !JSONReader.isNull(value) {
            let reader = reader.field("retryThrottling")
            let fields = try reader.object(value)
            let maxTokens = try reader.integer(fields, "maxTokens", in: 1...1000)
            let ratio = try reader.number(fields, "tokenRatio")
            guard ratio > 0, ratio <= 1000, RetryThrottling.thousandths(ratio) > 0 else {
                throw reader.error(
                    "tokenRatio",
                    "must be greater than zero, at most 1000, and at least 0.001 (it is counted in thousandths), not \(ratio)"
                )
            }
            throttling = RetryThrottling(maxTokens: maxTokens, tokenRatio: ratio)
        }
        try self.init(methodConfigs: methodConfigs, retryThrottling: throttling)
    }

    private static func methodConfig(
        _ value: Google_Protobuf_Value,
        reader: JSONReader
    ) throws(ServiceConfigError)
        -> MethodConfig
    {
        let fields = try reader.object(value)
        var names: [MethodConfig.Name] = []
        if let list = try reader.optionalList(fields, "name") {
            for (index, entry) in list.enumerated() {
                let reader = reader.element("name", index)
                let name = try reader.object(entry)
                names.append(
                    MethodConfig.Name(
                        service: try reader.optionalString(name, "service") ?? "",
                        method: try reader.optionalString(name, "method") ?? ""
                    )
                )
            }
        }
        var config = MethodConfig(names: names)
        config.waitForReady = try reader.optionalBool(fields, "waitForReady")
        if let timeout = try reader.optionalDuration(fields, "timeout") {
            guard timeout > .zero else { throw reader.error("timeout", "must be longer than zero") }
            config.timeout = timeout
        }
        config.maxRequestMessageBytes = try reader.optionalInteger(
            fields,
            "maxRequestMessageBytes",
            in: 0...Int(UInt32.max)
        )
        config.maxResponseMessageBytes = try reader.optionalInteger(
            fields,
            "maxResponseMessageBytes",
            in: 0...Int(UInt32.max)
        )
        let retry = fields["retryPolicy"].flatMap { JSONReader.isNull($0) ? nil : $0 }
        let hedging = fields["hedgingPolicy"].flatMap { JSONReader.isNull($0) ? nil : $0 }
        if retry != nil && hedging != nil {
            throw reader.error("hedgingPolicy", "only one of retryPolicy and hedgingPolicy may be set")
        }
        if let retry {
            config.retryPolicy = try retryPolicy(retry, reader: reader.field("retryPolicy"))
        }
        if let hedging {
            try checkHedgingPolicy(hedging, reader: reader.field("hedgingPolicy"))
        }
        return config
    }

    private static func retryPolicy(
        _ value: Google_Protobuf_Value,
        reader: JSONReader
    ) throws(ServiceConfigError)
        -> RetryPolicy
    {
        let fields = try reader.object(value)
        // Any count above 5 is treated as 5; the range only keeps the number an integer.
        let maxAttempts = try reader.integer(fields, "maxAttempts", in: 2...Int(Int32.max))
        let initialBackoff = try reader.duration(fields, "initialBackoff")
        guard initialBackoff > .zero else { throw reader.error("initialBackoff", "must be longer than zero") }
        let maxBackoff = try reader.duration(fields, "maxBackoff")
        guard maxBackoff > .zero else { throw reader.error("maxBackoff", "must be longer than zero") }
        let multiplier = try reader.number(fields, "backoffMultiplier")
        guard multiplier > 0 else {
            throw reader.error("backoffMultiplier", "must be greater than zero, not \(multiplier)")
        }
        let codes = try reader.statusCodes(fields, "retryableStatusCodes")
        guard !codes.isEmpty else { throw reader.error("retryableStatusCodes", "must not be empty") }
        return RetryPolicy(
            maxAttempts: min(maxAttempts, RetryPolicy.attemptLimit),
            initialBackoff: initialBackoff,
            maxBackoff: maxBackoff,
            backoffMultiplier: multiplier,
            retryableStatusCodes: codes
        )
    }

    /// Hedging is not implemented, but a config that asks for it is still checked, so a mistake in
    /// it is reported rather than silently ignored.
    private static func checkHedgingPolicy(
        _ value: Google_Protobuf_Value,
        reader: JSONReader
    ) throws(ServiceConfigError) {
        let fields = try reader.object(value)
        _ = try reader.integer(fields, "maxAttempts", in: 2...Int(Int32.max))
        if let delay = try reader.optionalDuration(fields, "hedgingDelay"), delay < .zero {
            throw reader.error("hedgingDelay", "must not be negative")
        }
        if fields["nonFatalStatusCodes"] != nil {
            _ = try reader.statusCodes(fields, "nonFatalStatusCodes")
        }
    }
}

/// Reads typed fields out of parsed JSON, each failure a ``ServiceConfigError`` with the field's
/// path.
private struct JSONReader {
    /// The path of the object being read (`methodConfig[0].retryPolicy`); empty at the root.
    let path: String

    func field(_ name: String) -> JSONReader { JSONReader(path: qualified(name)) }
    func element(_ name: String, _ index: Int) -> JSONReader { JSONReader(path: "\(qualified(name))[\(index)]") }

    private func qualified(_ name: String) -> String { path.isEmpty ? name : "\(path).\(name)" }

    func error(_ name: String, _ problem: String) -> ServiceConfigError {
        ServiceConfigError(field: qualified(name), problem: problem)
    }

    static func isNull(_ value: Google_Protobuf_Value) -> Bool {
        if case .nullValue? = value.kind { return true }
        return value.kind == nil
    }

    /// The value read as an object (the value of the path this reader stands for).
    func object(_ value: Google_Protobuf_Value) throws(ServiceConfigError) -> [String: Google_Protobuf_Value] {
        guard case .structValue(let object)? = value.kind else {
            throw ServiceConfigError(field: path, problem: "must be a JSON object, not \(Self.kind(of: value))")
        }
        return object.fields
    }

    func optionalList(
        _ object: [String: Google_Protobuf_Value],
        _ name: String
    ) throws(ServiceConfigError)
        -> [Google_Protobuf_Value]?
    {
        guard let value = object[name], !Self.isNull(value) else { return nil }
        guard case .listValue(let list)? = value.kind else {
            throw error(name, "must be a JSON array, not \(Self.kind(of: value))")
        }
        return list.values
    }

    func optionalString(_ object: [String: Google_Protobuf_Value], _ name: String) throws(ServiceConfigError) -> String?
    {
        guard let value = object[name], !Self.isNull(value) else { return nil }
        guard case .stringValue(let text)? = value.kind else {
            throw error(name, "must be a string, not \(Self.kind(of: value))")
        }
        return text
    }

    func optionalBool(_ object: [String: Google_Protobuf_Value], _ name: String) throws(ServiceConfigError) -> Bool? {
        guard let value = object[name], !Self.isNull(value) else { return nil }
        guard case .boolValue(let flag)? = value.kind else {
            throw error(name, "must be true or false, not \(Self.kind(of: value))")
        }
        return flag
    }

    func number(_ object: [String: Google_Protobuf_Value], _ name: String) throws(ServiceConfigError) -> Double {
        guard let value = object[name], !Self.isNull(value) else { throw error(name, "is required") }
        guard case .numberValue(let number)? = value.kind, number.isFinite else {
            throw error(name, "must be a number, not \(Self.kind(of: value))")
        }
        return number
    }

    func integer(
        _ object: [String: Google_Protobuf_Value],
        _ name: String,
        in range: ClosedRange<Int>
    ) throws(ServiceConfigError) -> Int {
        guard let value = try optionalInteger(object, name, in: range) else { throw error(name, "is required") }
        return value
    }

    /// An integer: a JSON number without a fractional part, or (as proto3 JSON writes 64-bit
    /// integers) a string of one.
    func optionalInteger(
        _ object: [String: Google_Protobuf_Value],
        _ name: String,
        in range: ClosedRange<Int>
    ) throws(ServiceConfigError) -> Int? {
        guard let value = object[name], !Self.isNull(value) else { return nil }
        let number: Double
        switch value.kind {
        case .numberValue(let value)?:
            number = value
        case .stringValue(let text)?:
            guard let parsed = Int(text) else { throw error(name, "must be an integer, not \"\(Self.shown(text))\"") }
            number = Double(parsed)
        default:
            throw error(name, "must be an integer, not \(Self.kind(of: value))")
        }
        guard number.isFinite, number == number.rounded(), number >= Double(range.lowerBound),
            number <= Double(range.upperBound)
        else {
            throw error(name, "must be an integer from \(range.lowerBound) to \(range.upperBound), not \(number)")
        }
        return Int(number)
    }

    func duration(_ object: [String: Google_Protobuf_Value], _ name: String) throws(ServiceConfigError) -> Duration {
        guard let value = try optionalDuration(object, name) else { throw error(name, "is required") }
        return value
    }

    func optionalDuration(
        _ object: [String: Google_Protobuf_Value],
        _ name: String
    ) throws(ServiceConfigError)
        -> Duration?
    {
        guard let text = try optionalString(object, name) else { return nil }
        guard let duration = ProtobufDurationText.parse(text) else {
            throw error(
                name,
                "must be a duration such as \"1.5s\" (seconds, up to nine fractional digits, then s), not \"\(Self.shown(text))\""
            )
        }
        return duration
    }

    /// Status codes given by name (`"UNAVAILABLE"`) or number (`14`); `OK` is not a failure and
    /// is refused.
    func statusCodes(
        _ object: [String: Google_Protobuf_Value],
        _ name: String
    ) throws(ServiceConfigError)
        -> Set<StatusCode>
    {
        guard let list = try optionalList(object, name) else { throw error(name, "is required") }
        var codes = Set<StatusCode>()
        for (index, value) in list.enumerated() {
            let code: StatusCode?
            switch value.kind {
            case .stringValue(let text)?:
                code = StatusCode.allCases.first { $0.description == text }
            case .numberValue(let number)?:
                code = number == number.rounded() && abs(number) < 100 ? StatusCode(rawValue: Int(number)) : nil
            default:
                code = nil
            }
            guard let code, code != .ok else {
                throw ServiceConfigError(
                    field: "\(qualified(name))[\(index)]",
                    problem:
                        "must be a status code other than OK, by name (\"UNAVAILABLE\") or number (14), not \(Self.kind(of: value))"
                )
            }
            codes.insert(code)
        }
        return codes
    }

    /// What a value is, for an error message (strings shown, bounded and printable).
    private static func kind(of value: Google_Protobuf_Value) -> String {
        switch value.kind {
        case .stringValue(let text)?: "the string \"\(shown(text))\""
        case .numberValue(let number)?: "the number \(number)"
        case .boolValue(let flag)?: "\(flag)"
        case .structValue?: "an object"
        case .listValue?: "an array"
        case .nullValue?, nil: "null"
        }
    }

    /// Text from the config as an error shows it: at most 64 characters, controls escaped.
    private static func shown(_ text: String) -> String {
        var shown = ""
        for scalar in text.unicodeScalars.prefix(64) {
            shown += scalar.properties.generalCategory == .control ? scalar.escaped(asASCII: true) : String(scalar)
        }
        return text.unicodeScalars.count > 64 ? shown + "..." : shown
    }
}
