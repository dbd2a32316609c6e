#if canImport(Security)
import Foundation
import Security

/// A store that keeps the session in the keychain, as a generic password (service: the item
/// name, account: `OAuth`), readable after the first unlock and never synced to other devices.
///
/// A save updates the item in place and adds it only when there is none: unlike GTMAppAuth's
/// delete-then-add, a failed save never loses the stored credential.
public struct KeychainAuthSessionStore: AuthSessionStore {
    /// The keychain item's name (its service attribute).
    public let itemName: String
    private let item: KeychainGenericPassword

    /// A store for the keychain item called `itemName`.
    public init(itemName: String) {
        self.itemName = itemName
        item = KeychainGenericPassword(service: itemName)
    }

    /// Saves `state`, replacing the item's data.
    ///
    /// - Throws: ``OAuthError/Kind/storage`` with the keychain's reason; the item is then unchanged.
    public func save(_ state: AuthState) throws(OAuthError) {
        try item.write(state.encoded())
    }

    /// The stored state, or `nil` when there is no item.
    ///
    /// - Throws: ``OAuthError/Kind/storage`` naming the item when it cannot be read or is not a
    ///   session; the item is left in place.
    public func retrieve() throws(OAuthError) -> AuthState? {
        guard let data = try item.read() else { return nil }
        do {
            return try AuthState(decoding: data)
        } catch {
            throw OAuthError(.storage, "keychain item \"\(itemName)\": \(error.message)", underlying: error)
        }
    }

    /// Deletes the item; a missing item is not an error.
    public func remove() throws(OAuthError) {
        try item.delete()
    }
}

/// A GTMOAuth2 string kept where GTMOAuth2 kept it: a generic password whose service is the
/// keychain item name the old app used and whose account is `OAuth`.
public struct GTMOAuth2KeychainSource: GTMOAuth2ItemSource {
    /// The old app's keychain item name.
    public let itemName: String
    private let item: KeychainGenericPassword

    /// A source for the GTMOAuth2 keychain item called `itemName`.
    public init(itemName: String) {
        self.itemName = itemName
        item = KeychainGenericPassword(service: itemName)
    }

    /// The item's string, or `nil` when there is no item.
    ///
    /// - Throws: ``OAuthError/Kind/storage`` when the item cannot be read or is not UTF-8.
    public func read() throws(OAuthError) -> String? {
        guard let data = try item.read() else { return nil }
        guard let string = String(data: data, encoding: .utf8) else {
            throw OAuthError(.storage, "the GTMOAuth2 keychain item \"\(itemName)\" is not UTF-8 text")
        }
        return string
    }

    /// Deletes the item; a missing item is not an error.
    public func remove() throws(OAuthError) {
        try item.delete()
    }
}

/// One generic password item, identified by service and account (`OAuth`, as GTMOAuth2 and
/// GTMAppAuth name it).
struct KeychainGenericPassword: Sendable {
    let service: String
    let account = "OAuth"

    private var query: [String: Any] {
        [
            kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
            kSecAttrAccount as String: account,
        ]
    }

    /// The item's data, or `nil` when there is no item.
    func read() throws(OAuthError) -> Data? {
        var query = self.query
        query[kSecReturnData as String] = true
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        if status == errSecItemNotFound { return nil }
        guard status == errSecSuccess else { throw error("read", status) }
        guard let data = result as? Data else {
            throw OAuthError(.storage, "the keychain item \"\(service)\" has no data")
        }
        return data
    }

    /// Replaces the item's data: an update, or an add when there is no item. Never deletes first,
    /// so a failure leaves the old item as it was.
    func write(_ data: Data) throws(OAuthError) {
        let attributes: [String: Any] = [
            kSecValueData as String: data,
            kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
        ]
        let status = SecItemUpdate(query as CFDictionary, attributes as CFDictionary)
        if status == errSecSuccess { return }
        guard status == errSecItemNotFound else { throw error("update", status) }
        let addStatus = SecItemAdd(query.merging(attributes) { $1 } as CFDictionary, nil)
        guard addStatus == errSecSuccess else { throw error("add", addStatus) }
    }

    /// Deletes the item; a missing item is not an error.
    func delete() throws(OAuthError) {
        let status = SecItemDelete(query as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else { throw error("delete", status) }
    }

    private func error(_ operation: String, _ status: OSStatus) -> OAuthError {
        let reason = SecCopyErrorMessageString(status, nil).map { $0 as String } ?? "OSStatus \(status)"
        return OAuthError(.storage, "could not \(operation) the keychain item \"\(service)\": \(reason)")
    }
}
#endif
