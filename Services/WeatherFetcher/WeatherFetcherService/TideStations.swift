// NOAA's tide-prediction stations for the nearest-station lookup: kept in memory and in
// weather.sqlite (`tideStation`), fetched at most once per `noaaStationsMaxAge` (a day). A
// refresh runs in the task that needed it; callers arriving meanwhile wait for its result
// instead of asking NOAA again, so concurrent jobs cost one call and no task is spawned.
// A failed refresh keeps the stale list (stations do not move) and is not tried again for
// `noaaStationsRetry`; with no list at all the tide comes from Open-Meteo Marine.
import Foundation
import GRDB
import Logging
import Outbound
import Runtime

/// NOAA's two endpoints through the service's HTTP client and rate limiter.
struct NOAAClient: Sendable {
    let base: String
    let http: HTTPClient
    let limiter: RateLimiter

    func stations() async throws -> [TideStation] {
        guard let url = NOAA.stationsURL(base: base) else { throw NOAAError("the configured URL \"\(base)\" is not valid") }
        return try NOAA.parseStations(try await get(url))
    }

    func predictions(station: String, from: Date, to: Date) async throws -> [TideExtreme] {
        guard let url = NOAA.predictionsURL(base: base, station: station, from: from, to: to) else {
            throw NOAAError("the configured URL \"\(base)\" is not valid")
        }
        return try NOAA.parsePredictions(try await get(url))
    }

    private func get(_ url: URL) async throws -> HTTPResponse {
        // Counts toward the service's calls per minute like every Open-Meteo call.
        try await limiter.acquire()
        do {
            return try await http.get(url)
        } catch let error as HTTPError {
            throw NOAAError("\(error)")
        }
    }
}

actor TideStations {
    private let client: NOAAClient
    private let writer: any DatabaseWriter
    private let settings: WeatherFetcherSettings
    private let logger: Logger

    private var stations: [TideStation]?
    private var fetchedAt: Date?
    private var loadedFromDatabase = false
    private var failedAt: Date?
    private var refreshing = false
    private var waiters: [CheckedContinuation<[TideStation]?, Never>] = []

    init(client: NOAAClient, writer: any DatabaseWriter, settings: WeatherFetcherSettings, logger: Logger) {
        self.client = client
        self.writer = writer
        self.settings = settings
        self.logger = logger
    }

    /// The station list, refreshed first when it is missing or older than a day and `fetch`
    /// allows a call; nil when there is none.
    func list(fetch: Bool) async -> [TideStation]? {
        if isFresh { return stations }
        if refreshing { return await withCheckedContinuation { waiters.append($0) } }
        refreshing = true
        let result = await refresh(fetch: fetch)
        refreshing = false
        let waiting = waiters
        waiters = []
        for waiter in waiting { waiter.resume(returning: result) }
        return result
    }

    private var isFresh: Bool {
        guard stations != nil, let fetchedAt else { return false }
        return settings.now().timeIntervalSince(fetchedAt) < settings.noaaStationsMaxAge.seconds
    }

    private func refresh(fetch: Bool) async -> [TideStation]? {
        if !loadedFromDatabase {
            do {
                let (list, at) = try await writer.read { db -> ([TideStation], Double?) in
                    let rows = try Row.fetchAll(db, sql: "SELECT id, name, latitude, longitude FROM tideStation")
                    let at = try Double.fetchOne(db, sql: "SELECT fetchedAt FROM tideStationList WHERE id = 1")
                    return (
                        rows.map { TideStation(id: $0["id"], name: $0["name"], latitude: $0["latitude"], longitude: $0["longitude"]) },
                        at
                    )
                }
                loadedFromDatabase = true
                if !list.isEmpty, let at {
                    stations = list
                    fetchedAt = Date(timeIntervalSince1970: at)
                }
            } catch {
                logger.error("reading the cached tide stations failed", metadata: ["error.detail": "\(error)"])
            }
            if isFresh { return stations }
        }
        guard fetch else { return stations }
        let now = settings.now()
        if let failedAt, now.timeIntervalSince(failedAt) >= 0,
            now.timeIntervalSince(failedAt) < settings.noaaStationsRetry.seconds
        {
            return stations
        }
        do {
            // The list is nobody's (UserCallBudget): not charged to the user whose catch or
            // lookup needed it first, whose spent budget would otherwise count as NOAA failing
            // and keep everyone off NOAA until the retry.
            let list = try await UserCallBudget.$user.withValue(nil) { try await client.stations() }
            try await store(list, at: now)
            stations = list
            fetchedAt = now
            failedAt = nil
            logger.info("fetched NOAA tide stations", metadata: ["noaa.stations": "\(list.count)"])
        } catch {
            // A cancelled caller (shutdown) says nothing about NOAA: try again next time.
            if !(error is CancellationError) && !Task.isCancelled { failedAt = now }
            logger.warning(
                "NOAA station list unavailable; using Open-Meteo Marine for tide",
                metadata: ["error.detail": "\(error)", "noaa.staleStations": "\(stations?.count ?? 0)"])
        }
        return stations
    }

    private func store(_ list: [TideStation], at now: Date) async throws {
        try await writer.write { db in
            try db.execute(sql: "DELETE FROM tideStation")
            let insert = try db.cachedStatement(
                sql: "INSERT INTO tideStation (id, name, latitude, longitude) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO NOTHING")
            for station in list {
                try insert.execute(arguments: [station.id, station.name, station.latitude, station.longitude])
            }
            try db.execute(
                sql: """
                    INSERT INTO tideStationList (id, fetchedAt) VALUES (1, ?)
                    ON CONFLICT (id) DO UPDATE SET fetchedAt = excluded.fetchedAt
                    """,
                arguments: [now.timeIntervalSince1970])
        }
    }
}
