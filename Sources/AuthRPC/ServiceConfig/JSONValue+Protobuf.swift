import AuthRPCSyntax
import SwiftProtobuf

extension JSONValue {
    /// The value SwiftProtobuf's JSON parser read, for ``ServiceConfigValidator``.
    init(_ value: Google_Protobuf_Value) {
        switch value.kind {
        case .nullValue?, nil: self = .null
        case .boolValue(let flag)?: self = .bool(flag)
        case .numberValue(let number)?: self = .number(number)
        case .stringValue(let text)?: self = .string(text)
        case .listValue(let list)?: self = .array(list.values.map(JSONValue.init))
        case .structValue(let object)?: self = .object(object.fields.mapValues(JSONValue.init))
        }
    }
}
