// SQLite calls Swift cannot make: sqlite3_db_config is variadic.
#include "CCredFile.h"

#include <sqlite3.h>

int credfile_sqlite_db_config_flag(struct sqlite3 *db, int option, int on, int *state) {
    return sqlite3_db_config(db, option, on, state);
}
