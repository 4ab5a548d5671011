package storage

import (
	"io/fs"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// stampOf returns the stamp of fi (see domain.FileStamp): size and
// modification time everywhere, inode, device and change time where the
// system's stat has them (sysStamp).
func stampOf(fi fs.FileInfo) domain.FileStamp {
	s := domain.FileStamp{Size: fi.Size(), ModTime: fi.ModTime().UnixNano(), Known: true}
	sysStamp(fi, &s)
	return s
}
