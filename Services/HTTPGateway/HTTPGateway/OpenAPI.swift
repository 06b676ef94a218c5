// The OpenAPI 3.1 document, generated from the route table (Routes.swift): the same data
// registers the routes, so the document cannot list a route the edge does not answer or
// miss one it does. docs/openapi.json is this document as `logbook-http --openapi` prints
// it; a test fails when the two differ.
import Foundation

public enum OpenAPI {
    /// The document as pretty-printed JSON with sorted keys (stable, diffable).
    public static func document() -> Data {
        let data = (try? JSONSerialization.data(withJSONObject: object(), options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])) ?? Data()
        return data + Data("\n".utf8)
    }

    static let errorStatuses = ["400", "401", "404", "409", "413", "415", "429"]

    public static func object() -> [String: Any] {
        var paths: [String: [String: Any]] = [:]
        for route in Routes.all {
            paths[route.path, default: [:]][route.method.rawValue.lowercased()] = operation(route)
        }
        let text: [String: Any] = ["schema": ["type": "string"]]
        paths["/healthz", default: [:]]["get"] = own("edgeHealth", "The edge is up", ["200": ["description": "up", "content": ["application/json": ["schema": ["type": "object"]]]]])
        paths["/readyz", default: [:]]["get"] = own("edgeReady", "Every service the edge calls answers", [
            "200": ["description": "every service answers", "content": ["application/json": ["schema": ref("Readiness")]]],
            "503": ["description": "a service does not answer", "content": ["application/json": ["schema": ref("Readiness")]]],
        ])
        paths["/metrics", default: [:]]["get"] = own("edgeMetrics", "Prometheus metrics of the edge and of every service", [
            "200": ["description": "Prometheus text format", "content": ["text/plain": text]]
        ])
        paths["/openapi.json", default: [:]]["get"] = own("edgeDocument", "This document", [
            "200": ["description": "OpenAPI 3.1", "content": ["application/json": ["schema": ["type": "object"]]]]
        ])
        return [
            "openapi": "3.1.0",
            "info": [
                "title": "Logbook HTTP API",
                "version": "1",
                "description": "HTTP/JSON in front of the Logbook services: every route calls one service method of docs/protocol.md, whose rules and messages apply unchanged. Errors are RFC 9457 problem documents.",
            ],
            "tags": ["auth", "fuel", "fishing", "expenses", "attendance", "time", "analytics", "store", "weather", "edge"].map { ["name": $0] },
            "paths": paths,
            "components": [
                "securitySchemes": ["bearer": ["type": "http", "scheme": "bearer", "description": "the token POST /v1/session answers"]],
                "schemas": [
                    "Problem": [
                        "type": "object",
                        "required": ["type", "title", "status", "detail", "code"],
                        "properties": [
                            "type": ["type": "string"], "title": ["type": "string"], "status": ["type": "integer"],
                            "detail": ["type": "string"], "code": ["type": "string"], "field": ["type": "string"],
                            "retryAfterMs": ["type": "integer"], "details": [:] as [String: Any],
                        ],
                    ],
                    "Readiness": [
                        "type": "object", "required": ["ready", "services"],
                        "properties": ["ready": ["type": "boolean"], "services": ["type": "object", "additionalProperties": ["type": "string"]]],
                    ],
                ],
                "responses": [
                    "Problem": [
                        "description": "an RFC 9457 problem document",
                        "content": ["application/problem+json": ["schema": ref("Problem")]],
                    ]
                ],
            ],
        ]
    }

    static func ref(_ schema: String) -> [String: Any] { ["$ref": "#/components/schemas/\(schema)"] }

    static func own(_ id: String, _ summary: String, _ responses: [String: Any]) -> [String: Any] {
        ["operationId": id, "summary": summary, "tags": ["edge"], "security": [] as [Any], "responses": responses]
    }

    static func schema(_ field: Route.Field) -> [String: Any] {
        let type = field.kind == .dateTime ? "string" : field.kind.rawValue
        var schema: [String: Any] = ["type": type]
        if field.kind == .dateTime { schema["format"] = "date-time" }
        if let values = field.values { schema["enum"] = values }
        if field.nullable {
            schema["type"] = [type, "null"]
            if let values = field.values {
                var withNull: [Any] = values
                withNull.append(NSNull())
                schema["enum"] = withNull
            }
        }
        return schema
    }

    static func operation(_ route: Route) -> [String: Any] {
        let noScopes: [Any] = []
        let security: [Any] = route.access == .user ? [["bearer": noScopes] as [String: Any]] : []
        var operation: [String: Any] = [:]
        operation["operationId"] = route.operationId
        operation["summary"] = route.summary
        operation["description"] = "Calls `\(route.wireMethod)` on the \(route.service) service (docs/protocol.md)."
        operation["tags"] = [route.tag]
        operation["security"] = security
        var parameters: [[String: Any]] = route.pathParameters.map {
            ["name": $0, "in": "path", "required": true, "schema": ["type": "string"]]
        }
        for field in route.query {
            parameters.append(["name": field.name, "in": "query", "required": field.required, "schema": schema(field)])
        }
        if route.write {
            parameters.append([
                "name": "Idempotency-Key", "in": "header", "required": false,
                "description": "the same key and body answer the first result; the same key with another body is 409",
                "schema": ["type": "string", "minLength": 1, "maxLength": 128],
            ])
        }
        if !parameters.isEmpty { operation["parameters"] = parameters }
        switch route.body {
        case .none:
            break
        case .json(let fields, let required):
            var properties: [String: Any] = [:]
            for field in fields { properties[field.name] = schema(field) }
            var body: [String: Any] = ["type": "object", "properties": properties]
            let names = fields.filter(\.required).map(\.name)
            if !names.isEmpty { body["required"] = names }
            operation["requestBody"] = ["required": required, "content": ["application/json": ["schema": body]]]
        case .photo:
            let binary: [String: Any] = ["schema": ["type": "string", "format": "binary"]]
            operation["requestBody"] = [
                "required": true,
                "content": ["image/jpeg": binary, "image/png": binary, "image/webp": binary, "image/heic": binary],
            ]
        }
        var responses: [String: Any] = [:]
        let success: [String: Any]
        switch route.answer {
        case .json:
            success = ["description": "the service's result", "content": ["application/json": ["schema": ["type": "object"]]]]
        case .page(let items):
            let page: [String: Any] = [
                "type": "object",
                "required": [items],
                "properties": [items: ["type": "array", "items": ["type": "object"]], "nextCursor": ["type": "string"]],
            ]
            var content: [String: Any] = ["application/json": ["schema": page]]
            for format in route.formats {
                content[format.rawValue] = ["schema": format == .csv ? ["type": "string"] : ["type": "object"]]
            }
            success = [
                "description": "a page; `Link: <…>; rel=\"next\"` names the next one"
                    + (route.formats.isEmpty ? "" : "; `Accept` may ask for " + route.formats.map(\.rawValue).joined(separator: " or ")),
                "headers": ["Link": ["schema": ["type": "string"]]],
                "content": content,
            ]
        case .photo:
            let binary: [String: Any] = ["schema": ["type": "string", "format": "binary"]]
            success = [
                "description": "the photo's bytes (a thumbnail is always image/jpeg)",
                "headers": ["ETag": ["schema": ["type": "string"]]],
                "content": ["image/jpeg": binary, "image/png": binary, "image/webp": binary, "image/heic": binary],
            ]
            responses["304"] = ["description": "If-None-Match matched the ETag"]
        }
        var answered = success
        if let created = route.creates {
            var links: [String: Any] = [:]
            for other in Routes.all where other.path == created || other.path.hasPrefix(created + "/") {
                links[other.operationId] = ["operationId": other.operationId, "parameters": ["id": "$response.body#/id"]]
            }
            answered["links"] = links
        }
        responses[String(route.status)] = answered
        for status in errorStatuses { responses[status] = ["$ref": "#/components/responses/Problem"] }
        responses["default"] = ["$ref": "#/components/responses/Problem"]
        operation["responses"] = responses
        return operation
    }
}
