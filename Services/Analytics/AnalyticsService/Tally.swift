// The stored form of the catch counters (`catchTally`, Schema.swift "analytics.tallyRows" and
// "analytics.tallyBucketIds"):
// one row per user, species, water and bait at each of the two levels (the catch's species,
// and every species: CatchProjection.any), holding every condition bucket's count of that
// row in one `counts` BLOB. A catch and its conditions change two rows instead of
// forty-odd one-count rows, and a batch writes each row it touched once, merged in the
// UPDATE itself (Batch.swift; "Merged in place" below).
//
// A BLOB rather than an integer column per bucket: the buckets are the weather-fetcher's
// labels (open text: bands, "3 Bft", tide phases), so fixed columns would need a migration
// whenever a label is added, and most would be zero in any one row.
//
// A bucket is named in the counts by a number, its id in `tallyBucket` (Schema.swift
// "analytics.tallyBucketIds"), which holds its dimension code and its text once for the
// whole database: every bait's row of a user holds nearly the same forty-odd buckets, and
// their texts were three quarters of a row's bytes (docs/performance.md, "Buckets by
// number"). An id is given when a bucket is first counted, in that transaction, and never
// changes or goes, so a process keeps the ids it has read (`TallyBuckets`).
//
// The format: entries one after the other, sorted by bucket id, no zero counts; each entry is
//     the bucket's id (unsigned LEB128)
//     count (unsigned LEB128, at least 1)
// A row with no counts left is deleted. Sorted and without zeros, a row's bytes are the
// same however its counts were reached (a batch or one event at a time) once the ids are given.
import Foundation
import GRDB
import GRDBSQLite
import Synchronization

enum TallyCounts {
    /// The dimension codes: a code is its position here. Stored: append new dimensions,
    /// never reorder or remove one (that needs a migration rewriting every row).
    static let dimensionKeys: [String] = [
        "status", "temperatureBand", "pressureBand", "pressureTrend", "windForce", "windDirection", "sky",
        "timeOfDay", "moonPhase", "tidePhase", "tideHeight",
    ]
    static let statusCode: UInt8 = 0

    /// One count of a row, decoded: its bucket's id and the count.
    struct Entry: Equatable {
        var bucket: Int
        var n: Int
    }

    static func corrupt(_ detail: String) -> DatabaseError {
        DatabaseError(resultCode: .SQLITE_CORRUPT, message: "catchTally counts unreadable: \(detail)")
    }

    /// Reads entries from stored bytes, in their order.
    struct Reader {
        let bytes: UnsafeRawBufferPointer
        var offset = 0

        init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

        var atEnd: Bool { offset >= bytes.count }

        /// The next entry: its bucket id, its count and where it starts.
        @inline(__always) mutating func next() throws -> (bucket: Int, n: Int, start: Int) {
            let start = offset
            let bucket = try varint()
            let n = try varint()
            guard n > 0 else { throw corrupt("a zero count") }
            return (bucket, n, start)
        }

        @inline(__always) private mutating func varint() throws -> Int { try TallyCounts.varint(bytes, at: &offset) }
    }

    /// The unsigned LEB128 number at `offset` of `bytes`; `offset` moves past it.
    @inline(__always) static func varint(_ bytes: UnsafeRawBufferPointer, at offset: inout Int) throws -> Int {
        // (nearly every id, count and length is below 128: one byte)
        if offset < bytes.count, bytes[offset] < 0x80 {
            offset += 1
            return Int(bytes[offset - 1])
        }
        var value = 0
        var shift = 0
        while true {
            guard offset < bytes.count, shift < 63 else { throw corrupt("a number past the end") }
            let byte = bytes[offset]
            offset += 1
            value |= Int(byte & 0x7f) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
    }

    static func decode(_ bytes: UnsafeRawBufferPointer) throws -> [Entry] {
        var reader = Reader(bytes)
        var entries: [Entry] = []
        var last = -1
        while !reader.atEnd {
            let entry = try reader.next()
            guard entry.bucket > last else { throw corrupt("buckets out of order") }
            last = entry.bucket
            entries.append(Entry(bucket: entry.bucket, n: entry.n))
        }
        return entries
    }

    static func decode(_ data: Data) throws -> [Entry] {
        try data.withUnsafeBytes { try decode($0) }
    }

    /// One count of a row as its bucket's dimension code and text (`tallyBucket`), for
    /// reading the counts whole (tests, conversions).
    struct Named: Equatable {
        var code: UInt8
        var bucket: String
        var n: Int
    }

    /// `data`'s counts named through `db`'s `tallyBucket`.
    static func named(_ db: Database, _ data: Data) throws -> [Named] {
        let names = try TallyBuckets.load(db)
        return try decode(data).map { entry in
            guard entry.bucket < names.count, let name = names[entry.bucket] else {
                throw corrupt("bucket \(entry.bucket) has no name")
            }
            return Named(code: name.code, bucket: name.text, n: entry.n)
        }
    }

    /// The buckets of several rows summed (`merged`), sorted by code, then by their text's
    /// bytes: each bucket's code, text and total, and its counts by bait, `baitCount` of
    /// them per bucket one bucket after the other (one array, not one per bucket).
    struct Merged {
        var codes: [UInt8] = []
        var names: [String] = []
        /// Every byte of the name is ASCII: no other spelling is the same text to Swift.
        var ascii: [Bool] = []
        var totals: [Int] = []
        var perBait: [Int] = []
        let baitCount: Int

        /// `bucket`'s counts, by bait.
        func baits(_ bucket: Int) -> ArraySlice<Int> { perBait[(bucket * baitCount)..<((bucket + 1) * baitCount)] }

        /// The buckets of `code`: a run, as they are sorted by code.
        func buckets(of code: UInt8) -> Range<Int> {
            guard let start = codes.firstIndex(of: code) else { return 0..<0 }
            var end = start + 1
            while end < codes.count, codes[end] == code { end += 1 }
            return start..<end
        }
    }

    /// The buckets of several rows (each a range of `stored`, its bait an index below
    /// `baitCount`), summed, and named through `buckets` (which reads `db`'s `tallyBucket`
    /// for an id it does not know yet). Each row is merged into the buckets gathered so far
    /// with one cursor, as two sorted lists are merged: a user's rows mostly hold the same
    /// buckets, so an entry is nearly always the bucket at the cursor, one comparison of
    /// two ids. (Hashing every entry's text into nested maps cost more than the rest of a
    /// suggestion; taking the smallest of every row's next entry, as a k-way merge does,
    /// compared each bucket with every row twice: docs/performance.md, "A suggestion's
    /// size".) The entries are most of what a large answer adds, so each is counted in
    /// memory the merge owns (`Gathering`), without an array's checks ("What grows with a
    /// suggestion").
    static func merged(
        _ stored: [UInt8], rows: [Range<Int>], baits: [Int], baitCount: Int, names buckets: TallyBuckets,
        _ db: Database
    ) throws -> Merged {
        try stored.withUnsafeBytes { all in
            var gathering = Gathering(baitCount: baitCount)
            for (row, range) in rows.enumerated() {
                let bait = baits[row]
                var reader = Reader(UnsafeRawBufferPointer(rebasing: all[range]))
                var at = 0  // (in id order) every bucket before this has a smaller id than the row's next entry
                var last = -1
                while !reader.atEnd {
                    let entry = try reader.next()
                    // (out of order or twice, an id would get a second slot: a bucket listed twice)
                    guard entry.bucket > last else { throw corrupt("buckets out of order") }
                    last = entry.bucket
                    var slot = -1
                    while at < gathering.count {
                        let candidate = Int(gathering.order[at])
                        let id = gathering.ids[candidate]
                        if id == entry.bucket {
                            slot = candidate
                            break
                        }
                        if id > entry.bucket { break }
                        at += 1
                    }
                    if slot < 0 { slot = gathering.add(entry.bucket, at: at) }
                    gathering.totals[slot] += entry.n
                    gathering.perBait[slot * baitCount + bait] += entry.n
                    at += 1
                }
            }
            return try gathering.merged(names: buckets.names(db, for: gathering.allIds))
        }
    }

    /// The buckets a merge has gathered: each in a slot (in the order first seen), with its
    /// id, its total and its counts by bait; `order` lists the slots sorted by id. Grown by
    /// doubling.
    private struct Gathering: ~Copyable {
        let baitCount: Int
        var count = 0
        var capacity = 64  // (about every bucket of a user's catches: the weather-fetcher's bands)
        var order: UnsafeMutablePointer<Int32>
        var ids: UnsafeMutablePointer<Int>
        var totals: UnsafeMutablePointer<Int>
        var perBait: UnsafeMutablePointer<Int>

        init(baitCount: Int) {
            self.baitCount = baitCount
            order = .allocate(capacity: capacity)
            ids = .allocate(capacity: capacity)
            totals = .allocate(capacity: capacity)
            perBait = .allocate(capacity: capacity * baitCount)
        }

        deinit {
            order.deallocate()
            ids.deallocate()
            totals.deallocate()
            perBait.deallocate()
        }

        /// A new bucket at place `at` of the id order, counted zero so far: its slot.
        mutating func add(_ id: Int, at: Int) -> Int {
            if count == capacity { grow() }
            let slot = count
            (order + at + 1).moveInitialize(from: order + at, count: count - at)  // (the regions overlap)
            order[at] = Int32(slot)
            ids[slot] = id
            totals[slot] = 0
            (perBait + slot * baitCount).initialize(repeating: 0, count: baitCount)
            count += 1
            return slot
        }

        private mutating func grow() {
            func moved<T>(_ old: UnsafeMutablePointer<T>, _ count: Int, _ capacity: Int) -> UnsafeMutablePointer<T> {
                let new = UnsafeMutablePointer<T>.allocate(capacity: capacity)
                new.moveInitialize(from: old, count: count)
                old.deallocate()
                return new
            }
            let larger = capacity * 2
            order = moved(order, count, larger)
            ids = moved(ids, count, larger)
            totals = moved(totals, count, larger)
            perBait = moved(perBait, count * baitCount, larger * baitCount)
            capacity = larger
        }

        var allIds: UnsafeBufferPointer<Int> { UnsafeBufferPointer(start: ids, count: count) }

        /// The buckets sorted by code and text (their `rank` among the names).
        func merged(names: [TallyBuckets.Name?]) throws -> Merged {
            var merged = Merged(baitCount: baitCount)
            merged.codes.reserveCapacity(count)
            merged.names.reserveCapacity(count)
            merged.ascii.reserveCapacity(count)
            merged.totals.reserveCapacity(count)
            merged.perBait.reserveCapacity(count * baitCount)
            var slots: [(rank: Int, slot: Int)] = []
            slots.reserveCapacity(count)
            for slot in 0..<count {
                let id = ids[slot]
                guard id < names.count, let name = names[id] else { throw corrupt("bucket \(id) has no name") }
                slots.append((name.rank, slot))
            }
            slots.sort { $0.rank < $1.rank }
            for (_, slot) in slots {
                let name = names[ids[slot]]!
                merged.codes.append(name.code)
                merged.names.append(name.text)
                merged.ascii.append(name.ascii)
                merged.totals.append(totals[slot])
                merged.perBait.append(
                    contentsOf: UnsafeBufferPointer(start: perBait + slot * baitCount, count: baitCount))
            }
            return merged
        }
    }

    /// The stored bytes of `entries` (any order; zero counts left out; a bucket given twice
    /// is an error).
    static func encode(_ entries: [Entry]) throws -> [UInt8] {
        let sorted = entries.filter { $0.n != 0 }.sorted { $0.bucket < $1.bucket }
        var out: [UInt8] = []
        for (i, entry) in sorted.enumerated() {
            guard entry.n > 0 else { throw corrupt("a negative count") }
            guard entry.bucket >= 0 else { throw corrupt("a negative bucket id") }
            if i > 0, sorted[i - 1].bucket == entry.bucket { throw corrupt("a bucket twice") }
            append(entry.bucket, entry.n, to: &out)
        }
        return out
    }

    /// A change to one count of a row: its bucket's id, by how much (not 0).
    struct Change {
        var bucket: Int
        var delta: Int
    }

    /// `stored` (a row's bytes, possibly none) with `changes` (sorted by bucket id) added,
    /// written to `out`. A count taken below zero is an error, as the one-count rows' CHECK
    /// made it (the projection only takes out what it put in); taking from a bucket the row
    /// does not hold changes nothing, as their UPDATE of no row did.
    static func merge(_ stored: UnsafeRawBufferPointer, _ changes: [Change], into out: inout [UInt8]) throws {
        try changes.withUnsafeBufferPointer { try merge(stored, $0, into: &out) }
    }

    static func merge(
        _ stored: UnsafeRawBufferPointer, _ changes: UnsafeBufferPointer<Change>, into out: inout [UInt8]
    ) throws {
        var reader = Reader(stored)
        var entry = reader.atEnd ? nil : try reader.next()
        var i = 0
        while entry != nil || i < changes.count {
            let order: Int
            if let e = entry, i < changes.count {
                order = e.bucket - changes[i].bucket
            } else {
                order = entry == nil ? 1 : -1
            }
            if order < 0, let e = entry {
                // kept as it is
                out.append(contentsOf: UnsafeRawBufferPointer(rebasing: stored[e.start..<reader.offset]))
                let next = reader.atEnd ? nil : try reader.next()
                if let next, next.bucket <= e.bucket { throw corrupt("buckets out of order") }
                entry = next
            } else if order > 0 {
                let change = changes[i]
                if change.delta > 0 { append(change.bucket, change.delta, to: &out) }
                i += 1
            } else if let e = entry {
                let n = e.n + changes[i].delta
                guard n >= 0 else {
                    throw DatabaseError(resultCode: .SQLITE_CONSTRAINT_CHECK, message: "catchTally count below zero")
                }
                if n > 0 { append(e.bucket, n, to: &out) }
                let next = reader.atEnd ? nil : try reader.next()
                if let next, next.bucket <= e.bucket { throw corrupt("buckets out of order") }
                entry = next
                i += 1
            }
        }
    }

    static func append(_ bucket: Int, _ n: Int, to out: inout [UInt8]) {
        appendVarint(bucket, to: &out)
        appendVarint(n, to: &out)
    }

    static func appendVarint(_ value: Int, to out: inout [UInt8]) {
        var value = UInt(value)
        while value >= 0x80 {
            out.append(UInt8(value & 0x7f) | 0x80)
            value >>= 7
        }
        out.append(UInt8(value))
    }

    /// Byte order: memcmp, then the shorter first.
    static func compare(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        let common = min(a.count, b.count)
        if common > 0, let pa = a.baseAddress, let pb = b.baseAddress {
            let c = memcmp(pa, pb, common)
            if c != 0 { return Int(c) }
        }
        return a.count - b.count
    }

    static func compare(_ a: [UInt8], _ b: [UInt8]) -> Int {
        a.withUnsafeBytes { pa in b.withUnsafeBytes { pb in compare(pa, pb) } }
    }
}

/// The names of the buckets the counts hold by id (`tallyBucket`): each id's dimension code
/// and text. An id is given once and never changes or goes, and a reader sees the id of
/// every bucket its rows hold (both are written in one transaction), so what one query read
/// serves every later one; an id not known yet has the table read again.
final class TallyBuckets: Sendable {
    struct Name: Sendable, Equatable {
        var code: UInt8
        var text: String
        /// Every byte of the text is ASCII.
        var ascii: Bool
        /// The place in the order of (code, text's bytes) among the names read.
        var rank: Int
    }

    private let known = Mutex<[Name?]>([])

    init() {}

    /// The names by id, read again from `db` when one of `ids` is not known yet.
    func names(_ db: Database, for ids: UnsafeBufferPointer<Int>) throws -> [Name?] {
        let current = known.withLock { $0 }
        if ids.allSatisfy({ $0 < current.count && current[$0] != nil }) { return current }
        let loaded = try Self.load(db)
        return known.withLock { known in
            // (another query may have read a later state meanwhile: ids only come, so keep the longer)
            if loaded.count >= known.count { known = loaded }
            return known
        }
    }

    /// Every bucket `db` names, by id, ranked by code and then by the text's bytes.
    static func load(_ db: Database) throws -> [Name?] {
        var rows: [(id: Int, code: UInt8, text: [UInt8])] = []
        let select = try Bound(db, "SELECT id, code, name FROM tallyBucket")
        try select.each { row in
            let id = row.int(0), code = row.int(1)
            guard id >= 0, id < 1 << 31, (0...255).contains(code) else {
                throw TallyCounts.corrupt("tallyBucket row \(id) unreadable")
            }
            rows.append((id, UInt8(code), Array(row.blob(2))))
        }
        rows.sort { $0.code != $1.code ? $0.code < $1.code : TallyCounts.compare($0.text, $1.text) < 0 }
        var names = [Name?](repeating: nil, count: (rows.map(\.id).max() ?? -1) + 1)
        for (rank, row) in rows.enumerated() {
            names[row.id] = Name(
                code: row.code, text: String(decoding: row.text, as: UTF8.self), ascii: row.text.allSatisfy { $0 < 0x80 },
                rank: rank)
        }
        return names
    }
}

// MARK: Merged in place

/// `tally_merge(counts, ?)`: a row's stored counts with a batch's changes added, computed
/// inside the UPDATE that writes them, so a row the batch changes is found and written by
/// one statement (reading it first with a SELECT, then writing it, was two statements and
/// two b-tree descents per row). The changes come as a pointer bound to the parameter
/// (SQLite's pointer passing, `sqlite3_bind_pointer`): SQL cannot make or read one.
extension TallyCounts {
    /// What the UPDATE is given and what the function reports back.
    struct MergeRequest {
        var changes: UnsafeBufferPointer<Change>
        /// How many rows the function merged (0: the row is not stored).
        var merged = 0
        /// The merged counts were empty (every count taken to zero): the row goes.
        var empty = false
    }

    /// The pointer type `tally_merge` accepts (compared as text by SQLite).
    static let mergeRequestType: StaticString = "logbook.analytics.tallyMergeRequest"

    /// Runs `statement`, an UPDATE whose parameter `index` is `tally_merge`'s changes, with
    /// `changes` bound there; what the function reported.
    static func runMerge(_ statement: Bound, parameter index: Int32, _ changes: [Change]) throws -> MergeRequest {
        try changes.withUnsafeBufferPointer { changes in
            var request = MergeRequest(changes: changes)
            try withUnsafeMutablePointer(to: &request) { pointer in
                statement.bind(index, pointer: pointer, type: mergeRequestType)
                defer { statement.unbind(index) }
                try statement.run()
            }
            return request
        }
    }

    /// Registers `tally_merge` on the connection that runs the projections (once per connection).
    static func registerMerge(_ db: Database) throws {
        let code = sqlite3_create_function_v2(
            db.sqliteConnection, "tally_merge", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_DIRECTONLY, nil,
            { context, _, arguments in
                guard let context, let arguments else { return }
                let type = UnsafeRawPointer(TallyCounts.mergeRequestType.utf8Start).assumingMemoryBound(to: CChar.self)
                guard
                    let request = sqlite3_value_pointer(arguments[1], type)?.assumingMemoryBound(
                        to: TallyCounts.MergeRequest.self)
                else {
                    sqlite3_result_error(context, "tally_merge takes a merge request bound by the projection", -1)
                    return
                }
                let stored: UnsafeRawBufferPointer
                if let bytes = sqlite3_value_blob(arguments[0]) {
                    stored = UnsafeRawBufferPointer(start: bytes, count: Int(sqlite3_value_bytes(arguments[0])))
                } else {
                    stored = UnsafeRawBufferPointer(start: nil, count: 0)
                }
                var out: [UInt8] = []
                out.reserveCapacity(stored.count + 64)
                do {
                    try TallyCounts.merge(stored, request.pointee.changes, into: &out)
                } catch let error as DatabaseError {
                    sqlite3_result_error(context, error.message ?? "catchTally counts unreadable", -1)
                    sqlite3_result_error_code(context, error.extendedResultCode.rawValue)
                    return
                } catch {
                    sqlite3_result_error(context, "\(error)", -1)
                    return
                }
                request.pointee.merged += 1
                request.pointee.empty = out.isEmpty
                guard !out.isEmpty else {
                    // an empty BLOB, not NULL (the column is NOT NULL); the caller deletes the row
                    sqlite3_result_zeroblob(context, 0)
                    return
                }
                out.withUnsafeBytes { bytes in
                    sqlite3_result_blob(context, bytes.baseAddress, Int32(bytes.count), TallyCounts.transient)
                }
            }, nil, nil, nil)
        guard code == SQLITE_OK else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: "tally_merge could not be registered")
        }
    }

    /// SQLite copies the result (SQLITE_TRANSIENT).
    static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}
