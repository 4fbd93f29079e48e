// The system SQLite (Debian libsqlite3-dev), used for DiskStorage's index.
#include <sqlite3.h>
