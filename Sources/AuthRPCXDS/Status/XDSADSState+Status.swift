extension XDSADSState {
    /// Every subscribed resource as it stands now, types in ``XDSResourceType``'s order, names
    /// sorted.
    var resourceStatuses: [XDSResourceStatus] {
        var statuses: [XDSResourceStatus] = []
        for type in XDSResourceType.allCases {
            guard let state = types[type] else { continue }
            for name in state.names.sorted() {
                let entry = state.entries[name]
                let status: XDSResourceStatus.State
                switch entry {
                case nil: status = .requested
                case let entry? where entry.nackReason != nil: status = .nacked
                case let entry? where entry.resource == nil: status = .doesNotExist
                case .some: status = .acked
                }
                statuses.append(
                    XDSResourceStatus(
                        typeURL: type.typeURL,
                        name: name,
                        version: entry?.resource == nil ? "" : entry?.version ?? "",
                        state: status,
                        nackReason: entry?.nackReason?.description
                    )
                )
            }
        }
        return statuses
    }
}
