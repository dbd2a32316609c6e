import Foundation
import SwiftProtobuf
package import SwiftProtobufPluginLibrary

/// Writes the Swift source of one `.proto` file's clients: for each service, a `Sendable` struct
/// on an AuthRPC `Channel` with one `async throws(RPCError)` method per unary RPC, a
/// `MethodDescriptor` per method and the service's name; for Google APIs also the routing header
/// (AIP-4222), `x-goog-api-client`, pages of list methods (AIP-158), typed long-running
/// operations (AIP-151) and the API's service config.
///
/// Library types are written with their module (`AuthRPC.Channel`, `Swift.String`), so that a
/// message of the same name in the generated module cannot hide them.
package struct ClientFileGenerator {
    let file: FileDescriptor
    let options: GeneratorOptions
    let namer: SwiftProtobufNamer
    let scope: RequestScope

    /// A generator for `file` alone.
    package init(file: FileDescriptor, options: GeneratorOptions) throws(GeneratorError) {
        self.init(file: file, options: options, scope: try RequestScope(files: [file], options: options))
    }

    init(file: FileDescriptor, options: GeneratorOptions, scope: RequestScope) {
        self.file = file
        self.options = options
        self.scope = scope
        self.namer = SwiftProtobufNamer(currentFile: file, protoFileToModuleMappings: options.moduleMappings)
    }

    /// What one method's client code does.
    private struct MethodPlan {
        let method: MethodDescriptor
        let function: String
        let routing: RoutingPlan?
        let paging: PagingPlan?
        let operation: OperationPlan.Outcome?
    }

    /// What one service's client holds.
    private struct ServicePlan {
        let service: ServiceDescriptor
        let name: String
        let annotations: ServiceAnnotations
        let methods: [MethodPlan]
        let streaming: [MethodDescriptor]
        let serviceConfig: ServiceConfigFile?
    }

    /// The generated source. A file without services gets the header alone, so a build tool
    /// can always expect one output per `.proto` file.
    package func generate() throws(GeneratorError) -> String {
        var printer = CodePrinter(indent: "    ".unicodeScalars, addNewlines: true)
        printHeader(&printer)
        guard !file.services.isEmpty else { return printer.content }
        let plans = try file.services.map { service throws(GeneratorError) in try plan(service) }
        let modules = importedModules(plans)
        for module in modules where scope.typeNames[module] != nil {
            throw .nameCollision(file: file.name, name: module)
        }
        for module in modules {
            p(&printer, "\(options.useAccessLevelOnImports ? options.visibility.importModifier : "")import \(module)")
        }
        for plan in plans { printClient(plan, &printer) }
        return printer.content
    }

    private func p(_ printer: inout CodePrinter, _ lines: String...) {
        for line in lines { printer.print(line) }
    }

    // MARK: - Planning

    private func plan(_ service: ServiceDescriptor) throws(GeneratorError) -> ServicePlan {
        let name = SwiftNames.clientTypeName(service, namer: namer)
        var functionNames = Set<String>()
        func claim(_ function: String) throws(GeneratorError) {
            guard functionNames.insert(function).inserted else {
                throw .nameCollision(file: file.name, name: "\(name).\(function)")
            }
        }
        var methods: [MethodPlan] = []
        for method in service.methods where method.isUnary {
            let annotations = try MethodAnnotations(method)
            let function = SwiftNames.functionName(method)
            try claim(function)
            let paging = PagingPlan(method: method, namer: namer)
            if paging != nil {
                try claim(SwiftNames.functionName(method, suffix: "Pages"))
                try claim(SwiftNames.functionName(method, suffix: "Items"))
            }
            let operation = try OperationPlan.make(
                method: method,
                annotations: annotations,
                namer: namer,
                moduleMappings: options.moduleMappings
            )
            if case .helper = operation { try claim(SwiftNames.functionName(method, suffix: "Operation")) }
            let plan = MethodPlan(
                method: method,
                function: function,
                routing: try RoutingPlan(method: method, annotations: annotations, namer: namer),
                paging: paging,
                operation: operation
            )
            for type in referencedTypes(plan) {
                let first = String(type.prefix { $0 != "." })
                if SwiftNames.clientNestedTypeNames.contains(first) {
                    throw .shadowedType(file: file.name, client: name, name: first)
                }
            }
            methods.append(plan)
        }
        return ServicePlan(
            service: service,
            name: name,
            annotations: try ServiceAnnotations(service),
            methods: methods,
            streaming: service.methods.filter { !$0.isUnary },
            serviceConfig: options.serviceConfigs.first { $0.configures(service.fullName) }
        )
    }

    /// The Swift types a method's code names.
    private func referencedTypes(_ plan: MethodPlan) -> [String] {
        var types = [namer.fullName(message: plan.method.inputType), namer.fullName(message: plan.method.outputType)]
        if let paging = plan.paging { types.append(paging.itemType) }
        if case .helper(let operation) = plan.operation { types += [operation.responseType, operation.metadataType] }
        return types
    }

    /// AuthRPC, and the modules that hold the types the clients name (SwiftProtobuf for the
    /// well-known types, whatever `ProtoPathModuleMappings` says for the others,
    /// GoogleAPICore for Google APIs' routing headers, pages and long-running operations,
    /// Foundation for `Data` items).
    /// Where what only Google APIs need lives: routing headers, pages, long-running operations.
    static let googleAPIModule = "GoogleAPICore"

    private func importedModules(_ plans: [ServicePlan]) -> [String] {
        let ownModule = options.moduleMappings.moduleName(forFile: file)
        var modules: Set<String> = ["AuthRPC"]
        func add(_ descriptor: Descriptor) {
            if let module = options.moduleMappings.moduleName(forFile: descriptor.file) { modules.insert(module) }
        }
        for plan in plans {
            if plan.annotations.isGoogleAPI { modules.insert(Self.googleAPIModule) }
            for method in plan.methods {
                if method.routing != nil || method.paging != nil { modules.insert(Self.googleAPIModule) }
                add(method.method.inputType)
                add(method.method.outputType)
                if let paging = method.paging {
                    if paging.needsFoundation { modules.insert("Foundation") }
                    if let items = method.method.outputType.fields.first(where: { $0.isRepeated && !$0.isMap }) {
                        if items.type == .message { add(items.messageType) }
                        if items.type == .enum,
                            let module = options.moduleMappings.moduleName(forFile: items.enumType.file)
                        {
                            modules.insert(module)
                        }
                    }
                }
                if case .helper(let operation) = method.operation {
                    modules.insert(OperationPlan.helperModule)
                    add(operation.response)
                    add(operation.metadata)
                }
            }
        }
        if let ownModule { modules.remove(ownModule) }
        return modules.sorted()
    }

    // MARK: - Printing

    private func printHeader(_ printer: inout CodePrinter) {
        p(
            &printer,
            "// DO NOT EDIT.",
            "// swift-format-ignore-file",
            "// swiftlint:disable all",
            "//",
            "// Generated by protoc-gen-authrpc-swift (swift-authrpc's client generator).",
            "// Source: \(Printable.text(file.name))"
        )
        if file.services.isEmpty {
            p(&printer, "//", "// This file declares no services, so there is no client to generate.")
            return
        }
        printer.print()
        // The .proto file's own header (its licence, for vendored files), where protoc-gen-swift
        // puts it: the comments before `syntax`.
        let syntaxComments =
            file.sourceCodeInfoLocation(path: [12])?
            .asSourceComment(commentPrefix: "///", leadingDetachedPrefix: "//") ?? ""
        if !syntaxComments.isEmpty {
            printer.print(syntaxComments, newlines: false)
            if !syntaxComments.hasSuffix("\n\n") { printer.print() }
        }
    }

    private func printClient(_ plan: ServicePlan, _ printer: inout CodePrinter) {
        let service = plan.service
        let access = options.visibility.modifier
        printer.print()
        let comments = service.protoSourceComments()
        printer.print(
            comments.isEmpty ? "/// A typed client for `\(service.fullName)`.\n" : comments,
            newlines: false
        )
        p(
            &printer,
            "///",
            "/// Every call goes through ``channel`` and resolves the call's credentials (a token or a",
            "/// token provider in `CallOptions`) when it starts."
        )
        if plan.annotations.isGoogleAPI {
            p(
                &printer,
                "///",
                "/// Every call carries `x-goog-api-client` and, for a method whose request names its resource,",
                "/// the routing header `x-goog-request-params` (AIP-4222), as Google's own clients send them."
            )
        }
        if !plan.streaming.isEmpty {
            let list = plan.streaming.map { "`\($0.name)` (\($0.streamingKind))" }.joined(separator: ", ")
            p(
                &printer,
                "///",
                "/// Not generated: \(list).",
                "/// This client makes unary calls only: AuthRPC's `Channel` has no streaming calls."
            )
        }
        if service.options.deprecated || file.options.deprecated {
            p(&printer, "@available(*, deprecated)")
        }
        p(&printer, "\(access)struct \(plan.name): Swift.Sendable {")
        printer.withIndentation { printer in
            p(&printer, "/// The service's fully qualified name.")
            p(&printer, "\(access)static let serviceName = \(swiftString(service.fullName))")
            if let host = plan.annotations.defaultHost {
                printer.print()
                p(
                    &printer,
                    "/// The host that serves the API (`google.api.default_host`): a channel to it is made with",
                    "/// `Channel(target: defaultHost)` (TLS, port 443)."
                )
                p(&printer, "\(access)static let defaultHost = \(swiftString(host))")
            }
            if !plan.annotations.oauthScopes.isEmpty {
                printer.print()
                p(
                    &printer,
                    "/// The OAuth 2.0 scopes that authorize calls to the API (`google.api.oauth_scopes`): a token",
                    "/// with any one of them will do."
                )
                let scopes = plan.annotations.oauthScopes.map(swiftString).joined(separator: ", ")
                p(&printer, "\(access)static let oauthScopes: [Swift.String] = [\(scopes)]")
            }
            if let config = plan.serviceConfig {
                printer.print()
                printServiceConfig(config, access: access, &printer)
            }
            printer.print()
            p(&printer, "/// The unary methods of `\(service.fullName)`, as they go on the wire.")
            p(&printer, "\(access)enum Methods {")
            printer.withIndentation { printer in
                for method in plan.methods {
                    p(&printer, "/// `/\(service.fullName)/\(method.method.name)`.")
                    if method.method.options.deprecated { p(&printer, "@available(*, deprecated)") }
                    p(
                        &printer,
                        "\(access)static let \(method.function) = AuthRPC.MethodDescriptor(service: \(swiftString(service.fullName)), method: \(swiftString(method.method.name)))"
                    )
                }
            }
            p(&printer, "}")
            let routed = plan.methods.filter { $0.routing != nil }
            if !routed.isEmpty {
                printer.print()
                p(
                    &printer,
                    "/// How the routed methods build `x-goog-request-params` from their requests (AIP-4222),",
                    "/// compiled once."
                )
                p(&printer, "private enum Routing {")
                printer.withIndentation { printer in
                    for method in routed { printRoutingRule(method, &printer) }
                }
                p(&printer, "}")
            }
            printer.print()
            p(&printer, "/// The channel calls go through.")
            p(&printer, "\(access)let channel: AuthRPC.Channel")
            printer.print()
            p(&printer, "/// Creates a client whose calls go through `channel`.")
            p(&printer, "\(access)init(channel: AuthRPC.Channel) {")
            printer.printIndented("self.channel = channel")
            p(&printer, "}")
            for method in plan.methods {
                printer.print()
                printMethod(method, isGoogleAPI: plan.annotations.isGoogleAPI, access: access, &printer)
                if let paging = method.paging {
                    printer.print()
                    printPages(method, paging, access: access, &printer)
                }
                switch method.operation {
                case .helper(let operation)?:
                    printer.print()
                    printOperation(method, operation, access: access, &printer)
                case .notAvailable, nil:
                    break
                }
            }
        }
        p(&printer, "}")
    }

    private func printServiceConfig(_ config: ServiceConfigFile, access: String, _ printer: inout CodePrinter) {
        p(
            &printer,
            "/// The API's gRPC service config (gRFC A6 JSON): the timeouts and retry policies Google",
            "/// publishes for its methods, embedded from `\(Printable.text(URL(fileURLWithPath: config.path).lastPathComponent))`.",
            "/// The text is the file's, unchanged."
        )
        p(&printer, "\(access)static let serviceConfigJSON: Swift.String = \"\"\"")
        for line in config.text.split(separator: "\n", omittingEmptySubsequences: false) {
            p(&printer, multilineStringContent(line))
        }
        p(&printer, "\"\"\"")
        printer.print()
        p(
            &printer,
            "/// ``serviceConfigJSON`` loaded, for `Channel(target:serviceConfig:)`: calls to the API's methods",
            "/// then get its timeouts and retry policies (options a caller sets win).",
            "///",
            "/// - Throws: `ServiceConfigError` naming the field, if the text is not a service config this",
            "///   library accepts (the generator checked it by the same rules).",
            "\(access)static func serviceConfig() throws(AuthRPC.ServiceConfigError) -> AuthRPC.ServiceConfig {"
        )
        printer.withIndentation { printer in
            p(&printer, "try AuthRPC.ServiceConfig(json: serviceConfigJSON)")
        }
        p(&printer, "}")
    }

    private func printRoutingRule(_ method: MethodPlan, _ printer: inout CodePrinter) {
        guard let routing = method.routing else { return }
        let input = namer.fullName(message: method.method.inputType)
        let source =
            routing.source == .routingAnnotation
            ? "its `google.api.routing` annotation" : "the variables of its `google.api.http` path"
        p(&printer, "/// `\(method.method.name)`: from \(source).")
        p(&printer, "static let \(method.function) = GoogleAPICore.RoutingRule<\(input)>([")
        printer.withIndentation { printer in
            for parameter in routing.parameters {
                let template = parameter.template.map {
                    ", pathTemplate: try! GoogleAPICore.RoutingPathTemplate(\(swiftString($0)))"
                }
                p(
                    &printer,
                    "GoogleAPICore.RoutingParameter(field: \(swiftString(parameter.field))\(template ?? "")) \(parameter.read),"
                )
            }
        }
        p(&printer, "])")
    }

    private func printMethod(_ plan: MethodPlan, isGoogleAPI: Bool, access: String, _ printer: inout CodePrinter) {
        let method = plan.method
        let input = namer.fullName(message: method.inputType)
        let output = namer.fullName(message: method.outputType)
        let function = plan.function
        // A request with nothing in it (google.protobuf.Empty and the like) need not be spelled out.
        let requestDefault = method.inputType.fields.isEmpty ? " = \(input)()" : ""

        let comments = method.protoSourceComments()
        printer.print(comments.isEmpty ? "/// Calls `\(method.name)`.\n" : comments, newlines: false)
        if let routing = plan.routing {
            let fields = routing.parameters.map { "`\($0.field)`" }
            let unique = fields.enumerated().filter { fields.firstIndex(of: $0.element) == $0.offset }.map(\.element)
            p(
                &printer,
                "///",
                "/// Sends `x-goog-request-params` from \(unique.joined(separator: ", ")) (AIP-4222), unless `options` has one."
            )
        }
        if case .notAvailable(let reason)? = plan.operation {
            p(&printer, "///", "/// Returns a long-running operation; \(reason).")
        }
        p(
            &printer,
            "///",
            "/// - Parameters:",
            "///   - request: The `\(method.inputType.fullName)` to send.",
            "///   - options: The call's options; the channel's defaults when `nil`.",
            "/// - Returns: The `\(method.outputType.fullName)`, with the response headers and trailers.",
            "/// - Throws: `RPCError` for every failure: the server's status, message and metadata, or a",
            "///   local failure (deadline, credentials, transport)."
        )
        if method.options.deprecated { p(&printer, "@available(*, deprecated)") }
        // Runs on the caller's executor, as `Channel.unary` does: no hop on the way in or out.
        p(
            &printer,
            "nonisolated(nonsending) \(access)func \(function)(_ request: \(input)\(requestDefault), options: AuthRPC.CallOptions? = nil) async throws(AuthRPC.RPCError) -> AuthRPC.UnaryResponse<\(output)> {"
        )
        printer.withIndentation { printer in
            let call =
                "channel.unary(Methods.\(function), request: request, responseType: \(output).self, options: options)"
            guard plan.routing != nil || isGoogleAPI else {
                p(&printer, "try await \(call)")
                return
            }
            let params = plan.routing == nil ? "nil" : "Routing.\(function).requestParams(for: request)"
            p(&printer, "var options = options ?? channel.defaultCallOptions")
            p(
                &printer,
                "options.addGoogleAPIMetadata(requestParams: \(params)\(isGoogleAPI ? "" : ", apiClient: nil"))"
            )
            p(&printer, "return try await \(call)")
        }
        p(&printer, "}")
    }

    private func printPages(_ plan: MethodPlan, _ paging: PagingPlan, access: String, _ printer: inout CodePrinter) {
        let method = plan.method
        let input = namer.fullName(message: method.inputType)
        let output = namer.fullName(message: method.outputType)
        let pages = SwiftNames.functionName(method, suffix: "Pages")
        let items = SwiftNames.functionName(method, suffix: "Items")
        let sequence = "GoogleAPICore.PageSequence<\(input), \(output), \(paging.itemType)>"
        p(
            &printer,
            "/// The pages of `\(method.name)` (AIP-158): the first with `request` as it is, then one call per",
            "/// `next_page_token`, each made when the iteration asks for it, until a page has none.",
            "/// `.items` gives the `\(paging.itemsFieldName)` of every page.",
            "///",
            "/// - Parameters:",
            "///   - request: The first request; its `page_token` says where to start.",
            "///   - options: The options of every call; the channel's defaults when `nil`."
        )
        if method.options.deprecated { p(&printer, "@available(*, deprecated)") }
        p(
            &printer,
            "\(access)func \(pages)(_ request: \(input), options: AuthRPC.CallOptions? = nil) -> \(sequence) {"
        )
        printer.withIndentation { printer in
            p(
                &printer,
                "\(sequence)(",
                "    request: request,",
                "    options: options,",
                "    fetch: { [self] request, options async throws(AuthRPC.RPCError) -> \(output) in",
                "        try await self.\(plan.function)(request, options: options).message",
                "    },",
                "    setPageToken: { $0.\(paging.pageToken) = $1 },",
                "    nextPageToken: { $0.\(paging.nextPageToken) },",
                "    items: { $0.\(paging.items) }",
                ")"
            )
        }
        p(&printer, "}")
        printer.print()
        p(
            &printer,
            "/// The `\(paging.itemsFieldName)` of every page of `\(method.name)`, in order (AIP-158): `\(pages)(_:options:)`'s",
            "/// `.items`.",
            "///",
            "/// - Parameters:",
            "///   - request: The first request; its `page_token` says where to start.",
            "///   - options: The options of every call; the channel's defaults when `nil`."
        )
        if method.options.deprecated { p(&printer, "@available(*, deprecated)") }
        p(
            &printer,
            "\(access)func \(items)(_ request: \(input), options: AuthRPC.CallOptions? = nil) -> GoogleAPICore.PageItemSequence<\(input), \(output), \(paging.itemType)> {"
        )
        printer.printIndented("\(pages)(request, options: options).items")
        p(&printer, "}")
    }

    private func printOperation(
        _ plan: MethodPlan,
        _ operation: OperationPlan,
        access: String,
        _ printer: inout CodePrinter
    ) {
        let method = plan.method
        let input = namer.fullName(message: method.inputType)
        let helper = OperationPlan.helperModule
        let result = "\(helper).LongRunningOperation<\(operation.responseType), \(operation.metadataType)>"
        p(
            &printer,
            "/// Calls `\(method.name)` and returns its long-running operation (AIP-151), typed by its",
            "/// `operation_info`: a `\(operation.responseProtoName)` when it succeeds, `\(operation.metadataProtoName)`",
            "/// while it runs. `waitUntilDone()` polls it through `google.longrunning.Operations` on ``channel``.",
            "///",
            "/// - Parameters:",
            "///   - request: The `\(method.inputType.fullName)` to send.",
            "///   - options: The options of this call and of the operation's polls; the channel's defaults",
            "///     when `nil`.",
            "/// - Throws: `RPCError` when the call fails."
        )
        if method.options.deprecated { p(&printer, "@available(*, deprecated)") }
        p(
            &printer,
            "nonisolated(nonsending) \(access)func \(SwiftNames.functionName(method, suffix: "Operation"))(_ request: \(input), options: AuthRPC.CallOptions? = nil) async throws(AuthRPC.RPCError) -> \(result) {"
        )
        printer.withIndentation { printer in
            p(
                &printer,
                "let response = try await \(plan.function)(request, options: options)",
                "return \(result)(",
                "    response.message,",
                "    operations: \(helper).Google_Longrunning_OperationsClient(channel: channel),",
                "    options: options",
                ")"
            )
        }
        p(&printer, "}")
    }

    // MARK: - Literals

    /// A Swift string literal of `text`: quotes and backslashes escaped, and every character
    /// outside printable ASCII as `\u{...}`.
    private func swiftString(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case " "..."~": result.unicodeScalars.append(scalar)
            default: result += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            }
        }
        return result + "\""
    }

    /// One line of a multi-line string literal holding `line` exactly: backslashes escaped, every
    /// third quote in a row escaped (so no `"""` ends the literal), control characters as
    /// `\u{...}` (a tab stays), and trailing spaces escaped (so no tool can trim them).
    private func multilineStringContent(_ line: Substring) -> String {
        var result = ""
        var quotes = 0
        let trailing = line.unicodeScalars.reversed().prefix { $0 == " " || $0 == "\t" }.count
        for (offset, scalar) in line.unicodeScalars.enumerated() {
            quotes = scalar == "\"" ? quotes + 1 : 0
            let inTrailingSpace = offset >= line.unicodeScalars.count - trailing
            switch scalar {
            case "\\": result += "\\\\"
            case "\"" where quotes == 3:
                result += "\\\""
                quotes = 0
            case "\t" where !inTrailingSpace: result += "\t"
            case " " where !inTrailingSpace: result += " "
            case _
            where scalar.value < 0x20 || scalar.value == 0x7F || scalar.value == 0x2028 || scalar.value == 0x2029
                || inTrailingSpace:
                result += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}

extension MethodDescriptor {
    var isUnary: Bool { !clientStreaming && !serverStreaming }

    var streamingKind: String {
        switch (clientStreaming, serverStreaming) {
        case (true, true): "bidirectional streaming"
        case (true, false): "client streaming"
        default: "server streaming"
        }
    }
}
