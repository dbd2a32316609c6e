import AuthRPCSyntax

/// Any JSON value decoded by Foundation's `JSONDecoder`, as the shared ``JSONValue``, decoded
/// strictly (a number is never a boolean, nor the other way round).
struct DecodedJSON: Decodable {
    let value: JSONValue

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            value = .null
        } else if let flag = try? container.decode(Bool.self) {
            value = .bool(flag)
        } else if let number = try? container.decode(Double.self) {
            value = .number(number)
        } else if let text = try? container.decode(String.self) {
            value = .string(text)
        } else if let items = try? container.decode([DecodedJSON].self) {
            value = .array(items.map(\.value))
        } else {
            value = .object(try container.decode([String: DecodedJSON].self).mapValues(\.value))
        }
    }
}
