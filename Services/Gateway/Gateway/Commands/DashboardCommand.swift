// `logbook dashboard`: one page from every service at once. Each section runs in its own
// task with its own deadline (--deadline), so the page takes about as long as the slowest
// section, never the sum; a section whose service does not answer in time is marked
// unavailable (exit 9, "partial"), with the last copy of it seen here marked stale, and the
// rest still shows. --json adds each section's time and every call's time under `timings`.
import ArgumentParser
import Contracts
import Foundation
import Runtime
import Synchronization
import Wire

struct Dashboard: GatewayCommand {
    static let configuration = CommandConfiguration(
        commandName: "dashboard",
        abstract: "One page: economy, spending, office hours, timers, net worth, latest catch, today's quote.",
        discussion: """
            Asks auth, records, weather-fetcher, analytics and store in parallel, each section \
            with its own deadline (--deadline, default 1500 ms). A section whose service does not \
            answer in time is marked unavailable and the page exits 9 (partial); a section whose \
            service is not installed says so and does not count as a failure. Also shows how \
            many writes wait to sync. With --json: {user, sections: {name: {status, data, …}}, \
            queue, timings: {totalMs, sections, calls, slowestCallMs}}.
            Months and weeks are your account's (its time zone), as analytics counts them. Showing the quote counts as \
            today's view of it (store.quote).
            Examples:
              logbook dashboard
              logbook dashboard --deadline 800 --json
            """)

    @OptionGroup var global: GlobalOptions
    @Option(help: ArgumentHelp("Each section's deadline, in milliseconds.", valueName: "ms")) var deadline: Int = 1500
    @Option(help: ArgumentHelp("The car for the economy section (default: the selected car).", valueName: "car"))
    var car: String?

    func validate() throws {
        guard (50...60_000).contains(deadline) else {
            throw ValidationError("--deadline must be between 50 and 60000 ms (got \(deadline))")
        }
    }

    func execute(_ context: Context) async throws {
        context.usesLocalData = false  // its own deadlines; no replay before the page
        let session = try context.requireSession()
        let clock = ContinuousClock()
        let start = clock.now
        let budget = Duration.milliseconds(deadline)
        let installed = Executables(configuration: context.configuration)
        let selected = car ?? SelectionStore(directory: context.sessions.directory).vehicle(for: session.userId)
        let now = Date()
        let sections = await withTaskGroup(of: SectionResult.self) { group in
            for section in DashboardSection.all(selected: selected, now: now) {
                group.addTask {
                    await section.run(context: context, budget: budget, installed: installed)
                }
            }
            var results: [SectionResult] = []
            for await result in group { results.append(result) }
            return results
        }
        let totalMs = Self.ms(clock.now - start)
        var ordered = DashboardSection.order.compactMap { name in sections.first { $0.name == name } }
        Self.keepCopies(&ordered, context: context, owner: session.userId)
        let queue = context.waiting(owner: session.userId)
        let partial = ordered.contains { $0.status == .unavailable || $0.status == .error }
        let calls = ordered.flatMap(\.calls).sorted { $0.ms > $1.ms }
        if context.json {
            var object: [String: JSONValue] = [:]
            for section in ordered { object[section.name] = section.json }
            Output.json([
                "user": .string(session.username), "partial": .bool(partial), "sections": .object(object),
                "queue": ["pending": .number(.init(queue.pending)), "failed": .number(.init(queue.failed))],
                "deadlineMs": .number(.init(deadline)),
                "timings": [
                    "totalMs": .number(.init(totalMs)),
                    "sections": .object(
                        Dictionary(uniqueKeysWithValues: ordered.map { ($0.name, JSONValue.number(.init($0.ms))) })),
                    "calls": .array(calls.map(\.json)),
                    "slowestCallMs": calls.first.map { .number(.init($0.ms)) } ?? .null,
                    "slowestCall": calls.first.map { .string("\($0.service) \($0.method)") } ?? .null,
                ],
            ])
        } else {
            var lines = [(String, String)]()
            for section in ordered { lines.append((section.title, section.line)) }
            if queue.total > 0 {
                var text = "\(queue.pending) write\(queue.pending == 1 ? "" : "s") waiting: `logbook sync`"
                if queue.failed > 0 { text += "; \(queue.failed) refused and kept (`logbook sync --list`)" }
                lines.append(("sync", text))
            } else {
                lines.append(("sync", "nothing waiting to sync"))
            }
            let slowest =
                calls.first.map { "; slowest call \(String(format: "%.0f", $0.ms)) ms (\($0.service) \($0.method))" }
                ?? ""
            Output.line("\(session.username)'s logbook — \(String(format: "%.0f", totalMs)) ms\(slowest)")
            Output.line(Output.fields(lines))
            if partial {
                let missing = ordered.filter { $0.status == .unavailable || $0.status == .error }.map(\.title)
                Output.line(
                    "partial: \(missing.joined(separator: ", ")) did not answer within \(deadline) ms or failed")
            }
        }
        if partial { throw ExitCode(ExitStatus.partial) }
    }

    /// Saves each section that answered; gives each one that did not its last saved copy,
    /// marked stale (it stays "unavailable": the page is still partial).
    static func keepCopies(_ sections: inout [SectionResult], context: Context, owner: String) {
        guard let store = try? context.localStore() else { return }
        for i in sections.indices {
            let section = sections[i]
            switch section.status {
            case .ok:
                try? store.remember(
                    owner: owner, service: "dashboard", method: section.name, body: [:],
                    result: ["data": section.data, "text": .string(section.line)])
            case .unavailable, .error:
                guard let saved = try? store.cached(owner: owner, service: "dashboard", method: section.name, body: [:])
                else { continue }
                sections[i].stale = [
                    "savedAt": .string(saved.fetchedAt), "data": saved.result["data"] ?? .null,
                    "text": saved.result["text"] ?? .null,
                ]
                sections[i].line +=
                    "; last seen \(TimeText.local(.string(saved.fetchedAt))): \(Output.cell(saved.result["text"]))"
            case .notInstalled:
                continue
            }
        }
    }

    static func ms(_ duration: Duration) -> Double {
        let ms = Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
        return (ms * 10).rounded() / 10
    }
}

/// One call a section made, and how long it took.
struct CallTiming: Sendable {
    var service: String
    var method: String
    var ms: Double
    var outcome: String

    var json: JSONValue {
        ["service": .string(service), "method": .string(method), "ms": .number(.init(ms)), "outcome": .string(outcome)]
    }
}

struct SectionResult: Sendable {
    enum Status: String, Sendable {
        case ok
        case unavailable
        case notInstalled = "not installed"
        case error
    }

    var name: String
    var title: String
    var status: Status
    var line: String
    var data: JSONValue
    var error: String?
    var ms: Double
    var calls: [CallTiming]
    /// The last copy seen of a section that did not answer: {savedAt, data, text}.
    var stale: JSONValue?

    var json: JSONValue {
        var object: [String: JSONValue] = [
            "status": .string(status.rawValue), "data": data, "text": .string(line), "ms": .number(.init(ms)),
        ]
        if let error { object["error"] = .string(error) }
        if let stale { object["stale"] = stale }
        return .object(object)
    }
}

/// What a section may call: `send` with the time left before the section's deadline, each
/// call timed.
final class SectionCalls: Sendable {
    let context: Context
    let deadline: ContinuousClock.Instant
    private let timings = Mutex<[CallTiming]>([])

    init(context: Context, deadline: ContinuousClock.Instant) {
        self.context = context
        self.deadline = deadline
    }

    var recorded: [CallTiming] { timings.withLock { $0 } }

    func send(_ service: String, _ method: String, _ body: JSONValue = [:]) async throws -> JSONValue {
        let clock = ContinuousClock()
        let start = clock.now
        let left = deadline - start
        guard left > .milliseconds(5) else {
            throw ServiceError(.deadlineExceeded, "no time left for \(service)")
        }
        do {
            let result = try await context.send(service, method, body: body, timeout: left)
            timings.withLock {
                $0.append(
                    CallTiming(service: service, method: method, ms: Dashboard.ms(clock.now - start), outcome: "ok"))
            }
            return result
        } catch {
            let code = (error as? ServiceError)?.code.rawValue ?? "cancelled"
            timings.withLock {
                $0.append(
                    CallTiming(service: service, method: method, ms: Dashboard.ms(clock.now - start), outcome: code))
            }
            throw error
        }
    }
}

extension SectionCalls {
    /// `send` for a method of the contract: the typed result, and its JSON for the page's data.
    func call<Request, Result>(_ method: Contracts.Method<Request, Result>, _ request: Request) async throws
        -> (Result, JSONValue)
    {
        let json = try await send(method.service, method.name, try JSONValue.from(request))
        do {
            return (try json.decode(Result.self), json)
        } catch {
            throw ServiceError(
                .internal, "\(method.service) answered \(method.name) with an unexpected result: \(WireCoding.describe(error))")
        }
    }
}

struct DashboardSection: Sendable {
    var name: String
    var title: String
    /// Services the section needs; one not installed marks the section "not installed".
    var services: [String]
    /// Returns the section's data and its line for people.
    var work: @Sendable (SectionCalls) async throws -> (JSONValue, String)

    static let order = ["account", "fuel", "spending", "office", "timers", "wallet", "catch", "quote"]

    func run(context: Context, budget: Duration, installed: Executables) async -> SectionResult {
        let clock = ContinuousClock()
        let start = clock.now
        var result = SectionResult(
            name: name, title: title, status: .ok, line: "", data: .null, ms: 0, calls: [], stale: nil)
        if let missing = services.first(where: { !installed.isInstalled($0) }) {
            result.status = .notInstalled
            result.line = "not installed (needs the \(missing) service)"
            return result
        }
        let calls = SectionCalls(context: context, deadline: start + budget)
        do {
            let (data, line) = try await Self.withDeadline(start + budget) { try await work(calls) }
            result.data = data
            result.line = line
        } catch let error as ServiceError where Context.isUnreachable(error.code) {
            result.status = .unavailable
            result.error = error.message
            // blame the services whose calls failed, not every service the section uses
            var silent: [String] = []
            for call in calls.recorded where call.outcome != "ok" && !silent.contains(call.service) {
                silent.append(call.service)
            }
            if silent.isEmpty { silent = services }
            result.line =
                error.message.contains("the stack is not running")
                ? "unavailable (the stack is not running)"
                : "unavailable (\(silent.joined(separator: ", ")) did not answer in time)"
        } catch let error as ServiceError {
            result.status = .error
            result.error = error.message
            result.line = "error: \(error.message) (\(error.code.rawValue))"
        } catch {
            result.status = .error
            result.error = "\(error)"
            result.line = "error: \(error)"
        }
        result.ms = Dashboard.ms(clock.now - start)
        result.calls = calls.recorded
        return result
    }

    /// `work`'s result, or `deadline_exceeded` at `deadline` (the work is cancelled).
    static func withDeadline<T: Sendable>(
        _ deadline: ContinuousClock.Instant, _ work: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await work() }
            group.addTask {
                try? await Task.sleep(until: deadline, clock: .continuous)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let value = first else {
                throw ServiceError(.deadlineExceeded, "no answer before the section's deadline")
            }
            return value
        }
    }

    // MARK: The sections

    static func all(selected: String?, now: Date) -> [DashboardSection] {
        // this month and week on this machine's calendar (the account's zone is set from it);
        // analytics reads the plain dates as the account's days
        let local = {
            var calendar = Calendar(identifier: .iso8601)
            calendar.timeZone = .current
            return calendar
        }()
        let monthStart = local.date(from: local.dateComponents([.year, .month], from: now))!
        let nextMonth = local.date(byAdding: .month, value: 1, to: monthStart)!
        let weekStart = local.date(from: local.dateComponents([.yearForWeekOfYear, .weekOfYear], from: now))!
        let day = { @Sendable (date: Date) -> String in
            let c = local.dateComponents([.year, .month, .day], from: date)
            return String(format: "%04d-%02d-%02d", c.year!, c.month!, c.day!)
        }
        let month = String(day(monthStart).prefix(7))
        let week = day(weekStart)
        let monthFrom = day(monthStart)
        let monthTo = day(nextMonth)
        return [
            DashboardSection(name: "account", title: "account", services: ["auth"]) { calls in
                let (user, json) = try await calls.call(AuthMethods.whoami, Empty())
                return (json, "\(user.username) (user id \(user.userId))")
            },
            DashboardSection(name: "fuel", title: "fuel", services: ["records", "analytics"]) { calls in
                let (page, json) = try await calls.call(FuelMethods.vehicleList, ListBody(limit: 500))
                let cars = page.items
                var index = cars.firstIndex { $0.id == selected }
                if index == nil, let selected {
                    index = cars.firstIndex { $0.nickname.lowercased() == selected.lowercased() }
                }
                if index == nil, cars.count == 1 { index = 0 }
                guard let index else {
                    let why = cars.isEmpty ? "no car yet" : "\(cars.count) cars: choose one with `logbook car use`"
                    return (["vehicle": .null, "reason": .string(why)], why)
                }
                let car = cars[index]
                let (stats, statsJSON) = try await calls.call(FuelMethods.stats, FuelStatsRequest(vehicleId: car.id))
                let text =
                    if let average = stats.average {
                        "\(car.nickname): average \(Analytics.figure(average)) \(stats.unitLabel)"
                    } else {
                        "\(car.nickname): \(stats.reason ?? "no average yet")"
                    }
                // the data is what the services answered: the car as listed, the stats
                return (["vehicle": json["items"]?.arrayValue.flatMap { $0.indices.contains(index) ? $0[index] : nil } ?? .null, "stats": statsJSON], text)
            },
            DashboardSection(name: "spending", title: "spending", services: ["analytics"]) { calls in
                let (summary, json) = try await calls.call(
                    ExpenseMethods.summary, SummaryRequest(by: "month", from: monthFrom, to: monthTo))
                let totals = summary.currencies.map { currency -> String in
                    let count = currency.count
                    return
                        "\(Money.format(currency.totalMinor, currency: currency.currency)) in \(count) expense\(count == 1 ? "" : "s")"
                }
                return (json, "\(month): " + (totals.isEmpty ? "nothing spent" : totals.joined(separator: " + ")))
            },
            DashboardSection(name: "office", title: "office", services: ["analytics"]) { calls in
                let (hours, json) = try await calls.call(AttendanceMethods.hours, SummaryRequest(by: "week", from: week))
                var text = "week of \(week): \(Analytics.figure(hours.totalHours, decimals: 1)) h"
                if !hours.open.isEmpty {
                    text += " (\(hours.open.count) open entr\(hours.open.count == 1 ? "y" : "ies"))"
                }
                return (json, text)
            },
            DashboardSection(name: "timers", title: "timers", services: ["records"]) { calls in
                let (page, json) = try await calls.call(TimeMethods.activityList, ListBody(limit: 500))
                let running = page.items.indices.filter { [.running, .paused].contains(page.items[$0].timer.state) }
                let text =
                    running.isEmpty
                    ? "none running"
                    : running.map { i in
                        let timer = page.items[i].timer
                        return "\(page.items[i].name) \(timer.state.rawValue) \(Output.duration(milliseconds: timer.elapsedMs))"
                    }.joined(separator: ", ")
                let items = json["items"]?.arrayValue ?? []
                return (["running": .array(running.compactMap { items.indices.contains($0) ? items[$0] : nil })], text)
            },
            DashboardSection(name: "wallet", title: "net worth", services: ["store"]) { calls in
                let (wallet, json) = try await calls.call(StoreMethods.wallet, Empty())
                return (json, "\(Money.format(wallet.netWorthCents)), cash \(Money.format(wallet.cashCents))")
            },
            DashboardSection(name: "catch", title: "latest catch", services: ["records"]) { calls in
                let (page, json) = try await calls.call(CatchMethods.list, Contracts.CatchList(limit: 1))
                guard let fish = page.items.first, let listed = json["items"]?.arrayValue?.first else {
                    return (["catch": .null], "no catches yet")
                }
                var text =
                    "\(fish.species) \(fish.weight) \(fish.weightUnit.rawValue), \(fish.water.rawValue) water, "
                    + "bait \(fish.bait), \(TimeText.local(fish.caughtAt))"
                var data: [String: JSONValue] = ["catch": listed]
                let conditions = fish.conditions
                if conditions.status == .ready {
                    // The full conditions from the weather-fetcher; the record's summary if it
                    // does not answer in time.
                    if let (_, full) = try? await calls.call(WeatherMethods.conditions, ConditionsGet(catchId: fish.id)) {
                        data["conditions"] = full
                    }
                    text += " — \(conditions.summary ?? "-")"
                } else {
                    text += " — conditions \(conditions.status.rawValue)" + (conditions.reason.map { ": \($0)" } ?? "")
                }
                return (.object(data), text)
            },
            DashboardSection(name: "quote", title: "quote", services: ["store"]) { calls in
                let (quote, json) = try await calls.call(StoreMethods.quote, QuoteRequest())
                let text = quote.kind == "intro" ? quote.text : "“\(quote.text)” — \(quote.author ?? "-")"
                return (json, text)
            },
        ]
    }
}
