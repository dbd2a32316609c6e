internal import SwiftProtobuf

extension XDSBootstrap {
    /// Reads a bootstrap from its JSON, as gRPC does (gRFC A27).
    ///
    /// Read: `xds_servers` (at least one; each with a non-empty `server_uri`, a `channel_creds`
    /// list whose first supported `type` is used, `insecure` or `google_default`, and optional
    /// `server_features` strings) and `node` (`id`, `cluster`, `locality` with `region`, `zone`,
    /// `sub_zone`, and `metadata`, any JSON object). Other fields (`authorities`,
    /// `certificate_providers`, ...) are ignored, as are unknown server features.
    ///
    /// - Throws: ``XDSBootstrapError`` naming the field at fault (`xds_servers[0].channel_creds`)
    ///   and what is wrong with it; with an empty field when the text is not a JSON object.
    public init(json: String) throws(XDSBootstrapError) {
        let root: Google_Protobuf_Value
        do {
            root = try Google_Protobuf_Value(jsonUTF8Bytes: Array(json.utf8))
        } catch {
            throw XDSBootstrapError(field: "", problem: "the text is not valid JSON (\(error))")
        }
        let reader = BootstrapJSONReader(path: "")
        let object = try reader.object(root)

        let serversReader = reader.field("xds_servers")
        guard let serversValue = BootstrapJSONReader.member(object, "xds_servers") else {
            throw serversReader.error("is required")
        }
        var servers: [XDSServer] = []
        for (index, entry) in try serversReader.list(serversValue).enumerated() {
            servers.append(try Self.server(entry, serversReader.element(index)))
        }
        var node = XDSNode()
        if let value = BootstrapJSONReader.member(object, "node") {
            node = try Self.node(value, reader.field("node"))
        }
        try self.init(servers: servers, node: node)
    }

    private static func server(
        _ value: Google_Protobuf_Value,
        _ reader: BootstrapJSONReader
    ) throws(XDSBootstrapError) -> XDSServer {
        let object = try reader.object(value)
        let uriReader = reader.field("server_uri")
        guard let uriValue = BootstrapJSONReader.member(object, "server_uri") else {
            throw uriReader.error("is required")
        }
        let uri = try uriReader.string(uriValue)
        guard !uri.isEmpty else { throw uriReader.error("must not be empty") }

        let credsReader = reader.field("channel_creds")
        guard let credsValue = BootstrapJSONReader.member(object, "channel_creds") else {
            throw credsReader.error("is required (e.g. [{\"type\": \"insecure\"}])")
        }
        var types: [String] = []
        var chosen: XDSChannelCredentials?
        for (index, entry) in try credsReader.list(credsValue).enumerated() {
            let entryReader = credsReader.element(index)
            let fields = try entryReader.object(entry)
            let typeReader = entryReader.field("type")
            guard let typeValue = BootstrapJSONReader.member(fields, "type") else {
                throw typeReader.error("is required")
            }
            let type = try typeReader.string(typeValue)
            if let config = BootstrapJSONReader.member(fields, "config") {
                _ = try entryReader.field("config").object(config)
            }
            types.append(type)
            if chosen == nil { chosen = XDSChannelCredentials(bootstrapType: type) }
        }
        guard let credentials = chosen else {
            let seen =
                types.isEmpty ? "it is empty" : "it names only \(types.map { "'\($0)'" }.joined(separator: ", "))"
            let supported = XDSChannelCredentials.supported.map(\.type).joined(separator: ", ")
            throw credsReader.error("no supported type (\(supported)): \(seen)")
        }

        var features: [String] = []
        if let value = BootstrapJSONReader.member(object, "server_features") {
            let featuresReader = reader.field("server_features")
            for (index, entry) in try featuresReader.list(value).enumerated() {
                features.append(try featuresReader.element(index).string(entry))
            }
        }
        return XDSServer(serverURI: uri, channelCredentials: credentials, serverFeatures: features)
    }

    private static func node(
        _ value: Google_Protobuf_Value,
        _ reader: BootstrapJSONReader
    ) throws(XDSBootstrapError)
        -> XDSNode
    {
        let object = try reader.object(value)
        func text(
            _ fields: [String: Google_Protobuf_Value],
            _ name: String,
            _ reader: BootstrapJSONReader
        )
            throws(XDSBootstrapError) -> String
        {
            guard let value = BootstrapJSONReader.member(fields, name) else { return "" }
            return try reader.field(name).string(value)
        }
        var node = XDSNode(id: try text(object, "id", reader), cluster: try text(object, "cluster", reader))
        if let value = BootstrapJSONReader.member(object, "locality") {
            let localityReader = reader.field("locality")
            let fields = try localityReader.object(value)
            node.locality = XDSNode.Locality(
                region: try text(fields, "region", localityReader),
                zone: try text(fields, "zone", localityReader),
                subZone: try text(fields, "sub_zone", localityReader)
            )
        }
        if let value = BootstrapJSONReader.member(object, "metadata") {
            node.metadata = Google_Protobuf_Struct(fields: try reader.field("metadata").object(value))
        }
        return node
    }
}
