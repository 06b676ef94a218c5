// The attendance logbook's contract (records), docs/protocol.md "Attendance": arrivals and
// departures, and their events.
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

public enum AttendanceEvents {
    public static let created = "attendance.created"
    public static let deleted = "attendance.deleted"
}
