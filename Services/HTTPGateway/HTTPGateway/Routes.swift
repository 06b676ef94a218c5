// The HTTP contract as data: every route names the service method it calls, where each
// wire field comes from (path, query, JSON body, raw photo body) and what it answers. The
// router (Edge.swift) registers exactly these routes and the OpenAPI document
// (OpenAPI.swift) is generated from them, so the two cannot drift apart. No rule of any
// service is restated here: values go to the service as they came, the service validates.
import Contracts
import Foundation
import Wire

public struct Route: Sendable {
    public enum Method: String, Sendable, CaseIterable {
        case get = "GET", post = "POST", put = "PUT", patch = "PATCH", delete = "DELETE"
    }

    public enum Access: Sendable { case anonymous, user }

    public enum Format: String, Sendable {
        case csv = "text/csv"
        case geojson = "application/geo+json"
    }

    /// What the request body is.
    public enum Body: Sendable {
        case none
        /// A JSON object whose members become wire body fields.
        case json([Field], required: Bool = true)
        /// The raw image bytes, sent to the service base64-encoded in `field`.
        case photo(field: String)
    }

    /// What a successful answer is.
    public enum Answer: Sendable {
        /// The service's result as JSON.
        case json
        /// A list page `{<items>: [...], nextCursor?}` (the list's key is `items` but for
        /// the store's ledger, `entries`), with a `Link: rel="next"` header.
        case page(items: String = "items")
        /// A photo `{contentType, data, hash}`: the bytes, with an ETag.
        case photo
    }

    /// A value the request carries: its HTTP name, its wire field, its JSON type.
    public struct Field: Sendable {
        public enum Kind: String, Sendable { case string, integer, number, boolean, dateTime, object, array }
        public var name: String
        public var wire: String
        public var kind: Kind
        public var required: Bool
        public var values: [String]?
        public var nullable: Bool

        public init(_ name: String, _ kind: Kind = .string, wire: String? = nil, required: Bool = false, values: [String]? = nil, nullable: Bool = false) {
            self.name = name
            self.wire = wire ?? name
            self.kind = kind
            self.required = required
            self.values = values
            self.nullable = nullable
        }
    }

    public var method: Method
    /// `/v1/cars/{id}`: `{name}` segments are path parameters.
    public var path: String
    public var service: String
    public var wireMethod: String
    public var summary: String
    public var tag: String
    public var access: Access = .user
    /// A write: takes `Idempotency-Key`.
    public var write: Bool
    /// Path parameter → wire field.
    public var pathFields: [String: String] = [:]
    public var query: [Field] = []
    public var body: Body = .none
    public var answer: Answer = .json
    public var status: Int = 200
    /// Other representations of a page the client may ask for with `Accept` (the CLI's
    /// `--csv` and `map` formats).
    public var formats: [Format] = []
    /// For a create: the path of what it made (`/v1/cars/{id}`), whose `{id}` is the
    /// result's `id` (the document's links, which clients and Schemathesis follow).
    public var creates: String?
    /// Wire fields sent as `null` (removing a photo is an update with `photo: null`).
    public var clears: [String] = []

    /// `GET /v1/cars/{id}` → `getCarsId`-style ids are unstable; the wire method is unique
    /// enough together with the verb.
    public var operationId: String {
        let words = wireMethod.replacingOccurrences(of: "$", with: "").split(whereSeparator: { $0 == "." || $0 == "-" })
        let camel = words.enumerated().map { $0.offset == 0 ? String($0.element) : $0.element.prefix(1).uppercased() + $0.element.dropFirst() }.joined()
        switch (method, answer) {
        case (.put, .json) where wireMethod == "records.catch.update": return "recordsCatchPhotoPut"
        case (.delete, _) where wireMethod == "records.catch.update": return "recordsCatchPhotoDelete"
        default: return camel
        }
    }

    /// The path's parameter names, in order.
    public var pathParameters: [String] {
        path.split(separator: "/").compactMap { $0.hasPrefix("{") ? String($0.dropFirst().dropLast()) : nil }
    }
}

extension Route {
    static func read(_ path: String, _ service: String, _ wire: String, _ summary: String, tag: String, id: String? = nil, query: [Field] = [], answer: Answer = .json) -> Route {
        Route(method: .get, path: path, service: service, wireMethod: wire, summary: summary, tag: tag, write: false,
              pathFields: id.map { ["id": $0] } ?? [:], query: query, answer: answer)
    }

    static func write(_ method: Method, _ path: String, _ service: String, _ wire: String, _ summary: String, tag: String, id: String? = nil, body: [Field] = [], bodyRequired: Bool = true, status: Int = 200) -> Route {
        Route(method: method, path: path, service: service, wireMethod: wire, summary: summary, tag: tag, write: true,
              pathFields: id.map { ["id": $0] } ?? [:], body: body.isEmpty && !bodyRequired ? .none : .json(body, required: bodyRequired), status: status)
    }
}

/// Paging query parameters every list takes.
private let paging: [Route.Field] = [.init("cursor"), .init("limit", .integer)]
private let range: [Route.Field] = [.init("from"), .init("to")]

private let vehicleFields: [Route.Field] = [
    .init("nickname"), .init("make", nullable: true), .init("model", nullable: true), .init("year", .integer, nullable: true),
    .init("distanceUnit", values: DistanceUnit.allCases.map(\.rawValue)),
    .init("volumeUnit", values: VolumeUnit.allCases.map(\.rawValue)),
]
private let fillupFields: [Route.Field] = [
    .init("date", .dateTime), .init("odometer", .number, nullable: true), .init("trip", .number, nullable: true),
    .init("volume", .number), .init("pricePerUnitMinor", .number), .init("totalMinor", .integer), .init("currency"),
    .init("full", .boolean), .init("missed", .boolean), .init("note", nullable: true),
]
private let catchFields: [Route.Field] = [
    .init("species"), .init("weight", .number), .init("weightUnit", values: ["kg", "lb"]), .init("length", .number, nullable: true),
    .init("lengthUnit", values: ["cm", "in"], nullable: true), .init("bait"), .init("water", values: ["fresh", "salt"]),
    .init("latitude", .number), .init("longitude", .number), .init("caughtAt", .dateTime), .init("note", nullable: true),
    .init("released", .boolean), .init("photo", nullable: true),
]
private let expenseFields: [Route.Field] = [
    .init("name"), .init("description", nullable: true), .init("amountMinor", .integer), .init("currency"),
    .init("date", .dateTime), .init("category", nullable: true),
]

private func required(_ fields: [Route.Field], _ names: Set<String>) -> [Route.Field] {
    fields.map { var f = $0; if names.contains(f.name) { f.required = true; f.nullable = false }; return f }
}
private func notNull(_ fields: [Route.Field]) -> [Route.Field] {
    fields.map { var f = $0; f.nullable = false; return f }
}

public enum Routes {
    /// Every route of the edge, in document order. The health, metrics and document routes
    /// are the edge's own (Edge.swift) and listed in `Routes.own`.
    public static let all: [Route] = auth + fuel + catches + expenses + attendance + activities + analytics + store + weather

    static let auth: [Route] = [
        .write(.post, "/v1/users", "auth", "auth.register", "Register an account", tag: "auth",
               body: [.init("username", required: true), .init("password", required: true), .init("email"), .init("timeZone")], status: 201)
            .anonymous,
        Route(method: .post, path: "/v1/session", service: "auth", wireMethod: "auth.login", summary: "Log in: answers the bearer token",
              tag: "auth", access: .anonymous, write: false,
              body: .json([.init("username", required: true), .init("password", required: true), .init("deviceToken")]), status: 201),
        .write(.delete, "/v1/session", "auth", "auth.logout", "Log out: the token stops working", tag: "auth", bodyRequired: false),
        .read("/v1/me", "auth", "auth.whoami", "Who the token belongs to", tag: "auth"),
        .write(.put, "/v1/me/password", "auth", "auth.password.change", "Change the password", tag: "auth",
               body: [.init("currentPassword", required: true), .init("newPassword", required: true)]),
        .write(.patch, "/v1/me/settings", "auth", "auth.settings.update", "Change the account's time zone", tag: "auth",
               body: [.init("timeZone", required: true)]),
        .write(.delete, "/v1/me", "auth", "auth.account.delete", "Delete the account and all its data", tag: "auth",
               body: [.init("password", required: true)]),
    ]

    static let fuel: [Route] = [
        .write(.post, "/v1/cars", "records", "records.vehicle.add", "Add a car", tag: "fuel",
               body: required(notNull(vehicleFields), ["nickname"]), status: 201).creating("/v1/cars/{id}"),
        .read("/v1/cars", "records", "records.vehicle.list", "List cars, newest first", tag: "fuel", query: paging, answer: .page()),
        .read("/v1/cars/{id}", "records", "records.vehicle.get", "A car", tag: "fuel", id: "id"),
        .write(.patch, "/v1/cars/{id}", "records", "records.vehicle.update", "Change a car", tag: "fuel", id: "id", body: vehicleFields),
        .write(.delete, "/v1/cars/{id}", "records", "records.vehicle.delete", "Delete a car and its fill-ups", tag: "fuel", id: "id", bodyRequired: false),
        .write(.post, "/v1/cars/{id}/fillups", "records", "records.fillup.add", "Add a fill-up", tag: "fuel", id: "vehicleId",
               body: required(notNull(fillupFields), ["volume"]), status: 201).creating("/v1/fillups/{id}"),
        .read("/v1/cars/{id}/fillups", "records", "records.fillup.list", "A car's fill-ups, newest first", tag: "fuel", id: "vehicleId",
              query: paging, answer: .page()).offering(.csv),
        .read("/v1/fillups/{id}", "records", "records.fillup.get", "A fill-up", tag: "fuel", id: "id"),
        .write(.patch, "/v1/fillups/{id}", "records", "records.fillup.update", "Change a fill-up", tag: "fuel", id: "id", body: fillupFields),
        .write(.delete, "/v1/fillups/{id}", "records", "records.fillup.delete", "Delete a fill-up", tag: "fuel", id: "id", bodyRequired: false),
    ]

    static let catches: [Route] = [
        .write(.post, "/v1/catches", "records", "records.catch.add", "Log a catch (photo: base64, or PUT it afterwards)", tag: "fishing",
               body: required(notNull(catchFields), ["species", "weight", "weightUnit", "bait", "water", "latitude", "longitude"]), status: 201)
            .creating("/v1/catches/{id}"),
        .read("/v1/catches", "records", "records.catch.list", "List catches", tag: "fishing",
              query: [.init("water", values: ["fresh", "salt"]), .init("sort", values: ["date", "weight", "species"])] + paging, answer: .page()).offering(.csv, .geojson),
        .read("/v1/catches/bests", "records", "records.catch.bests", "The heaviest catch of each species", tag: "fishing",
              query: [.init("water", values: ["fresh", "salt"])]),
        .read("/v1/catches/{id}", "records", "records.catch.get", "A catch", tag: "fishing", id: "id"),
        .write(.patch, "/v1/catches/{id}", "records", "records.catch.update", "Change a catch", tag: "fishing", id: "id", body: catchFields),
        .write(.delete, "/v1/catches/{id}", "records", "records.catch.delete", "Delete a catch", tag: "fishing", id: "id", bodyRequired: false),
        Route(method: .put, path: "/v1/catches/{id}/photo", service: "records", wireMethod: "records.catch.update",
              summary: "Set a catch's photo: the image bytes as the body, with their media type", tag: "fishing", write: true,
              pathFields: ["id": "id"], body: .photo(field: "photo")),
        Route(method: .delete, path: "/v1/catches/{id}/photo", service: "records", wireMethod: "records.catch.update",
              summary: "Remove a catch's photo", tag: "fishing", write: true, pathFields: ["id": "id"], clears: ["photo"]),
        .read("/v1/catches/{id}/photo", "records", "records.catch.photo.get", "A catch's photo (or its thumbnail): the bytes, with an ETag",
              tag: "fishing", id: "id", query: [.init("thumbnail", .boolean)], answer: .photo),
        .read("/v1/catches/{id}/conditions", "weather-fetcher", "weather.conditions.get", "The weather and tide of a catch",
              tag: "fishing", id: "catchId"),
    ]

    static let expenses: [Route] = [
        .write(.post, "/v1/expenses", "records", "records.expense.add", "Add an expense", tag: "expenses",
               body: required(notNull(expenseFields), ["name", "amountMinor"]), status: 201).creating("/v1/expenses/{id}"),
        .read("/v1/expenses", "records", "records.expense.list", "List expenses", tag: "expenses",
              query: range + [.init("category"), .init("sort", values: ExpenseSort.allCases.map(\.rawValue))] + paging, answer: .page()).offering(.csv),
        .read("/v1/expenses/{id}", "records", "records.expense.get", "An expense", tag: "expenses", id: "id"),
        .write(.patch, "/v1/expenses/{id}", "records", "records.expense.update", "Change an expense", tag: "expenses", id: "id", body: expenseFields),
        .write(.delete, "/v1/expenses/{id}", "records", "records.expense.delete", "Delete an expense", tag: "expenses", id: "id", bodyRequired: false),
    ]

    static let attendance: [Route] = [
        .write(.post, "/v1/attendance", "records", "records.attendance.add", "Record an arrival or departure", tag: "attendance",
               body: [.init("kind", required: true, values: AttendanceKind.allCases.map(\.rawValue)), .init("at", .dateTime), .init("latitude", .number),
                      .init("longitude", .number), .init("accuracy", .number),
                      .init("source", required: true, values: AttendanceSource.allCases.map(\.rawValue)), .init("note"),
                      .init("correction", .boolean)], status: 201).creating("/v1/attendance/{id}"),
        .read("/v1/attendance", "records", "records.attendance.list", "List attendance entries", tag: "attendance", query: paging, answer: .page())
            .offering(.csv, .geojson),
        .read("/v1/attendance/latest", "records", "records.attendance.latest", "The latest arrival and departure", tag: "attendance"),
        .write(.delete, "/v1/attendance/{id}", "records", "records.attendance.delete", "Delete an entry", tag: "attendance", id: "id", bodyRequired: false),
    ]

    static let activities: [Route] = [
        .write(.post, "/v1/activities", "records", "records.activity.add", "Add an activity", tag: "time",
               body: [.init("name", required: true)], status: 201).creating("/v1/activities/{id}"),
        .read("/v1/activities", "records", "records.activity.list", "List activities", tag: "time", query: paging, answer: .page()),
        .read("/v1/activities/{id}", "records", "records.activity.get", "An activity", tag: "time", id: "id"),
        .write(.delete, "/v1/activities/{id}", "records", "records.activity.delete", "Delete an activity", tag: "time", id: "id", bodyRequired: false),
        .read("/v1/activities/{id}/timer", "records", "records.timer.get", "The activity's timer", tag: "time", id: "activityId"),
    ] + ["start", "pause", "resume", "stop", "clear", "save"].map { action in
        .write(.post, "/v1/activities/{id}/timer/\(action)", "records", "records.timer.\(action)", "Timer: \(action)", tag: "time",
               id: "activityId", bodyRequired: false)
    } + [
        .write(.post, "/v1/activities/{id}/time", "records", "records.time.add", "Add time by hand", tag: "time", id: "activityId",
               body: [.init("durationMs", .integer, required: true), .init("startedAt", .dateTime)], status: 201),
        .read("/v1/activities/{id}/time", "records", "records.time.list", "An activity's time entries", tag: "time", id: "activityId",
              query: paging, answer: .page()),
        .read("/v1/networth", "records", "records.networth", "Time toward 10,000 hours, as money", tag: "time"),
    ]

    static let analytics: [Route] = [
        .read("/v1/analytics/fuel", "analytics", "analytics.fuel.stats", "Fuel statistics of a car", tag: "analytics",
              query: [.init("car", wire: "vehicleId", required: true), .init("units", values: ["mpg_us", "mpg_uk", "l_per_100km", "km_per_l"])]),
        .read("/v1/analytics/fuel/economy", "analytics", "analytics.fuel.economy", "Economy per fill-up of a car", tag: "analytics",
              query: [.init("car", wire: "vehicleId", required: true), .init("units", values: ["mpg_us", "mpg_uk", "l_per_100km", "km_per_l"])]),
        .read("/v1/analytics/expenses", "analytics", "analytics.expense.summary", "Spending summary", tag: "analytics",
              query: [.init("by")] + range),
        .read("/v1/analytics/attendance", "analytics", "analytics.attendance.hours", "Hours worked", tag: "analytics",
              query: [.init("by")] + range),
        .read("/v1/analytics/time", "analytics", "analytics.time.summary", "Time toward 10,000 hours", tag: "analytics"),
        .read("/v1/analytics/suggest", "analytics", "analytics.suggest", "Where and with what to fish", tag: "analytics",
              query: [.init("species"), .init("water", values: ["fresh", "salt"])]),
    ]

    static let store: [Route] = [
        .read("/v1/store/items", "store", "store.items", "The shelf", tag: "store"),
        .read("/v1/store/info", "store", "store.info", "How the store works", tag: "store"),
        .read("/v1/store/wallet", "store", "store.wallet", "Cash and what it came from", tag: "store"),
        .write(.post, "/v1/store/purchases", "store", "store.buy", "Buy an item", tag: "store",
               body: [.init("itemId", required: true)], status: 201),
        .read("/v1/store/ledger", "store", "store.ledger", "Purchases and earnings, newest first", tag: "store", query: paging,
              answer: .page(items: "entries")),
        .read("/v1/store/quote", "store", "store.quote", "Today's quote", tag: "store", query: [.init("timeZone")]),
    ]

    static let weather: [Route] = [
        .read("/v1/weather", "weather-fetcher", "weather.get", "Weather (and tide) at a place and time", tag: "weather",
              query: [.init("latitude", .number, required: true), .init("longitude", .number, required: true),
                      .init("at", .dateTime, required: true), .init("water", values: ["fresh", "salt"])]),
    ]

    /// The edge's own routes (method, path), which call no one method: health, readiness,
    /// metrics and the document itself.
    public static let own: [(method: Route.Method, path: String)] = [
        (.get, "/healthz"), (.get, "/readyz"), (.get, "/metrics"), (.get, "/openapi.json"),
    ]
}

extension Route {
    var anonymous: Route { var copy = self; copy.access = .anonymous; return copy }

    func offering(_ formats: Format...) -> Route { var copy = self; copy.formats = formats; return copy }

    func creating(_ path: String) -> Route { var copy = self; copy.creates = path; return copy }
}
