// Reading other apps' exports (docs/imports.md): a CSV reader that copes with what real files
// hold (a byte-order mark, CRLF, quoted commas and line breaks, `;` or tab separators), numbers
// with decimal commas, grouping and currency signs, dates in the file's own order, and one
// parser per format that turns rows into the bodies of records' writes — or into a reason
// the row cannot be taken. Nothing here talks to a service: ImportCommands.swift does that.
import Foundation
import Wire

// MARK: - CSV

public enum ImportCSV {
    public struct Row: Sendable, Equatable {
        /// The file line the row starts on (1-based).
        public var line: Int
        public var cells: [String]
    }

    /// The text of a file: UTF-8 (a BOM dropped), else Latin-1 (old spreadsheet exports).
    public static func text(_ data: Data) -> String {
        var bytes = data
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        if let text = String(data: bytes, encoding: .utf8) {
            return text.hasPrefix("\u{FEFF}") ? String(text.dropFirst()) : text
        }
        return String(decoding: bytes.map { UInt16($0) }, as: UTF16.self)
    }

    /// `,`, `;` or tab: whichever occurs most outside quotes in the first lines.
    public static func delimiter(_ text: String) -> Character {
        var counts: [Character: Int] = [",": 0, ";": 0, "\t": 0]
        var quoted = false
        var lines = 0
        for scalar in text.unicodeScalars {
            if scalar == "\"" { quoted.toggle() }
            if quoted { continue }
            if scalar == "\n" {
                lines += 1
                if lines >= 20 { break }
            }
            let character = Character(scalar)
            if counts[character] != nil { counts[character]! += 1 }
        }
        let best = counts.max { a, b in a.value < b.value || (a.value == b.value && a.key != ",") }
        return (best?.value ?? 0) > 0 ? best!.key : ","
    }

    /// RFC 4180 rows: quoted fields may hold the delimiter, `""` and line breaks; CRLF, LF or
    /// CR end a row. Blank lines are dropped. Cells are not trimmed.
    public static func rows(_ text: String, delimiter: Character? = nil) -> [Row] {
        let separator = (delimiter ?? self.delimiter(text)).unicodeScalars.first!
        var rows: [Row] = []
        var cells: [String] = []
        var cell = String.UnicodeScalarView()
        var quoted = false
        var line = 1
        var rowLine = 1
        var previousWasQuote = false
        var afterCR = false
        func endCell() {
            cells.append(String(cell))
            cell = String.UnicodeScalarView()
        }
        func endRow() {
            endCell()
            if !(cells.count == 1 && cells[0].trimmingCharacters(in: .whitespaces).isEmpty) {
                rows.append(Row(line: rowLine, cells: cells))
            }
            cells = []
        }
        for scalar in text.unicodeScalars {
            if afterCR {
                afterCR = false
                if scalar == "\n" { continue }
            }
            if quoted {
                if scalar == "\"" {
                    quoted = false
                    previousWasQuote = true
                    continue
                }
                if scalar == "\n" || scalar == "\r" { line += 1 }
                if scalar == "\r" { afterCR = true; cell.append("\n"); continue }
                cell.append(scalar)
                continue
            }
            if scalar == "\"" {
                // `""` inside a quoted field is a quote; a quote opening a field starts quoting.
                if previousWasQuote { cell.append("\"") }
                quoted = true
                previousWasQuote = false
                continue
            }
            previousWasQuote = false
            if scalar == separator {
                endCell()
            } else if scalar == "\n" || scalar == "\r" {
                if scalar == "\r" { afterCR = true }
                endRow()
                line += 1
                rowLine = line
            } else {
                cell.append(scalar)
            }
        }
        if !cell.isEmpty || !cells.isEmpty { endRow() }
        return rows
    }
}

// MARK: - Numbers

public enum ImportNumber {
    /// Currency signs and codes a number may carry, with the currency they name.
    static let symbols: [(String, String)] = [
        ("US$", "USD"), ("CA$", "CAD"), ("A$", "AUD"), ("€", "EUR"), ("£", "GBP"), ("¥", "JPY"), ("₹", "INR"),
        ("kr", "SEK"), ("zł", "PLN"), ("Kč", "CZK"), ("CHF", "CHF"), ("$", "USD"),
    ]

    /// The currency a sign in `text` names ("$3.96" → USD), if any.
    public static func currency(in text: String) -> String? {
        symbols.first { text.contains($0.0) }?.1
    }

    /// The digits of a number as canonical text ("1.234,5" → "1234.5", "(12.50)" → "-12.50",
    /// "$3.969" → "3.969"), or nil when it is not a number. `decimalComma` says which mark is
    /// the decimal one when a number holds only one kind of mark.
    public static func canonical(_ text: String, decimalComma: Bool) -> String? {
        var t = text.trimmingCharacters(in: .whitespacesAndNewlines)
        var negative = false
        if t.hasPrefix("("), t.hasSuffix(")") {
            negative = true
            t = String(t.dropFirst().dropLast())
        }
        for (symbol, _) in symbols { t = t.replacingOccurrences(of: symbol, with: "") }
        t = t.filter { !$0.isWhitespace && $0 != "'" && $0 != "\u{00A0}" && $0 != "\u{202F}" }
        // A trailing or leading ISO code ("12.50 EUR").
        t = t.trimmingCharacters(in: .letters)
        if t.hasPrefix("-") || t.hasPrefix("−") {
            negative.toggle()
            t = String(t.dropFirst())
        } else if t.hasPrefix("+") {
            t = String(t.dropFirst())
        }
        if t.hasSuffix("-") {
            negative.toggle()
            t = String(t.dropLast())
        }
        guard !t.isEmpty, t.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == "." || $0 == ",") }) else { return nil }
        let lastDot = t.lastIndex(of: ".")
        let lastComma = t.lastIndex(of: ",")
        let decimalMark: Character?
        switch (lastDot, lastComma) {
        case (nil, nil): decimalMark = nil
        case (let dot?, let comma?): decimalMark = dot > comma ? "." : ","
        case (_?, nil):
            // Several dots can only be grouping ("1.234.567").
            decimalMark = t.filter { $0 == "." }.count > 1 ? nil : (decimalComma && groupedThree(t, mark: ".") ? nil : ".")
        case (nil, _?):
            decimalMark = t.filter { $0 == "," }.count > 1 ? nil : (decimalComma || !groupedThree(t, mark: ",") ? "," : nil)
        }
        var whole = ""
        var fraction: String?
        for character in t {
            if character == decimalMark {
                guard fraction == nil else { return nil }
                fraction = ""
            } else if character == "." || character == "," {
                guard fraction == nil else { return nil }
            } else if fraction != nil {
                fraction!.append(character)
            } else {
                whole.append(character)
            }
        }
        if whole.isEmpty { whole = "0" }
        while whole.count > 1, whole.hasPrefix("0") { whole.removeFirst() }
        var result = whole
        if let fraction, !fraction.isEmpty { result += "." + fraction }
        return (negative && result.contains(where: { $0 != "0" && $0 != "." }) ? "-" : "") + result
    }

    /// "1,234" or "12,345,678": the mark separates groups of exactly three digits.
    static func groupedThree(_ t: String, mark: Character) -> Bool {
        let parts = t.split(separator: mark, omittingEmptySubsequences: false)
        guard parts.count > 1, let first = parts.first, (1...3).contains(first.count) else { return false }
        return parts.dropFirst().allSatisfy { $0.count == 3 }
    }

    /// Whether the file writes decimals with a comma, from its numbers: a number with both
    /// marks, or one mark followed by other than three digits, decides; else a `;`-separated
    /// file is taken as decimal-comma. Returns the decision and the sample that made it.
    public static func detectDecimalComma(_ samples: [String], delimiter: Character) -> (Bool, String?) {
        var comma = 0
        var point = 0
        var commaSample: String?
        var pointSample: String?
        for raw in samples {
            let t = raw.filter { $0.isNumber || $0 == "." || $0 == "," }
            guard !t.isEmpty else { continue }
            let lastDot = t.lastIndex(of: ".")
            let lastComma = t.lastIndex(of: ",")
            switch (lastDot, lastComma) {
            case (let dot?, let c?):
                if dot > c { point += 1; pointSample = pointSample ?? raw } else { comma += 1; commaSample = commaSample ?? raw }
            case (_?, nil):
                if t.filter({ $0 == "." }).count == 1, !groupedThree(t, mark: ".") { point += 1; pointSample = pointSample ?? raw }
            case (nil, _?):
                if t.filter({ $0 == "," }).count == 1, !groupedThree(t, mark: ",") { comma += 1; commaSample = commaSample ?? raw }
            default: break
            }
        }
        if comma > point { return (true, commaSample) }
        if point > comma { return (false, pointSample) }
        return (delimiter == ";", nil)
    }

    /// Canonical text rounded half up to `decimals` places ("10.5678" → "10.568").
    public static func rounded(_ canonical: String, decimals: Int) -> String {
        guard var value = Decimal(string: canonical, locale: Locale(identifier: "en_US_POSIX")) else { return canonical }
        var result = Decimal()
        NSDecimalRound(&result, &value, decimals, .plain)
        let text = NSDecimalNumber(decimal: result).stringValue
        return text
    }

    /// How many digits follow the decimal point of canonical text.
    public static func decimals(_ canonical: String) -> Int {
        guard let dot = canonical.firstIndex(of: ".") else { return 0 }
        return canonical.distance(from: dot, to: canonical.endIndex) - 1
    }
}

// MARK: - Dates

public enum DateOrder: String, Sendable, CaseIterable {
    case ymd, mdy, dmy

    /// The pattern shown to people, with the file's separator: `MM/dd/yyyy`.
    public func pattern(separator: Character) -> String {
        let s = String(separator)
        switch self {
        case .ymd: return "yyyy\(s)MM\(s)dd"
        case .mdy: return "MM\(s)dd\(s)yyyy"
        case .dmy: return "dd\(s)MM\(s)yyyy"
        }
    }

    /// Reads `--date-format`: `ymd`, `mdy`, `dmy`, or a pattern such as `dd.MM.yyyy`, `M/d/yyyy`.
    public init?(option: String) {
        if let order = DateOrder(rawValue: option.lowercased()) {
            self = order
            return
        }
        let letters = option.lowercased().filter { "ymd".contains($0) }
        var order = ""
        for letter in letters where order.last != letter { order.append(letter) }
        guard let parsed = DateOrder(rawValue: order) else { return nil }
        self = parsed
    }
}

public enum ImportDate {
    struct Parts {
        var a: Int, b: Int, c: Int
        var aDigits: Int, cDigits: Int
        var separator: Character
        var hour = 0, minute = 0, second = 0
        var hasTime = false
    }

    /// Splits "07/15/2023 08:11", "2023-07-15T08:11:00", "15.07.2023", "7/15/23 8:11 PM".
    static func parts(_ text: String) -> Parts? {
        let t = text.trimmingCharacters(in: .whitespaces)
        guard !t.isEmpty else { return nil }
        var datePart = t
        var timePart = ""
        if let split = t.firstIndex(where: { $0 == " " || $0 == "T" }) {
            datePart = String(t[..<split])
            timePart = String(t[t.index(after: split)...]).trimmingCharacters(in: .whitespaces)
        }
        guard let separator = datePart.first(where: { $0 == "-" || $0 == "/" || $0 == "." }) else { return nil }
        let fields = datePart.split(separator: separator, omittingEmptySubsequences: false)
        guard fields.count == 3 || (fields.count == 4 && fields[3].isEmpty) else { return nil }
        guard fields.prefix(3).allSatisfy({ !$0.isEmpty && $0.count <= 4 && $0.allSatisfy(\.isNumber) }),
            let a = Int(fields[0]), let b = Int(fields[1]), let c = Int(fields[2])
        else { return nil }
        var parts = Parts(a: a, b: b, c: c, aDigits: fields[0].count, cDigits: fields[2].count, separator: separator)
        if !timePart.isEmpty {
            var clock = timePart.uppercased()
            var pm: Bool?
            for (suffix, isPM) in [("PM", true), ("AM", false)] where clock.hasSuffix(suffix) {
                pm = isPM
                clock = String(clock.dropLast(2)).trimmingCharacters(in: .whitespaces)
            }
            // An offset or Z after the clock: the time is read as written, in the chosen zone.
            if let cut = clock.firstIndex(where: { $0 == "Z" || $0 == "+" }) { clock = String(clock[..<cut]) }
            let pieces = clock.split(separator: ":")
            guard (2...3).contains(pieces.count), let h = Int(pieces[0]), let m = Int(pieces[1]),
                let s = pieces.count == 3 ? Double(pieces[2]) : 0, (0..<60).contains(m), s >= 0, s < 61
            else { return nil }
            var hour = h
            if let pm {
                guard (1...12).contains(h) else { return nil }
                hour = h % 12 + (pm ? 12 : 0)
            }
            guard (0..<24).contains(hour) else { return nil }
            parts.hour = hour
            parts.minute = m
            parts.second = Int(s)
            parts.hasTime = true
        }
        return parts
    }

    /// The orders every sample fits, and the separator seen.
    public static func candidates(_ samples: [String]) -> (orders: [DateOrder], separator: Character) {
        var possible = Set(DateOrder.allCases)
        var separator: Character = "-"
        var seen = false
        for sample in samples {
            guard let p = parts(sample) else { continue }
            seen = true
            separator = p.separator
            for order in DateOrder.allCases where components(p, order) == nil { possible.remove(order) }
        }
        guard seen else { return ([], separator) }
        return (DateOrder.allCases.filter { possible.contains($0) }, separator)
    }

    static func components(_ p: Parts, _ order: DateOrder) -> (year: Int, month: Int, day: Int)? {
        let year: Int, month: Int, day: Int, yearDigits: Int
        switch order {
        case .ymd: (year, month, day, yearDigits) = (p.a, p.b, p.c, p.aDigits)
        case .mdy: (year, month, day, yearDigits) = (p.c, p.a, p.b, p.cDigits)
        case .dmy: (year, month, day, yearDigits) = (p.c, p.b, p.a, p.cDigits)
        }
        guard yearDigits == 4 || yearDigits == 2 else { return nil }
        if order == .ymd, yearDigits != 4 { return nil }
        if order != .ymd, p.aDigits > 2 { return nil }
        let fullYear = yearDigits == 2 ? (year < 70 ? 2000 + year : 1900 + year) : year
        guard (1...12).contains(month), (1...31).contains(day), fullYear >= 1900 else { return nil }
        return (fullYear, month, day)
    }

    /// The instant a cell names, read in `order` and `timeZone` (a date alone: midnight).
    public static func date(_ text: String, order: DateOrder, timeZone: TimeZone) -> Date? {
        guard let p = parts(text), let ymd = components(p, order) else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let components = DateComponents(
            year: ymd.year, month: ymd.month, day: ymd.day, hour: p.hour, minute: p.minute, second: p.second)
        guard let date = calendar.date(from: components) else { return nil }
        // 31 February rolls over in Calendar: refuse it.
        let back = calendar.dateComponents([.year, .month, .day], from: date)
        guard back.year == ymd.year, back.month == ymd.month, back.day == ymd.day else { return nil }
        return date
    }
}

// MARK: - The plan an import makes

/// What an import would do: the cars it needs, one write per row it can take, every row it
/// cannot take with the reason, and what it detected (shown before anything is written).
public struct ImportPlan: Sendable {
    public struct Car: Sendable, Equatable {
        public var name: String
        public var make: String?
        public var model: String?
        public var year: Int?
        public var distanceUnit: String
        public var volumeUnit: String
    }

    public struct Write: Sendable {
        public var line: Int
        /// The car's name for a fill-up (its `vehicleId` is filled in when the car is known).
        public var car: String?
        public var method: String
        public var body: [String: JSONValue]
        /// Derived from the file's format and the row's own cells (and how many identical rows
        /// came before it), so importing the same file again sends the same keys.
        public var idempotencyKey: String
        /// The economy the file itself states for this row (Fuelly's mpg, aCar's Fuel
        /// Efficiency, LubeLogger's FuelEconomy), for comparison.
        public var fileEconomy: Double?
    }

    public struct Rejection: Sendable, Equatable {
        public var line: Int
        public var reason: String
    }

    public var format: String
    public var cars: [Car] = []
    public var writes: [Write] = []
    public var rejected: [Rejection] = []
    /// `(what, value, how it was found)`: units, date order, decimal mark, currency…
    public var detected: [(String, String, String)] = []
    /// Whether an ambiguity was resolved by a default the user should look at.
    public var ambiguous: [String] = []
    /// The unit the file's economy column is in (`mpg`, `l/100km`…), when it has one.
    public var economyUnit: String?

    public init(format: String) { self.format = format }
}

/// Choices the user may force; anything nil is detected.
public struct ImportSettings: Sendable {
    public var dateOrder: DateOrder?
    public var decimalComma: Bool?
    public var distanceUnit: String?
    public var volumeUnit: String?
    public var currency: String?
    public var timeZone: TimeZone = .current
    /// LubeLogger (one car per file) and `--car`: the car's nickname.
    public var car: String?
    public var fileName = "import.csv"
    /// Bank CSV: target field → column name (or `#N`, 1-based).
    public var map: [String: String] = [:]
    public var category: String?
    public var debits: String?

    public init() {}
}

enum ImportKey {
    /// `import-<format>-<sha256 of the scope, the row's trimmed cells and its occurrence>`.
    static func make(format: String, scope: String, cells: [String], occurrence: Int) -> String {
        let material = ([format, scope] + cells.map { $0.trimmingCharacters(in: .whitespaces) } + ["\(occurrence)"])
            .joined(separator: "\u{1F}")
        return "import-\(format)-" + String(Crypto.sha256Hex(material).prefix(48))
    }
}

// MARK: - Shared row handling

/// A table with named columns (header names lowercased and trimmed).
struct CSVTable {
    var header: [String]
    var rows: [ImportCSV.Row]

    /// A file with one header row: its table (header names normalised), its delimiter and
    /// the header as written (for messages).
    static func read(_ data: Data) throws -> (CSVTable, Character, written: [String]) {
        let text = ImportCSV.text(data)
        let delimiter = ImportCSV.delimiter(text)
        let rows = ImportCSV.rows(text, delimiter: delimiter)
        guard let first = rows.first else { throw ServiceError.invalid("file", "is empty") }
        return (CSVTable(header: first.cells.map(CSVTable.normalise), rows: Array(rows.dropFirst())), delimiter, first.cells)
    }

    func index(_ names: [String]) -> Int? {
        for name in names { if let i = header.firstIndex(of: name) { return i } }
        return nil
    }

    func value(_ row: ImportCSV.Row, _ index: Int?) -> String? {
        guard let index, index < row.cells.count else { return nil }
        let v = row.cells[index].trimmingCharacters(in: .whitespacesAndNewlines)
        return v.isEmpty ? nil : v
    }

    static func normalise(_ name: String) -> String {
        name.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
    }
}

/// Turns the cells of one fill-up into the body of `records.fillup.add`, or a reason.
struct FillupBuilder {
    var format: String
    var decimalComma: Bool
    var dateOrder: DateOrder
    var timeZone: TimeZone
    var currency: String
    var occurrences: [String: Int] = [:]

    struct Cells {
        var line: Int
        var raw: [String]
        var car: String
        var date: String?
        var odometer: String?
        var trip: String?
        var volume: String?
        var pricePerUnit: String?
        var total: String?
        var full: Bool
        var missed: Bool
        var note: String?
        var economy: String?
        var currency: String?
    }

    func number(_ text: String?) -> String? {
        text.flatMap { ImportNumber.canonical($0, decimalComma: decimalComma) }
    }

    mutating func build(_ c: Cells, into plan: inout ImportPlan) {
        func reject(_ reason: String) { plan.rejected.append(.init(line: c.line, reason: reason)) }
        guard let dateText = c.date else { return reject("no date") }
        guard let date = ImportDate.date(dateText, order: dateOrder, timeZone: timeZone) else {
            return reject("date \"\(dateText)\" does not read as \(dateOrder.pattern(separator: "/"))")
        }
        var body: [String: JSONValue] = ["date": .string(WireTime.format(date)), "full": .bool(c.full), "missed": .bool(c.missed)]
        guard let volumeText = c.volume else { return reject("no volume") }
        guard let volume = number(volumeText) else { return reject("volume \"\(volumeText)\" is not a number") }
        guard (Decimal(string: volume) ?? 0) > 0 else { return reject("volume must be greater than 0 (got \(volumeText))") }
        body["volume"] = quantity(volume)
        var hasDistance = false
        if let text = c.odometer {
            guard let odometer = number(text) else { return reject("odometer \"\(text)\" is not a number") }
            if (Decimal(string: odometer) ?? 0) > 0 {
                body["odometer"] = quantity(odometer)
                hasDistance = true
            }
        }
        if let text = c.trip {
            guard let trip = number(text) else { return reject("distance \"\(text)\" is not a number") }
            if (Decimal(string: trip) ?? 0) > 0 {
                body["trip"] = quantity(trip)
                hasDistance = true
            }
        }
        guard hasDistance else { return reject("no odometer reading and no distance driven") }
        let currency = (c.currency ?? self.currency).uppercased()
        body["currency"] = .string(currency)
        var hasPrice = false
        if let text = c.pricePerUnit, let price = number(text), (Decimal(string: price) ?? 0) > 0 {
            let rounded = ImportNumber.rounded(price, decimals: Money.exponent(currency) + 3)
            if let value = try? Money.parseUnitPrice(rounded, currency: currency, field: "price") {
                body["pricePerUnitMinor"] = .number(.init(value))
                hasPrice = true
            }
        } else if let text = c.pricePerUnit, number(text) == nil {
            return reject("price \"\(text)\" is not a number")
        }
        if let text = c.total, let total = number(text), (Decimal(string: total) ?? 0) > 0 {
            let rounded = ImportNumber.rounded(total, decimals: Money.exponent(currency))
            if let minor = try? Money.parse(rounded, currency: currency, field: "total") {
                body["totalMinor"] = .number(.init(minor))
                hasPrice = true
            }
        } else if let text = c.total, number(text) == nil {
            return reject("total \"\(text)\" is not a number")
        }
        guard hasPrice else { return reject("no price: neither a price per unit nor a total above 0") }
        if let note = c.note { body["note"] = .string(String(note.unicodeScalars.prefix(500))) }
        let economy = number(c.economy).flatMap { Double($0) }.flatMap { $0 > 0 ? $0 : nil }
        let keyMaterial = c.raw.joined(separator: "\u{1F}")
        occurrences[c.car + "\u{1F}" + keyMaterial, default: 0] += 1
        let key = ImportKey.make(
            format: format, scope: c.car.lowercased(), cells: c.raw, occurrence: occurrences[c.car + "\u{1F}" + keyMaterial]!)
        plan.writes.append(
            .init(line: c.line, car: c.car, method: "records.fillup.add", body: body, idempotencyKey: key, fileEconomy: economy))
    }

    /// At most 3 decimals, as the service keeps them.
    func quantity(_ canonical: String) -> JSONValue {
        .number(JSONNumber(text: ImportNumber.rounded(canonical, decimals: 3)) ?? 0)
    }
}

/// Yes/No, true/false, 1/0, x.
func importFlag(_ text: String?) -> Bool {
    guard let t = text?.trimmingCharacters(in: .whitespaces).lowercased() else { return false }
    return ["1", "yes", "y", "true", "x", "t", "on", "ja", "oui", "sí", "si"].contains(t)
}

func detectDates(_ samples: [String], settings: ImportSettings, preferred: DateOrder, hint: String? = nil, into plan: inout ImportPlan)
    -> DateOrder
{
    let (orders, separator) = ImportDate.candidates(samples)
    if let forced = settings.dateOrder {
        plan.detected.append(("dates", forced.pattern(separator: separator), "--date-format"))
        return forced
    }
    if orders.count == 1 {
        plan.detected.append(("dates", orders[0].pattern(separator: separator), hint ?? "the only order every date fits"))
        return orders[0]
    }
    if orders.isEmpty {
        plan.detected.append(("dates", preferred.pattern(separator: separator), "no order fits every date; rows that do not read are listed"))
        plan.ambiguous.append("dates")
        return preferred
    }
    let chosen = orders.contains(preferred) ? preferred : orders[0]
    let others = orders.filter { $0 != chosen }.map { $0.pattern(separator: separator) }.joined(separator: ", ")
    plan.detected.append(
        ("dates", chosen.pattern(separator: separator),
         hint ?? "every date also fits \(others): check, or pass --date-format"))
    if hint == nil { plan.ambiguous.append("dates") }
    return chosen
}

func detectDecimals(_ samples: [String], delimiter: Character, settings: ImportSettings, into plan: inout ImportPlan) -> Bool {
    if let forced = settings.decimalComma {
        plan.detected.append(("decimal mark", forced ? "comma" : "point", forced ? "--decimal-comma" : "--decimal-point"))
        return forced
    }
    let (comma, sample) = ImportNumber.detectDecimalComma(samples, delimiter: delimiter)
    plan.detected.append(
        ("decimal mark", comma ? "comma" : "point",
         sample.map { "from \"\($0)\"" } ?? (delimiter == ";" ? "a ;-separated file" : "no number says otherwise")))
    return comma
}

func describeDelimiter(_ d: Character) -> String { d == "\t" ? "tab" : String(d) }

// MARK: - Fuelly

/// Fuelly's CSV export: one row per fill-up, every car in one file.
/// `car_name, model, mpg, odometer, miles, gallons, price, city_percentage, fuelup_date,
/// date_added, tags, notes, missed_fuelup, partial_fuelup, latitude, longitude, brand`; a
/// metric account has `l/100km` (or `km/l`), `km` and `litres`. `price` is per unit.
public enum FuellyParser {
    public static func plan(_ data: Data, settings: ImportSettings) throws -> ImportPlan {
        let (table, delimiter, columns) = try CSVTable.read(data)
        guard let dateColumn = table.index(["fuelup_date"]), table.index(["gallons", "litres", "liters"]) != nil else {
            throw ServiceError.invalid(
                "file", "is not a Fuelly export: it needs fuelup_date and gallons (or litres) columns (columns: \(columns.joined(separator: ", ")))")
        }
        var plan = ImportPlan(format: "fuelly")
        plan.detected.append(("columns", "\(table.header.count), separated by \(describeDelimiter(delimiter))", "header row"))
        let carColumn = table.index(["car_name", "car", "vehicle"])
        let modelColumn = table.index(["model"])
        let odometerColumn = table.index(["odometer", "odo"])
        let distanceColumn = table.index(["miles", "km", "kilometers", "kilometres", "distance"])
        let volumeColumn = table.index(["gallons", "litres", "liters"])
        let priceColumn = table.index(["price", "price_per_unit"])
        let totalColumn = table.index(["total_price", "total", "cost"])
        let economyColumn = table.index(["mpg", "l/100km", "km/l", "mpg_uk", "mpg (uk)"])
        let notesColumn = table.index(["notes", "note"])
        let missedColumn = table.index(["missed_fuelup", "missed"])
        let partialColumn = table.index(["partial_fuelup", "partial"])
        let brandColumn = table.index(["brand"])
        // Units from the column names.
        let distanceName = distanceColumn.map { table.header[$0] } ?? "miles"
        let volumeName = volumeColumn.map { table.header[$0] } ?? "gallons"
        let detectedDistance = ["km", "kilometers", "kilometres"].contains(distanceName) ? "km" : "mi"
        let detectedVolume = ["litres", "liters", "l"].contains(volumeName) ? "l" : "gal"
        let distanceUnit = settings.distanceUnit ?? detectedDistance
        let volumeUnit = settings.volumeUnit ?? detectedVolume
        plan.detected.append(("distance", distanceUnit, settings.distanceUnit != nil ? "--distance-unit" : "column \"\(distanceName)\""))
        plan.detected.append(("volume", volumeUnit, settings.volumeUnit != nil ? "--volume-unit" : "column \"\(volumeName)\""))
        plan.economyUnit = economyColumn.map { table.header[$0] }
        let samples = table.rows.compactMap { table.value($0, dateColumn) }
        let order = detectDates(samples, settings: settings, preferred: .mdy, into: &plan)
        let numbers = table.rows.flatMap { row in
            [odometerColumn, distanceColumn, volumeColumn, priceColumn, totalColumn].compactMap { table.value(row, $0) }
        }
        let comma = detectDecimals(numbers, delimiter: delimiter, settings: settings, into: &plan)
        let currency = (settings.currency ?? "USD").uppercased()
        plan.detected.append(("currency", currency, settings.currency != nil ? "--currency" : "Fuelly does not say; default"))
        plan.detected.append(("time zone", settings.timeZone.identifier, "dates are local days in this zone"))
        var builder = FillupBuilder(format: "fuelly", decimalComma: comma, dateOrder: order, timeZone: settings.timeZone, currency: currency)
        for row in table.rows {
            let car = settings.car ?? table.value(row, carColumn) ?? "Fuelly car"
            if !plan.cars.contains(where: { $0.name.lowercased() == car.lowercased() }) {
                plan.cars.append(
                    .init(name: car, make: nil, model: table.value(row, modelColumn), year: nil, distanceUnit: distanceUnit, volumeUnit: volumeUnit))
            }
            var note = table.value(row, notesColumn)
            if let brand = table.value(row, brandColumn) { note = [note, brand].compactMap { $0 }.joined(separator: " · ") }
            builder.build(
                .init(
                    line: row.line, raw: row.cells, car: car, date: table.value(row, dateColumn),
                    odometer: table.value(row, odometerColumn),
                    trip: table.value(row, distanceColumn), volume: table.value(row, volumeColumn),
                    pricePerUnit: table.value(row, priceColumn), total: table.value(row, totalColumn),
                    full: !importFlag(table.value(row, partialColumn)), missed: importFlag(table.value(row, missedColumn)),
                    note: note, economy: table.value(row, economyColumn)),
                into: &plan)
        }
        return plan
    }
}

// MARK: - aCar

/// aCar's CSV export: sections, each a title line (`Metadata`, `Vehicles`, `Fill-Up Records`,
/// `Event Records`…, or in older exports `## Vehicle`, `## Fill-Up Records`) then a header row
/// and rows. Fill-ups name their vehicle; Metadata names the date format.
public enum ACarParser {
    static let sectionNames: Set<String> = [
        "metadata", "vehicle", "vehicles", "fill-up records", "fill-ups", "fillups", "event records", "service records",
        "expense records", "trip records", "services", "expenses", "trips", "reminders", "tags",
    ]

    static func sectionTitle(_ row: ImportCSV.Row) -> String? {
        let filled = row.cells.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard filled.count == 1, let only = filled.first, row.cells.first?.trimmingCharacters(in: .whitespaces) == only else { return nil }
        if only.hasPrefix("#") { return only.drop(while: { $0 == "#" }).trimmingCharacters(in: .whitespaces).lowercased() }
        return sectionNames.contains(only.lowercased()) ? only.lowercased() : nil
    }

    public static func plan(_ data: Data, settings: ImportSettings) throws -> ImportPlan {
        let text = ImportCSV.text(data)
        let delimiter = ImportCSV.delimiter(text)
        let rows = ImportCSV.rows(text, delimiter: delimiter)
        var sections: [String: CSVTable] = [:]
        var order: [String] = []
        var current: String?
        for row in rows {
            if let title = sectionTitle(row) {
                current = title
                order.append(title)
                continue
            }
            guard let name = current else { continue }
            if sections[name] == nil {
                sections[name] = CSVTable(header: row.cells.map(CSVTable.normalise), rows: [])
            } else {
                sections[name]!.rows.append(row)
            }
        }
        guard let fills = sections["fill-up records"] ?? sections["fill-ups"] ?? sections["fillups"] else {
            throw ServiceError.invalid(
                "file", "is not an aCar export: no Fill-Up Records section (sections: \(order.isEmpty ? "none" : order.joined(separator: ", ")))")
        }
        var plan = ImportPlan(format: "acar")
        plan.detected.append(("sections", order.joined(separator: ", "), "separated by \(describeDelimiter(delimiter))"))
        // Vehicles.
        let vehicles = sections["vehicles"] ?? sections["vehicle"]
        var carUnits: [String: (String, String)] = [:]
        if let vehicles {
            let name = vehicles.index(["name", "vehicle"])
            for row in vehicles.rows {
                guard let nickname = vehicles.value(row, name) else { continue }
                let distance = unit(distance: vehicles.value(row, vehicles.index(["distance unit"]))) ?? "mi"
                let volume = unit(volume: vehicles.value(row, vehicles.index(["volume unit"]))) ?? "gal"
                carUnits[nickname.lowercased()] = (distance, volume)
                plan.cars.append(
                    .init(
                        name: nickname, make: vehicles.value(row, vehicles.index(["make"])),
                        model: vehicles.value(row, vehicles.index(["model"])),
                        year: vehicles.value(row, vehicles.index(["year"])).flatMap { Int($0) },
                        distanceUnit: settings.distanceUnit ?? distance, volumeUnit: settings.volumeUnit ?? volume))
            }
        }
        // The date format from Metadata, else from the dates.
        var hint: String?
        var forced = settings
        if forced.dateOrder == nil, let meta = sections["metadata"], let row = meta.rows.first,
            let format = meta.value(row, meta.index(["date format"])), let order = DateOrder(option: format)
        {
            forced.dateOrder = order
            hint = "Metadata \"Date Format\" \(format)"
        }
        let dateColumn = fills.index(["date"])
        let samples = fills.rows.compactMap { fills.value($0, dateColumn) }
        let dateOrder: DateOrder
        if let hinted = forced.dateOrder, settings.dateOrder == nil {
            dateOrder = hinted
            plan.detected.append(("dates", hinted.pattern(separator: ImportDate.candidates(samples).separator), hint ?? ""))
        } else {
            dateOrder = detectDates(samples, settings: settings, preferred: .mdy, into: &plan)
        }
        let columns = (
            vehicle: fills.index(["vehicle"]), time: fills.index(["time"]), odometer: fills.index(["odometer reading", "odometer"]),
            distanceUnit: fills.index(["distance unit"]), volume: fills.index(["volume"]), volumeUnit: fills.index(["volume unit"]),
            price: fills.index(["price per unit"]), total: fills.index(["total cost"]),
            partial: fills.index(["partial fill-up?", "partial fill-up", "partial"]),
            missed: fills.index(["previously missed fill-ups?", "previously missed fill-ups", "missed"]),
            economy: fills.index(["fuel efficiency"]), notes: fills.index(["notes"]), brand: fills.index(["fuel brand"]),
            economyUnit: fills.index(["fuel efficiency unit"]))
        let numbers = fills.rows.flatMap { row in
            [columns.odometer, columns.volume, columns.price, columns.total].compactMap { fills.value(row, $0) }
        }
        let comma = detectDecimals(numbers, delimiter: delimiter, settings: settings, into: &plan)
        let signs = fills.rows.compactMap { fills.value($0, columns.total) ?? fills.value($0, columns.price) }
        let signCurrency = signs.lazy.compactMap(ImportNumber.currency(in:)).first
        let currency = (settings.currency ?? signCurrency ?? "USD").uppercased()
        plan.detected.append(
            ("currency", currency, settings.currency != nil ? "--currency" : signCurrency != nil ? "the prices' sign" : "default"))
        plan.detected.append(("time zone", settings.timeZone.identifier, "dates and times are local in this zone"))
        plan.economyUnit = fills.rows.first.flatMap { fills.value($0, columns.economyUnit) }
        var builder = FillupBuilder(format: "acar", decimalComma: comma, dateOrder: dateOrder, timeZone: settings.timeZone, currency: currency)
        for row in fills.rows {
            let car = settings.car ?? fills.value(row, columns.vehicle) ?? "aCar vehicle"
            let distance = unit(distance: fills.value(row, columns.distanceUnit))
            let volume = unit(volume: fills.value(row, columns.volumeUnit))
            if let index = plan.cars.firstIndex(where: { $0.name.lowercased() == car.lowercased() }) {
                // A row in other units than its car (aCar lets each entry have its own).
                let known = plan.cars[index]
                if settings.distanceUnit == nil, let distance, distance != known.distanceUnit, carUnits[car.lowercased()] != nil {
                    plan.rejected.append(.init(line: row.line, reason: "distance in \(distance) while \(car) counts in \(known.distanceUnit)"))
                    continue
                }
                if settings.volumeUnit == nil, let volume, volume != known.volumeUnit, carUnits[car.lowercased()] != nil {
                    plan.rejected.append(.init(line: row.line, reason: "volume in \(volume) while \(car) counts in \(known.volumeUnit)"))
                    continue
                }
            } else {
                plan.cars.append(
                    .init(
                        name: car, make: nil, model: nil, year: nil, distanceUnit: settings.distanceUnit ?? distance ?? "mi",
                        volumeUnit: settings.volumeUnit ?? volume ?? "gal"))
            }
            var date = fills.value(row, dateColumn)
            if let d = date, let time = fills.value(row, columns.time) { date = d + " " + time }
            var note = fills.value(row, columns.notes)
            if let brand = fills.value(row, columns.brand) { note = [note, brand].compactMap { $0 }.joined(separator: " · ") }
            let totalText = fills.value(row, columns.total)
            builder.build(
                .init(
                    line: row.line, raw: row.cells, car: car, date: date, odometer: fills.value(row, columns.odometer),
                    trip: nil, volume: fills.value(row, columns.volume), pricePerUnit: fills.value(row, columns.price),
                    total: totalText, full: !importFlag(fills.value(row, columns.partial)),
                    missed: importFlag(fills.value(row, columns.missed)), note: note,
                    economy: fills.value(row, columns.economy), currency: settings.currency == nil ? totalText.flatMap(ImportNumber.currency(in:)) : nil),
                into: &plan)
        }
        for (name, table) in sections where !["metadata", "vehicles", "vehicle", "fill-up records", "fill-ups", "fillups"].contains(name) {
            for row in table.rows {
                plan.rejected.append(.init(line: row.line, reason: "a row of \"\(name)\": Logbook imports aCar's fill-ups only"))
            }
        }
        plan.rejected.sort { $0.line < $1.line }
        for car in plan.cars {
            plan.detected.append(("units of \(car.name)", "\(car.distanceUnit), \(car.volumeUnit)", carUnits[car.name.lowercased()] != nil ? "Vehicles section" : "the fill-ups' unit columns"))
        }
        return plan
    }

    static func unit(distance text: String?) -> String? {
        guard let t = text?.lowercased() else { return nil }
        if t.hasPrefix("mi") { return "mi" }
        if t.hasPrefix("k") { return "km" }
        return nil
    }

    static func unit(volume text: String?) -> String? {
        guard let t = text?.lowercased() else { return nil }
        if t.contains("uk") || t.contains("imp") { return "ukgal" }
        if t.contains("gal") { return "gal" }
        if t.hasPrefix("l") { return "l" }
        return nil
    }
}

// MARK: - LubeLogger

/// LubeLogger's fuel export (one vehicle per file): `Date, Odometer, FuelConsumed, Cost,
/// FuelEconomy, IsFillToFull, MissedFuelUp, Notes` (and `Tags`, extra fields). `Cost` is the
/// total. The file names no units: they are read from how FuelEconomy relates to the
/// odometer and fuel columns (L/100 km, distance per volume, or miles per UK gallon from litres).
public enum LubeLoggerParser {
    public static func plan(_ data: Data, settings: ImportSettings) throws -> ImportPlan {
        let (table, delimiter, columns) = try CSVTable.read(data)
        let c = (
            date: table.index(["date", "fuelup_date"]), odometer: table.index(["odometer", "odo"]),
            volume: table.index(["fuelconsumed", "gallons", "liters", "litres", "quantity", "qty"]),
            total: table.index(["cost", "total cost", "totalcost", "price"]), economy: table.index(["fueleconomy", "fuel economy"]),
            full: table.index(["isfilltofull", "filled up"]), partial: table.index(["partialfuelup", "partial_fuelup"]),
            missed: table.index(["missedfuelup", "missed_fuelup"]), notes: table.index(["notes", "note"]))
        guard c.date != nil, c.volume != nil else {
            throw ServiceError.invalid(
                "file", "is not a LubeLogger fuel export: it needs Date and FuelConsumed columns (columns: \(columns.joined(separator: ", ")))")
        }
        var plan = ImportPlan(format: "lubelogger")
        plan.detected.append(("columns", "\(table.header.count), separated by \(describeDelimiter(delimiter))", "header row"))
        let samples = table.rows.compactMap { table.value($0, c.date) }
        let order = detectDates(samples, settings: settings, preferred: .mdy, into: &plan)
        let numbers = table.rows.flatMap { row in [c.odometer, c.volume, c.total, c.economy].compactMap { table.value(row, $0) } }
        let comma = detectDecimals(numbers, delimiter: delimiter, settings: settings, into: &plan)
        let (distance, volume, how, economyUnit) = units(table, c.odometer, c.volume, c.economy, c.full, c.partial, comma: comma)
        let distanceUnit = settings.distanceUnit ?? distance
        let volumeUnit = settings.volumeUnit ?? volume
        plan.detected.append(("units", "\(distanceUnit), \(volumeUnit)", settings.distanceUnit != nil || settings.volumeUnit != nil ? "options" : how))
        if settings.distanceUnit == nil && settings.volumeUnit == nil && economyUnit == nil { plan.ambiguous.append("units") }
        plan.economyUnit = economyUnit
        let currency = (settings.currency ?? "USD").uppercased()
        plan.detected.append(("currency", currency, settings.currency != nil ? "--currency" : "LubeLogger does not say; default"))
        plan.detected.append(("time zone", settings.timeZone.identifier, "dates are local days in this zone"))
        let car = settings.car ?? URL(fileURLWithPath: settings.fileName).deletingPathExtension().lastPathComponent
        plan.detected.append(("car", car, settings.car != nil ? "--car" : "the file's name (LubeLogger exports one vehicle per file; --car to choose)"))
        plan.cars.append(.init(name: car, make: nil, model: nil, year: nil, distanceUnit: distanceUnit, volumeUnit: volumeUnit))
        var builder = FillupBuilder(format: "lubelogger", decimalComma: comma, dateOrder: order, timeZone: settings.timeZone, currency: currency)
        for row in table.rows {
            let full: Bool =
                if c.full != nil { table.value(row, c.full).map { importFlag($0) } ?? true } else { !importFlag(table.value(row, c.partial)) }
            builder.build(
                .init(
                    line: row.line, raw: row.cells, car: car, date: table.value(row, c.date), odometer: table.value(row, c.odometer),
                    trip: nil, volume: table.value(row, c.volume), pricePerUnit: nil, total: table.value(row, c.total), full: full,
                    missed: importFlag(table.value(row, c.missed)), note: table.value(row, c.notes), economy: table.value(row, c.economy)),
                into: &plan)
        }
        return plan
    }

    /// Units from FuelEconomy against consecutive full fills: economy ≈ distance/volume (mi and
    /// US gal), ≈ 100·volume/distance (km and L), ≈ distance/volume × 4.54609 (mi and L, UK mpg).
    static func units(
        _ table: CSVTable, _ odometer: Int?, _ volume: Int?, _ economy: Int?, _ full: Int?, _ partial: Int?, comma: Bool
    ) -> (String, String, String, String?) {
        let number = { (text: String?) in text.flatMap { ImportNumber.canonical($0, decimalComma: comma) }.flatMap(Double.init) }
        var votes: [String: Int] = [:]
        var previousOdometer: Double?
        var previousFull = false
        for row in table.rows {
            let isFull = full != nil ? table.value(row, full).map { importFlag($0) } ?? true : !importFlag(table.value(row, partial))
            guard let odo = number(table.value(row, odometer)), let vol = number(table.value(row, volume)), vol > 0 else {
                previousOdometer = nil
                continue
            }
            defer {
                previousOdometer = odo
                previousFull = isFull
            }
            guard isFull, previousFull, let before = previousOdometer, odo > before,
                let stated = number(table.value(row, economy)), stated > 0
            else { continue }
            let ratio = (odo - before) / vol
            let close = { (a: Double, b: Double) in abs(a - b) <= max(0.02 * b, 0.02) }
            if close(stated, ratio) { votes["per", default: 0] += 1 }
            if close(stated, 100 / ratio) { votes["l100", default: 0] += 1 }
            if close(stated, ratio * 4.54609) { votes["ukmpg", default: 0] += 1 }
        }
        guard let best = votes.max(by: { $0.value < $1.value }) else {
            return ("mi", "gal", "not detected (no FuelEconomy to compare); assumed: pass --distance-unit and --volume-unit", nil)
        }
        let agree = best.value == 1 ? "1 fill-up agrees" : "\(best.value) fill-ups agree"
        switch best.key {
        case "l100": return ("km", "l", "FuelEconomy is litres per 100 km (\(agree))", "l/100km")
        case "ukmpg": return ("mi", "l", "FuelEconomy is miles per UK gallon from litres (\(agree))", "mpg (UK)")
        default:
            return ("mi", "gal", "FuelEconomy is distance per volume (\(agree)): taken as mpg; km/L needs --distance-unit km --volume-unit l", "mpg")
        }
    }
}

// MARK: - Bank CSV → expenses

/// A bank's CSV with a column mapping: `--map date=Booking date,amount=Amount,name=Description`
/// (targets: date, amount, name, category, currency, description; a column is named by its
/// header or by `#N`, 1-based). Money out is taken: with signed amounts, the negative ones
/// (`--debits positive` for banks that write them positive); money in is listed as not taken.
public enum BankParser {
    public static let targets = ["date", "amount", "name", "category", "currency", "description"]

    public static func plan(_ data: Data, settings: ImportSettings) throws -> ImportPlan {
        for required in ["date", "amount", "name"] where settings.map[required] == nil {
            throw ServiceError.invalid("map", "needs \(required)=COLUMN (targets: \(targets.joined(separator: ", ")))")
        }
        for key in settings.map.keys where !targets.contains(key) {
            throw ServiceError.invalid("map", "unknown target \"\(key)\" (targets: \(targets.joined(separator: ", ")))")
        }
        let text = ImportCSV.text(data)
        let delimiter = ImportCSV.delimiter(text)
        let rows = ImportCSV.rows(text, delimiter: delimiter)
        guard let first = rows.first else { throw ServiceError.invalid("file", "is empty") }
        let header = first.cells.map(CSVTable.normalise)
        var columns: [String: Int] = [:]
        for (target, column) in settings.map {
            if column.hasPrefix("#"), let n = Int(column.dropFirst()), n >= 1 {
                columns[target] = n - 1
            } else if let i = header.firstIndex(of: CSVTable.normalise(column)) {
                columns[target] = i
            } else {
                throw ServiceError.invalid("map", "\(target)=\(column): no such column (columns: \(first.cells.joined(separator: ", ")))")
            }
        }
        let table = CSVTable(header: header, rows: Array(rows.dropFirst()))
        var plan = ImportPlan(format: "expenses")
        plan.detected.append(("columns", "\(header.count), separated by \(describeDelimiter(delimiter))", "header row"))
        let samples = table.rows.compactMap { table.value($0, columns["date"]) }
        let order = detectDates(samples, settings: settings, preferred: .dmy, into: &plan)
        let amounts = table.rows.compactMap { table.value($0, columns["amount"]) }
        let comma = detectDecimals(amounts, delimiter: delimiter, settings: settings, into: &plan)
        let canonical = amounts.compactMap { ImportNumber.canonical($0, decimalComma: comma) }
        let anyNegative = canonical.contains { $0.hasPrefix("-") }
        let debits = settings.debits ?? (anyNegative ? "negative" : "all")
        plan.detected.append(
            ("money out", debits == "all" ? "every row" : "\(debits) amounts",
             settings.debits != nil ? "--debits" : anyNegative ? "the file has signed amounts" : "no amount is negative"))
        let currency = (settings.currency ?? "USD").uppercased()
        if columns["currency"] == nil {
            plan.detected.append(("currency", currency, settings.currency != nil ? "--currency" : "default (map currency=COLUMN or --currency)"))
        }
        plan.detected.append(("time zone", settings.timeZone.identifier, "dates are local days in this zone"))
        var occurrences: [String: Int] = [:]
        for row in table.rows {
            func reject(_ reason: String) { plan.rejected.append(.init(line: row.line, reason: reason)) }
            guard let dateText = table.value(row, columns["date"]) else { reject("no date"); continue }
            guard let date = ImportDate.date(dateText, order: order, timeZone: settings.timeZone) else {
                reject("date \"\(dateText)\" does not read as \(order.pattern(separator: "/"))")
                continue
            }
            guard let amountText = table.value(row, columns["amount"]) else { reject("no amount"); continue }
            guard var amount = ImportNumber.canonical(amountText, decimalComma: comma) else {
                reject("amount \"\(amountText)\" is not a number")
                continue
            }
            let negative = amount.hasPrefix("-")
            if negative { amount.removeFirst() }
            switch debits {
            case "negative" where !negative: reject("money in (\(amountText)), not an expense"); continue
            case "positive" where negative: reject("money in (\(amountText)), not an expense"); continue
            default: break
            }
            guard (Decimal(string: amount) ?? 0) > 0 else { reject("amount must be greater than 0 (got \(amountText))"); continue }
            let rowCurrency = (table.value(row, columns["currency"]) ?? currency).uppercased()
            guard rowCurrency.count == 3, rowCurrency.allSatisfy({ $0.isASCII && $0.isLetter }) else {
                reject("currency \"\(rowCurrency)\" is not a 3-letter code")
                continue
            }
            let minor: Int64
            do {
                minor = try Money.parse(amount, currency: rowCurrency, field: "amount")
            } catch let error as ServiceError {
                reject(error.message)
                continue
            } catch {
                reject("\(error)")
                continue
            }
            guard let nameText = table.value(row, columns["name"]) else { reject("no name"); continue }
            var body: [String: JSONValue] = [
                "date": .string(WireTime.format(date)), "amountMinor": .number(.init(minor)), "currency": .string(rowCurrency),
            ]
            let scalars = nameText.unicodeScalars
            body["name"] = .string(scalars.count > 80 ? String(String.UnicodeScalarView(scalars.prefix(79))) + "…" : nameText)
            var description = table.value(row, columns["description"])
            if scalars.count > 80 { description = [nameText, description].compactMap { $0 }.joined(separator: " — ") }
            if let description { body["description"] = .string(String(String.UnicodeScalarView(description.unicodeScalars.prefix(500)))) }
            if let category = table.value(row, columns["category"]) ?? settings.category {
                body["category"] = .string(String(String.UnicodeScalarView(category.unicodeScalars.prefix(40))))
            }
            let material = row.cells.joined(separator: "\u{1F}")
            occurrences[material, default: 0] += 1
            plan.writes.append(
                .init(
                    line: row.line, car: nil, method: "records.expense.add", body: body,
                    idempotencyKey: ImportKey.make(format: "expenses", scope: "", cells: row.cells, occurrence: occurrences[material]!),
                    fileEconomy: nil))
        }
        return plan
    }
}
