// /metrics in Prometheus's text format: the edge's own request counts, errors and latency
// histograms per route (swift-prometheus), then each service's `$srv.stats` gathered over
// ZeroMQ at scrape time (docs/protocol.md, "Reserved methods").
import Foundation
import Prometheus
import Runtime
import Wire

public final class EdgeMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    static let buckets: [Duration] = [
        .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
        .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500), .seconds(5), .seconds(10),
    ]

    public init() {}

    func record(route: String, method: String, status: Int, duration: Duration) {
        let labels = [("route", route), ("method", method)]
        registry.makeCounter(
            descriptor: MetricNameDescriptor(
                metricName: "logbook_http_requests", unitName: "total", helpText: "HTTP requests answered, by route, method and status"),
            labels: labels + [("status", String(status))]
        ).increment()
        if status >= 400 {
            registry.makeCounter(
                descriptor: MetricNameDescriptor(
                    metricName: "logbook_http_errors", unitName: "total", helpText: "HTTP requests answered with a 4xx or 5xx status"),
                labels: labels + [("class", status >= 500 ? "5xx" : "4xx")]
            ).increment()
        }
        registry.makeDurationHistogram(
            descriptor: MetricNameDescriptor(
                metricName: "logbook_http_request_duration", unitName: "seconds", helpText: "Time to answer an HTTP request"),
            labels: labels, buckets: Self.buckets
        ).record(duration)
    }

    /// The edge's metrics, then every service's.
    public func exposition(calls: ServiceCalls) async -> String {
        var text = registry.emitToString()
        text += await Self.serviceStats(calls: calls)
        return text
    }

    static func serviceStats(calls: ServiceCalls) async -> String {
        // (with records shards, each shard: `records`, `records-2`, …)
        let services = calls.configuration.instances
        let stats = await withTaskGroup(of: (String, JSONValue?).self) { group in
            for service in services {
                group.addTask { (service, try? await calls.reserved(service, "$srv.stats", timeout: .seconds(1))) }
            }
            var stats: [String: JSONValue?] = [:]
            for await (service, value) in group { stats[service] = value }
            return stats
        }
        var families: [(name: String, type: String, help: String, lines: [String])] = [
            ("logbook_service_up", "gauge", "1 when the service answered $srv.stats", []),
            ("logbook_service_requests_total", "counter", "Requests the service answered since it started", []),
            ("logbook_service_errors_total", "counter", "Requests the service answered with an error", []),
            ("logbook_service_method_requests_total", "counter", "Requests per method", []),
            ("logbook_service_method_errors_total", "counter", "Errors per method", []),
            ("logbook_service_method_seconds_total", "counter", "Time spent per method", []),
            ("logbook_service_method_max_seconds", "gauge", "Longest request per method", []),
            ("logbook_service_consumer_behind_events", "gauge", "Events a consumer has yet to apply", []),
            ("logbook_service_consumer_position", "gauge", "The last event sequence a consumer applied", []),
        ]
        func add(_ index: Int, _ labels: [(String, String)], _ value: Double) {
            let rendered = labels.map { "\($0.0)=\"\(escape($0.1))\"" }.joined(separator: ",")
            families[index].lines.append("\(families[index].name){\(rendered)} \(format(value))")
        }
        for service in services {
            guard let value = stats[service] ?? nil else {
                add(0, [("service", service)], 0)
                continue
            }
            add(0, [("service", service)], 1)
            if let n = value["requests"]?.doubleValue { add(1, [("service", service)], n) }
            if let n = value["errors"]?.doubleValue { add(2, [("service", service)], n) }
            for (method, figures) in (value["methods"]?.objectValue ?? [:]).sorted(by: { $0.key < $1.key }) {
                let labels = [("service", service), ("method", method)]
                if let n = figures["requests"]?.doubleValue { add(3, labels, n) }
                if let n = figures["errors"]?.doubleValue { add(4, labels, n) }
                if let n = figures["totalMs"]?.doubleValue { add(5, labels, n / 1000) }
                if let n = figures["maxMs"]?.doubleValue { add(6, labels, n / 1000) }
            }
            for consumer in value["consumers"]?.arrayValue ?? [] {
                let labels = [("service", service), ("producer", consumer["producer"]?.stringValue ?? "?")]
                if let n = consumer["behindEvents"]?.doubleValue { add(7, labels, n) }
                if let n = consumer["position"]?.doubleValue { add(8, labels, n) }
            }
        }
        var text = ""
        for family in families where !family.lines.isEmpty {
            text += "# HELP \(family.name) \(family.help)\n# TYPE \(family.name) \(family.type)\n"
            text += family.lines.joined(separator: "\n") + "\n"
        }
        return text
    }

    static func escape(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }

    static func format(_ value: Double) -> String {
        value.rounded() == value && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}
