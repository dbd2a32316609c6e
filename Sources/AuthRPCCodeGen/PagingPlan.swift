import SwiftProtobuf
import SwiftProtobufPluginLibrary

/// The pages of an AIP-158 list method: its request has a string `page_token` and an integer
/// `page_size` (or the older `max_results`), its response a string `next_page_token` and a
/// repeated field, the items (the first repeated field that is not a map, in declaration order).
struct PagingPlan {
    /// The Swift property of the request's `page_token`.
    var pageToken: String
    /// The Swift property of the response's `next_page_token`.
    var nextPageToken: String
    /// The Swift property of the response's items.
    var items: String
    /// The items field's proto name (`topics`), for the documentation.
    var itemsFieldName: String
    /// The Swift type of one item.
    var itemType: String
    /// Whether the item type is Foundation's `Data` (a `bytes` field), which the file then imports.
    var needsFoundation: Bool

    /// The plan for `method`, `nil` when it is not an AIP-158 list method.
    init?(method: MethodDescriptor, namer: SwiftProtobufNamer) {
        func field(_ name: String, of message: Descriptor) -> FieldDescriptor? {
            message.fields.first { $0.name == name && !$0.isRepeated }
        }
        func isInteger(_ field: FieldDescriptor) -> Bool {
            [.int32, .int64, .uint32, .uint64, .sint32, .sint64].contains(field.type)
        }
        func property(_ field: FieldDescriptor) -> String {
            namer.messagePropertyNames(field: field, prefixed: "_", includeHasAndClear: false).name
        }
        guard let token = field("page_token", of: method.inputType), token.type == .string,
            let size = field("page_size", of: method.inputType) ?? field("max_results", of: method.inputType),
            isInteger(size),
            let next = field("next_page_token", of: method.outputType), next.type == .string,
            let items = method.outputType.fields.first(where: { $0.isRepeated && !$0.isMap })
        else { return nil }
        pageToken = property(token)
        nextPageToken = property(next)
        self.items = property(items)
        itemsFieldName = items.name
        needsFoundation = items.type == .bytes
        switch items.type {
        case .message: itemType = namer.fullName(message: items.messageType)
        case .enum: itemType = namer.fullName(enum: items.enumType)
        case .string: itemType = "Swift.String"
        case .bytes: itemType = "Foundation.Data"
        case .bool: itemType = "Swift.Bool"
        case .double: itemType = "Swift.Double"
        case .float: itemType = "Swift.Float"
        case .int32, .sint32, .sfixed32: itemType = "Swift.Int32"
        case .int64, .sint64, .sfixed64: itemType = "Swift.Int64"
        case .uint32, .fixed32: itemType = "Swift.UInt32"
        case .uint64, .fixed64: itemType = "Swift.UInt64"
        case .group: return nil
        }
    }
}
