//go:build darwin

package storage

import (
	"io/fs"
	"syscall"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// sysStamp adds what Darwin's stat knows to s.
func sysStamp(fi fs.FileInfo, s *domain.FileStamp) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.Device, s.Inode, s.Change = uint64(st.Dev), uint64(st.Ino), st.Ctimespec.Nano()
	}
}
