import Foundation
import SwiftProtobuf
import SwiftProtobufPluginLibrary

/// The Google API annotations of a method: `google.api.http`, `google.api.routing` and
/// `google.longrunning.operation_info`.
///
/// protoc hands the generator the options as it found them; the extensions (which the plugin
/// library does not know) arrive as unknown fields, and are read again here with this
/// generator's copy of their definitions (`Generated/`, from the vendored googleapis protos).
struct MethodAnnotations {
    /// The method's HTTP binding, if it has one.
    var http: Google_Api_HttpRule?
    /// The method's explicit routing, if annotated (an empty rule counts: it turns routing off).
    var routing: Google_Api_RoutingRule?
    /// The response and metadata types of a long-running method.
    var operationInfo: Google_Longrunning_OperationInfo?

    init(_ method: SwiftProtobufPluginLibrary.MethodDescriptor) throws(GeneratorError) {
        let options: Google_Protobuf_MethodOptions
        do {
            options = try Google_Protobuf_MethodOptions(
                serializedBytes: try method.options.serializedBytes() as [UInt8],
                extensions: annotationExtensions
            )
        } catch {
            throw .badAnnotation(
                file: method.file.name,
                method: method.fullName,
                problem: "its options cannot be decoded (\(error))"
            )
        }
        http = options.hasGoogle_Api_http ? options.Google_Api_http : nil
        routing = options.hasGoogle_Api_routing ? options.Google_Api_routing : nil
        operationInfo = options.hasGoogle_Longrunning_operationInfo ? options.Google_Longrunning_operationInfo : nil
    }
}

/// The Google API annotations of a service: `google.api.default_host` and
/// `google.api.oauth_scopes`.
struct ServiceAnnotations {
    /// The host that serves the API (`pubsub.googleapis.com`), if annotated.
    var defaultHost: String?
    /// The OAuth scopes the API accepts, in the annotation's order.
    var oauthScopes: [String]

    init(_ service: ServiceDescriptor) throws(GeneratorError) {
        let options: Google_Protobuf_ServiceOptions
        do {
            options = try Google_Protobuf_ServiceOptions(
                serializedBytes: try service.options.serializedBytes() as [UInt8],
                extensions: annotationExtensions
            )
        } catch {
            throw .badAnnotation(
                file: service.file.name,
                method: service.fullName,
                problem: "its options cannot be decoded (\(error))"
            )
        }
        defaultHost = options.hasGoogle_Api_defaultHost ? options.Google_Api_defaultHost : nil
        oauthScopes = options.Google_Api_oauthScopes.split(separator: ",").map {
            String($0.trimmingCharacters(in: .whitespaces))
        }.filter { !$0.isEmpty }
    }

    /// Whether this is a Google API: one with a `google.api.default_host`. Its client sends
    /// `x-goog-api-client`.
    var isGoogleAPI: Bool { defaultHost != nil }
}

private let annotationExtensions: SimpleExtensionMap = {
    var map = Google_Api_Annotations_Extensions
    map.formUnion(Google_Api_Routing_Extensions)
    map.formUnion(Google_Api_Client_Extensions)
    map.formUnion(Google_Longrunning_OperationsProto_Extensions)
    return map
}()

extension Google_Api_HttpRule {
    /// The path of this binding, whatever its verb.
    var path: String? {
        switch pattern {
        case .get(let path), .put(let path), .post(let path), .delete(let path), .patch(let path): path
        case .custom(let custom): custom.path
        case nil: nil
        }
    }
}
