package sqlite

import (
	"errors"

	"github.com/mattn/go-sqlite3"
)

// CannotWrite reports whether err, from Open, says that this process may
// read the ledger but not write it or its directory (permissions, a
// read-only file system): the case where Options.ReadOnly may still open
// it.
func CannotWrite(err error) bool {
	var se sqlite3.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code {
	case sqlite3.ErrReadonly, sqlite3.ErrPerm, sqlite3.ErrCantOpen:
		return true
	}
	return false
}
