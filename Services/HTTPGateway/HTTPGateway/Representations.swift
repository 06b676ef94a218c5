// A page as CSV or GeoJSON, for clients that ask with `Accept` (the CLI's `--csv` and map
// outputs), written with the CLI's own CSV (RFC 4180) and GeoJSON (RFC 7946) helpers
// (Services/Gateway/Gateway/Commands/Formats.swift). Columns are the items' scalar fields,
// sorted; a nested value is its JSON text. GeoJSON has one point per item with a
// latitude and longitude (items without a place are left out).
import Foundation
import Gateway
import Wire

enum Representations {
    /// The offered format the Accept header prefers over JSON, if any.
    static func negotiate(_ accept: String?, offered: [Route.Format]) -> Route.Format? {
        guard let accept, !offered.isEmpty else { return nil }
        var best: (format: Route.Format, q: Double)?
        var jsonQ = 0.0
        for part in accept.split(separator: ",") {
            let pieces = part.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard let type = pieces.first else { continue }
            let q = pieces.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            if type == "application/json" || type == "*/*" || type == "application/*" { jsonQ = max(jsonQ, q) }
            if let format = offered.first(where: { $0.rawValue == type }), q > (best?.q ?? 0) { best = (format, q) }
        }
        guard let best, best.q > 0, best.q >= jsonQ else { return nil }
        return best.format
    }

    static func csv(_ items: [JSONValue]) -> Data {
        let objects = items.compactMap(\.objectValue)
        let columns = Array(Set(objects.flatMap(\.keys))).sorted()
        let rows = objects.map { object in columns.map { CSV.cell(object[$0]) } }
        return Data(CSV.document(columns, rows).utf8)
    }

    static func geojson(_ items: [JSONValue]) -> Data {
        let features: [JSONValue] = items.compactMap { item in
            guard var object = item.objectValue, let latitude = object["latitude"]?.doubleValue,
                let longitude = object["longitude"]?.doubleValue
            else { return nil }
            object["latitude"] = nil
            object["longitude"] = nil
            return GeoJSON.point(latitude: latitude, longitude: longitude, properties: object)
        }
        return (try? WireCoding.encode(GeoJSON.collection(features))) ?? Data()
    }
}
