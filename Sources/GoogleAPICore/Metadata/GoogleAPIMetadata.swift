public import AuthRPC

/// The request metadata Google's own client libraries send with every call to a Google API, and
/// that clients generated for Google APIs send too.
///
/// - `x-goog-request-params` (``requestParamsKey``): the routing header of AIP-4222, built from the
///   request by the method's ``RoutingRule``. Google's front ends refuse many calls without it
///   (`INVALID_ARGUMENT: An x-goog-request-params request metadata property must be provided`).
/// - `x-goog-api-client` (``apiClientKey``): who is calling, as ``apiClient``
///   (`gl-swift/6.3 grpc/0.1.0`), which Google uses for its client metrics.
public enum GoogleAPIMetadata {
    /// `x-goog-request-params`.
    public static let requestParamsKey = "x-goog-request-params"

    /// `x-goog-api-client`.
    public static let apiClientKey = "x-goog-api-client"

    /// The value of `x-goog-api-client`: `gl-swift/<compiler version> grpc/<swift-authrpc
    /// version>`, in the `name/version` pairs Google's libraries send (`gl-python/3.12.1
    /// grpc/1.62.0 ...`). The Swift version is the compiler's that built swift-authrpc, to the
    /// minor version.
    public static let apiClient = "gl-swift/\(swiftCompilerVersion) grpc/\(libraryVersion)"
}

/// The metadata Google's front ends expect, added to a call's options.
extension CallOptions {
    /// Adds the metadata of a call to a Google API, as generated clients do before each call:
    /// `x-goog-request-params: <requestParams>` when `requestParams` is not `nil`, and
    /// `x-goog-api-client: <apiClient>` when `apiClient` is not `nil`.
    ///
    /// A key the metadata already has is left as it is: a caller who sets its own
    /// `x-goog-request-params` or `x-goog-api-client` in ``/AuthRPC/CallOptions/initialMetadata`` sends that one.
    ///
    /// - Parameters:
    ///   - requestParams: The routing header's value (``RoutingRule/requestParams(for:)``).
    ///   - apiClient: The client header's value; ``GoogleAPIMetadata/apiClient`` by default.
    public mutating func addGoogleAPIMetadata(
        requestParams: String?,
        apiClient: String? = GoogleAPIMetadata.apiClient
    ) {
        if let requestParams, !initialMetadata.contains(key: GoogleAPIMetadata.requestParamsKey) {
            initialMetadata.addString(requestParams, forKey: GoogleAPIMetadata.requestParamsKey)
        }
        if let apiClient, !initialMetadata.contains(key: GoogleAPIMetadata.apiClientKey) {
            initialMetadata.addString(apiClient, forKey: GoogleAPIMetadata.apiClientKey)
        }
    }
}
