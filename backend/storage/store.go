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
	"os"
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
	root string // <data-root>/_tauritavern/mcp
}

// Open returns the store of dataRoot. It touches nothing: directories are
// created by the first write, and a missing one reads as empty.
func Open(dataRoot string) *Store {
	return &Store{root: filepath.Join(dataRoot, "_tauritavern", "mcp")}
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
	dir := s.registrationsDir()
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return []domain.Registration{}, []jsapi.StorageIssue{}, nil
	}
	if err != nil {
		return nil, nil, ioError(err, "Failed to read directory %s: %v", dir, reason(err))
	}
	regs := []domain.Registration{}
	issues := []jsapi.StorageIssue{}
	issue := func(name, message string) {
		issues = append(issues, jsapi.StorageIssue{FileName: strings.ToValidUTF8(name, "\uFFFD"), Message: message})
	}
	for _, entry := range entries { // sorted by name
		name := entry.Name()
		stem, ok := strings.CutSuffix(name, ".json")
		if !ok || stem == "" {
			continue // ".json" has no extension, as Rust's Path sees it
		}
		path := filepath.Join(dir, name)
		if !utf8.ValidString(stem) {
			issue(name, "mcp.registration_filename_utf8: filename is not valid UTF-8")
			continue
		}
		id, err := domain.ParseRegistrationID(stem)
		if err != nil {
			issue(name, err.Error())
			continue
		}
		reg, found, err := s.load(path, id)
		switch {
		case err != nil:
			issue(name, err.Error())
		case !found: // removed since the directory was listed
			issue(name, "File not found: "+path)
		default:
			regs = append(regs, reg)
		}
	}
	return regs, issues, nil
}

// Load returns the registration id, or false when it has no file. A file
// that exists but cannot be loaded is an error, never "absent": the caller
// must not create a registration over it.
func (s *Store) Load(id domain.RegistrationID) (domain.Registration, bool, error) {
	if _, err := domain.ParseRegistrationID(string(id)); err != nil {
		return domain.Registration{}, false, err
	}
	return s.load(s.RegistrationPath(id), id)
}

func (s *Store) load(path string, id domain.RegistrationID) (domain.Registration, bool, error) {
	data, found, err := readText(path, MaxRegistrationFileBytes, "registration")
	if !found || err != nil {
		return domain.Registration{}, false, err
	}
	reg, err := decodeRegistration(data, path, id)
	if err != nil {
		return domain.Registration{}, false, err
	}
	return reg, true, nil
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
	return writeFileAtomic(path, data)
}

// Delete removes the registration file of id; an absent file is not an
// error. It leaves the catalog alone (see DeleteCatalog).
func (s *Store) Delete(id domain.RegistrationID) error {
	if _, err := domain.ParseRegistrationID(string(id)); err != nil {
		return err
	}
	return removeFile(s.RegistrationPath(id))
}

// DeleteCatalog removes the catalog file of id; an absent file is not an
// error.
func (s *Store) DeleteCatalog(id domain.RegistrationID) error {
	if _, err := domain.ParseRegistrationID(string(id)); err != nil {
		return err
	}
	return removeFile(s.CatalogPath(id))
}

// removeFile removes the file at path, if any. Unlike os.Remove it refuses
// a directory, even an empty one: a directory where a file belongs is
// damage to report, not to clean up.
func removeFile(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return ioError(err, "Failed to delete file %s: %v", path, reason(err))
	}
	if fi.IsDir() {
		return domain.Errorf(domain.KindInternal, "", "Failed to delete file %s: is a directory", path)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return ioError(err, "Failed to delete file %s: %v", path, reason(err))
	}
	return nil
}
