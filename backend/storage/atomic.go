package storage

import (
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/google/uuid"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// fileMode is the mode of the files written: they hold endpoint
// credentials and header values (API keys), so only the owner reads them.
const fileMode = 0o600

// writeFileAtomic replaces the file at path (inside the data root) with
// data so that, whatever happens (an error, a crash, a power loss), path
// holds either its old bytes or all of data, never a mix:
//
//  1. data goes to a new sibling file ".ttmcp-<random>.tmp" (tempName),
//     created exclusively so two writers never share one, and locked
//     (lockTemp) for as long as it is written, so a sweep of leftovers
//     (RemoveLeftovers, the result store's prune) knows it is in use;
//  2. the temporary file is synced, so its bytes are on disk before
//  3. it is renamed over path, which replaces the directory entry at once
//     (readers that opened the old file keep reading the old bytes);
//  4. the rename is made durable (replaceFile: a directory sync on Unix, a
//     write-through move on Windows), so it survives a crash.
//
// The target is never opened for writing. On failure the temporary file is
// removed and the target is left as it was.
func (r dataRoot) writeFileAtomic(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	if err := r.mkdirAll(dir, 0o755); err != nil {
		return ioError(err, "Failed to create %s: %v", dir, reason(err))
	}
	f, tmp, err := r.createTemp(dir)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close() // a second Close only reports os.ErrClosed
			r.remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return ioError(err, "Failed to write %s: %v", tmp, reason(err))
	}
	if err := f.Sync(); err != nil {
		return ioError(err, "Failed to sync staged file %s for %s: %v", tmp, path, reason(err))
	}
	if err := r.replaceFile(tmp, path); err != nil {
		return ioError(err, "Failed to replace %s with %s: %v", path, tmp, reason(err))
	}
	// Closed only now: the lock held until the rename keeps a sweep from
	// taking the temporary file for a leftover.
	if err := f.Close(); err != nil {
		return ioError(err, "Failed to write %s: %v", tmp, reason(err))
	}
	return nil
}

// tempName is the name of a new temporary file: ".ttmcp-<uuid v4 as 32 hex
// digits>.tmp". ttmcp's own prefix (upstream writes ".tauritavern-…"),
// because only ttmcp's temporary files are locked while written: a sweep
// may remove an unlocked one of any age, but must leave upstream's alone
// until they are old (see RemoveLeftovers).
func tempName() string {
	id := uuid.New()
	return ".ttmcp-" + hex.EncodeToString(id[:]) + ".tmp"
}

// createTemp creates and locks a new temporary file in dir. A sweep may
// remove the file between its creation and the lock (it is not locked
// yet); the lock then holds a file no longer in dir (no links left), so it
// is made again under a new name.
func (r dataRoot) createTemp(dir string) (*os.File, string, error) {
	for {
		tmp := filepath.Join(dir, tempName())
		f, err := r.openFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fileMode)
		if err != nil {
			return nil, "", ioError(err, "Failed to create %s: %v", tmp, reason(err))
		}
		if err := lockTemp(f); err != nil {
			f.Close()
			r.remove(tmp)
			return nil, "", ioError(err, "Failed to lock %s: %v", tmp, reason(err))
		}
		if linked(f) {
			return f, tmp, nil
		}
		f.Close()
	}
}

// ioError is a failure of the file system: not the caller's fault. cause
// stays reachable with errors.Is; the message says what failed.
func ioError(cause error, format string, args ...any) error {
	e := domain.Errorf(domain.KindInternal, "", format, args...)
	e.Err = cause
	return e
}

// reason returns the reason of a file system error without its paths
// ("permission denied"), for messages that name the path themselves.
func reason(err error) error {
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return pe.Err
	}
	if le, ok := errors.AsType[*os.LinkError](err); ok {
		return le.Err
	}
	return err
}
