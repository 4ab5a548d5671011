package storage

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"unicode/utf8"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// Caps on what is read. The data root may be damaged or hostile (another
// program, a user, a broken sync tool): a file is read only if it is a
// regular file within its cap, so neither a huge file nor an endless one
// (/dev/zero) costs more than the cap, and nothing waits on a FIFO.
const (
	// MaxRegistrationFileBytes bounds a registration file. Registrations
	// are small (a name, an endpoint, headers, permissions and overrides:
	// kilobytes); 1 MiB leaves room for hundreds of long description
	// overrides. Save refuses to write a larger one, so the backend never
	// writes what it would not read back.
	MaxRegistrationFileBytes = 1 << 20
	// MaxCatalogFileBytes bounds a catalog file: domain.MaxCatalogBytes of
	// tools plus the file's framing (pretty-printing's indentation,
	// diagnostics, the envelope). SaveCatalog refuses a larger one (the
	// catalog then stays in memory, with mcp.catalog_persistence_failed).
	MaxCatalogFileBytes = 2*domain.MaxCatalogBytes + 1<<20
)

// CodeRegistrationTooLarge: a registration would be written larger than
// MaxRegistrationFileBytes.
const CodeRegistrationTooLarge = "mcp.registration_too_large"

// readRegular reads the file at path, inside the data root (links are
// followed as upstream follows them, but never out of the data root: see
// dataRoot), if it is a regular file of at most limit bytes; false when
// there is nothing at path. what names the kind of file in messages
// ("registration"). It never blocks on what it opens and never reads more
// than limit+1 bytes:
//
//   - the path is checked with Stat before it is opened: a directory, a
//     FIFO, a device or a socket is refused without opening it, and so
//     is a file above limit;
//   - it is opened without blocking (O_NONBLOCK on Unix, so a FIFO swapped
//     in after the Stat does not wait for a writer) and checked again with
//     Fstat, on what was actually opened;
//   - at most limit+1 bytes are read, in case it grew meanwhile.
//
// A symbolic link whose target does not exist is an error, not "nothing":
// something is there, and a create must not silently replace it.
func (r dataRoot) readRegular(path string, limit int64, what string) ([]byte, bool, error) {
	data, fi, err := r.readRegularInfo(path, limit, what)
	return data, fi != nil, err
}

// readRegularInfo is readRegular returning what Fstat said of the file it
// read (nil when there was nothing to read).
func (r dataRoot) readRegularInfo(path string, limit int64, what string) ([]byte, fs.FileInfo, error) {
	fi, err := r.stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		if lfi, lerr := r.lstat(path); lerr == nil && lfi.Mode()&fs.ModeSymlink != 0 {
			target, _ := r.readlink(path)
			return nil, nil, unreadable(path, "it is a symbolic link to %s, which does not exist", target)
		}
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, ioError(err, "Failed to read %s: %v", path, reason(err))
	}
	if err := checkRegular(path, fi, limit, what); err != nil {
		return nil, nil, err
	}
	f, err := r.openFile(path, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) { // removed since the Stat
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, ioError(err, "Failed to read %s: %v", path, reason(err))
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, nil, ioError(err, "Failed to read %s: %v", path, reason(err))
	}
	if err := checkRegular(path, fi, limit, what); err != nil {
		return nil, nil, err
	}
	data := make([]byte, 0, fi.Size()+1) // +1: EOF without growing
	data, err = readAtMost(f, data, limit+1)
	if err != nil {
		return nil, nil, ioError(err, "Failed to read %s: %v", path, reason(err))
	}
	if int64(len(data)) > limit { // it grew since the Stat
		return nil, nil, tooLarge(path, int64(len(data)), limit, what, true)
	}
	return data, fi, nil
}

// readAtMost appends to buf what r holds, up to n bytes in all.
func readAtMost(r io.Reader, buf []byte, n int64) ([]byte, error) {
	lr := io.LimitReader(r, n-int64(len(buf)))
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		m, err := lr.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// checkRegular refuses what is not a regular file of at most limit bytes.
func checkRegular(path string, fi fs.FileInfo, limit int64, what string) error {
	if mode := fi.Mode(); !mode.IsRegular() {
		return unreadable(path, "it is %s, not a regular file", describeMode(mode))
	}
	if fi.Size() > limit {
		return tooLarge(path, fi.Size(), limit, what, false)
	}
	return nil
}

// describeMode names the kind of a file that is not regular.
func describeMode(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO (named pipe)"
	case m&fs.ModeDevice != 0, m&fs.ModeCharDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "not a file (" + m.Type().String() + ")"
}

func tooLarge(path string, size, limit int64, what string, grew bool) error {
	is := fmt.Sprintf("it is %d bytes", size)
	if grew {
		is = fmt.Sprintf("it grew past %d bytes while read", limit)
	}
	return unreadable(path, "%s; %s files are read up to %d bytes", is, what, limit)
}

// unreadable is a file that is there but is not one ttmcp reads: damage to
// report (a storage issue), not the caller's fault.
func unreadable(path, format string, args ...any) error {
	return domain.Errorf(domain.KindInternal, "", "Failed to read %s: %s", path, fmt.Sprintf(format, args...))
}

// readText reads the file at path with readRegular; it must be UTF-8 text.
func (r dataRoot) readText(path string, limit int64, what string) ([]byte, bool, error) {
	data, fi, err := r.readTextInfo(path, limit, what)
	return data, fi != nil, err
}

// readTextInfo is readText returning what Fstat said of the file it read.
func (r dataRoot) readTextInfo(path string, limit int64, what string) ([]byte, fs.FileInfo, error) {
	data, fi, err := r.readRegularInfo(path, limit, what)
	if fi == nil || err != nil {
		return nil, fi, err
	}
	if !utf8.Valid(data) {
		return nil, fi, domain.Errorf(domain.KindBadRequest, "", "Invalid UTF-8 in %s: invalid UTF-8 sequence at byte offset %d", path, invalidUTF8Offset(data))
	}
	return data, fi, nil
}
