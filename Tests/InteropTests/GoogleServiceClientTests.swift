import AuthRPC
import Foundation
import GoogleAPICore
import OAuth2
import SwiftProtobuf
import TestSupport
import Testing

/// Real Google service definitions (vendored googleapis protos) through the clients
/// protoc-gen-authrpc-swift generated, against the sandbox's grpcio servicers over TLS, with an
/// `AuthSession` from the sandbox's Authlib issuer as the token provider.
@Suite("Generated Google clients against the sandbox")
struct GoogleServiceClientTests {
    /// A TLS channel whose calls take their token from an `AuthSession` (client credentials at the
    /// sandbox issuer).
    static func channel() async throws -> Channel {
        let sandbox = try await Peers.sandbox()
        let configuration = try await ServiceConfiguration.discover(issuer: URL(string: sandbox.issuer)!)
        let state = try await ClientCredentialsFlow.authorize(
            configuration: configuration,
            client: OAuthClient(id: "sandbox-service", secret: "sandbox-service-secret"),
            scopes: [SandboxChannel.testScope]
        )
        return try await SandboxChannel.tls(credentials: .provider(AuthSession(state: state)))
    }

    /// A project of the test's own: the sandbox seeds its operations fresh.
    static func freshLocation() -> (project: String, parent: String) {
        let project = "p" + UUID().uuidString.lowercased().prefix(12).filter { $0 != "-" }
        return ("projects/\(project)", "projects/\(project)/locations/us-east1")
    }

    @Test("ListLocations pages through every location; GetLocation returns one")
    func locations() async throws {
        let client = Google_Cloud_Location_LocationsClient(channel: try await Self.channel())
        let (project, parent) = Self.freshLocation()

        var request = Google_Cloud_Location_ListLocationsRequest()
        request.name = project
        request.pageSize = 2
        let first = try await client.listLocations(request).message
        #expect(first.locations.map(\.locationID) == ["us-east1", "europe-west1"])
        #expect(!first.nextPageToken.isEmpty)
        request.pageToken = first.nextPageToken
        let second = try await client.listLocations(request).message
        #expect(second.locations.map(\.locationID) == ["asia-northeast1"])
        #expect(second.nextPageToken.isEmpty)

        request = Google_Cloud_Location_ListLocationsRequest()
        request.name = project
        request.filter = "labels.continent=europe"
        #expect(try await client.listLocations(request).message.locations.map(\.displayName) == ["Belgium"])

        var get = Google_Cloud_Location_GetLocationRequest()
        get.name = parent
        let location = try await client.getLocation(get)
        #expect(location.message.name == parent)
        #expect(location.message.labels == ["continent": "america"])
        #expect(location.trailers.firstString(forKey: "grpc-status") == "0")
    }

    @Test(
        "ListOperations, GetOperation, WaitOperation, CancelOperation and DeleteOperation change and report the operations"
    )
    func operations() async throws {
        let client = Google_Longrunning_OperationsClient(channel: try await Self.channel())
        let (_, parent) = Self.freshLocation()
        func name(_ id: String) -> String { "\(parent)/operations/\(id)" }

        var list = Google_Longrunning_ListOperationsRequest()
        list.name = parent
        #expect(
            try await client.listOperations(list).message.operations.map(\.name)
                == ["build-1", "build-2", "build-3", "build-4"].map(name)
        )
        list.filter = "done=false"
        #expect(try await client.listOperations(list).message.operations.allSatisfy { !$0.done })

        var get = Google_Longrunning_GetOperationRequest()
        get.name = name("build-1")
        let built = try await client.getOperation(get).message
        #expect(built.done)
        #expect(try Google_Cloud_Location_Location(unpackingAny: built.response).name == parent)

        get.name = name("build-2")
        // google.rpc.Status is AuthRPC's type (ProtoPathModuleMappings), not a second copy.
        let failure: AuthRPC.Google_Rpc_Status = try await client.getOperation(get).message.error
        #expect(failure.code == Int32(StatusCode.failedPrecondition.rawValue))

        var wait = Google_Longrunning_WaitOperationRequest()
        wait.name = name("build-3")
        wait.timeout = Google_Protobuf_Duration(seconds: 20)
        var options = client.channel.defaultCallOptions  // keeps the session as credentials
        options.timeout = .seconds(30)
        #expect(try await client.waitOperation(wait, options: options).message.done)

        var cancel = Google_Longrunning_CancelOperationRequest()
        cancel.name = name("build-4")
        _ = try await client.cancelOperation(cancel)
        get.name = name("build-4")
        let cancelled = try await client.getOperation(get).message
        #expect(cancelled.done)
        #expect(cancelled.error.code == Int32(StatusCode.cancelled.rawValue))

        var delete = Google_Longrunning_DeleteOperationRequest()
        delete.name = name("build-1")
        let deleted: UnaryResponse<Google_Protobuf_Empty> = try await client.deleteOperation(delete)
        #expect(deleted.message == Google_Protobuf_Empty())
        list.filter = ""
        #expect(!(try await client.listOperations(list).message.operations.map(\.name).contains(name("build-1"))))
    }

    @Test("NOT_FOUND carries a google.rpc.Status with ResourceInfo and ErrorInfo, decoded end to end")
    func notFoundDetails() async throws {
        let client = Google_Longrunning_OperationsClient(channel: try await Self.channel())
        let (_, parent) = Self.freshLocation()
        var get = Google_Longrunning_GetOperationRequest()
        get.name = "\(parent)/operations/never-created"

        let error = await #expect(throws: RPCError.self) { try await client.getOperation(get) }
        #expect(error?.code == .notFound)
        let status = try #require(try error?.decodedStatusDetails())
        #expect(status.code == Int32(StatusCode.notFound.rawValue))
        #expect(status.message == error?.message)
        try #require(status.details.count == 2)
        let resource = try Google_Rpc_ResourceInfo(unpackingAny: status.details[0])
        #expect(resource.resourceType == "google.longrunning.Operation")
        #expect(resource.resourceName == get.name)
        let info = try Google_Rpc_ErrorInfo(unpackingAny: status.details[1])
        #expect(info.reason == "RESOURCE_NOT_FOUND")
        #expect(info.metadata["resource_name"] == get.name)

        var location = Google_Cloud_Location_GetLocationRequest()
        location.name = "projects/somewhere/locations/mars-north1"
        let missing = await #expect(throws: RPCError.self) {
            try await Google_Cloud_Location_LocationsClient(channel: client.channel).getLocation(location)
        }
        let locationStatus = try #require(try missing?.decodedStatusDetails())
        #expect(
            try Google_Rpc_ResourceInfo(unpackingAny: locationStatus.details[0]).resourceType
                == "google.cloud.location.Location"
        )
    }

    @Test("Without a token every generated Google client call fails UNAUTHENTICATED with the bearer challenge")
    func unauthenticated() async throws {
        let channel = try await SandboxChannel.tls(credentials: nil)
        let (project, parent) = Self.freshLocation()
        var list = Google_Cloud_Location_ListLocationsRequest()
        list.name = project
        var get = Google_Longrunning_GetOperationRequest()
        get.name = "\(parent)/operations/build-1"
        let locations = await #expect(throws: RPCError.self) {
            try await Google_Cloud_Location_LocationsClient(channel: channel).listLocations(list)
        }
        let operations = await #expect(throws: RPCError.self) {
            try await Google_Longrunning_OperationsClient(channel: channel).getOperation(get)
        }
        for error in [locations, operations] {
            #expect(error?.code == .unauthenticated)
            #expect(error?.trailers.firstString(forKey: "www-authenticate") == "Bearer realm=\"sandbox\"")
        }
    }

    @Test("Generated method descriptors name the wire paths of the proto definitions")
    func descriptors() {
        #expect(Google_Longrunning_OperationsClient.serviceName == "google.longrunning.Operations")
        #expect(
            Google_Longrunning_OperationsClient.Methods.waitOperation.path
                == "/google.longrunning.Operations/WaitOperation"
        )
        #expect(
            Google_Cloud_Location_LocationsClient.Methods.listLocations.path
                == "/google.cloud.location.Locations/ListLocations"
        )
    }

}
