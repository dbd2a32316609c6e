internal import AuthRPCSystem

extension XDSNameResolver {
    /// A resolver, held without keeping it alive.
    private struct WeakReference {
        weak var resolver: XDSNameResolver?
    }

    /// The resolvers alive in this process, for ``XDSScheme/clientStatus()``.
    private static let registry = Locked<[ObjectIdentifier: WeakReference]>([:])

    /// Lists `resolver` until ``forget(_:)``.
    static func remember(_ resolver: XDSNameResolver) {
        registry.withLock { $0[ObjectIdentifier(resolver)] = WeakReference(resolver: resolver) }
    }

    /// Called from `deinit`.
    static func forget(_ identifier: ObjectIdentifier) {
        _ = registry.withLock { $0.removeValue(forKey: identifier) }
    }

    /// The resolvers alive now, by target name.
    static func live() -> [XDSNameResolver] {
        registry.withLock { $0.values.compactMap(\.resolver) }.sorted { $0.name < $1.name }
    }
}
