#include <sqlite3.h>

/// Turns a connection's defensive mode (SQLITE_DBCONFIG_DEFENSIVE, which forbids editing
/// sqlite_master) on or off; sqlite3_db_config is variadic, which Swift cannot call.
static inline int modelgen_sqlite3_set_defensive(sqlite3 *db, int on) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, on, (int *)0);
}
