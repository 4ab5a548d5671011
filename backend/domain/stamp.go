package domain

// FileStamp identifies one version of a stored file cheaply, from what the
// file system's stat says, so a view of the files can tell which changed
// without reading them. The storage adapter fills it in; the zero value is
// "unknown" and matches nothing (read the file again).
//
// Noticed: a file added, removed, renamed over (a new inode: every atomic
// write, ttmcp's and TauriTavern's), or written in place (size, modification
// time and, on Unix, change time, which no program can set back). Not
// noticed: an in-place rewrite of the same size that also keeps the
// modification time, where there is no change time (Windows) or the file
// system's timestamps are coarser than the rewrite interval (FAT: 2 s).
type FileStamp struct {
	Size    int64
	ModTime int64 // Unix nanoseconds
	Change  int64 // Unix nanoseconds of the last status change; 0 where the system has none
	Inode   uint64
	Device  uint64
	Known   bool
}

// Same reports whether s and t are known stamps of the same version.
func (s FileStamp) Same(t FileStamp) bool { return s.Known && t.Known && s == t }

// StoredFile is an entry of a folder of stored files, with the stamp of
// what is there (unknown when it cannot be stated).
type StoredFile struct {
	Name  string // the raw file name
	Stamp FileStamp
}
