import Foundation
import SwiftProtobuf
import Testing

@testable import AuthRPCXDS

typealias HTTPConnectionManagerProto = Envoy_Extensions_Filters_Network_HttpConnectionManager_V3_HttpConnectionManager
typealias HTTPFilterProto = Envoy_Extensions_Filters_Network_HttpConnectionManager_V3_HttpFilter

@Suite("XDSListener validation (gRFC A27, A39)")
struct XDSListenerValidationTests {
    static func filter(_ name: String, typeURL: String?, optional: Bool = false) -> HTTPFilterProto {
        var filter = HTTPFilterProto()
        filter.name = name
        if let typeURL {
            var any = Google_Protobuf_Any()
            any.typeURL = typeURL
            filter.typedConfig = any
        }
        filter.isOptional = optional
        return filter
    }

    static let router = filter("router", typeURL: XDSResourceType.routerFilterTypeURL)

    static func listener(
        typeURL: String = XDSResourceType.httpConnectionManagerTypeURL,
        _ configure: (inout HTTPConnectionManagerProto) -> Void
    ) throws -> Envoy_Config_Listener_V3_Listener {
        var manager = HTTPConnectionManagerProto()
        manager.rds.routeConfigName = "routes"
        manager.rds.configSource.ads = .init()
        manager.httpFilters = [router]
        configure(&manager)
        var listener = Envoy_Config_Listener_V3_Listener()
        listener.name = "svc"
        listener.apiListener.apiListener.typeURL = typeURL
        listener.apiListener.apiListener.value = try manager.serializedData()
        return listener
    }

    func nack(_ listener: Envoy_Config_Listener_V3_Listener) -> XDSResourceError? {
        do {
            _ = try XDSListener(validating: listener)
            return nil
        } catch {
            return error
        }
    }

    @Test("rds from ADS or self, or an inline route configuration")
    func routeSources() throws {
        #expect(try XDSListener(validating: Self.listener { _ in }) == XDSListener(name: "svc", routes: .rds("routes")))
        let fromSelf = try Self.listener { $0.rds.configSource.self_p = .init() }
        #expect(try XDSListener(validating: fromSelf).routes == .rds("routes"))
        let inline = try Self.listener {
            $0.routeConfig = RouteFixtures.configuration([RouteFixtures.route(cluster: "x")])
        }
        guard case .inline(let routes) = try XDSListener(validating: inline).routes else {
            Issue.record("not inline")
            return
        }
        #expect(routes.virtualHosts[0].routes[0].action == .cluster("x"))
    }

    @Test("what NACKs names its field")
    func nacks() throws {
        #expect(nack(Envoy_Config_Listener_V3_Listener())?.field == "api_listener")
        #expect(
            nack(try Self.listener(typeURL: "type.googleapis.com/other.Thing") { _ in })?.field
                == "api_listener.api_listener"
        )
        var garbage = try Self.listener { _ in }
        garbage.apiListener.apiListener.value = Data([0xFF, 0xFF, 0xFF])
        #expect(nack(garbage)?.field == "api_listener.api_listener")
        #expect(
            nack(try Self.listener { $0.rds.configSource.path = "/etc/routes" })?.field
                == "http_connection_manager.rds.config_source"
        )
        #expect(
            nack(try Self.listener { $0.rds.routeConfigName = "" })?.field
                == "http_connection_manager.rds.route_config_name"
        )
        #expect(nack(try Self.listener { $0.scopedRoutes = .init() })?.field == "http_connection_manager.scoped_routes")
        #expect(nack(try Self.listener { $0.routeSpecifier = nil })?.field == "http_connection_manager")
        let badInline = try Self.listener {
            $0.routeConfig = RouteFixtures.configuration([RouteFixtures.route(cluster: "")])
        }
        #expect(
            nack(badInline)?.field == "http_connection_manager.route_config.virtual_hosts[0].routes[0].route.cluster"
        )
    }

    @Test("HTTP filters end with the router; an unknown filter NACKs unless optional; names are unique")
    func filters() throws {
        let fault = Self.filter(
            "fault",
            typeURL: "type.googleapis.com/envoy.extensions.filters.http.fault.v3.HTTPFault"
        )
        #expect(nack(try Self.listener { $0.httpFilters = [] })?.field == "http_connection_manager.http_filters")
        #expect(nack(try Self.listener { $0.httpFilters = [Self.router, fault] }) != nil)
        #expect(
            nack(try Self.listener { $0.httpFilters = [fault, Self.router] })?.field
                == "http_connection_manager.http_filters[0].typed_config"
        )
        let optional = Self.filter("fault", typeURL: "type.googleapis.com/x.Fault", optional: true)
        #expect(nack(try Self.listener { $0.httpFilters = [optional, Self.router] }) == nil)
        let twice = Self.filter("router", typeURL: "type.googleapis.com/x.Fault", optional: true)
        #expect(
            nack(try Self.listener { $0.httpFilters = [twice, Self.router] })?.field
                == "http_connection_manager.http_filters[1].name"
        )
        #expect(
            nack(try Self.listener { $0.httpFilters = [Self.filter("r", typeURL: nil)] })?.field
                == "http_connection_manager.http_filters[0].typed_config"
        )
    }
}
