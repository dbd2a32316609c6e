import AuthRPC
import GoogleAPICore
import SwiftProtobuf
import TestSupport
import Testing

/// The routing headers generated clients send (AIP-4222), checked by the sandbox's front end,
/// which computes the header from the same annotations on its own (google_front_end.py) and
/// refuses calls whose header is missing or differs, as Google's front ends do.
@Suite("Routing headers of generated clients against the sandbox's front end")
struct GoogleAPIRoutingTests {
    typealias Examples = Authrpc_Testing_Googleapi_RoutingExamplesClient

    static func client() async throws -> Examples {
        Examples(channel: try await SandboxChannel.tls())
    }

    /// routing.proto's example message, verbatim.
    static let example: Authrpc_Testing_Googleapi_TableRequest = {
        var request = Authrpc_Testing_Googleapi_TableRequest()
        request.tableName = "projects/proj_foo/instances/instance_bar/table/table_baz"
        request.appProfileID = "profiles/prof_qux"
        return request
    }()

    /// Sends `request` with `call` and checks that the header the client sent is `expected`
    /// (routing.proto's result, percent-encoded) and is what the sandbox computed.
    static func expect(
        _ expected: String?,
        request: Authrpc_Testing_Googleapi_TableRequest = example,
        sourceLocation: SourceLocation = #_sourceLocation,
        _ call: (Authrpc_Testing_Googleapi_TableRequest) async throws -> UnaryResponse<
            Authrpc_Testing_Googleapi_RoutingEcho
        >
    ) async throws {
        let echo = try await call(request).message
        #expect(echo.requestParams == (expected.map { [$0] } ?? []), sourceLocation: sourceLocation)
        #expect(echo.expected == (expected ?? ""), sourceLocation: sourceLocation)
    }

    @Test(
        "Every example of google/api/routing.proto: the header the client sends is the documented one and the server's"
    )
    func routingProtoExamples() async throws {
        let client = try await Self.client()
        var documented = Self.example
        documented.tableName = "projects/proj_foo/instances/instance_bar/tables/table_baz"
        try await Self.expect("app_profile_id=profiles%2Fprof_qux") { try await client.example1($0) }
        try await Self.expect("routing_id=profiles%2Fprof_qux") { try await client.example2($0) }
        try await Self.expect("table_name=projects%2Fproj_foo%2Finstances%2Finstance_bar%2Ftable%2Ftable_baz") {
            try await client.example3A($0)
        }
        try await Self.expect(nil) { try await client.example3B($0) }
        try await Self.expect("table_name=projects%2Fproj_foo%2Finstances%2Finstance_bar%2Ftable%2Ftable_baz") {
            try await client.example3C($0)
        }
        try await Self.expect("routing_id=projects%2Fproj_foo") { try await client.example4($0) }
        try await Self.expect("routing_id=projects%2Fproj_foo%2Finstances%2Finstance_bar") {
            try await client.example5($0)
        }
        try await Self.expect("project_id=projects%2Fproj_foo&instance_id=instances%2Finstance_bar") {
            try await client.example6A($0)
        }
        try await Self.expect("project_id=projects%2Fproj_foo&instance_id=instances%2Finstance_bar") {
            try await client.example6B($0)
        }
        try await Self.expect("project_id=projects%2Fproj_foo&routing_id=profiles%2Fprof_qux") {
            try await client.example7($0)
        }
        try await Self.expect("routing_id=profiles%2Fprof_qux") { try await client.example8($0) }
        try await Self.expect("table_location=instances%2Finstance_bar&routing_id=prof_qux", request: documented) {
            try await client.example9($0)
        }
        try await Self.expect("routing_id=prof_qux") { try await client.example9($0) }
    }

    @Test("The other branches: a table without an instance, an empty profile, a legacy profile id")
    func moreBranches() async throws {
        let client = try await Self.client()
        var noInstance = Authrpc_Testing_Googleapi_TableRequest()
        noInstance.tableName = "projects/proj_foo/tables/table_baz"
        try await Self.expect(nil, request: noInstance) { try await client.example6A($0) }
        try await Self.expect("project_id=projects%2Fproj_foo", request: noInstance) { try await client.example6B($0) }
        var region = Authrpc_Testing_Googleapi_TableRequest()
        region.tableName = "regions/r1/zones/z1/tables/t"
        try await Self.expect("routing_id=regions%2Fr1", request: region) { try await client.example8($0) }
        try await Self.expect("table_location=regions%2Fr1%2Fzones%2Fz1", request: region) {
            try await client.example9($0)
        }
        var legacy = Self.example
        legacy.appProfileID = "legacy profile&id"
        try await Self.expect("routing_id=legacy%20profile%26id", request: legacy) { try await client.example9($0) }
    }

    @Test("AIP-4222's own example: project, subproject, then billing_project wins")
    func aipExample() async throws {
        let client = try await Self.client()
        var request = Authrpc_Testing_Googleapi_CreateTopicRequest()
        request.parent = "projects/100/subprojects/200/foo"
        var echo = try await client.createTopic(request).message
        #expect(
            echo.requestParams == ["project=projects%2F100%2Fsubprojects%2F200"]
                && echo.expected == echo.requestParams[0]
        )
        request.billingProject = "billing-7"
        echo = try await client.createTopic(request).message
        #expect(echo.requestParams == ["project=billing-7"] && echo.expected == "project=billing-7")
    }

    @Test(
        "Implicit routing from google.api.http: nested fields, additional bindings, numbers; an empty routing sends none"
    )
    func implicitRouting() async throws {
        let client = try await Self.client()
        var update = Authrpc_Testing_Googleapi_UpdateShelfRequest()
        update.shelf.name = "libraries/l/shelves/s"
        var echo = try await client.updateShelf(update).message
        #expect(
            echo.requestParams == ["shelf.name=libraries%2Fl%2Fshelves%2Fs"] && echo.expected == echo.requestParams[0]
        )
        var move = Authrpc_Testing_Googleapi_MoveBookRequest()
        move.name = "shelves/a/books/b"
        move.otherShelfName = "shelves/c"
        echo = try await client.moveBook(move).message
        #expect(echo.requestParams == ["name=shelves%2Fa%2Fbooks%2Fb&other_shelf_name=shelves%2Fc"])
        #expect(echo.expected == echo.requestParams[0])
        var numbers = Authrpc_Testing_Googleapi_BookNumberRequest()
        numbers.shelfID = -12
        numbers.bookID = 7
        echo = try await client.getBookByNumber(numbers).message
        #expect(echo.requestParams == ["shelf_id=-12&book_id=7"] && echo.expected == echo.requestParams[0])
        try await Self.expect("app_profile_id=profiles%2Fprof_qux") { try await client.explicitOverHTTP($0) }
        try await Self.expect(nil) { try await client.noRouting($0) }
    }

    @Test("Without the header (a call made by hand), the front end refuses the call as Google does")
    func missingHeader() async throws {
        let client = try await Self.client()
        let error = await #expect(throws: RPCError.self) {
            try await client.channel.unary(
                Examples.Methods.example7,
                request: Self.example,
                responseType: Authrpc_Testing_Googleapi_RoutingEcho.self
            )
        }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message == "An x-goog-request-params request metadata property must be provided")
    }

    @Test("A caller's own x-goog-request-params is sent instead of the client's; one that does not match is refused")
    func callersHeaderWins() async throws {
        let client = try await Self.client()
        var options = client.channel.defaultCallOptions
        options.initialMetadata.addString(
            "project_id=projects%2Fproj_foo&routing_id=profiles%2Fprof_qux&extra=1",
            forKey: "x-goog-request-params"
        )
        let echo = try await client.example7(Self.example, options: options).message
        #expect(echo.requestParams == ["project_id=projects%2Fproj_foo&routing_id=profiles%2Fprof_qux&extra=1"])
        options.initialMetadata.replaceOrAddString(
            "project_id=projects%2Fsomewhere-else",
            forKey: "x-goog-request-params"
        )
        let error = await #expect(throws: RPCError.self) { try await client.example7(Self.example, options: options) }
        #expect(error?.code == .invalidArgument)
        #expect(
            error?.message
                == "An x-goog-request-params request metadata property must be provided (its 'project_id' is 'projects/somewhere-else', the request's is 'projects/proj_foo')"
        )
    }

    @Test("Calls to a Google API carry x-goog-api-client: gl-swift/<compiler> grpc/<library version>")
    func apiClientHeader() async throws {
        let client = try await Self.client()
        let response = try await client.example1(Self.example)
        #expect(response.headers.firstString(forKey: "x-sandbox-api-client") == GoogleAPIMetadata.apiClient)
        #expect(GoogleAPIMetadata.apiClient.hasPrefix("gl-swift/6."))
        #expect(GoogleAPIMetadata.apiClient.hasSuffix(" grpc/0.1.0"))
    }
}
