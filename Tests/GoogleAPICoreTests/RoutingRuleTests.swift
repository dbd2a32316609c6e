import AuthRPC
import Foundation
import GoogleAPICore
import Testing

/// The request of the examples in google/api/routing.proto (AIP-4222's explicit routing).
private struct TableRequest {
    var tableName = ""
    var appProfileID = ""
}

/// The routing parameters of an example, spelled as in the annotation: (field, path_template).
private func rule(_ parameters: [(field: String, template: String?)]) throws -> RoutingRule<TableRequest> {
    var built: [RoutingParameter<TableRequest>] = []
    for (field, template) in parameters {
        let read: @Sendable (TableRequest) -> String
        if field == "table_name" {
            read = { $0.tableName }
        } else {
            read = { $0.appProfileID }
        }
        let pathTemplate = try template.map { text in try RoutingPathTemplate(text) }
        built.append(RoutingParameter(field: field, pathTemplate: pathTemplate, value: read))
    }
    return RoutingRule(built)
}

/// The header value with the percent-encoding undone, as routing.proto writes its results.
private func readable(_ header: String?) -> String? {
    header?.replacingOccurrences(of: "%2F", with: "/")
}

@Suite("Routing headers (AIP-4222)")
struct RoutingRuleTests {
    /// routing.proto's example message, verbatim (its `table/table_baz` differs from the
    /// `tables/<table>` form the message's own comment documents).
    private static let example = TableRequest(
        tableName: "projects/proj_foo/instances/instance_bar/table/table_baz",
        appProfileID: "profiles/prof_qux"
    )

    @Test("Example 1: a field sent whole under its own name")
    func example1() throws {
        let header = try rule([("app_profile_id", nil)]).requestParams(for: Self.example)
        #expect(header == "app_profile_id=profiles%2Fprof_qux")
    }

    @Test("Example 2: a field sent whole under another key")
    func example2() throws {
        let header = try rule([("app_profile_id", "{routing_id=**}")]).requestParams(for: Self.example)
        #expect(readable(header) == "routing_id=profiles/prof_qux")
    }

    @Test(
        "Example 3: the field must match the template (3a), else nothing is sent (3b); of two, the one that matches (3c)"
    )
    func example3() throws {
        let a = try rule([("table_name", "{table_name=projects/*/instances/*/**}")]).requestParams(for: Self.example)
        #expect(readable(a) == "table_name=projects/proj_foo/instances/instance_bar/table/table_baz")
        let b = try rule([("table_name", "{table_name=regions/*/zones/*/**}")]).requestParams(for: Self.example)
        #expect(b == nil)
        let c = try rule([
            ("table_name", "{table_name=regions/*/zones/*/**}"),
            ("table_name", "{table_name=projects/*/instances/*/**}"),
        ]).requestParams(for: Self.example)
        #expect(readable(c) == "table_name=projects/proj_foo/instances/instance_bar/table/table_baz")
    }

    @Test("Example 4: part of a field")
    func example4() throws {
        let header = try rule([("table_name", "{routing_id=projects/*}/**")]).requestParams(for: Self.example)
        #expect(readable(header) == "routing_id=projects/proj_foo")
    }

    @Test("Example 5: of two templates for one key that both match, the last wins")
    func example5() throws {
        let header = try rule([
            ("table_name", "{routing_id=projects/*}/**"),
            ("table_name", "{routing_id=projects/*/instances/*}/**"),
        ]).requestParams(for: Self.example)
        #expect(readable(header) == "routing_id=projects/proj_foo/instances/instance_bar")
    }

    @Test("Example 6: two keys from one field, with strict (6a) and loose (6b) templates")
    func example6() throws {
        let strict = try rule([
            ("table_name", "{project_id=projects/*}/instances/*/**"),
            ("table_name", "projects/*/{instance_id=instances/*}/**"),
        ])
        let loose = try rule([
            ("table_name", "{project_id=projects/*}/**"),
            ("table_name", "projects/*/{instance_id=instances/*}/**"),
        ])
        for rule in [strict, loose] {
            #expect(
                readable(rule.requestParams(for: Self.example))
                    == "project_id=projects/proj_foo&instance_id=instances/instance_bar"
            )
        }
        // Without an instance, the strict templates send nothing and the loose ones the project.
        let noInstance = TableRequest(tableName: "projects/proj_foo/tables/table_baz")
        #expect(strict.requestParams(for: noInstance) == nil)
        #expect(readable(loose.requestParams(for: noInstance)) == "project_id=projects/proj_foo")
    }

    @Test("Example 7: keys from two fields; one that does not match leaves only the other")
    func example7() throws {
        let rule = try rule([("table_name", "{project_id=projects/*}/**"), ("app_profile_id", "{routing_id=**}")])
        #expect(
            readable(rule.requestParams(for: Self.example))
                == "project_id=projects/proj_foo&routing_id=profiles/prof_qux"
        )
        var malformed = Self.example
        malformed.tableName = "tables/table_baz"
        #expect(readable(rule.requestParams(for: malformed)) == "routing_id=profiles/prof_qux")
    }

    @Test("Example 8: one key from several fields; the last that matches wins, and an empty field does not")
    func example8() throws {
        let rule = try rule([
            ("table_name", "{routing_id=projects/*}/**"),
            ("table_name", "{routing_id=regions/*}/**"),
            ("app_profile_id", "{routing_id=**}"),
        ])
        #expect(readable(rule.requestParams(for: Self.example)) == "routing_id=profiles/prof_qux")
        var noProfile = Self.example
        noProfile.appProfileID = ""
        #expect(readable(rule.requestParams(for: noProfile)) == "routing_id=projects/proj_foo")
        noProfile.tableName = "regions/us-east1/zones/b/tables/t"
        #expect(readable(rule.requestParams(for: noProfile)) == "routing_id=regions/us-east1")
    }

    @Test("Example 9: all together; table_location needs the `tables/` form the message documents")
    func example9() throws {
        let rule = try rule([
            ("table_name", "projects/*/{table_location=instances/*}/tables/*"),
            ("table_name", "{table_location=regions/*/zones/*}/tables/*"),
            ("table_name", "{routing_id=projects/*}/**"),
            ("app_profile_id", "{routing_id=**}"),
            ("app_profile_id", "profiles/{routing_id=*}"),
        ])
        var documented = Self.example
        documented.tableName = "projects/proj_foo/instances/instance_bar/tables/table_baz"
        #expect(
            readable(rule.requestParams(for: documented)) == "table_location=instances/instance_bar&routing_id=prof_qux"
        )
        // routing.proto's message verbatim (`table/`) matches neither table_location template.
        #expect(rule.requestParams(for: Self.example) == "routing_id=prof_qux")
        // A legacy profile id that is not `profiles/<id>` is sent as it is.
        var legacy = documented
        legacy.appProfileID = "legacy-profile"
        #expect(
            readable(rule.requestParams(for: legacy))
                == "table_location=instances/instance_bar&routing_id=legacy-profile"
        )
        legacy.appProfileID = ""
        legacy.tableName = "regions/r1/zones/z1/tables/t"
        #expect(readable(rule.requestParams(for: legacy)) == "table_location=regions/r1/zones/z1")
    }

    @Test("AIP-4222's own example: a subproject wins over the project, and billing_project over both")
    func aipExample() throws {
        struct CreateTopic {
            var parent = ""
            var billingProject = ""
        }
        let rule = RoutingRule<CreateTopic>([
            RoutingParameter(field: "parent", pathTemplate: try RoutingPathTemplate("{project=projects/*}/**")) {
                $0.parent
            },
            RoutingParameter(
                field: "parent",
                pathTemplate: try RoutingPathTemplate("{project=projects/*/subprojects/*}/**")
            ) { $0.parent },
            RoutingParameter(field: "billing_project", pathTemplate: try RoutingPathTemplate("{project=**}")) {
                $0.billingProject
            },
        ])
        #expect(
            readable(rule.requestParams(for: CreateTopic(parent: "projects/100/topics/foo"))) == "project=projects/100"
        )
        #expect(
            readable(rule.requestParams(for: CreateTopic(parent: "projects/100/subprojects/200/foo")))
                == "project=projects/100/subprojects/200"
        )
        #expect(
            rule.requestParams(for: CreateTopic(parent: "projects/100/subprojects/200/foo", billingProject: "billing"))
                == "project=billing"
        )
        #expect(rule.requestParams(for: CreateTopic(parent: "folders/1")) == nil)
        #expect(rule.requestParams(for: CreateTopic()) == nil)
    }

    @Test("Implicit rules (google.api.http variables): whole fields under their paths, unset ones left out")
    func implicitRule() {
        struct UpdateTopic {
            var topicName = ""
            var updateMask = ""
        }
        let rule = RoutingRule<UpdateTopic>([
            RoutingParameter(field: "topic.name") { $0.topicName },
            RoutingParameter(field: "update_mask") { $0.updateMask },
        ])
        #expect(
            rule.requestParams(for: UpdateTopic(topicName: "projects/p/topics/t"))
                == "topic.name=projects%2Fp%2Ftopics%2Ft"
        )
        #expect(rule.requestParams(for: UpdateTopic(topicName: "a", updateMask: "b")) == "topic.name=a&update_mask=b")
        #expect(rule.requestParams(for: UpdateTopic()) == nil)
        #expect(RoutingRule<UpdateTopic>([]).requestParams(for: UpdateTopic(topicName: "x")) == nil)
    }

    @Test("Keys and values are percent-encoded as RFC 6570 simple strings: all but A-Z a-z 0-9 - . _ ~, as UTF-8")
    func percentEncoding() {
        struct Request { var value = "" }
        let rule = RoutingRule<Request>([RoutingParameter(field: "name") { $0.value }])
        #expect(rule.requestParams(for: Request(value: "a-z_A.Z~09")) == "name=a-z_A.Z~09")
        #expect(rule.requestParams(for: Request(value: "a b&c=d%e+f/g")) == "name=a%20b%26c%3Dd%25e%2Bf%2Fg")
        #expect(rule.requestParams(for: Request(value: "caf\u{E9} \u{1F600}")) == "name=caf%C3%A9%20%F0%9F%98%80")
        #expect(rule.requestParams(for: Request(value: "line\nbreak\u{0}")) == "name=line%0Abreak%00")
    }

    @Test("Templates: `*` is one segment that is not empty, `**` any number (none too), literals themselves")
    func matching() throws {
        let template = try RoutingPathTemplate("projects/*/{location=locations/*}/**")
        #expect(template.key == "location")
        #expect(template.match("projects/p/locations/l") == "locations/l")
        #expect(template.match("projects/p/locations/l/") == "locations/l")
        #expect(template.match("projects/p/locations/l/a/b/c") == "locations/l")
        #expect(template.match("projects//locations/l") == nil)
        #expect(template.match("projects/p/locations/") == nil)
        #expect(template.match("projects/p/regions/l") == nil)
        #expect(template.match("project/p/locations/l") == nil)
        #expect(template.match("projects/p") == nil)
        #expect(template.match("") == nil)

        let single = try RoutingPathTemplate("{name}")
        #expect(single.key == "name")
        #expect(single.match("abc") == "abc")
        #expect(single.match("a/b") == nil)
        #expect(single.match("") == nil)

        let middle = try RoutingPathTemplate("{x=a/**/b}")
        #expect(middle.match("a/b") == "a/b")
        #expect(middle.match("a/1/2/b") == "a/1/2/b")
        #expect(middle.match("a/1/2/c") == nil)

        let rest = try RoutingPathTemplate("projects/*/{rest=**}")
        #expect(rest.match("projects/p") == "")
        #expect(rest.match("projects/p/x/y") == "x/y")

        let whole = RoutingPathTemplate.wholeValue(key: "table_name")
        #expect(whole.key == "table_name" && whole.description == "{table_name=**}")
        #expect(whole.match("any/thing//at/all") == "any/thing//at/all")
        #expect(try RoutingPathTemplate("{table_name=**}") == whole)

        #expect(try RoutingPathTemplate("v1/caf\u{E9}/{id}").match("v1/caf\u{E9}/7") == "7")
    }

    @Test(
        "Templates that are not AIP-4222's are refused with where and why",
        arguments: [
            ("", "a segment is missing at the end"),
            ("projects/*", "exactly one variable"),
            ("{a}/{b}", "exactly one variable"),
            ("/{a}", "does not start with \"/\""),
            ("{a=**}/**", "\"**\" appears more than once"),
            ("{a=b/{c}}", "cannot contain another"),
            ("{a=b", "expected \"}\""),
            ("{1a}", "expected a field name"),
            ("{a}//b", "a segment is empty"),
            ("{a}/", "a segment is missing at the end"),
            ("{a}/b*", "unexpected \"*\""),
            ("{a}/*b", "stand alone"),
            ("{a}/b c", "unexpected \" \""),
        ]
    )
    func badTemplates(template: String, problem: String) {
        #expect {
            try RoutingPathTemplate(template)
        } throws: { error in
            let text = (error as? RoutingTemplateError)?.description ?? ""
            return text.contains(problem) && text.contains("\"\(template)\"")
        }
    }
}
