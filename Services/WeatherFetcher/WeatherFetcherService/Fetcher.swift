// Fetching the conditions for a place and time: the forecast API for recent catches, the
// archive for older ones, the marine API for tide, each answer cached per rounded place
// (2 decimals, about 1 km) and hour so a second catch there and then costs no call. A
// salt-water catch within `noaaMaxKm` of a NOAA tide-prediction station takes its tide
// from that station's high/low predictions instead; any NOAA failure falls back to the
// marine API, never failing the catch on its own. Every call passes the rate limiter.
// Failures come out as `FetchFailure`.
import Contracts
import Foundation
import GRDB
import Logging
import Outbound
import Runtime
import Wire

final class Fetcher: Sendable {
    /// ERA5, behind the archive API, starts on 1940-01-01.
    static let earliest = Date(timeIntervalSince1970: TimeInterval(WireTime.days(year: 1940, month: 1, day: 1) * 86400))

    enum TideMode: Sendable {
        /// Ask the marine API (unless the catch is freshwater).
        case fetch
        /// Retries are exhausted: publish the weather alone if it is cached, without asking
        /// anyone again.
        case giveUp(reason: String)
    }

    let settings: WeatherFetcherSettings
    let http: HTTPClient
    let limiter: RateLimiter
    let cache: ProviderCache
    let noaa: NOAAClient
    let stations: TideStations
    let logger: Logger

    init(settings: WeatherFetcherSettings, cache: ProviderCache, logger: Logger) {
        self.settings = settings
        http = HTTPClient(timeout: settings.httpTimeout)
        limiter = RateLimiter(
            perMinute: settings.callsPerMinute,
            perUser: UserCallBudget(perHour: settings.userCallsPerHour, now: settings.now))
        self.cache = cache
        noaa = NOAAClient(base: settings.noaaURL, http: http, limiter: limiter)
        stations = TideStations(client: noaa, writer: cache.writer, settings: settings, logger: logger)
        self.logger = logger
    }

    /// The nearest UTC hour, in hours since 1970, half an hour going to the later one
    /// (docs/weather-buckets.md: 14:29 → 14:00, 14:30 → 15:00) before 1970 too, where
    /// rounding the quotient away from zero would go to the earlier one.
    static func nearestHour(_ date: Date) -> Int64 { CatchHour.of(date) }

    /// Checks what no provider could answer: the coordinates and the date.
    static func validate(latitude: Double, longitude: Double, at: Date) throws(FetchFailure) {
        guard (-90...90).contains(latitude), (-180...180).contains(longitude) else {
            throw .rejected(reason: "the place \(latitude), \(longitude) is not on Earth")
        }
        guard at >= earliest else {
            throw .rejected(reason: "no weather records before 1940 (the catch is from \(OpenMeteo.day(at)))")
        }
    }

    func conditions(latitude: Double, longitude: Double, at: Date, water: String?, tide mode: TideMode = .fetch)
        async throws -> Conditions
    {
        try Self.validate(latitude: latitude, longitude: longitude, at: at)
        let place = Place(latitude: latitude, longitude: longitude)
        let hour = Self.nearestHour(at) * 3600
        let weather: WeatherSlice
        let tide: TideInput
        switch mode {
        case .fetch:
            weather = try await weatherSlice(place, hour: hour, at: at)
            if water == "fresh" {
                tide = .skipped
            } else {
                let noaa = await noaaTide(place, at: at, fetch: true)
                if let reading = noaa.tide {
                    tide = .noaa(reading)
                } else {
                    var slice = try await tideSlice(place, hour: hour)
                    // both refused: the reason names NOAA's answer too
                    if let refused = slice.refused, let failure = noaa.failure { slice.refused = "\(refused); \(failure)" }
                    tide = .slice(slice)
                }
            }
        case .giveUp(let reason):
            guard let cached = try await cache.weather(place, hour: hour) else { throw FetchFailure.transient(reason) }
            weather = cached
            if water == "fresh" {
                tide = .skipped
            } else if let noaa = await noaaTide(place, at: at, fetch: false).tide {
                tide = .noaa(noaa)
            } else if let slice = try await cache.tide(place, hour: hour) {
                tide = .slice(slice)
            } else {
                tide = .failed("tide unavailable: \(reason)")
            }
        }
        var conditions = Conditions(
            weather: weather, tide: tide, latitude: place.latitude, longitude: place.longitude, at: at)
        conditions.water = water.flatMap(Water.init(rawValue:))
        return conditions
    }

    private func weatherSlice(_ place: Place, hour: Int64, at: Date) async throws -> WeatherSlice {
        if let cached = try await cache.weather(place, hour: hour) { return cached }
        let recent = at >= settings.now().addingTimeInterval(-Double(settings.recentDays) * 86400)
        let source = recent ? "forecast" : "archive"
        let series = try await get(
            base: recent ? settings.forecastURL : settings.archiveURL, place: place, hour: hour,
            variables: OpenMeteo.weatherVariables, api: source)
        let slice = WeatherSlice(source: source, hour: hour, series: series)
        guard let now = slice.at(0), !now.isEmpty else {
            // The archive lags about 5 days; values may still come.
            throw FetchFailure.transient("\(source): no weather values yet for \(WireTime.format(Date(timeIntervalSince1970: TimeInterval(hour))))")
        }
        try await cache.store(weather: slice, place, hour: hour)
        return slice
    }

    /// The tide from the NOAA station nearest to the place, if one is within `noaaMaxKm` and
    /// its predictions bracket the catch time; no tide (use the marine API) on any failure,
    /// with NOAA's own message when a station was asked and refused.
    /// - Parameter fetch: false answers from the caches only.
    private func noaaTide(_ place: Place, at: Date, fetch: Bool) async -> (tide: NOAATide?, failure: String?) {
        guard settings.noaaMaxKm > 0 else { return (nil, nil) }
        guard let list = await stations.list(fetch: fetch),
            let (station, km) = NOAA.nearest(list, latitude: place.latitude, longitude: place.longitude),
            km <= settings.noaaMaxKm
        else { return (nil, nil) }
        // The day before to the day after: the highs and lows around any time of the day.
        let from = at.addingTimeInterval(-86400)
        let to = at.addingTimeInterval(86400)
        let beginDay = NOAA.compactDay(from)
        let extremes: [TideExtreme]
        do {
            if let cached = try await cache.predictions(station: station.id, beginDay: beginDay) {
                extremes = cached
            } else {
                guard fetch else { return (nil, nil) }
                extremes = try await noaa.predictions(station: station.id, from: from, to: to)
                try await cache.store(predictions: extremes, station: station.id, beginDay: beginDay)
                logger.debug("fetched", metadata: ["http.api": "noaa", "noaa.station": "\(station.id)"])
            }
        } catch {
            logger.warning(
                "NOAA tide predictions unavailable; using Open-Meteo Marine",
                metadata: ["noaa.station": "\(station.id)", "error.detail": "\(error)"])
            return (nil, "NOAA station \(station.id): \(error)")
        }
        guard let reading = Tide.hilo(extremes, at: Int64(at.timeIntervalSince1970.rounded(.down))) else {
            logger.warning(
                "NOAA predictions do not surround the catch time; using Open-Meteo Marine",
                metadata: ["noaa.station": "\(station.id)"])
            return (nil, "NOAA station \(station.id): its predictions do not surround the catch time")
        }
        return (NOAATide(stationId: station.id, stationName: station.name, distanceKm: km, reading: reading), nil)
    }

    private func tideSlice(_ place: Place, hour: Int64) async throws -> TideSlice {
        if let cached = try await cache.tide(place, hour: hour) { return cached }
        let slice: TideSlice
        do {
            let series = try await get(
                base: settings.marineURL, place: place, hour: hour, variables: [OpenMeteo.tideVariable], api: "marine")
            // "No tide here" is an answer of nulls for the hour asked; an answer without the
            // column, with a column of another length, or without that hour is broken (it is
            // retried, never kept as "none").
            guard let column = series.values[OpenMeteo.tideVariable], column.count == series.times.count else {
                throw FetchFailure.transient("marine: malformed answer: no \(OpenMeteo.tideVariable) for every hour")
            }
            guard series.times.contains(hour) else {
                throw FetchFailure.transient(
                    "marine: malformed answer: no value for \(WireTime.format(Date(timeIntervalSince1970: TimeInterval(hour))))")
            }
            slice = TideSlice(hour: hour, series: series)
        } catch FetchFailure.rejected(let reason) {
            // The weather is still worth publishing: tide is marked unavailable with the reason.
            slice = TideSlice(refused: "marine: \(reason)")
        }
        try await cache.store(tide: slice, place, hour: hour)
        return slice
    }

    private func get(base: String, place: Place, hour: Int64, variables: [String], api: String) async throws
        -> HourlySeries
    {
        // (no earlier than the archive's first day: the first hours of 1940 have no trend)
        let start = max(Self.earliest, Date(timeIntervalSince1970: TimeInterval(hour - 3 * 3600)))
        let end = Date(timeIntervalSince1970: TimeInterval(hour + 3600))
        guard
            let url = OpenMeteo.url(
                base: base, latitude: place.latitude, longitude: place.longitude, hourly: variables, from: start, to: end)
        else { throw FetchFailure.rejected(reason: "\(api): the configured URL \"\(base)\" is not valid") }
        try await limiter.acquire()
        let response: HTTPResponse
        do {
            response = try await http.get(url)
        } catch let error as HTTPError {
            throw FetchFailure.transient("\(api): \(error)")
        }
        do throws(FetchFailure) {
            let series = try OpenMeteo.parse(response, now: settings.now())
            logger.debug("fetched", metadata: ["http.api": "\(api)", "http.status": "\(response.status)"])
            return series
        } catch {
            switch error {
            case .rateLimited(let retryAfter):
                limiter.pause(for: retryAfter ?? settings.rateLimitPause)
                throw error
            case .transient(let detail):
                throw FetchFailure.transient("\(api): \(detail)")
            case .rejected, .userBudget:
                throw error
            }
        }
    }
}

/// A place rounded to 2 decimals (about 1 km): the cache key and what the providers are asked.
struct Place: Sendable, Hashable {
    var latitudeKey: Int
    var longitudeKey: Int

    init(latitude: Double, longitude: Double) {
        latitudeKey = Int((latitude * 100).rounded(.toNearestOrAwayFromZero))
        longitudeKey = Int((longitude * 100).rounded(.toNearestOrAwayFromZero))
    }

    var latitude: Double { Double(latitudeKey) / 100 }
    var longitude: Double { Double(longitudeKey) / 100 }
}

/// Provider answers per place and hour, in the service's database so a restart keeps them.
/// Public weather for a place, not a user's data: `user.deleted` leaves it. Only an answer
/// fetched once its hour was over is kept and served: before that it is a forecast (a
/// `weather.get` for tomorrow), and a catch made in that hour later must get the weather
/// that came, not the one foretold.
struct ProviderCache: Sendable {
    let writer: any DatabaseWriter
    /// The service's clock (`WeatherFetcherSettings.now`).
    var now: @Sendable () -> Date = { Date() }

    func weather(_ place: Place, hour: Int64) async throws -> WeatherSlice? {
        try await load("weather", place, hour)
    }

    func tide(_ place: Place, hour: Int64) async throws -> TideSlice? {
        try await load("marine", place, hour)
    }

    func store(weather: WeatherSlice, _ place: Place, hour: Int64) async throws {
        try await save("weather", place, hour, weather)
    }

    func store(tide: TideSlice, _ place: Place, hour: Int64) async throws {
        try await save("marine", place, hour, tide)
    }

    /// NOAA high/low predictions of a station for the 3 days starting `beginDay` (yyyyMMdd).
    func predictions(station: String, beginDay: String) async throws -> [TideExtreme]? {
        let data = try await writer.read { db in
            try Data.fetchOne(
                db, sql: "SELECT data FROM tidePredictions WHERE station = ? AND beginDay = ?",
                arguments: [station, beginDay])
        }
        return data.flatMap { try? JSONDecoder().decode([TideExtreme].self, from: $0) }
    }

    func store(predictions: [TideExtreme], station: String, beginDay: String) async throws {
        let data = try JSONEncoder().encode(predictions)
        try await writer.write { db in
            try db.execute(
                sql: """
                    INSERT INTO tidePredictions (station, beginDay, data, fetchedAt) VALUES (?, ?, ?, ?)
                    ON CONFLICT (station, beginDay) DO UPDATE SET data = excluded.data, fetchedAt = excluded.fetchedAt
                    """,
                arguments: [station, beginDay, data, Date().timeIntervalSince1970])
        }
    }

    private func load<T: Decodable>(_ kind: String, _ place: Place, _ hour: Int64) async throws -> T? {
        let data = try await writer.read { db in
            try Data.fetchOne(
                db,
                // (an entry an older version kept while its hour was to come is not served)
                sql: """
                    SELECT data FROM providerCache
                    WHERE kind = ? AND latitudeKey = ? AND longitudeKey = ? AND hour = ? AND fetchedAt >= ? + 3600
                    """,
                arguments: [kind, place.latitudeKey, place.longitudeKey, hour, hour])
        }
        // An entry this version cannot read is treated as missing and fetched again.
        return data.flatMap { try? JSONDecoder().decode(T.self, from: $0) }
    }

    private func save(_ kind: String, _ place: Place, _ hour: Int64, _ value: some Encodable & Sendable) async throws {
        let fetchedAt = now().timeIntervalSince1970
        guard fetchedAt >= Double(hour + 3600) else { return }  // a forecast: not kept
        let data = try JSONEncoder().encode(value)
        try await writer.write { db in
            try db.execute(
                sql: """
                    INSERT INTO providerCache (kind, latitudeKey, longitudeKey, hour, data, fetchedAt)
                    VALUES (?, ?, ?, ?, ?, ?)
                    ON CONFLICT (kind, latitudeKey, longitudeKey, hour) DO UPDATE SET
                        data = excluded.data, fetchedAt = excluded.fetchedAt
                    """,
                arguments: [kind, place.latitudeKey, place.longitudeKey, hour, data, fetchedAt])
        }
    }
}
