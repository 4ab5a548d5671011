//go:build !linux && !darwin

package storage

import (
	"io/fs"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// sysStamp adds nothing where ttmcp does not read the system's stat: size
// and modification time are the whole stamp.
func sysStamp(fs.FileInfo, *domain.FileStamp) {}
