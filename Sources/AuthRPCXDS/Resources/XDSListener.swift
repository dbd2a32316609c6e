/// A validated listener (LDS): where the channel's routes come from.
struct XDSListener: Sendable, Hashable {
    /// Where the route configuration is.
    enum Routes: Sendable, Hashable {
        /// In an RDS resource of this name, on the same ADS stream.
        case rds(String)
        /// In the listener itself.
        case inline(XDSRouteConfiguration)

        /// The RDS resource's name; nil for inline routes.
        var rdsName: String? {
            if case .rds(let name) = self { return name }
            return nil
        }
    }

    let name: String
    let routes: Routes
}
