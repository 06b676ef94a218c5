// NOAA CO-OPS (docs/external-apis.md): the tide-prediction station list (mdapi) and high/low
// predictions for one station (datagetter), the request URLs and reading the answers.
// NOAA reports its errors as `{"error":{"message":…}}` (HTTP 200 or 400); every way an answer
// can be wrong comes out as a `NOAAError`, and the caller falls back to Open-Meteo Marine.
import Foundation
import Outbound
import Runtime
import Wire

/// A tide-prediction station: what the station list says and the cache keeps.
struct TideStation: Sendable, Equatable {
    var id: String
    var name: String
    var latitude: Double
    var longitude: Double
}

/// One predicted high or low water.
struct TideExtreme: Codable, Sendable, Equatable {
    /// Unix seconds (UTC).
    var time: Int64
    /// Metres above MLLW.
    var heightM: Double
    var high: Bool
}

/// Why NOAA gave no usable answer (never retried on its own: the caller falls back).
struct NOAAError: Error, Sendable, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

enum NOAA {
    static let stationsPath = "/mdapi/prod/webapi/stations.json"
    static let predictionsPath = "/api/prod/datagetter"

    /// `base/mdapi/prod/webapi/stations.json?type=tidepredictions`
    static func stationsURL(base: String) -> URL? {
        url(base: base, path: stationsPath, query: [URLQueryItem(name: "type", value: "tidepredictions")])
    }

    /// High/low predictions in metres above MLLW, times in GMT, for whole UTC days
    /// `from…to` (both inclusive).
    static func predictionsURL(base: String, station: String, from: Date, to: Date) -> URL? {
        url(
            base: base, path: predictionsPath,
            query: [
                URLQueryItem(name: "product", value: "predictions"),
                URLQueryItem(name: "application", value: "logbook"),
                URLQueryItem(name: "begin_date", value: compactDay(from)),
                URLQueryItem(name: "end_date", value: compactDay(to)),
                URLQueryItem(name: "datum", value: "MLLW"),
                URLQueryItem(name: "station", value: station),
                URLQueryItem(name: "time_zone", value: "gmt"),
                URLQueryItem(name: "units", value: "metric"),
                URLQueryItem(name: "interval", value: "hilo"),
                URLQueryItem(name: "format", value: "json"),
            ])
    }

    private static func url(base: String, path: String, query: [URLQueryItem]) -> URL? {
        guard var components = URLComponents(string: base), components.scheme != nil else { return nil }
        var prefix = components.path
        while prefix.hasSuffix("/") { prefix.removeLast() }
        components.path = prefix + path
        components.queryItems = (components.queryItems ?? []) + query
        return components.url
    }

    /// `yyyyMMdd` in UTC.
    static func compactDay(_ date: Date) -> String {
        OpenMeteo.day(date).replacingOccurrences(of: "-", with: "")
    }

    /// The station list: `{"count":…,"stations":[{"id":"8447930","name":"Woods Hole","lat":41.5236,"lng":-70.6711,…}]}`.
    /// Entries without an id, a name or coordinates on Earth are skipped; no station at all
    /// is an error (a list that short is not a real answer).
    static func parseStations(_ response: HTTPResponse) throws(NOAAError) -> [TideStation] {
        let json = try answer(response)
        guard let entries = json["stations"]?.arrayValue else { throw NOAAError("station list: no stations array") }
        var stations: [TideStation] = []
        stations.reserveCapacity(entries.count)
        for entry in entries {
            guard let id = entry["id"]?.stringValue, !id.isEmpty,
                let latitude = number(entry["lat"]), let longitude = number(entry["lng"]),
                (-90...90).contains(latitude), (-180...180).contains(longitude)
            else { continue }
            stations.append(TideStation(id: id, name: entry["name"]?.stringValue ?? id, latitude: latitude, longitude: longitude))
        }
        guard !stations.isEmpty else { throw NOAAError("station list: no usable station") }
        return stations
    }

    /// Predictions: `{"predictions":[{"t":"2026-05-01 04:20","v":"0.633","type":"L"},…]}`
    /// (`v` is a string). Sorted by time; an empty or unreadable list is an error.
    static func parsePredictions(_ response: HTTPResponse) throws(NOAAError) -> [TideExtreme] {
        let json = try answer(response)
        guard let entries = json["predictions"]?.arrayValue, !entries.isEmpty else {
            throw NOAAError("predictions: none in the answer")
        }
        var extremes: [TideExtreme] = []
        for entry in entries {
            guard let t = entry["t"]?.stringValue, let time = parseTime(t), let height = number(entry["v"]),
                let type = entry["type"]?.stringValue, let kind = type.last, kind == "H" || kind == "L"
            else { throw NOAAError("predictions: unreadable entry \(entry.jsonText)") }
            // "H"/"L", or in tables with two tides a day "HH"/"LH" (higher/lower high) and
            // "LL"/"HL": the last letter says high or low.
            extremes.append(TideExtreme(time: time, heightM: height, high: kind == "H"))
        }
        return extremes.sorted { $0.time < $1.time }
    }

    /// The JSON of a 200 answer that is not NOAA's error object.
    private static func answer(_ response: HTTPResponse) throws(NOAAError) -> JSONValue {
        guard response.status == 200 else {
            // NOAA's 400 answers carry the same error object: keep its message
            let message = (try? JSONValue.parse(response.body))?["error"]?["message"]?.stringValue
            throw NOAAError("HTTP \(response.status)" + (message.map { ": \($0)" } ?? ""))
        }
        guard let json = try? JSONValue.parse(response.body) else {
            throw NOAAError("malformed or truncated JSON (\(response.body.count) bytes)")
        }
        if let error = json["error"] {
            throw NOAAError(error["message"]?.stringValue ?? "error \(error.jsonText)")
        }
        return json
    }

    private static func number(_ value: JSONValue?) -> Double? {
        guard let value else { return nil }
        if let number = value.doubleValue { return OpenMeteo.reading(number) }
        return value.stringValue.flatMap { Double($0.trimmingCharacters(in: .whitespaces)) }.flatMap(OpenMeteo.reading)
    }

    /// `2026-05-01 04:20` (GMT) → Unix seconds.
    static func parseTime(_ text: String) -> Int64? {
        let parts = text.split(whereSeparator: { $0 == "-" || $0 == " " || $0 == "T" || $0 == ":" })
        guard parts.count >= 5, let y = Int64(parts[0]), let m = Int64(parts[1]), let d = Int64(parts[2]),
            let h = Int64(parts[3]), let minute = Int64(parts[4]), (1...9999).contains(y), (1...12).contains(m), (1...31).contains(d),
            (0...23).contains(h), (0...59).contains(minute)
        else { return nil }
        return WireTime.days(year: y, month: m, day: d) * 86400 + h * 3600 + minute * 60
    }

    /// Great-circle distance in km (haversine, mean Earth radius 6371.0088 km).
    static func distanceKm(_ lat1: Double, _ lon1: Double, _ lat2: Double, _ lon2: Double) -> Double {
        let radians = Double.pi / 180
        let dLat = (lat2 - lat1) * radians
        let dLon = (lon2 - lon1) * radians
        let a = sin(dLat / 2) * sin(dLat / 2) + cos(lat1 * radians) * cos(lat2 * radians) * sin(dLon / 2) * sin(dLon / 2)
        return 2 * 6371.0088 * asin(min(1, sqrt(a)))
    }

    /// The station nearest to a place and its distance; nil for an empty list.
    static func nearest(_ stations: [TideStation], latitude: Double, longitude: Double) -> (TideStation, Double)? {
        var best: (TideStation, Double)?
        for station in stations {
            let km = distanceKm(latitude, longitude, station.latitude, station.longitude)
            if best.map({ km < $0.1 }) ?? true { best = (station, km) }
        }
        return best
    }
}
