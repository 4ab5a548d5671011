// Package storage keeps MCP registrations and their catalogs as strict
// JSON files, in upstream's layout and format, so a TauriTavern data
// root can be served as is:
//
//	<data-root>/_tauritavern/mcp/registrations/<uuid>.json
//	<data-root>/_tauritavern/mcp/catalogs/<uuid>.json
//
// and ttmcp's own audit log of tool calls (see AuditLog):
//
//	<data-root>/_tauritavern/mcp/audit/<yyyy-mm>[.<n>].jsonl
//
// Reading is strict: a file with an unknown or repeated member, a value of
// the wrong type, trailing data or a broken rule is rejected, never
// repaired or half-loaded. Scan reports such files as storage issues and
// still returns the healthy ones; nothing here overwrites a file it could
// not read. Writing is atomic (see writeFileAtomic): a crash leaves the old
// file or the new one, never a torn one.
package storage

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/jsapi"
)

// Store reads and writes the files under one data root. It holds no state
// besides the root: every call reads or writes the disk, so files changed
// by hand are seen at once. It is safe for concurrent use; callers
// serialise mutations of one registration themselves (the service does).
type Store struct {
	data dataRoot
	root string // <data-root>/_tauritavern/mcp
}

// Open returns the store of dataRoot. It touches nothing: directories are
// created by the first write, and a missing one reads as empty.
func Open(dataRoot string) *Store {
	d := newDataRoot(dataRoot)
	return &Store{data: d, root: d.join("_tauritavern", "mcp")}
}

func (s *Store) registrationsDir() string { return filepath.Join(s.root, "registrations") }
func (s *Store) catalogsDir() string      { return filepath.Join(s.root, "catalogs") }

// RegistrationPath returns the path of the registration file of id.
func (s *Store) RegistrationPath(id domain.RegistrationID) string {
	return filepath.Join(s.registrationsDir(), string(id)+".json")
}

// CatalogPath returns the path of the catalog file of id.
func (s *Store) CatalogPath(id domain.RegistrationID) string {
	return filepath.Join(s.catalogsDir(), string(id)+".json")
}

// Scan loads every registration file (reference §2.5): each "*.json"
// entry of the registrations directory, in file name order. An entry that
// cannot be loaded (a name that is not a canonical id; a directory, FIFO,
// device or dangling link; a file above MaxRegistrationFileBytes;
// unreadable, invalid UTF-8 or JSON, a broken rule) becomes a storage issue
// naming the file, and the others still load. (Upstream lists regular files
// only and skips the rest silently; ttmcp reports them, so a damaged entry
// is seen instead of a registration vanishing.) A missing directory holds
// nothing; a directory that cannot be listed fails the whole scan, since
// its healthy registrations would silently disappear.
func (s *Store) Scan() ([]domain.Registration, []jsapi.StorageIssue, error) {
	return scanFiles(s.ListRegistrationFiles, s.LoadRegistrationFile)
}

// scanFiles loads every file list returns with load: the values that
// load, and a storage issue for each file that does not. A file removed
// since the directory was listed is left out: it is not there.
func scanFiles[T any](list func() ([]domain.StoredFile, error),
	load func(name string) (T, *jsapi.StorageIssue, domain.FileStamp, bool)) ([]T, []jsapi.StorageIssue, error) {
	files, err := list()
	if err != nil {
		return nil, nil, err
	}
	values := []T{}
	issues := []jsapi.StorageIssue{}
	for _, f := range files {
		v, issue, _, found := load(f.Name)
		if !found {
			continue
		}
		if issue != nil {
			issues = append(issues, *issue)
		} else {
			values = append(values, v)
		}
	}
	return values, issues, nil
}

// RegistrationsFolderStamp returns the stamp of the registrations
// directory (Stat; unknown when it cannot be stated, or is missing). It
// changes whenever an entry is added, removed or renamed over.
func (s *Store) RegistrationsFolderStamp() domain.FileStamp {
	return s.data.folderStamp(s.registrationsDir())
}

// folderStamp returns the stamp of the folder at path (unknown when it
// cannot be stated, or is missing).
func (r dataRoot) folderStamp(path string) domain.FileStamp {
	fi, err := r.stat(path)
	if err != nil {
		return domain.FileStamp{}
	}
	return stampOf(fi)
}

// ListRegistrationFiles lists the registrations directory as Scan sees it
// ("*.json" entries), in file name order, without reading any file: a
// directory read and a Stat per entry (links followed; the stamp is
// unknown when Stat fails). It is what a view of the registrations checks to know
// which files changed since it loaded them (LoadRegistrationFile).
func (s *Store) ListRegistrationFiles() ([]domain.StoredFile, error) {
	return s.data.listJSONFiles(s.registrationsDir())
}

// listJSONFiles lists dir's "*.json" entries in file name order with a
// stamp of each, without reading them; a missing dir has none.
func (r dataRoot) listJSONFiles(dir string) ([]domain.StoredFile, error) {
	entries, err := r.readDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return []domain.StoredFile{}, nil
	}
	if err != nil {
		return nil, ioError(err, "Failed to read directory %s: %v", dir, reason(err))
	}
	var names []string
	for _, entry := range entries { // sorted by name
		if stem, ok := strings.CutSuffix(entry.Name(), ".json"); ok && stem != "" {
			names = append(names, entry.Name()) // ".json" has no extension, as Rust's Path sees it
		}
	}
	files := make([]domain.StoredFile, len(names))
	for i, fi := range r.statEntries(dir, names) {
		files[i] = domain.StoredFile{Name: names[i]}
		if fi != nil {
			files[i].Stamp = stampOf(fi)
		}
	}
	return files, nil
}

// LoadRegistrationFile loads the registration file called name (an entry
// of ListRegistrationFiles): the registration, or the storage issue that
// reports why it cannot be loaded (reference §2.5), and the stamp of what
// was read (unknown if nothing could be).
func (s *Store) LoadRegistrationFile(name string) (domain.Registration, *jsapi.StorageIssue, domain.FileStamp, bool) {
	return s.remoteKind().loadFile(name)
}

// fileKind is what differs between the kinds of file kept one per id
// (<dir>/<uuid>.json): upstream's registration files, ttmcp's stdio files
// and ttmcp's tool sets. Listing, loading and their storage issues are
// otherwise the same.
type fileKind[T any, ID ~string] struct {
	root dataRoot
	dir  string
	what string // the kind of file, in read errors
	// utf8Code is the code of a file name that is not UTF-8.
	utf8Code string
	parseID  func(stem string) (ID, error)
	decode   func(data []byte, path string, id ID) (T, error)
	issue    func(name, message string) jsapi.StorageIssue
}

func (s *Store) remoteKind() fileKind[domain.Registration, domain.RegistrationID] {
	return fileKind[domain.Registration, domain.RegistrationID]{root: s.data, dir: s.registrationsDir(), what: "registration",
		utf8Code: "mcp.registration_filename_utf8", parseID: domain.ParseRegistrationID, decode: decodeRegistration,
		issue: func(name, message string) jsapi.StorageIssue {
			return jsapi.StorageIssue{FileName: strings.ToValidUTF8(name, "\uFFFD"), Message: message}
		}}
}

// loadFile loads the file called name (listed in k.dir): the value, or the
// storage issue that reports why it cannot be loaded (reference §2.5), and
// the stamp of what was read (unknown if nothing could be); found is false
// for a file removed since the directory was listed (a write of the
// service's racing the list: not an issue, just not there any more).
func (k fileKind[T, ID]) loadFile(name string) (v T, issue *jsapi.StorageIssue, stamp domain.FileStamp, found bool) {
	var zero T
	refused := func(message string) *jsapi.StorageIssue {
		is := k.issue(name, message)
		return &is
	}
	stem := strings.TrimSuffix(name, ".json")
	if !utf8.ValidString(stem) {
		return zero, refused(k.utf8Code + ": filename is not valid UTF-8"), domain.FileStamp{}, true
	}
	id, err := k.parseID(stem)
	if err != nil {
		return zero, refused(err.Error()), domain.FileStamp{}, true
	}
	path := filepath.Join(k.dir, name)
	v, fi, err := k.loadInfo(path, id)
	if fi != nil {
		stamp = stampOf(fi)
	}
	switch {
	case err != nil:
		return zero, refused(err.Error()), stamp, true
	case fi == nil: // removed since the directory was listed
		return zero, nil, stamp, false
	}
	return v, nil, stamp, true
}

// load returns the value in the file at path, or false when there is no
// file. A file that exists but cannot be loaded is an error, never
// "absent": the caller must not create a value over it.
func (k fileKind[T, ID]) load(path string, id ID) (T, bool, error) {
	v, fi, err := k.loadInfo(path, id)
	return v, fi != nil && err == nil, err
}

// loadInfo is load returning what Fstat said of the file it read (nil when
// nothing was read), also when its content is refused.
func (k fileKind[T, ID]) loadInfo(path string, id ID) (T, fs.FileInfo, error) {
	var zero T
	data, fi, err := k.root.readTextInfo(path, MaxRegistrationFileBytes, k.what)
	if fi == nil || err != nil {
		return zero, fi, err
	}
	v, err := k.decode(data, path, id)
	if err != nil {
		return zero, fi, err
	}
	return v, fi, nil
}

// Load returns the registration id, or false when it has no file. A file
// that exists but cannot be loaded is an error, never "absent": the caller
// must not create a registration over it.
func (s *Store) Load(id domain.RegistrationID) (domain.Registration, bool, error) {
	if _, err := domain.ParseRegistrationID(string(id)); err != nil {
		return domain.Registration{}, false, err
	}
	return s.remoteKind().load(s.RegistrationPath(id), id)
}

// invalidUTF8Offset returns the offset of the first invalid UTF-8 sequence
// of b, or -1.
func invalidUTF8Offset(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return -1
}

// Save writes r to its file, replacing the previous version atomically. An
// invalid registration, or one whose file would exceed
// MaxRegistrationFileBytes, is refused before anything is written: the
// file would only come back as a storage issue.
func (s *Store) Save(r domain.Registration) error {
	if err := r.Validate(); err != nil {
		return err
	}
	path := s.RegistrationPath(r.ID)
	data, err := encodeRegistration(r)
	if err != nil {
		return domain.Errorf(domain.KindBadRequest, "", "Failed to serialize JSON for %s: %v", path, err)
	}
	if len(data) > MaxRegistrationFileBytes {
		return domain.Errorf(domain.KindBadRequest, CodeRegistrationTooLarge,
			"the registration would be %d bytes; registration files are limited to %d bytes (shorten its description overrides)", len(data), MaxRegistrationFileBytes)
	}
	return s.data.writeFileAtomic(path, data)
}

// Delete removes the registration file of id; an absent file is not an
// error. It leaves the catalog alone (see DeleteCatalog).
func (s *Store) Delete(id domain.RegistrationID) error {
	if _, err := domain.ParseRegistrationID(string(id)); err != nil {
		return err
	}
	return s.data.removeFile(s.RegistrationPath(id))
}

// DeleteCatalog removes the catalog file of id; an absent file is not an
// error.
func (s *Store) DeleteCatalog(id domain.RegistrationID) error {
	if _, err := domain.ParseRegistrationID(string(id)); err != nil {
		return err
	}
	return s.data.removeFile(s.CatalogPath(id))
}

// removeFile removes the file at path, if any. Unlike os.Remove it refuses
// a directory, even an empty one: a directory where a file belongs is
// damage to report, not to clean up.
func (r dataRoot) removeFile(path string) error {
	fi, err := r.lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return ioError(err, "Failed to delete file %s: %v", path, reason(err))
	}
	if fi.IsDir() {
		return domain.Errorf(domain.KindInternal, "", "Failed to delete file %s: is a directory", path)
	}
	if err := r.remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return ioError(err, "Failed to delete file %s: %v", path, reason(err))
	}
	return nil
}
