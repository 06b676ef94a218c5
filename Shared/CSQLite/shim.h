#ifndef LOGBOOK_CSQLITE_SHIM_H
#define LOGBOOK_CSQLITE_SHIM_H
// Process-wide SQLite settings that only the variadic sqlite3_config sets (Swift cannot
// call a variadic C function). Shared/Storage/SQLiteProcess.swift calls these.
#include <sqlite3.h>

// SQLITE_CONFIG_MEMSTATUS: whether SQLite counts its memory. Counting takes a global
// mutex on every allocation and free; set before the process opens its first connection.
static inline int logbook_sqlite_memstatus(int on) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, on);
}
#endif
