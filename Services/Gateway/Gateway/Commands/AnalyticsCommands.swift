// The analytics service's answers (docs/protocol.md, "Analytics service"): `logbook fuel stats`,
// `logbook expense summary`, `logbook attend hours` and `logbook suggest`. The analytics
// service works from its own projections of the records; when it is not installed or does
// not answer, these commands fail with `unavailable` (exit 7) naming it.
import ArgumentParser
import Contracts
import Foundation
import Wire

/// Calls to analytics and the pure texts of its answers (unit-tested).
enum Analytics {
    /// Sends `method` to analytics. When its executable is not installed here, waits at most
    /// a second (it may still run elsewhere) and says it is not installed if it is silent.
    static func send(_ context: Context, _ method: String, _ body: JSONValue) async throws -> JSONValue {
        let executables = Executables(configuration: context.configuration)
        let installed = executables.isInstalled("analytics")
        do {
            return try await context.send(
                "analytics", method, body: body, timeout: installed ? nil : min(context.timeout, .seconds(1)))
        } catch let error as ServiceError where !installed && [.unavailable, .deadlineExceeded].contains(error.code) {
            throw ServiceError(
                .unavailable,
                "the analytics service is not installed (no analytics executable in \(executables.directory)) "
                    + "and did not answer; \(method) needs it")
        }
    }

    /// `send` for a method of the contract: typed request and result.
    static func call<Request, Result>(
        _ context: Context, _ method: Contracts.Method<Request, Result>, _ request: Request
    ) async throws -> Result {
        let result = try await send(context, method.name, try JSONValue.from(request))
        do {
            return try result.decode(Result.self)
        } catch {
            throw ServiceError(
                .internal, "analytics answered \(method.name) with an unexpected result: \(WireCoding.describe(error))")
        }
    }

    /// A plain date `2026-05-01` (a real day), which analytics reads as a day of the account's zone.
    static func isDate(_ text: String) -> Bool { day(text) != nil }

    static func day(_ text: String) -> Date? {
        let t = text.trimmingCharacters(in: .whitespaces)
        guard t.count == 10 else { return nil }
        let formatter = dayFormatter()
        guard let date = formatter.date(from: t), formatter.string(from: date) == t else { return nil }
        return date
    }

    static func dayFormatter() -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.calendar = Calendar(identifier: .gregorian)
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd"
        return formatter
    }

    /// `day` moved by `days` (UTC calendar days): ("2026-05-31", 1) → "2026-06-01".
    static func shift(_ text: String, days: Int) -> String? {
        guard let date = day(text) else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar.date(byAdding: .day, value: days, to: date).map { dayFormatter().string(from: $0) }
    }

    /// `--from`/`--to` as analytics reads them: a plain date stays a (local) day, and `--to DATE`
    /// includes that day (analytics' `to` is exclusive); any other time is sent with its offset.
    static func range(from: String?, to: String?) throws -> SummaryRequest {
        var range = SummaryRequest()
        if let from {
            range.from = isDate(from) ? from.trimmingCharacters(in: .whitespaces) : try wire(from, field: "from")
        }
        if let to {
            let end = try shift(to, days: 1) ?? wire(to, field: "to")
            range.to = end
            // refused here, in the words typed: analytics would echo `to` as the day after
            if let from, let start = day(from) ?? (try? TimeText.parse(from, field: "from")),
                let last = day(end) ?? WireTime.parse(end), last <= start
            {
                throw ServiceError.invalid("to", "must not be before --from (got --from \(from) --to \(to))")
            }
        }
        return range
    }

    /// A time typed by a person as the wire writes it.
    static func wire(_ text: String, field: String) throws -> String { WireTime.format(try TimeText.parse(text, field: field)) }

    /// `range` as the body of a summary grouped `by`.
    static func summary(by: String, from: String?, to: String?) throws -> SummaryRequest {
        var request = try range(from: from, to: to)
        request.by = by
        return request
    }

    /// A note when the account counts days in another zone (`zone`) than this machine's, else nil.
    static func zoneNote(_ zone: String, environment: [String: String]) -> String? {
        guard let here = Account.localZone(environment),
            LocalDays.zone(named: zone)?.identifier != LocalDays.zone(named: here)?.identifier
        else { return nil }
        return "days are counted in \(zone), your account's time zone (this machine is in \(here); "
            + "`logbook settings time-zone --local` changes it)"
    }

    /// A ratio with 2 decimals: 27.08, 25.00.
    static func number(_ value: Double?, decimals: Int = 2) -> String {
        guard let value else { return "-" }
        return String(format: "%.\(decimals)f", value)
    }

    /// A decimal figure to `decimals` places, exactly (27.1 → "27.10"), half away from zero.
    static func figure(_ value: Decimal?, decimals: Int = 2) -> String {
        guard let value else { return "-" }
        return exponentPlain(units(value, places: decimals), decimals: decimals)
    }

    /// `value` × 10^places, rounded half away from zero to an integer.
    static func units(_ value: Decimal, places: Int) -> Int64 {
        var scaled = value * pow(Decimal(10), places)
        var rounded = Decimal()
        NSDecimalRound(&rounded, &scaled, 0, .plain)
        return NSDecimalNumber(decimal: rounded).int64Value
    }

    /// A share as a percentage, to a tenth: 0.75 → "75%", 0.667 → "66.7%" (exact: no floating point).
    static func percent(share: Decimal) -> String {
        let tenths = units(share, places: 3)
        return tenths % 10 == 0 ? "\(tenths / 10)%" : "\(tenths / 10).\(abs(tenths % 10))%"
    }

    /// A fractional amount of minor units (an average, a cost per mile) as money with `extra`
    /// decimals beyond the currency's when they are not zeros: (11.08, USD, 1) → "$0.111",
    /// (300, USD, 1) → "$3.00", (177.42, USD, 0) → "$1.77".
    static func money(minor: Double?, currency: String = "USD", extra: Int = 1) -> String {
        guard let minor, minor.isFinite else { return "-" }
        var scale = 1.0
        for _ in 0..<extra { scale *= 10 }
        return money(units: Int64((minor * scale).rounded()), currency: currency, extra: extra)
    }

    /// `money(minor:)` from an exact decimal (analytics' typed results).
    static func money(exactly minor: Decimal?, currency: String = "USD", extra: Int = 1) -> String {
        guard let minor else { return "-" }
        return money(units: units(minor, places: extra), currency: currency, extra: extra)
    }

    /// `units` of 10^-extra minor units as money.
    private static func money(units: Int64, currency: String, extra: Int) -> String {
        let exponent = Money.exponent(currency)
        var text = exponentPlain(units, decimals: exponent + extra)
        var decimals = exponent + extra
        while decimals > exponent, text.hasSuffix("0") {
            text.removeLast()
            decimals -= 1
        }
        if text.hasSuffix(".") { text.removeLast() }
        let negative = text.hasPrefix("-")
        let unsigned = negative ? String(text.dropFirst()) : text
        let parts = unsigned.split(separator: ".", maxSplits: 1)
        let grouped = Digits.grouped(parts[0]) + (parts.count > 1 ? "." + String(parts[1]) : "")
        return currency.uppercased() == "USD"
            ? (negative ? "-$" : "$") + grouped : (negative ? "-" : "") + grouped + " " + currency.uppercased()
    }

    /// An integer as a decimal with `decimals` places: (1108, 4) → "0.1108".
    static func exponentPlain(_ units: Int64, decimals: Int) -> String {
        let sign = units < 0 ? "-" : ""
        var digits = String(units.magnitude)
        guard decimals > 0 else { return sign + digits }
        if digits.count <= decimals { digits = String(repeating: "0", count: decimals - digits.count + 1) + digits }
        let split = digits.index(digits.endIndex, offsetBy: -decimals)
        return sign + digits[..<split] + "." + digits[split...]
    }

    /// Milliseconds worked as hours and minutes: 30_600_000 → "8h 30m".
    static func worked(milliseconds ms: Int64) -> String {
        let minutes = ms.magnitude / 60_000
        return "\(ms < 0 ? "-" : "")\(minutes / 60)h \(String(format: "%02d", Int(minutes % 60)))m"
    }

    /// A time as its local date: `2026-05-18`.
    static func date(_ date: Date) -> String { String(TimeText.local(date).prefix(10)) }
}

// MARK: Fuel

enum EconomyUnitsOption: String, EnumArgument {
    case mpgUS = "mpg-us", mpgUK = "mpg-uk", litresPer100km = "l-per-100km", kmPerLitre = "km-per-l"

    /// The wire name: mpg_us, mpg_uk, l_per_100km, km_per_l.
    var wire: String { rawValue.replacingOccurrences(of: "-", with: "_") }
}

struct FuelGroup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fuel",
        abstract: "Fuel economy and costs of a car (from the analytics service).",
        discussion: """
            Economy is counted full fill-up to full fill-up: partial fills wait for the next full \
            one, a missed fill restarts the count.
            Examples:
              logbook fuel stats              # the selected car (`logbook car use`)
              logbook fuel stats --car Van --units l-per-100km
            """,
        subcommands: [FuelStats.self])
}

struct FuelStats: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Average, last, best and worst economy, cost per distance, total spent, average price.",
        discussion: """
            Units default from the car's: gal → mpg-us; ukgal, or miles with litres → mpg-uk; \
            km with litres → l-per-100km. When there is no average yet, says what it needs.
            Examples:
              logbook fuel stats
              logbook fuel stats --car Civic --units km-per-l
            """)

    @OptionGroup var global: GlobalOptions
    @Option(help: ArgumentHelp("The car's id or nickname (default: the selected car).", valueName: "car")) var car: String?
    @Option(help: "mpg-us, mpg-uk, l-per-100km or km-per-l (default: from the car's units).") var units: EconomyUnitsOption?

    func execute(_ context: Context) async throws {
        let vehicle = try await Resolve.currentCar(context, car)
        let request = FuelStatsRequest(vehicleId: vehicle.id, units: units?.wire)
        let stats = try await Analytics.call(context, FuelMethods.stats, request)
        if context.json { return Output.json(stats) }
        Output.line(FuelText.stats(stats, car: vehicle.nickname))
    }
}

enum FuelText {
    /// A distance or volume in thousandths, exactly: 38.5, 1,234.5 grouped.
    static func quantity(_ value: Decimal, grouped: Bool = false) -> String {
        let milli = Milli(thousandths: Analytics.units(value, places: 3))
        return grouped ? milli.grouped : milli.description
    }

    static func stats(_ stats: Contracts.FuelStats, car: String) -> String {
        let label = stats.unitLabel
        let fills = stats.fills
        let segments = stats.closedSegments
        var lines = [
            "\(car): \(fills) fill-up\(fills == 1 ? "" : "s"), \(segments) closed segment\(segments == 1 ? "" : "s"); economy in \(label)"
        ]
        var pairs: [(String, String)] = []
        if let average = stats.average {
            pairs.append(("average", "\(Analytics.figure(average)) \(label)"))
        } else {
            pairs.append(("average", stats.reason ?? "not yet: add one more full fill-up"))
        }
        for (point, title) in [(stats.last, "last"), (stats.best, "best"), (stats.worst, "worst")] {
            if let point {
                let date = Analytics.date(point.date)
                pairs.append((title, "\(Analytics.figure(point.value)) \(label)  (\(date))"))
            }
        }
        let distanceUnit = stats.distanceUnit
        let volumeUnit = stats.volumeUnit
        if let waiting = stats.waiting {
            let count = waiting.partialFills
            pairs.append((
                "waiting",
                "\(count) partial fill-up\(count == 1 ? "" : "s") (\(quantity(waiting.distance)) \(distanceUnit), "
                    + "\(quantity(waiting.volume)) \(volumeUnit)) until the next full fill-up"
            ))
        }
        for spending in stats.spending {
            let currency = spending.currency
            let count = spending.fills
            pairs.append((
                "total spent",
                "\(Money.format(spending.totalMinor, currency: currency)) on \(count) fill-up\(count == 1 ? "" : "s"), "
                    + "\(quantity(spending.volume, grouped: true)) \(volumeUnit)"
            ))
            if let price = spending.averagePricePerUnitMinor {
                pairs.append(("average price", "\(Analytics.money(exactly: price, currency: currency))/\(volumeUnit)"))
            }
            if let cost = spending.costPerDistance {
                pairs.append(("cost per \(cost.per)", Analytics.money(exactly: cost.minor, currency: currency)))
            } else {
                pairs.append(("cost per distance", "not yet: it needs a closed segment paid in \(currency)"))
            }
        }
        if stats.spending.isEmpty { pairs.append(("total spent", "nothing yet")) }
        lines.append(Output.fields(pairs))
        return lines.joined(separator: "\n")
    }
}

// MARK: Expenses

enum SummaryPeriod: String, EnumArgument { case day, week, month, year, category }

struct ExpenseSummary: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "summary",
        abstract: "Totals per day, week, month, year or category; average per day; the largest expenses.",
        discussion: """
            From the analytics service. Days are your account's days (its time zone: \
            `logbook settings time-zone`); weeks are ISO weeks (2026-W19). \
            --to DATE includes that day. Currencies are never added together: each has its \
            own totals.
            Examples:
              logbook expense summary                          # by month
              logbook expense summary --by category --from 2026-05-01 --to 2026-05-31
              logbook expense summary --by week --csv
            """)

    @OptionGroup var global: GlobalOptions
    @Option(help: "day, week, month (default), year or category.") var by: SummaryPeriod = .month
    @Option(help: ArgumentHelp("From this date (inclusive).", valueName: "date")) var from: String?
    @Option(help: ArgumentHelp("Until this date (inclusive) or time (exclusive).", valueName: "date")) var to: String?
    @Flag(help: "Print CSV (currency, period or category, total, count) instead of tables.") var csv = false

    func execute(_ context: Context) async throws {
        let request = try Analytics.summary(by: by.rawValue, from: from, to: to)
        let summary = try await Analytics.call(context, ExpenseMethods.summary, request)
        if context.json { return Output.json(summary) }
        if csv {
            FileHandle.standardOutput.write(Data(ExpenseText.csv(summary).utf8))
        } else {
            Output.line(ExpenseText.summary(summary))
            if let note = Analytics.zoneNote(summary.timeZone, environment: context.environment) { Output.line(note) }
        }
    }
}

enum ExpenseText {
    static func csv(_ summary: Contracts.ExpenseSummary) -> String {
        var rows: [[String]] = []
        for currency in summary.currencies {
            let code = currency.currency
            for group in currency.groups {
                rows.append([code, group.key, Money.plain(group.totalMinor, currency: code), String(group.count)])
            }
        }
        return CSV.document(["currency", summary.by, "total", "count"], rows)
    }

    static func summary(_ summary: Contracts.ExpenseSummary) -> String {
        guard !summary.currencies.isEmpty else { return "no expenses in that range" }
        let first = summary.from ?? "?"
        let last = summary.to.flatMap { Analytics.shift($0, days: -1) } ?? "?"
        let days = summary.days
        var blocks: [String] = []
        for currency in summary.currencies {
            let code = currency.currency
            let count = currency.count
            var lines = [
                "\(code): \(Money.format(currency.totalMinor, currency: code)) in \(count) expense\(count == 1 ? "" : "s"), "
                    + "\(first) to \(last) (\(days) day\(days == 1 ? "" : "s")): "
                    + "\(Analytics.money(exactly: currency.averagePerDayMinor, currency: code, extra: 0)) a day on average"
            ]
            lines.append(
                Output.table(
                    [summary.by.uppercased(), "TOTAL", "COUNT"],
                    currency.groups.map { group in
                        [group.key, Money.format(group.totalMinor, currency: code), String(group.count)]
                    }))
            if !currency.largest.isEmpty {
                lines.append("")
                lines.append(
                    Output.table(
                        ["LARGEST", "AMOUNT", "DATE", "CATEGORY"],
                        currency.largest.map { expense in
                            [
                                expense.name, Money.format(expense.amountMinor, currency: code), Analytics.date(expense.date),
                                expense.category ?? "-",
                            ]
                        }))
            }
            blocks.append(lines.joined(separator: "\n"))
        }
        return blocks.joined(separator: "\n\n")
    }
}

// MARK: Attendance

struct AttendHours: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "hours",
        abstract: "Hours worked per day (or ISO week) from arrival → departure pairs; open entries flagged.",
        discussion: """
            From the analytics service. Days are your account's days (its time zone: \
            `logbook settings time-zone`), and a shift over midnight is split at that midnight. An arrival without its departure (or the reverse) is listed, not counted. \
            --to DATE includes that day.
            Examples:
              logbook attend hours
              logbook attend hours --week --from 2026-05-01
              logbook attend hours --csv > hours.csv
            """)

    @OptionGroup var global: GlobalOptions
    @Flag(help: "Per ISO week (2026-W19) instead of per day.") var week = false
    @Option(help: ArgumentHelp("From this date (inclusive).", valueName: "date")) var from: String?
    @Option(help: ArgumentHelp("Until this date (inclusive) or time (exclusive).", valueName: "date")) var to: String?
    @Flag(help: "Print CSV (period, workedMs, hours) instead of a table.") var csv = false

    func execute(_ context: Context) async throws {
        let request = try Analytics.summary(by: week ? "week" : "day", from: from, to: to)
        let hours = try await Analytics.call(context, AttendanceMethods.hours, request)
        if context.json { return Output.json(hours) }
        if csv {
            let rows = hours.groups.map { [$0.key, String($0.workedMs), "\($0.hours)"] }
            FileHandle.standardOutput.write(Data(CSV.document([week ? "week" : "day", "workedMs", "hours"], rows).utf8))
            return
        }
        Output.line(AttendanceText.hours(hours, week: week))
        if let note = Analytics.zoneNote(hours.timeZone, environment: context.environment) { Output.line(note) }
    }
}

enum AttendanceText {
    static func hours(_ hours: AttendanceHours, week: Bool) -> String {
        var lines: [String] = []
        if hours.groups.isEmpty {
            lines.append("no worked time in that range")
        } else {
            lines.append(
                Output.table(
                    [week ? "WEEK" : "DAY", "WORKED", "HOURS"],
                    hours.groups.map { group in
                        [group.key, Analytics.worked(milliseconds: group.workedMs), Analytics.figure(group.hours)]
                    }))
            lines.append("total \(Analytics.worked(milliseconds: hours.totalMs)) (\(Analytics.figure(hours.totalHours)) h)")
        }
        if !hours.open.isEmpty {
            lines.append("not counted:")
            for entry in hours.open {
                let kind = entry.kind == .arrival ? "in " : "out"
                lines.append("  \(kind) \(TimeText.local(entry.at))  \(entry.reason)  (id \(entry.id))")
            }
        }
        let latest = { (entry: LatestEntry?) -> String in entry.map { TimeText.local($0.at) } ?? "none yet" }
        lines.append("last arrival \(latest(hours.latestArrival)), last departure \(latest(hours.latestDeparture))")
        return lines.joined(separator: "\n")
    }
}

// MARK: Suggestions

struct Suggest: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "suggest",
        abstract: "When your catches were caught: the most frequent weather, sky, time, moon and tide, and the best baits.",
        discussion: """
            From the analytics service, over your catches whose weather is known. The more \
            catches, the better: each answer says how much data it rests on.
            Examples:
              logbook suggest
              logbook suggest --species pike --water fresh
              logbook suggest --csv            # every bucket of every condition
            """)

    @OptionGroup var global: GlobalOptions
    @Option(help: "Only this species (case-insensitive).") var species: String?
    @Option(help: "Only fresh or salt water.") var water: Water?
    @Flag(help: "Print CSV (condition, bucket, count, catches, share) instead of a table.") var csv = false

    func execute(_ context: Context) async throws {
        let suggestions = try await Analytics.call(
            context, SuggestMethods.suggest, SuggestRequest(species: species, water: water))
        if context.json { return Output.json(suggestions) }
        if csv {
            FileHandle.standardOutput.write(Data(SuggestText.csv(suggestions).utf8))
        } else {
            Output.line(SuggestText.summary(suggestions))
        }
    }
}

enum SuggestText {
    static func csv(_ suggestions: Suggestions) -> String {
        var rows: [[String]] = []
        for condition in suggestions.conditions {
            for bucket in condition.buckets {
                rows.append(
                    [condition.condition, condition.label, bucket.bucket, "\(bucket.count)", "\(condition.catches)",
                     "\(bucket.share)"])
            }
        }
        return CSV.document(["condition", "label", "bucket", "count", "catches", "share"], rows)
    }

    static func baits(_ baits: [BaitCount]) -> String {
        baits.map { "\($0.bait) \($0.count) (\(Analytics.percent(share: $0.share.decimal)))" }.joined(separator: ", ")
    }

    static func summary(_ suggestions: Suggestions) -> String {
        var scope: [String] = []
        if let species = suggestions.species { scope.append(species) }
        if let water = suggestions.water { scope.append("\(water.rawValue) water") }
        let catches = suggestions.catches
        var lines = [
            "\(scope.isEmpty ? "all your catches" : scope.joined(separator: ", ")): \(catches) catch\(catches == 1 ? "" : "es"); "
                + suggestions.basis
        ]
        if let note = suggestions.note { lines.append(note) }
        let conditions = suggestions.conditions.compactMap { condition in condition.best.map { (condition, $0) } }
        if !conditions.isEmpty {
            lines.append("")
            lines.append(
                Output.table(
                    ["CONDITION", "MOST CATCHES", "COUNT", "SHARE", "BAITS THERE"],
                    conditions.map { condition, best in
                        // buckets with as many catches as the best are a tie, not a lesser bucket
                        let tied = condition.buckets.filter { $0.count == best.count }
                        let winners = tied.count > 1 ? tied : [best]
                        return [
                            condition.label,
                            winners.map(\.bucket).joined(separator: " = ")
                                + (winners.count > 1 ? " (\(winners.count)-way tie)" : ""),
                            "\(best.count) of \(condition.catches)" + (winners.count > 1 ? " each" : ""),
                            Analytics.percent(share: best.share.decimal),
                            winners.map { bucket in bucket.baits.map { "\($0.bait) (\($0.count))" }.joined(separator: ", ") }
                                .joined(separator: "; "),
                        ]
                    }))
        }
        if !suggestions.baits.isEmpty {
            lines.append("")
            lines.append("best baits: " + Self.baits(suggestions.baits))
        }
        return lines.joined(separator: "\n")
    }
}
