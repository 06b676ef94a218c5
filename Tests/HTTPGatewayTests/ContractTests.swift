// The edge's contract without a stack: docs/openapi.json is the document the edge serves
// and lists exactly the registered routes; wire errors map once to problem documents.
import Foundation
import Testing
import Wire

@testable import HTTPGateway

@Suite("HTTP contract")
struct ContractTests {
    static let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/openapi.json")

    @Test("docs/openapi.json is the generated document (regenerate: logbook-http --openapi > docs/openapi.json)")
    func documentIsCommitted() throws {
        let committed = try Data(contentsOf: Self.docs)
        #expect(committed == OpenAPI.document(), "docs/openapi.json is stale: run `swift run logbook-http --openapi > docs/openapi.json`")
    }

    @Test("the document's operations are exactly the registered routes, each with a unique operationId")
    func documentMatchesRoutes() throws {
        let object = try #require(JSONSerialization.jsonObject(with: Data(contentsOf: Self.docs)) as? [String: Any])
        #expect(object["openapi"] as? String == "3.1.0")
        let paths = try #require(object["paths"] as? [String: [String: Any]])
        var documented: [String] = []
        var ids: [String] = []
        for (path, operations) in paths {
            for (method, operation) in operations {
                documented.append("\(method.uppercased()) \(path)")
                ids.append(try #require((operation as? [String: Any])?["operationId"] as? String))
                // Every path parameter of the template is declared.
                let declared = ((operation as? [String: Any])?["parameters"] as? [[String: Any]] ?? []).filter { $0["in"] as? String == "path" }
                let template = path.split(separator: "/").filter { $0.hasPrefix("{") }.map { String($0.dropFirst().dropLast()) }
                #expect(Set(declared.compactMap { $0["name"] as? String }) == Set(template), "\(method) \(path)")
            }
        }
        let registered = Edge.registered.map { "\($0.method) \($0.path)" }
        #expect(Set(registered).count == registered.count, "no route registered twice")
        #expect(Set(documented) == Set(registered))
        #expect(Set(ids).count == ids.count, "operationIds are unique: \(ids.sorted())")
    }

    @Test("every wire code maps to one status and title; retryAfterMs becomes Retry-After")
    func problems() throws {
        for code in ErrorCode.all {
            let problem = Problem(ServiceError(code, "m"))
            #expect(Problem.statuses[code] != nil, "\(code)")
            #expect(problem.code == code.rawValue && problem.status >= 400)
        }
        let throttled = Problem(ServiceError(.resourceExhausted, "slow down", details: ["retryAfterMs": 1200]))
        #expect(throttled.status == 429 && throttled.retryAfterSeconds == 2)
        let invalid = Problem(ServiceError.invalid("volume", "must be greater than 0 (got -3)"))
        let json = try #require(JSONSerialization.jsonObject(with: invalid.json) as? [String: Any])
        #expect(json["status"] as? Int == 400 && json["field"] as? String == "volume" && json["title"] as? String == "Invalid argument")
        #expect(json["detail"] as? String == "volume: must be greater than 0 (got -3)")
    }

    @Test("query values go as their documented type, or as the text they are")
    func queryValues() {
        #expect(Edge.queryValue("25", .integer) == .number(25))
        #expect(Edge.queryValue("x", .integer) == .string("x"))
        #expect(Edge.queryValue("true", .boolean) == .bool(true))
        #expect(Edge.queryValue("maybe", .boolean) == .string("maybe"))
        // A number keeps its digits (no Double in between); what is not JSON's number goes as text.
        #expect(Edge.queryValue("41.123456789012345678", .number) == .number(JSONNumber(text: "41.123456789012345678")!))
        #expect(Edge.queryValue("41.123456789012345678", .number).jsonText == "41.123456789012345678")
        #expect(Edge.queryValue("0x1p3", .number) == .string("0x1p3"))
        #expect(Edge.queryValue("nan", .number) == .string("nan"))
        #expect(Edge.bearer("Bearer abc") == "abc" && Edge.bearer("bearer  abc ") == "abc")
        #expect(Edge.bearer("Basic abc") == nil && Edge.bearer("Bearer") == nil)
    }

    @Test("settings: loopback by default, LOGBOOK_HTTP_LISTEN read strictly")
    func settings() throws {
        let defaults = try EdgeSettings(configuration: .scratch("/tmp/lbh"))
        #expect(defaults.host == "127.0.0.1" && defaults.port == 8080)
        let set = try EdgeSettings(configuration: .scratch("/tmp/lbh", extra: ["LOGBOOK_HTTP_LISTEN": "[::1]:9000", "LOGBOOK_HTTP_RATE_LIMIT": "0"]))
        #expect(set.host == "::1" && set.port == 9000 && set.ratePerSecond == 0)
        #expect(throws: (any Error).self) { try EdgeSettings(configuration: .scratch("/tmp/lbh", extra: ["LOGBOOK_HTTP_LISTEN": "8080"])) }
        #expect(throws: (any Error).self) { try EdgeSettings(configuration: .scratch("/tmp/lbh", extra: ["LOGBOOK_HTTP_MAX_BODY": "-1"])) }
    }

    @Test("405: every route's path answers its own methods; another method there is not allowed; an unknown path is 404")
    func allowedMethods() {
        for route in Routes.all {
            let concrete = route.path.replacingOccurrences(of: #"\{[^}]+\}"#, with: "0190abc", options: .regularExpression)
            let allowed = AllowedMethods.methods(for: concrete) ?? []
            #expect(allowed.contains(route.method.rawValue), "\(route.method.rawValue) \(route.path): \(allowed)")
        }
        #expect(AllowedMethods.methods(for: "/v1/cars") == ["GET", "POST"])
        #expect(AllowedMethods.methods(for: "/v1/cars/x/fillups") == ["GET", "POST"])
        #expect(AllowedMethods.methods(for: "/v1/catches/bests") == ["GET"])
        #expect(AllowedMethods.methods(for: "/v1/catches/x") == ["GET", "PATCH", "DELETE"])
        #expect(AllowedMethods.methods(for: "/v1/catches/x/photo") == ["GET", "PUT", "DELETE"])
        #expect(AllowedMethods.methods(for: "/metrics") == ["GET"])
        #expect(AllowedMethods.methods(for: "/v1/nothing") == nil)
        #expect(AllowedMethods.methods(for: "/v1/cars/x/y/z") == nil)
    }

    @Test("TLS settings come in pairs; the URL says https with them")
    func tlsSettings() throws {
        let both = try EdgeSettings(configuration: .scratch("/tmp/lbh", extra: ["LOGBOOK_HTTP_TLS_CERT": "/x/cert.pem", "LOGBOOK_HTTP_TLS_KEY": "/x/key.pem"]))
        #expect(both.tlsCertificate == "/x/cert.pem" && both.tlsKey == "/x/key.pem" && both.localURL == "https://127.0.0.1:8080")
        #expect(try EdgeSettings(configuration: .scratch("/tmp/lbh")).localURL == "http://127.0.0.1:8080")
        #expect(throws: (any Error).self) { try EdgeSettings(configuration: .scratch("/tmp/lbh", extra: ["LOGBOOK_HTTP_TLS_KEY": "/x/key.pem"])) }
        #expect(throws: (any Error).self) { try both.tls() }  // the files do not exist
    }

    @Test("the rate limiter: a burst, then the wait until the next request; tokens known only once proven")
    func limiter() {
        let limiter = RateLimiter(perSecond: 1, burst: 3)
        #expect((0..<3).allSatisfy { _ in limiter.take("a") == nil })
        let wait = limiter.take("a")
        #expect(wait != nil && wait! > 0 && wait! <= 1000)
        #expect(limiter.take("b") == nil, "another key, another bucket")
        let known = KnownTokens(capacity: 2)
        known.insert("t1")
        #expect(known.contains("t1") && !known.contains("t2"))
        known.remove("t1")
        #expect(!known.contains("t1"))
        known.insert("t1"); known.insert("t2"); known.insert("t3")
        #expect(known.contains("t3") && !(known.contains("t1") && known.contains("t2")), "bounded")
    }
}
