// The auth database: users, their sessions and known devices (only a SHA-256 of each token
// is stored) and failed-login counters (per username, known device or session). The rules
// live in the schema too: a username is unique whatever its case, a session or device
// cannot outlive its user, a token hash is unique.
import GRDB

enum Schema {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("auth.v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE users (
                        id TEXT PRIMARY KEY NOT NULL,
                        username TEXT NOT NULL UNIQUE COLLATE NOCASE
                            CHECK (length(username) BETWEEN 3 AND 32),
                        email TEXT CHECK (email IS NULL OR length(email) BETWEEN 3 AND 254),
                        passwordHash TEXT NOT NULL CHECK (passwordHash LIKE '$argon2id$%'),
                        createdAt DOUBLE NOT NULL
                    );
                    CREATE TABLE sessions (
                        id TEXT PRIMARY KEY NOT NULL,
                        userId TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        tokenHash TEXT NOT NULL UNIQUE CHECK (length(tokenHash) = 64),
                        createdAt DOUBLE NOT NULL,
                        expiresAt DOUBLE NOT NULL CHECK (expiresAt > createdAt)
                    );
                    CREATE INDEX sessionsByUser ON sessions(userId);
                    CREATE TABLE loginFailures (
                        username TEXT PRIMARY KEY NOT NULL COLLATE NOCASE,
                        failures INTEGER NOT NULL CHECK (failures > 0),
                        lastFailureAt DOUBLE NOT NULL
                    );
                    CREATE INDEX loginFailuresByTime ON loginFailures(lastFailureAt);
                    """)
        }
        // Each user's IANA time zone: the days, weeks and months every service counts in.
        migrator.registerMigration("auth.timeZone") { db in
            try db.execute(
                sql: """
                    ALTER TABLE users ADD COLUMN timeZone TEXT NOT NULL DEFAULT 'UTC'
                        CHECK (length(timeZone) BETWEEN 1 AND 64);
                    """)
        }
        migrator.registerMigration("auth.v2.devices") { db in
            try db.execute(
                sql: """
                    CREATE TABLE devices (
                        tokenHash TEXT PRIMARY KEY NOT NULL CHECK (length(tokenHash) = 64),
                        userId TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        createdAt DOUBLE NOT NULL,
                        lastUsedAt DOUBLE NOT NULL
                    );
                    CREATE INDEX devicesByUser ON devices(userId, lastUsedAt);
                    """)
        }
        // Records sharded by user (Shards.swift): the shard fixed at registration; every
        // account from before shards lives on shard 1.
        migrator.registerMigration("auth.v3.shards") { db in
            try db.execute(
                sql: """
                    ALTER TABLE users ADD COLUMN shard INTEGER NOT NULL DEFAULT 1 CHECK (shard >= 1);
                    CREATE INDEX usersByShard ON users(shard);
                    """)
        }
        return migrator
    }
}
