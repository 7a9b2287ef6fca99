//go:build !unix

package sqlite

import "io/fs"

// linkCount is 1 where the system does not count hard links for us.
func linkCount(fs.FileInfo) uint64 { return 1 }
