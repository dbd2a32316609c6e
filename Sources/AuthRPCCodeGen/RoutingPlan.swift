import AuthRPCSyntax
import SwiftProtobuf
import SwiftProtobufPluginLibrary

/// What a method's generated code does to build `x-goog-request-params` (AIP-4222): the routing
/// parameters of its `google.api.routing` annotation or, without one, a template-less parameter
/// per variable of its `google.api.http` paths (the main binding first, then the additional
/// bindings', each field once).
struct RoutingPlan {
    /// One routing parameter, ready to print.
    struct Parameter {
        /// The field path as the annotation writes it (`shelf.name`).
        var field: String
        /// The routing template, checked; `nil` for the whole field under its path.
        var template: String?
        /// A Swift closure body reading the field's text from `$0` (`$0.shelf.name`).
        var read: String
    }

    /// Where the parameters came from.
    enum Source {
        case routingAnnotation
        case httpAnnotation
    }

    var parameters: [Parameter]
    var source: Source

    /// The plan for `method`, `nil` when it sends no routing header (no annotation, an http path
    /// without variables, or an empty `google.api.routing`).
    init?(
        method: MethodDescriptor,
        annotations: MethodAnnotations,
        namer: SwiftProtobufNamer
    ) throws(GeneratorError) {
        func fail(_ problem: String) -> GeneratorError {
            .badAnnotation(file: method.file.name, method: method.fullName, problem: problem)
        }
        var parameters: [Parameter] = []
        if let routing = annotations.routing {
            source = .routingAnnotation
            for parameter in routing.routingParameters {
                if !parameter.pathTemplate.isEmpty,
                    case .failure(let error) = PathTemplateSyntax.parse(parameter.pathTemplate, kind: .routing)
                {
                    throw fail("google.api.routing has a bad path_template: \(error)")
                }
                let read = try FieldAccess.text(of: parameter.field, in: method.inputType, namer: namer, fail)
                parameters.append(
                    Parameter(
                        field: parameter.field,
                        template: parameter.pathTemplate.isEmpty ? nil : parameter.pathTemplate,
                        read: read
                    )
                )
            }
        } else if let http = annotations.http {
            source = .httpAnnotation
            var seen = Set<String>()
            for binding in [http] + http.additionalBindings {
                guard let path = binding.path, !path.isEmpty else { continue }
                let syntax: PathTemplateSyntax
                switch PathTemplateSyntax.parse(path, kind: .http) {
                case .success(let parsed): syntax = parsed
                case .failure(let error): throw fail("google.api.http has a path that does not parse: \(error)")
                }
                for variable in syntax.variables where seen.insert(variable.fieldPath).inserted {
                    let read = try FieldAccess.text(of: variable.fieldPath, in: method.inputType, namer: namer, fail)
                    parameters.append(Parameter(field: variable.fieldPath, template: nil, read: read))
                }
            }
        } else {
            return nil
        }
        guard !parameters.isEmpty else { return nil }
        self.parameters = parameters
    }
}

/// Swift expressions that read a request field named by a dotted path.
enum FieldAccess {
    /// A closure body that gives the text a routing header sends for `path` in `message`:
    /// strings as they are, integers in decimal with zero (proto3's unset) as empty.
    static func text(
        of path: String,
        in message: Descriptor,
        namer: SwiftProtobufNamer,
        _ fail: (String) -> GeneratorError
    ) throws(GeneratorError) -> String {
        let components = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        var current = message
        var expression = "$0"
        for (index, component) in components.enumerated() {
            guard let field = current.fields.first(where: { $0.name == component }) else {
                throw fail(
                    "the request \(message.fullName) has no field \(path) (no \(component) in \(current.fullName))"
                )
            }
            guard !field.isRepeated else {
                throw fail("\(path) is a repeated field or a map; a routing field is a single value")
            }
            expression += "." + namer.messagePropertyNames(field: field, prefixed: "_", includeHasAndClear: false).name
            if index < components.count - 1 {
                guard field.type == .message else {
                    throw fail("\(path) goes through \(component), which is not a message")
                }
                current = field.messageType
                continue
            }
            switch field.type {
            case .string:
                return "{ \(expression) }"
            case .int32, .int64, .uint32, .uint64, .sint32, .sint64, .fixed32, .fixed64, .sfixed32, .sfixed64:
                return "{ \(expression) == 0 ? \"\" : Swift.String(\(expression)) }"
            default:
                throw fail("\(path) is a \(field.type) field; routing fields are strings (or integers in http paths)")
            }
        }
        throw fail("the field path \"\(path)\" is empty")
    }
}
