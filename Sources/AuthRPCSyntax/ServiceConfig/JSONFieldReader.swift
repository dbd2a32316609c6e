/// Reads typed fields out of a ``JSONValue`` object, each failure a ``ServiceConfigProblem`` with
/// the field's path. As proto3's JSON mapping says, `null` is the same as an absent field.
struct JSONFieldReader {
    /// The path of the object being read (`methodConfig[0].retryPolicy`); empty at the root.
    let path: String

    func field(_ name: String) -> JSONFieldReader { JSONFieldReader(path: qualified(name)) }

    func element(_ name: String, _ index: Int) -> JSONFieldReader {
        JSONFieldReader(path: "\(qualified(name))[\(index)]")
    }

    func qualified(_ name: String) -> String { path.isEmpty ? name : "\(path).\(name)" }

    func error(_ name: String, _ problem: String) -> ServiceConfigProblem {
        ServiceConfigProblem(field: qualified(name), problem: problem)
    }

    /// The field `name`, unless it is absent or null.
    static func present(_ object: [String: JSONValue], _ name: String) -> JSONValue? {
        guard let value = object[name], value != .null else { return nil }
        return value
    }

    /// The value read as an object (the value of the path this reader stands for).
    func object(_ value: JSONValue) throws(ServiceConfigProblem) -> [String: JSONValue] {
        guard case .object(let object) = value else {
            throw ServiceConfigProblem(field: path, problem: "must be a JSON object, not \(value.kind)")
        }
        return object
    }

    func optionalList(_ object: [String: JSONValue], _ name: String) throws(ServiceConfigProblem) -> [JSONValue]? {
        guard let value = Self.present(object, name) else { return nil }
        guard case .array(let list) = value else { throw error(name, "must be a JSON array, not \(value.kind)") }
        return list
    }

    func optionalString(_ object: [String: JSONValue], _ name: String) throws(ServiceConfigProblem) -> String? {
        guard let value = Self.present(object, name) else { return nil }
        guard case .string(let text) = value else { throw error(name, "must be a string, not \(value.kind)") }
        return text
    }

    func optionalBool(_ object: [String: JSONValue], _ name: String) throws(ServiceConfigProblem) -> Bool? {
        guard let value = Self.present(object, name) else { return nil }
        guard case .bool(let flag) = value else { throw error(name, "must be true or false, not \(value.kind)") }
        return flag
    }

    func number(_ object: [String: JSONValue], _ name: String) throws(ServiceConfigProblem) -> Double {
        guard let value = Self.present(object, name) else { throw error(name, "is required") }
        guard case .number(let number) = value, number.isFinite else {
            throw error(name, "must be a number, not \(value.kind)")
        }
        return number
    }

    func integer(
        _ object: [String: JSONValue],
        _ name: String,
        in range: ClosedRange<Int>
    ) throws(ServiceConfigProblem) -> Int {
        guard let value = try optionalInteger(object, name, in: range) else { throw error(name, "is required") }
        return value
    }

    /// An integer: a JSON number without a fractional part, or (as proto3 JSON writes 64-bit
    /// integers) a string of one.
    func optionalInteger(
        _ object: [String: JSONValue],
        _ name: String,
        in range: ClosedRange<Int>
    ) throws(ServiceConfigProblem) -> Int? {
        guard let value = Self.present(object, name) else { return nil }
        let number: Double
        switch value {
        case .number(let value):
            number = value
        case .string(let text):
            guard let parsed = Int(text) else {
                throw error(name, "must be an integer, not \"\(JSONValue.shown(text))\"")
            }
            number = Double(parsed)
        default:
            throw error(name, "must be an integer, not \(value.kind)")
        }
        guard number.isFinite, number == number.rounded(), number >= Double(range.lowerBound),
            number <= Double(range.upperBound)
        else {
            throw error(name, "must be an integer from \(range.lowerBound) to \(range.upperBound), not \(number)")
        }
        return Int(number)
    }

    func duration(_ object: [String: JSONValue], _ name: String) throws(ServiceConfigProblem) -> Duration {
        guard let value = try optionalDuration(object, name) else { throw error(name, "is required") }
        return value
    }

    func optionalDuration(_ object: [String: JSONValue], _ name: String) throws(ServiceConfigProblem) -> Duration? {
        guard let text = try optionalString(object, name) else { return nil }
        guard let duration = ProtobufDurationText.parse(text) else {
            throw error(
                name,
                "must be a duration such as \"1.5s\" (seconds, up to nine fractional digits, then s), not \"\(JSONValue.shown(text))\""
            )
        }
        return duration
    }

    /// Status codes given by name (`"UNAVAILABLE"`) or number (`14`); `OK` is not a failure and
    /// is refused.
    func statusCodes(_ object: [String: JSONValue], _ name: String) throws(ServiceConfigProblem) -> Set<Int> {
        guard let list = try optionalList(object, name) else { throw error(name, "is required") }
        var codes = Set<Int>()
        for (index, value) in list.enumerated() {
            let code: Int?
            switch value {
            case .string(let text):
                code = GRPCStatusCodeName.all.firstIndex(of: text)
            case .number(let number):
                code = number == number.rounded() && abs(number) < 100 ? Int(number) : nil
            default:
                code = nil
            }
            guard let code, GRPCStatusCodeName.all.indices.contains(code), code != 0 else {
                throw ServiceConfigProblem(
                    field: "\(qualified(name))[\(index)]",
                    problem:
                        "must be a status code other than OK, by name (\"UNAVAILABLE\") or number (14), not \(value.kind)"
                )
            }
            codes.insert(code)
        }
        return codes
    }
}
