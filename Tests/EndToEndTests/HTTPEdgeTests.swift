// The HTTP edge against a real stack through a real HTTP client: the README's session
// (register, log in, a car and fill-ups, paging by Link, fuel figures, a catch and its
// photo with ETag), idempotency, problem documents, and every user route refusing a
// missing or forged token.
import Foundation
import HTTPGateway
import Imaging
import ImagingFixtures
import Testing

@Suite("HTTP edge", .serialized)
struct HTTPEdgeTests {
    @Test("a session: register, log in, car, fill-ups paged by Link, fuel figures, logout")
    func session() async throws {
        try await withStack { stack in
            let up = try await stack.logbook("stack", "up")
            try #require(up.status == 0, "\(up.stderr)")
            let client = try await stack.edge()
            let token = try await stack.httpUser(client, "hanna")

            let me = try await client.send("GET", "/v1/me", token: token)
            #expect(me.status == 200 && me.json["username"] as? String == "hanna")

            let car = try await client.send("POST", "/v1/cars", json: ["nickname": "Civic", "distanceUnit": "km", "volumeUnit": "l"], token: token)
            #expect(car.status == 201, "\(car.text)")
            let carId = try #require(car.json["id"] as? String)
            for (day, odometer) in [("2026-05-01", 1000), ("2026-05-08", 1500), ("2026-05-15", 2000)] {
                let fillup = try await client.send(
                    "POST", "/v1/cars/\(carId)/fillups",
                    json: ["date": "\(day)T10:00:00Z", "odometer": odometer, "volume": 35.125, "totalMinor": 6000], token: token)
                #expect(fillup.status == 201, "\(fillup.text)")
                #expect(fillup.json["volume"] as? Double == 35.125, "quantities stay exact through the edge")
            }
            // Paging: two pages of two and one, the next one named by Link.
            let first = try await client.send("GET", "/v1/cars/\(carId)/fillups?limit=2", token: token)
            #expect(first.status == 200)
            #expect((first.json["items"] as? [Any])?.count == 2)
            let link = try #require(first.header("Link"), "a first page of a longer list names the next one")
            #expect(link.hasSuffix("; rel=\"next\""))
            let next = String(link.dropFirst().prefix { $0 != ">" })
            #expect(next.contains("limit=2") && next.contains("cursor="))
            let second = try await client.send("GET", next, token: token)
            #expect((second.json["items"] as? [Any])?.count == 1)
            #expect(second.header("Link") == nil, "the last page names no next one")

            // Fuel figures from analytics (a projection: it catches up within moments).
            var stats = HTTPAnswer(status: 0, headers: [:], body: Data())
            let counted = try await stack.eventually {
                stats = try await client.send("GET", "/v1/analytics/fuel?car=\(carId)", token: token)
                return stats.status == 200 && stats.json["fills"] as? Int == 3
            }
            #expect(counted, "fuel stats over HTTP: \(stats.status) \(stats.text)")
            // 500 km on 35.125 l twice: 7.03 l/100 km.
            #expect(stats.json["average"] as? Double == 7.03 && stats.json["units"] as? String == "l_per_100km", "\(stats.text)")

            // Errors are problem documents mapped from the wire codes.
            let invalid = try await client.send("POST", "/v1/cars/\(carId)/fillups", json: ["odometer": 2500, "volume": -3, "totalMinor": 100], token: token)
            #expect(invalid.status == 400)
            #expect(invalid.header("Content-Type") == "application/problem+json")
            #expect(invalid.json["field"] as? String == "volume" && invalid.json["code"] as? String == "invalid_argument")
            #expect((invalid.json["detail"] as? String)?.contains("volume") == true)
            let missing = try await client.send("GET", "/v1/cars/0190aaaaaaaaaaaaaaaaaaaaaa", token: token)
            #expect(missing.status == 404 && missing.json["code"] as? String == "not_found")
            let noRoute = try await client.send("GET", "/v1/nothing-here", token: token)
            #expect(noRoute.status == 404 && noRoute.header("Content-Type") == "application/problem+json")
            // A path the edge answers, with a method it does not answer there: 405 with Allow.
            for (method, path, allow) in [
                ("PATCH", "/v1/cars", "GET, POST"), ("PUT", "/v1/cars/\(carId)/fillups", "GET, POST"),
                ("POST", "/v1/catches/bests", "GET"), ("DELETE", "/healthz", "GET"),
                ("POST", "/v1/cars/\(carId)", "GET, PATCH, DELETE"),
            ] {
                let wrong = try await client.send(method, path, token: token)
                #expect(wrong.status == 405, "\(method) \(path): \(wrong.status) \(wrong.text)")
                #expect(wrong.header("Allow") == allow, "\(method) \(path): \(wrong.header("Allow") ?? "no Allow")")
                #expect(wrong.header("Content-Type") == "application/problem+json" && wrong.json["code"] as? String == "method_not_allowed")
            }

            // Health, readiness and metrics: the edge's own counts, latencies and errors per
            // route, and every service's $srv.stats gathered over ZeroMQ.
            let ready = try await client.send("GET", "/readyz")
            #expect(ready.status == 200 && ready.json["ready"] as? Bool == true, "\(ready.text)")
            let metrics = try await client.send("GET", "/metrics")
            #expect(metrics.status == 200 && metrics.header("Content-Type")?.hasPrefix("text/plain") == true)
            let text = metrics.text
            #expect(text.contains(#"logbook_http_requests_total{route="/v1/cars/{id}/fillups",method="POST",status="201"} 3"#), "\(text.prefix(3000))")
            #expect(text.contains(#"logbook_http_errors_total{route="/v1/cars/{id}/fillups",method="POST",class="4xx"} 1"#))
            #expect(text.contains(#"logbook_http_request_duration_seconds_bucket{route="/v1/cars",method="POST",le="+Inf"} 1"#))
            // requests no route took are counted under one label, the 405s among them
            #expect(text.contains(#"logbook_http_requests_total{route="(unmatched)",method="PATCH",status="405"} 1"#), "\(text.prefix(3000))")
            for service in ["auth", "records", "weather-fetcher", "analytics", "store"] {
                #expect(text.contains("logbook_service_up{service=\"\(service)\"} 1"), "\(service) stats")
            }
            #expect(text.contains(#"logbook_service_method_requests_total{service="records",method="records.fillup.add"} 4"#), "\(text.suffix(4000))")

            // The edge carries a number's digits, not its nearest Double: a volume of 35 and a
            // 10^-20th is refused for its decimals, never rounded into an accepted 35.
            let digits = Data(#"{"odometer": 2500, "volume": 35.00000000000000000001, "totalMinor": 100}"#.utf8)
            let precise = try await client.send(
                "POST", "/v1/cars/\(carId)/fillups", body: digits, token: token, headers: ["Content-Type": "application/json"])
            #expect(precise.status == 400 && precise.json["field"] as? String == "volume", "\(precise.text)")
            #expect((precise.json["detail"] as? String)?.contains("at most 3 decimals (got 35.00000000000000000001)") == true, "\(precise.text)")

            // Logout revokes the token.
            let out = try await client.send("DELETE", "/v1/session", token: token)
            #expect(out.status == 200, "\(out.text)")
            let after = try await client.send("GET", "/v1/me", token: token)
            #expect(after.status == 401 && after.header("WWW-Authenticate") == "Bearer")
        }
    }

    @Test("Idempotency-Key: the same key and body answer the first result; another body is 409")
    func idempotency() async throws {
        try await withStack { stack in
            let up = try await stack.logbook("stack", "up")
            try #require(up.status == 0, "\(up.stderr)")
            let client = try await stack.edge()
            let token = try await stack.httpUser(client, "ines")
            let body: [String: Any] = ["name": "Coffee", "amountMinor": 999_999_999_999_993 as Int64, "currency": "EUR"]
            let key = ["Idempotency-Key": "expense-1"]
            let first = try await client.send("POST", "/v1/expenses", json: body, token: token, headers: key)
            let again = try await client.send("POST", "/v1/expenses", json: body, token: token, headers: key)
            #expect(first.status == 201 && again.status == 201, "\(first.text) \(again.text)")
            #expect(first.json["id"] as? String == again.json["id"] as? String)
            #expect(first.text.contains("999999999999993"), "an amount is passed digit for digit: \(first.text)")
            let list = try await client.send("GET", "/v1/expenses", token: token)
            #expect((list.json["items"] as? [Any])?.count == 1, "written once")
            // The CLI's CSV, by content negotiation.
            let csv = try await client.send("GET", "/v1/expenses", token: token, headers: ["Accept": "text/csv"])
            #expect(csv.status == 200 && csv.header("Content-Type") == "text/csv; charset=utf-8")
            let lines = csv.text.components(separatedBy: "\r\n")
            #expect(lines.first?.split(separator: ",").contains("amountMinor") == true, "\(csv.text)")
            #expect(lines.count == 3 && lines[1].contains("Coffee") && lines[1].contains("999999999999993"), "\(csv.text)")
            let other = try await client.send("POST", "/v1/expenses", json: ["name": "Tea", "amountMinor": 300], token: token, headers: key)
            #expect(other.status == 409 && other.json["field"] as? String == "idempotencyKey", "\(other.text)")
            let csvLike = try await client.send("POST", "/v1/expenses", body: Data("name=Tea".utf8), token: token, headers: ["Content-Type": "text/plain"])
            #expect(csvLike.status == 415, "a JSON route refuses another media type")
            let broken = try await client.send("POST", "/v1/expenses", body: Data("{\"name\":".utf8), token: token, headers: ["Content-Type": "application/json"])
            #expect(broken.status == 400 && broken.json["code"] as? String == "invalid_argument")
            // Broken text says it is not JSON, and why; JSON that is not an object says that.
            #expect((broken.json["detail"] as? String)?.hasPrefix("body: not valid JSON") == true, "\(broken.text)")
            let array = try await client.send("POST", "/v1/expenses", body: Data("[1]".utf8), token: token, headers: ["Content-Type": "application/json"])
            #expect(array.status == 400 && array.json["detail"] as? String == "body: must be a JSON object", "\(array.text)")
            // A number whose exponent is Int.min (it once stopped every service: JSONNumber.swift).
            let edge = try await client.send(
                "POST", "/v1/expenses", body: Data(#"{"name":"x","amountMinor":1e-9223372036854775808}"#.utf8), token: token,
                headers: ["Content-Type": "application/json"])
            #expect(edge.status == 400 && edge.json["code"] as? String == "invalid_argument", "\(edge.text)")
        }
    }

    @Test("a catch's photo: uploaded as the body, downloaded byte for byte, ETag and If-None-Match")
    func photo() async throws {
        try await withStack { stack in
            let up = try await stack.logbook("stack", "up")
            try #require(up.status == 0, "\(up.stderr)")
            let client = try await stack.edge()
            let token = try await stack.httpUser(client, "jonas")
            let created = try await client.send(
                "POST", "/v1/catches",
                json: ["species": "Pike", "weight": 4.2, "weightUnit": "kg", "bait": "spoon", "water": "fresh", "latitude": 59.3, "longitude": 18.1],
                token: token)
            #expect(created.status == 201, "\(created.text)")
            let id = try #require(created.json["id"] as? String)
            // The catch map as GeoJSON, by content negotiation: [longitude, latitude].
            let map = try await client.send("GET", "/v1/catches", token: token, headers: ["Accept": "application/geo+json"])
            #expect(map.status == 200 && map.header("Content-Type") == "application/geo+json")
            let features = try #require(map.json["features"] as? [[String: Any]])
            #expect(map.json["type"] as? String == "FeatureCollection" && features.count == 1)
            #expect((features.first?["geometry"] as? [String: Any])?["coordinates"] as? [Double] == [18.1, 59.3])
            #expect((features.first?["properties"] as? [String: Any])?["species"] as? String == "Pike")
            let plain = try await client.send("GET", "/v1/catches", token: token, headers: ["Accept": "application/json, text/csv;q=0.5"])
            #expect(plain.header("Content-Type") == "application/json", "JSON when it is preferred")
            let jpeg = try await Imaging.run { () throws(ImagingError) in try Imaging.testImage(width: 600, height: 400) }
            let wrongType = try await client.send("PUT", "/v1/catches/\(id)/photo", body: jpeg, token: token, headers: ["Content-Type": "application/json"])
            #expect(wrongType.status == 415)
            let put = try await client.send("PUT", "/v1/catches/\(id)/photo", body: jpeg, token: token, headers: ["Content-Type": "image/jpeg"])
            #expect(put.status == 200, "\(put.text)")
            let got = try await client.send("GET", "/v1/catches/\(id)/photo", token: token)
            #expect(got.status == 200 && got.body == jpeg, "the original, byte for byte")
            #expect(got.header("Content-Type") == "image/jpeg")
            let tag = try #require(got.header("ETag"))
            let same = try await client.send("GET", "/v1/catches/\(id)/photo", token: token, headers: ["If-None-Match": tag])
            #expect(same.status == 304 && same.body.isEmpty)
            let thumb = try await client.send("GET", "/v1/catches/\(id)/photo?thumbnail=true", token: token)
            #expect(thumb.status == 200 && thumb.header("ETag") != tag)
            let header = try Imaging.header(of: thumb.body)
            #expect(header.width == 256 && header.format == .jpeg)
            let removed = try await client.send("DELETE", "/v1/catches/\(id)/photo", token: token)
            #expect(removed.status == 200)
            let gone = try await client.send("GET", "/v1/catches/\(id)/photo", token: token)
            #expect(gone.status == 404)
        }
    }

    @Test("every user route answers 401 to a missing or forged token; the document lists exactly the routes")
    func everyRouteNeedsAToken() async throws {
        try await withStack { stack in
            let up = try await stack.logbook("stack", "up")
            try #require(up.status == 0, "\(up.stderr)")
            let client = try await stack.edge()
            // The live document is the one in docs/ and names exactly the registered routes.
            let served = try await client.send("GET", "/openapi.json")
            #expect(served.status == 200 && served.body == OpenAPI.document())
            let paths = try #require(served.json["paths"] as? [String: [String: Any]])
            let documented = Set(paths.flatMap { path, operations in operations.keys.map { "\($0.uppercased()) \(path)" } })
            #expect(documented == Set(Edge.registered.map { "\($0.method) \($0.path)" }))
            for route in Routes.all where route.access == .user {
                let path = route.path.replacingOccurrences(of: "{id}", with: "0190aaaaaaaaaaaaaaaaaaaaaa")
                var headers: [String: String] = [:]
                var body: Data?
                switch route.body {
                case .none: break
                case .json:
                    body = Data("{}".utf8)
                    headers["Content-Type"] = "application/json"
                case .photo:
                    body = Data([0xFF, 0xD8, 0xFF])
                    headers["Content-Type"] = "image/jpeg"
                }
                for token in [nil, "lbk_forged0000000000000000000000"] {
                    let answer = try await client.send(route.method.rawValue, path, body: body, token: token, headers: headers)
                    #expect(answer.status == 401, "\(route.method.rawValue) \(route.path) with token \(token ?? "none"): \(answer.status) \(answer.text)")
                    #expect(answer.header("Content-Type") == "application/problem+json")
                }
            }
            // And a route exists for every documented operation (none answers "no route").
            for (method, path) in Edge.registered {
                let answer = try await client.send(method, path.replacingOccurrences(of: "{id}", with: "x"))
                #expect(answer.status != 404 || answer.json["code"] as? String == "not_found" && !(answer.json["detail"] as? String ?? "").hasPrefix("no route"),
                        "\(method) \(path): \(answer.status) \(answer.text)")
            }
        }
    }
}
