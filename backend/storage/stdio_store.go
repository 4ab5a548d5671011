package storage

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/jsapi"
)

// StdioDirName is the directory of the stdio server files, beside the
// registration files, and the prefix of their storage issues' file names.
const StdioDirName = "stdio"

// CodeRegistrationIDDuplicate: a stdio file names an id that a
// registration file already has.
const CodeRegistrationIDDuplicate = "mcp.registration_id_duplicate"

func (s *Store) stdioDir() string { return filepath.Join(s.root, StdioDirName) }

// StdioPath returns the path of the stdio server file of id.
func (s *Store) StdioPath(id domain.RegistrationID) string {
	return filepath.Join(s.stdioDir(), string(id)+".json")
}

// ScanStdio loads every stdio server file, in file name order, as Scan
// loads registration files: a file that cannot be loaded is a storage
// issue (its FileName is "stdio/<name>") and the others still load.
func (s *Store) ScanStdio() ([]domain.Registration, []jsapi.StorageIssue, error) {
	return scanFiles(s.ListStdioFiles, s.LoadStdioFile)
}

// StdioFolderStamp returns the stamp of the stdio folder. A folder that
// does not exist (no stdio server was ever added: the usual case) has the
// known zero stamp, so its absence can be trusted as long as it lasts.
func (s *Store) StdioFolderStamp() domain.FileStamp {
	fi, err := s.data.stat(s.stdioDir())
	if errors.Is(err, fs.ErrNotExist) {
		return domain.FileStamp{Known: true}
	}
	if err != nil {
		return domain.FileStamp{}
	}
	return stampOf(fi)
}

// ListStdioFiles lists the stdio folder's "*.json" entries, in file name
// order, with a stamp of each, without reading them.
func (s *Store) ListStdioFiles() ([]domain.StoredFile, error) {
	return s.data.listJSONFiles(s.stdioDir())
}

// LoadStdioFile loads the stdio file called name (an entry of
// ListStdioFiles): the registration, or the storage issue saying why it
// cannot be loaded, and the stamp of what was read.
func (s *Store) LoadStdioFile(name string) (domain.Registration, *jsapi.StorageIssue, domain.FileStamp, bool) {
	return s.stdioKind().loadFile(name)
}

func (s *Store) stdioKind() fileKind[domain.Registration, domain.RegistrationID] {
	return fileKind[domain.Registration, domain.RegistrationID]{root: s.data, dir: s.stdioDir(), what: "stdio server",
		utf8Code: "mcp.registration_filename_utf8", parseID: domain.ParseRegistrationID, decode: decodeStdio, issue: stdioIssue}
}

func stdioIssue(name, message string) jsapi.StorageIssue {
	return jsapi.StorageIssue{FileName: StdioDirName + "/" + strings.ToValidUTF8(name, "\uFFFD"), Message: message}
}

// LoadStdio returns the stdio registration id, or false when it has no
// file. A file that exists but cannot be loaded is an error.
func (s *Store) LoadStdio(id domain.RegistrationID) (domain.Registration, bool, error) {
	if _, err := domain.ParseRegistrationID(string(id)); err != nil {
		return domain.Registration{}, false, err
	}
	return s.stdioKind().load(s.StdioPath(id), id)
}

// SaveStdio writes the stdio registration r to its file atomically (owner
// read and write only: the environment may hold secrets). What would not
// be read back is refused before anything is written.
func (s *Store) SaveStdio(r domain.Registration) error {
	if r.Stdio == nil {
		return domain.Errorf(domain.KindInternal, "", "registration `%s` is not a stdio server", r.ID)
	}
	if err := r.Validate(); err != nil {
		return err
	}
	path := s.StdioPath(r.ID)
	data, err := encodeStdio(r)
	if err != nil {
		return domain.Errorf(domain.KindBadRequest, "", "Failed to serialize JSON for %s: %v", path, err)
	}
	if len(data) > MaxRegistrationFileBytes {
		return domain.Errorf(domain.KindBadRequest, CodeRegistrationTooLarge,
			"the stdio server would be %d bytes; its file is limited to %d bytes", len(data), MaxRegistrationFileBytes)
	}
	return s.data.writeFileAtomic(path, data)
}

// DeleteStdio removes the stdio server file of id; an absent file is not
// an error.
func (s *Store) DeleteStdio(id domain.RegistrationID) error {
	if _, err := domain.ParseRegistrationID(string(id)); err != nil {
		return err
	}
	return s.data.removeFile(s.StdioPath(id))
}

// Registry is every registration of a data root as the service sees them:
// the remote ones (registration files, upstream's) and the stdio ones
// (ttmcp's stdio files), under one id space. Catalogs are shared: a stdio
// registration's catalog is bound to its "stdio:" endpoint.
//
// It lists both folders as one (a stdio file is named "stdio/<uuid>.json"
// among the registration files), for the service's view of the
// registrations. An id belongs to its registration file: a stdio file with
// the same id is a storage issue and is otherwise ignored.
type Registry struct {
	*Store
}

// Registry returns the registry of s's data root.
func (s *Store) Registry() Registry { return Registry{s} }

const stdioPrefix = StdioDirName + "/"

// RegistrationsFolderStamp is a stamp of both folders: it changes when
// either does. Its times are the newer of the two (what the view's "racy"
// rule reads); the other fields mix both folders' fields.
func (r Registry) RegistrationsFolderStamp() domain.FileStamp {
	a, b := r.Store.RegistrationsFolderStamp(), r.StdioFolderStamp()
	if !a.Known || !b.Known {
		return domain.FileStamp{}
	}
	const mix = 0x9e3779b97f4a7c15
	return domain.FileStamp{
		Size:    a.Size*1_000_003 + b.Size,
		ModTime: max(a.ModTime, b.ModTime),
		Change:  max(a.Change, b.Change),
		Inode:   a.Inode ^ (b.Inode+1)*mix ^ uint64(b.ModTime)*mix*mix ^ uint64(b.Change),
		Device:  a.Device ^ b.Device<<1,
		Known:   true,
	}
}

// ListRegistrationFiles lists the registration files, then the stdio
// files as "stdio/<name>". A stdio file whose id a registration file also
// has gets an unknown stamp, so it is looked at again on every list (its
// issue lasts as long as the other file does).
func (r Registry) ListRegistrationFiles() ([]domain.StoredFile, error) {
	files, err := r.Store.ListRegistrationFiles()
	if err != nil {
		return nil, err
	}
	stdio, err := r.ListStdioFiles()
	if err != nil {
		return nil, err
	}
	remote := make(map[string]bool, len(files))
	for _, f := range files {
		remote[f.Name] = true
	}
	for _, f := range stdio {
		if remote[f.Name] {
			f.Stamp = domain.FileStamp{}
		}
		f.Name = stdioPrefix + f.Name
		files = append(files, f)
	}
	return files, nil
}

// LoadRegistrationFile loads a listed file of either kind.
func (r Registry) LoadRegistrationFile(name string) (domain.Registration, *jsapi.StorageIssue, domain.FileStamp, bool) {
	rest, ok := strings.CutPrefix(name, stdioPrefix)
	if !ok {
		return r.Store.LoadRegistrationFile(name)
	}
	reg, issue, stamp, found := r.LoadStdioFile(rest)
	if found && issue == nil {
		if _, err := r.data.lstat(r.RegistrationPath(reg.ID)); err == nil {
			is := stdioIssue(rest, duplicate(reg.ID).Error())
			return domain.Registration{}, &is, domain.FileStamp{}, true
		}
	}
	return reg, issue, stamp, found
}

// Scan loads both kinds of files, as the service's view lists them.
func (r Registry) Scan() ([]domain.Registration, []jsapi.StorageIssue, error) {
	return scanFiles(r.ListRegistrationFiles, r.LoadRegistrationFile)
}

func duplicate(id domain.RegistrationID) error {
	return domain.Errorf(domain.KindBadRequest, CodeRegistrationIDDuplicate,
		"registrations/%s.json already has this id; this stdio server is ignored until one of the two files is removed", id)
}

// Load returns the registration id of either kind, or false when neither
// file exists.
func (r Registry) Load(id domain.RegistrationID) (domain.Registration, bool, error) {
	reg, found, err := r.Store.Load(id)
	if found || err != nil {
		return reg, found, err
	}
	return r.LoadStdio(id)
}

// Save writes reg to the file of its kind.
func (r Registry) Save(reg domain.Registration) error {
	if reg.Stdio != nil {
		return r.SaveStdio(reg)
	}
	return r.Store.Save(reg)
}

// Delete removes the file of id's registration (see Load): the
// registration file if there is one, else the stdio file.
func (r Registry) Delete(id domain.RegistrationID) error {
	if _, err := domain.ParseRegistrationID(string(id)); err != nil {
		return err
	}
	if _, err := r.data.lstat(r.RegistrationPath(id)); err == nil {
		return r.Store.Delete(id)
	}
	return r.DeleteStdio(id)
}
