import AuthRPCXDS

extension Output {
    /// The most resources a text listing shows per xDS client (`--json` has them all).
    static let xdsResourceLimit = 64

    /// What `--xds-status` prints for each channel's xDS client, one resource per line. Every
    /// name, version and reason came from the control plane: the lines go out through
    /// ``PrintableText`` like all text.
    static func xdsStatusLines(_ statuses: [XDSClientStatus]) -> [String] {
        var lines: [String] = []
        for status in statuses {
            let streams = status.streamsStarted == 1 ? "1 ADS stream" : "\(status.streamsStarted) ADS streams"
            lines.append("xDS client for xds:///\(status.target) (control plane \(status.server), \(streams) started):")
            if let failure = status.lastStreamFailure { lines.append("  last stream ended: \(failure)") }
            if status.resources.isEmpty { lines.append("  (nothing asked for yet)") }
            for resource in status.resources.prefix(xdsResourceLimit) {
                var text = "  \(shortType(resource.typeURL)) \(resource.name): \(resource.state)"
                if let reason = resource.nackReason { text += " (\(reason))" }
                if !resource.version.isEmpty {
                    text +=
                        resource.state == .nacked
                        ? "; version in use \(resource.version)" : ", version \(resource.version)"
                }
                lines.append(text)
            }
            if status.resources.count > xdsResourceLimit {
                lines.append("  … and \(status.resources.count - xdsResourceLimit) more (--json lists them all)")
            }
        }
        return lines
    }

    /// The same for `--json`: one object per client.
    static func xdsStatusJSON(_ statuses: [XDSClientStatus]) -> [[String: Any]] {
        statuses.map { status in
            var object: [String: Any] = [
                "target": status.target,
                "server": status.server,
                "streams_started": status.streamsStarted,
                "resources": status.resources.map { resource in
                    var entry: [String: Any] = [
                        "type_url": resource.typeURL, "name": resource.name, "version": resource.version,
                        "state": resource.state.description,
                    ]
                    if let reason = resource.nackReason { entry["nack_reason"] = reason }
                    return entry
                },
            ]
            if let failure = status.lastStreamFailure { object["last_stream_failure"] = failure }
            return object
        }
    }

    /// `listener` for `type.googleapis.com/envoy.config.listener.v3.Listener`, and so on.
    private static func shortType(_ typeURL: String) -> String {
        switch typeURL.split(separator: ".").last {
        case "Listener": return "listener"
        case "RouteConfiguration": return "route configuration"
        case "Cluster": return "cluster"
        case "ClusterLoadAssignment": return "endpoints"
        default: return typeURL
        }
    }
}
