package sqlite

import (
	"context"
	"fmt"
)

// ExecWriter runs query on db's writer connection, for tests that make
// writes fail as a full or read-only disk does (PRAGMA query_only = 1).
func ExecWriter(db *DB, query string) error {
	_, err := db.writer.ExecContext(context.Background(), query)
	return err
}

// FillDisk makes db's file full, as a full disk does: a write that needs
// a page more fails with SQLITE_FULL, until ExecWriter sets
// max_page_count back.
func FillDisk(db *DB) error {
	var pages int64
	if err := db.writer.QueryRowContext(context.Background(), "PRAGMA page_count").Scan(&pages); err != nil {
		return err
	}
	return ExecWriter(db, fmt.Sprintf("PRAGMA max_page_count = %d", pages))
}

// WriteFault is writeFault: whether err is a failure to write the file.
var WriteFault = writeFault
