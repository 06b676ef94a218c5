// The attendance logbook's contract: arrivals and departures (records, docs/protocol.md
// "Attendance"), their events, and the hours worked (analytics, "analytics.attendance.hours").
import Foundation
import Wire

public enum AttendanceKind: String, WireEnum { case arrival, departure }
public enum AttendanceSource: String, WireEnum { case ios, android, web, cli, company }

/// An entry as records keeps it, answers it and publishes it (`attendance.created`).
public struct AttendanceEntry: Documented, Equatable {
    public var id: String
    public var kind: AttendanceKind
    public var at: Date
    public var latitude: Double?
    public var longitude: Double?
    /// Horizontal accuracy of the location, in metres.
    public var accuracy: Double?
    public var source: AttendanceSource
    public var note: String?
    public var correction: Bool
    public var createdAt: Date

    public init(
        id: String, kind: AttendanceKind, at: Date, latitude: Double? = nil, longitude: Double? = nil,
        accuracy: Double? = nil, source: AttendanceSource, note: String? = nil, correction: Bool = false, createdAt: Date
    ) {
        self.id = id
        self.kind = kind
        self.at = at
        self.latitude = latitude
        self.longitude = longitude
        self.accuracy = accuracy
        self.source = source
        self.note = note
        self.correction = correction
        self.createdAt = createdAt
    }

    public static let sample = AttendanceEntry(
        id: "a", kind: .arrival, at: Date(timeIntervalSince1970: 0), latitude: 59.9, longitude: 10.7, accuracy: 12,
        source: .cli, note: "n", correction: false, createdAt: Date(timeIntervalSince1970: 0))
}

/// `attendance.deleted`.
public struct AttendanceDeleted: Documented, Equatable {
    public var id: String
    public var userId: String
    public var kind: AttendanceKind
    public var at: Date

    public init(id: String, userId: String, kind: AttendanceKind, at: Date) {
        self.id = id
        self.userId = userId
        self.kind = kind
        self.at = at
    }

    public static let sample = AttendanceDeleted(id: "a", userId: "u", kind: .departure, at: Date(timeIntervalSince1970: 0))
}

/// `records.attendance.add`.
public struct AttendanceAdd: Documented, Equatable {
    public var kind: AttendanceKind
    public var at: Date?
    public var latitude: Double?
    public var longitude: Double?
    public var accuracy: Double?
    public var source: AttendanceSource
    public var note: String?
    public var correction: Bool?

    public init(
        kind: AttendanceKind, at: Date? = nil, latitude: Double? = nil, longitude: Double? = nil, accuracy: Double? = nil,
        source: AttendanceSource, note: String? = nil, correction: Bool? = nil
    ) {
        self.kind = kind
        self.at = at
        self.latitude = latitude
        self.longitude = longitude
        self.accuracy = accuracy
        self.source = source
        self.note = note
        self.correction = correction
    }

    public static let sample = AttendanceAdd(
        kind: .arrival, at: Date(timeIntervalSince1970: 0), latitude: 59.9, longitude: 10.7, accuracy: 12, source: .cli,
        note: "n", correction: true)
}

/// `records.attendance.latest`: the latest entry of each kind by `at`.
public struct AttendanceLatest: Codable, Sendable, Equatable {
    public var arrival: AttendanceEntry?
    public var departure: AttendanceEntry?

    public init(arrival: AttendanceEntry?, departure: AttendanceEntry?) {
        self.arrival = arrival
        self.departure = departure
    }
}

// MARK: Hours worked (analytics)

public struct WorkedGroup: Codable, Sendable, Equatable {
    /// `2026-05-10` or `2026-W19`.
    public var key: String
    public var workedMs: Int64
    public var hours: Decimal

    public init(key: String, workedMs: Int64, hours: Decimal) {
        self.key = key
        self.workedMs = workedMs
        self.hours = hours
    }
}

/// An entry with no partner; its time is not counted.
public struct OpenEntry: Codable, Sendable, Equatable {
    public var id: String
    public var kind: AttendanceKind
    public var at: Date
    public var reason: String

    public init(id: String, kind: AttendanceKind, at: Date, reason: String) {
        self.id = id
        self.kind = kind
        self.at = at
        self.reason = reason
    }
}

public struct LatestEntry: Codable, Sendable, Equatable {
    public var id: String
    public var at: Date

    public init(id: String, at: Date) {
        self.id = id
        self.at = at
    }
}

/// `analytics.attendance.hours`.
public struct AttendanceHours: Codable, Sendable, Equatable {
    public var by: String
    public var groups: [WorkedGroup]
    public var totalMs: Int64
    public var totalHours: Decimal
    /// Entries in the range that have no partner (at most 100, newest first).
    public var open: [OpenEntry]
    public var latestArrival: LatestEntry?
    public var latestDeparture: LatestEntry?
    /// The IANA zone the days are counted in (the user's, from auth).
    public var timeZone: String

    public init(
        by: String, groups: [WorkedGroup], totalMs: Int64, totalHours: Decimal, open: [OpenEntry],
        latestArrival: LatestEntry?, latestDeparture: LatestEntry?, timeZone: String
    ) {
        self.by = by
        self.groups = groups
        self.totalMs = totalMs
        self.totalHours = totalHours
        self.open = open
        self.latestArrival = latestArrival
        self.latestDeparture = latestDeparture
        self.timeZone = timeZone
    }
}

public enum AttendanceMethods {
    public static let add = Method<AttendanceAdd, AttendanceEntry>("records.attendance.add", .write)
    public static let list = Method<ListBody, Page<AttendanceEntry>>("records.attendance.list", .read)
    public static let latest = Method<Empty, AttendanceLatest>("records.attendance.latest", .read)
    public static let delete = Method<IdBody, Deleted>("records.attendance.delete", .write)
    /// `by`: `day` (default) | `week`.
    public static let hours = Method<SummaryRequest, AttendanceHours>("analytics.attendance.hours", .read)
}

public enum AttendanceEvents {
    public static let created = "attendance.created"
    public static let deleted = "attendance.deleted"
}
