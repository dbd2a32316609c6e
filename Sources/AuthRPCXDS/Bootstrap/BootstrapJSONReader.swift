internal import SwiftProtobuf

/// Reads typed fields out of the bootstrap's JSON, each error naming its path
/// (`xds_servers[0].channel_creds[1].type`).
struct BootstrapJSONReader {
    let path: String

    func field(_ name: String) -> BootstrapJSONReader {
        BootstrapJSONReader(path: path.isEmpty ? name : "\(path).\(name)")
    }

    func element(_ index: Int) -> BootstrapJSONReader {
        BootstrapJSONReader(path: "\(path)[\(index)]")
    }

    func error(_ problem: String) -> XDSBootstrapError {
        XDSBootstrapError(field: path, problem: problem)
    }

    func object(_ value: Google_Protobuf_Value) throws(XDSBootstrapError) -> [String: Google_Protobuf_Value] {
        guard case .structValue(let object) = value.kind else { throw error("must be a JSON object") }
        return object.fields
    }

    func list(_ value: Google_Protobuf_Value) throws(XDSBootstrapError) -> [Google_Protobuf_Value] {
        guard case .listValue(let list) = value.kind else { throw error("must be a JSON array") }
        return list.values
    }

    func string(_ value: Google_Protobuf_Value) throws(XDSBootstrapError) -> String {
        guard case .stringValue(let text) = value.kind else { throw error("must be a string") }
        return text
    }

    /// The member `name` of `object`, or nil when it is absent or JSON null.
    static func member(_ object: [String: Google_Protobuf_Value], _ name: String) -> Google_Protobuf_Value? {
        guard let value = object[name] else { return nil }
        if case .nullValue = value.kind { return nil }
        return value
    }
}
