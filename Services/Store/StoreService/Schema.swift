// store.sqlite: the catalogue (seeded here), each user's wallet, the time entries earned
// from, the append-only ledger, purchases, and the daily-quote state. The schema holds the
// rules that must never break even if the code has a bug: an item is owned once
// (UNIQUE(userId, itemId)), a purchase never leaves cash below zero, spending never
// exceeds net worth when it grows, amounts are whole cents.
import Foundation
import GRDB

enum Schema {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("store.v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE item (
                        id TEXT PRIMARY KEY NOT NULL,
                        position INTEGER NOT NULL UNIQUE,
                        name TEXT NOT NULL,
                        description TEXT NOT NULL,
                        priceCents INTEGER NOT NULL CHECK (priceCents > 0)
                    ) WITHOUT ROWID;

                    -- Net worth is kept in milliseconds; cents are derived by flooring the total
                    -- (earnedMs / 36000), so many short entries never lose a cent to rounding.
                    CREATE TABLE wallet (
                        userId TEXT PRIMARY KEY NOT NULL,
                        earnedMs INTEGER NOT NULL DEFAULT 0 CHECK (earnedMs >= 0),
                        spentCents INTEGER NOT NULL DEFAULT 0 CHECK (spentCents >= 0)
                    ) WITHOUT ROWID;

                    -- A purchase may never spend more than the user has earned. (A later
                    -- correction may still lower earnedMs below spentCents: cash goes negative,
                    -- items stay owned; see docs/protocol.md, "Store service".)
                    CREATE TRIGGER walletNoOverspend BEFORE UPDATE OF spentCents ON wallet
                    WHEN NEW.spentCents > OLD.spentCents AND NEW.spentCents > NEW.earnedMs / 36000
                    BEGIN
                        SELECT RAISE(ABORT, 'spending exceeds net worth');
                    END;

                    -- Every time entry the store has credited, so duplicates are ignored and a
                    -- deletion knows what to take back.
                    CREATE TABLE timeEntry (
                        userId TEXT NOT NULL,
                        entryId TEXT NOT NULL,
                        durationMs INTEGER NOT NULL CHECK (durationMs >= 0),
                        savedAt DOUBLE NOT NULL,
                        deletedAt DOUBLE,
                        PRIMARY KEY (userId, entryId)
                    ) WITHOUT ROWID;

                    CREATE TABLE purchase (
                        userId TEXT NOT NULL,
                        itemId TEXT NOT NULL REFERENCES item(id),
                        priceCents INTEGER NOT NULL CHECK (priceCents > 0),
                        ledgerId TEXT NOT NULL,
                        at DOUBLE NOT NULL,
                        PRIMARY KEY (userId, itemId)
                    ) WITHOUT ROWID;

                    -- Append-only. `seq` orders it (the order effects were applied);
                    -- `balanceAfterCents` is cash after the entry.
                    CREATE TABLE ledger (
                        seq INTEGER PRIMARY KEY AUTOINCREMENT,
                        id TEXT NOT NULL UNIQUE,
                        userId TEXT NOT NULL,
                        kind TEXT NOT NULL CHECK (kind IN ('earning', 'purchase', 'correction')),
                        amountCents INTEGER NOT NULL,
                        durationMs INTEGER,
                        balanceAfterCents INTEGER NOT NULL,
                        netWorthAfterCents INTEGER NOT NULL CHECK (netWorthAfterCents >= 0),
                        reference TEXT NOT NULL,
                        at DOUBLE NOT NULL,
                        CHECK (kind != 'earning' OR amountCents >= 0),
                        CHECK (kind != 'purchase' OR (amountCents < 0 AND balanceAfterCents >= 0)),
                        CHECK (kind != 'correction' OR amountCents <= 0)
                    );
                    CREATE INDEX ledgerByUser ON ledger (userId, seq);
                    CREATE TRIGGER ledgerNoUpdate BEFORE UPDATE ON ledger
                    BEGIN
                        SELECT RAISE(ABORT, 'the ledger is append-only');
                    END;

                    -- Users auth has deleted: late or replayed records events for them are ignored.
                    CREATE TABLE deletedUser (
                        userId TEXT PRIMARY KEY NOT NULL,
                        deletedAt DOUBLE NOT NULL
                    ) WITHOUT ROWID;

                    -- The quote of each UTC day, as fetched from ZenQuotes.
                    CREATE TABLE dailyQuote (
                        day TEXT PRIMARY KEY NOT NULL,
                        text TEXT NOT NULL,
                        author TEXT NOT NULL,
                        fetchedAt DOUBLE NOT NULL
                    ) WITHOUT ROWID;

                    -- The last failed fetch, so an outage is not retried on every call.
                    CREATE TABLE quoteFetchFailure (
                        id INTEGER PRIMARY KEY CHECK (id = 1),
                        at DOUBLE NOT NULL,
                        reason TEXT NOT NULL
                    );

                    -- First open (the intro) and, per user's local day, the quote shown.
                    CREATE TABLE visitor (
                        userId TEXT PRIMARY KEY NOT NULL,
                        introShownAt DOUBLE NOT NULL
                    ) WITHOUT ROWID;
                    CREATE TABLE quoteSeen (
                        userId TEXT NOT NULL,
                        day TEXT NOT NULL,
                        text TEXT NOT NULL,
                        author TEXT NOT NULL,
                        seenAt DOUBLE NOT NULL,
                        PRIMARY KEY (userId, day)
                    ) WITHOUT ROWID;
                    """)
            for (position, item) in Catalogue.items.enumerated() {
                try db.execute(
                    sql: "INSERT INTO item (id, position, name, description, priceCents) VALUES (?, ?, ?, ?, ?)",
                    arguments: [item.id, position + 1, item.name, item.description, item.priceCents])
            }
        }
        return migrator
    }
}
