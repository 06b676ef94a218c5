// The stored form of the catch counters (`catchTally`, Schema.swift "analytics.tallyRows"):
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
// The format: entries one after the other, sorted by dimension code, then by the bucket's
// UTF-8 bytes (shorter first when one is a prefix of the other), no zero counts; each
// entry is
//     dimension code (1 byte, a position in `dimensionKeys`)
//     bucket length in bytes (unsigned LEB128), the bucket's UTF-8 bytes
//     count (unsigned LEB128, at least 1)
// A row with no counts left is deleted. Sorted and without zeros, a row's bytes are the
// same however its counts were reached (a batch or one event at a time).
import Foundation
import GRDB
import GRDBSQLite

enum TallyCounts {
    /// The dimension codes: a code is its position here. Stored: append new dimensions,
    /// never reorder or remove one (that needs a migration rewriting every row).
    static let dimensionKeys: [String] = [
        "status", "temperatureBand", "pressureBand", "pressureTrend", "windForce", "windDirection", "sky",
        "timeOfDay", "moonPhase", "tidePhase", "tideHeight",
    ]
    static let statusCode: UInt8 = 0

    /// One count of a row, decoded.
    struct Entry: Equatable {
        var code: UInt8
        var bucket: String
        var n: Int
    }

    static func corrupt(_ detail: String) -> DatabaseError {
        DatabaseError(resultCode: .SQLITE_CORRUPT, message: "catchTally counts unreadable: \(detail)")
    }

    /// Reads entries from stored bytes, in their order, as byte ranges (no copies).
    struct Reader {
        let bytes: UnsafeRawBufferPointer
        var offset = 0

        init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

        var atEnd: Bool { offset >= bytes.count }

        /// The next entry: its code, its bucket's bytes, its count and where it starts.
        mutating func next() throws -> (code: UInt8, bucket: UnsafeRawBufferPointer, n: Int, start: Int) {
            let start = offset
            guard offset < bytes.count else { throw corrupt("an entry past the end") }
            let code = bytes[offset]
            offset += 1
            let length = try varint()
            guard length <= bytes.count - offset else { throw corrupt("bucket past the end") }
            let bucket = UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + length)])
            offset += length
            let n = try varint()
            guard n > 0 else { throw corrupt("a zero count") }
            return (code, bucket, n, start)
        }

        @inline(__always) private mutating func varint() throws -> Int {
            // (nearly every length and count is below 128: one byte)
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
    }

    static func decode(_ bytes: UnsafeRawBufferPointer) throws -> [Entry] {
        var reader = Reader(bytes)
        var entries: [Entry] = []
        while !reader.atEnd {
            let entry = try reader.next()
            entries.append(Entry(code: entry.code, bucket: String(decoding: entry.bucket, as: UTF8.self), n: entry.n))
        }
        return entries
    }

    static func decode(_ data: Data) throws -> [Entry] {
        try data.withUnsafeBytes { try decode($0) }
    }

    /// The buckets of several rows summed (`merged`), in the rows' order (by code, then
    /// bytes): each bucket's code, text and total, and its counts by bait, `baitCount` of
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
    /// `baitCount`), summed. Each row is merged into the buckets gathered so far with one
    /// cursor, as two sorted lists are merged: a user's rows mostly hold the same buckets,
    /// so an entry is nearly always the bucket at the cursor, one comparison, and each
    /// bucket is read as text once, however many rows hold it. (Hashing every entry's text
    /// into nested maps cost more than the rest of a suggestion; taking the smallest of
    /// every row's next entry, as a k-way merge does, compared each bucket with every row
    /// twice: docs/performance.md, "A suggestion's size".) The entries are most of what a
    /// large answer adds, so each is counted in memory the merge owns (`Gathering`), without
    /// an array's checks ("What grows with a suggestion").
    static func merged(_ stored: [UInt8], rows: [Range<Int>], baits: [Int], baitCount: Int) throws -> Merged {
        try stored.withUnsafeBytes { all in
            var gathering = Gathering(baitCount: baitCount)
            for (row, range) in rows.enumerated() {
                let bait = baits[row]
                var reader = Reader(UnsafeRawBufferPointer(rebasing: all[range]))
                var at = 0  // (in sorted order) every bucket before this sorts before the row's next entry
                while !reader.atEnd {
                    let entry = try reader.next()
                    var slot = -1
                    while at < gathering.count {
                        let candidate = Int(gathering.order[at])
                        let code = gathering.codes[candidate]
                        if code == entry.code, same(gathering.keys[candidate], entry.bucket) {
                            slot = candidate
                            break
                        }
                        let order =
                            code != entry.code
                            ? Int(code) - Int(entry.code) : compare(gathering.keys[candidate], entry.bucket)
                        if order > 0 { break }
                        at += 1
                    }
                    if slot < 0 { slot = gathering.add(entry.code, entry.bucket, at: at) }
                    gathering.totals[slot] += entry.n
                    gathering.perBait[slot * baitCount + bait] += entry.n
                    at += 1
                }
            }
            return gathering.merged()
        }
    }

    /// The buckets a merge has gathered: each in a slot (in the order first seen), with its
    /// code, its bytes (in the rows' bytes), its total and its counts by bait; `order` lists
    /// the slots sorted as the entries are. Grown by doubling.
    private struct Gathering: ~Copyable {
        let baitCount: Int
        var count = 0
        var capacity = 64  // (about every bucket of a user's catches: the weather-fetcher's bands)
        var order: UnsafeMutablePointer<Int32>
        var codes: UnsafeMutablePointer<UInt8>
        var keys: UnsafeMutablePointer<UnsafeRawBufferPointer>
        var totals: UnsafeMutablePointer<Int>
        var perBait: UnsafeMutablePointer<Int>

        init(baitCount: Int) {
            self.baitCount = baitCount
            order = .allocate(capacity: capacity)
            codes = .allocate(capacity: capacity)
            keys = .allocate(capacity: capacity)
            totals = .allocate(capacity: capacity)
            perBait = .allocate(capacity: capacity * baitCount)
        }

        deinit {
            order.deallocate()
            codes.deallocate()
            keys.deallocate()
            totals.deallocate()
            perBait.deallocate()
        }

        /// A new bucket at place `at` of the sorted order, counted zero so far: its slot.
        mutating func add(_ code: UInt8, _ key: UnsafeRawBufferPointer, at: Int) -> Int {
            if count == capacity { grow() }
            let slot = count
            (order + at + 1).moveInitialize(from: order + at, count: count - at)  // (the regions overlap)
            order[at] = Int32(slot)
            codes[slot] = code
            keys[slot] = key
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
            codes = moved(codes, count, larger)
            keys = moved(keys, count, larger)
            totals = moved(totals, count, larger)
            perBait = moved(perBait, count * baitCount, larger * baitCount)
            capacity = larger
        }

        /// The buckets in sorted order.
        func merged() -> Merged {
            var merged = Merged(baitCount: baitCount)
            merged.codes.reserveCapacity(count)
            merged.names.reserveCapacity(count)
            merged.ascii.reserveCapacity(count)
            merged.totals.reserveCapacity(count)
            merged.perBait.reserveCapacity(count * baitCount)
            for at in 0..<count {
                let slot = Int(order[at])
                merged.codes.append(codes[slot])
                merged.names.append(String(decoding: keys[slot], as: UTF8.self))
                merged.ascii.append(keys[slot].allSatisfy { $0 < 0x80 })
                merged.totals.append(totals[slot])
                merged.perBait.append(
                    contentsOf: UnsafeBufferPointer(start: perBait + slot * baitCount, count: baitCount))
            }
            return merged
        }
    }

    /// The same bytes (most buckets are 8 to 16 bytes long: compared a word at a time).
    @inline(__always) static func same(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        let count = a.count
        guard count == b.count else { return false }
        guard count > 0, let pa = a.baseAddress, let pb = b.baseAddress else { return true }
        guard count >= 8 else { return memcmp(pa, pb, count) == 0 }
        var at = 0
        while count - at > 8 {
            let wordA = pa.loadUnaligned(fromByteOffset: at, as: UInt64.self)
            if wordA != pb.loadUnaligned(fromByteOffset: at, as: UInt64.self) { return false }
            at += 8
        }
        // the last word ends at the last byte (some of its bytes compared already)
        return pa.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
            == pb.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
    }

    /// The stored bytes of `entries` (any order; zero counts left out; a code and bucket
    /// given twice is an error).
    static func encode(_ entries: [Entry]) throws -> [UInt8] {
        let sorted = entries.filter { $0.n != 0 }.sorted { a, b in
            a.code != b.code ? a.code < b.code : compare(Array(a.bucket.utf8), Array(b.bucket.utf8)) < 0
        }
        var out: [UInt8] = []
        for (i, entry) in sorted.enumerated() {
            guard entry.n > 0 else { throw corrupt("a negative count") }
            if i > 0, sorted[i - 1].code == entry.code, sorted[i - 1].bucket.utf8.elementsEqual(entry.bucket.utf8) {
                throw corrupt("a bucket twice")
            }
            var bucket = entry.bucket
            bucket.withUTF8 { append(entry.code, UnsafeRawBufferPointer($0), entry.n, to: &out) }
        }
        return out
    }

    /// A change to one count of a row: its code, its bucket's bytes, by how much (not 0).
    struct Change {
        var code: UInt8
        var bucket: UnsafeRawBufferPointer
        var delta: Int
        /// Where the caller sorts it (the merge reads only the fields above).
        var order: UInt64 = 0
    }

    /// `stored` (a row's bytes, possibly none) with `changes` (sorted as the entries are)
    /// added, written to `out`. A count taken below zero is an error, as the one-count rows'
    /// CHECK made it (the projection only takes out what it put in); taking from a bucket
    /// the row does not hold changes nothing, as their UPDATE of no row did.
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
                let change = changes[i]
                order = e.code != change.code ? Int(e.code) - Int(change.code) : compare(e.bucket, change.bucket)
            } else {
                order = entry == nil ? 1 : -1
            }
            if order < 0, let e = entry {
                // kept as it is
                out.append(contentsOf: UnsafeRawBufferPointer(rebasing: stored[e.start..<reader.offset]))
                entry = reader.atEnd ? nil : try reader.next()
            } else if order > 0 {
                let change = changes[i]
                if change.delta > 0 { append(change.code, change.bucket, change.delta, to: &out) }
                i += 1
            } else if let e = entry {
                let n = e.n + changes[i].delta
                guard n >= 0 else {
                    throw DatabaseError(resultCode: .SQLITE_CONSTRAINT_CHECK, message: "catchTally count below zero")
                }
                if n > 0 { append(e.code, e.bucket, n, to: &out) }
                entry = reader.atEnd ? nil : try reader.next()
                i += 1
            }
        }
    }

    static func append(_ code: UInt8, _ bucket: UnsafeRawBufferPointer, _ n: Int, to out: inout [UInt8]) {
        out.append(code)
        appendVarint(bucket.count, to: &out)
        out.append(contentsOf: bucket)
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
