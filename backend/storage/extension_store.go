package storage

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// ExtensionStore keeps TauriTavern's extension store (api.extension.store)
// in upstream's layout under the data root:
//
//	<data-root>/_tauritavern/extension-store/<namespace>/kv/<table>/<key>.json
//	<data-root>/_tauritavern/extension-store/<namespace>/blobs/<table>/<key>
//
// A JSON entry is one JSON value, written as serde_json::to_vec_pretty
// writes a serde_json::Value (members sorted by name, two-space indent);
// any JSON value is read. A blob is the raw bytes. A table exists while
// either of its two folders does.
//
// Every name is checked with domain.ExtensionStoreName before it becomes a
// path component, so nothing outside the namespace's folder is reached.
// Writes are atomic (writeFileAtomic); reads take regular files only, and
// never more than the limits below. The store holds no lock: the service
// serialises the writes of a table.
type ExtensionStore struct {
	data dataRoot
	root string // <data-root>/_tauritavern/extension-store
}

// Limits of what the store reads and writes. They keep a damaged or
// hostile data root (a huge file, a FIFO, a device) from hanging or
// sinking the backend, and keep a result within the frames the page
// reads (4/3 of MaxExtensionStoreBlob in base64). Upstream has none.
const (
	// MaxExtensionStoreEntry bounds a JSON entry file, read or written.
	MaxExtensionStoreEntry = 8 << 20
	// MaxExtensionStoreBlob bounds a blob file that is read. Writes are
	// bounded by the page's 4 MiB frames.
	MaxExtensionStoreBlob = 6 << 20
	// MaxExtensionStoreDepth is serde_json's recursion limit: a deeper
	// value is refused, as upstream cannot read it back.
	MaxExtensionStoreDepth = 128
)

// OpenExtensionStore returns the extension store of dataRoot. It touches
// nothing: folders are created by the first write.
func OpenExtensionStore(dataRoot string) *ExtensionStore {
	d := newDataRoot(dataRoot)
	return &ExtensionStore{data: d, root: d.join("_tauritavern", "extension-store")}
}

// Root returns <data-root>/_tauritavern/extension-store.
func (s *ExtensionStore) Root() string { return s.root }

// Kinds of entry: the folder under the namespace, and the file name suffix.
const (
	kvFolder   = "kv"
	blobFolder = "blobs"
	jsonSuffix = ".json"
)

// tableDir returns <root>/<namespace>/<kind>/<table>.
func (s *ExtensionStore) tableDir(namespace, kind, table string) (string, error) {
	ns, err := domain.ExtensionStoreName(namespace, "namespace")
	if err != nil {
		return "", err
	}
	t, err := domain.ExtensionStoreName(table, "table")
	if err != nil {
		return "", err
	}
	return filepath.Join(s.root, ns, kind, t), nil
}

// entryPath returns the file of key in a table of kind.
func (s *ExtensionStore) entryPath(namespace, kind, table, key string) (string, error) {
	dir, err := s.tableDir(namespace, kind, table)
	if err != nil {
		return "", err
	}
	k, err := domain.ExtensionStoreName(key, "key")
	if err != nil {
		return "", err
	}
	if kind == kvFolder {
		k += jsonSuffix
	}
	return filepath.Join(dir, k), nil
}

// ReadJSON returns the JSON entry key, compact, or false when there is
// none. An entry that is not one JSON value (or nests deeper than
// MaxExtensionStoreDepth, or repeats a member name) is an error naming the
// file.
func (s *ExtensionStore) ReadJSON(namespace, table, key string) ([]byte, bool, error) {
	path, err := s.entryPath(namespace, kvFolder, table, key)
	if err != nil {
		return nil, false, err
	}
	data, found, err := s.data.readStoreFile(path, MaxExtensionStoreEntry)
	if !found || err != nil {
		return nil, false, err
	}
	v, err := parseStoreJSON(data)
	if err != nil {
		return nil, false, storeUnreadable("Extension store entry contains invalid JSON %s: %v", path, err)
	}
	out, err := json.Marshal(v, jsontext.EscapeForHTML(false), jsontext.EscapeForJS(false))
	if err != nil {
		return nil, false, storeUnreadable("Extension store entry contains invalid JSON %s: %v", path, err)
	}
	return out, true, nil
}

// WriteJSON replaces the JSON entry key with value (the text of one JSON
// value), written as upstream writes it.
func (s *ExtensionStore) WriteJSON(namespace, table, key string, value []byte) error {
	path, err := s.entryPath(namespace, kvFolder, table, key)
	if err != nil {
		return err
	}
	v, err := parseStoreJSON(value)
	if err != nil {
		return domain.Errorf(domain.KindBadRequest, domain.CodeExtensionStoreValueInvalid, "the value cannot be stored: %v", err)
	}
	var out limitedBuffer
	out.limit = MaxExtensionStoreEntry
	if err := json.MarshalWrite(&out, v, prettyOptions); err != nil {
		if errors.Is(err, errEntryTooLarge) {
			return domain.Errorf(domain.KindBadRequest, domain.CodeExtensionStoreValueInvalid,
				"the value is larger than %d bytes once written", MaxExtensionStoreEntry)
		}
		return domain.Errorf(domain.KindBadRequest, domain.CodeExtensionStoreValueInvalid, "the value cannot be stored: %v", err)
	}
	return s.data.writeFileAtomic(path, out.b)
}

// RenameJSON moves the JSON entry key to newKey in the same table. The
// entry must exist and newKey must not; renaming a key to itself does
// nothing.
func (s *ExtensionStore) RenameJSON(namespace, table, key, newKey string) error {
	from, err := s.entryPath(namespace, kvFolder, table, key)
	if err != nil {
		return err
	}
	if _, err := domain.ExtensionStoreName(newKey, "newKey"); err != nil {
		return err
	}
	to, err := s.entryPath(namespace, kvFolder, table, newKey)
	if err != nil {
		return err
	}
	if from == to {
		return nil
	}
	if err := s.data.requireRegular(from, "JSON entry", namespace, table, key); err != nil {
		return err
	}
	if _, err := s.data.lstat(to); err == nil {
		return domain.Errorf(domain.KindConflict, domain.CodeExtensionStoreKeyExists,
			"Extension store JSON entry already exists: %s", entryName(namespace, table, newKey))
	} else if !errors.Is(err, fs.ErrNotExist) {
		return ioError(err, "Failed to read %s: %v", to, reason(err))
	}
	if err := s.data.rename(from, to); err != nil {
		return ioError(err, "Failed to rename extension store JSON entry %s to %s: %v", from, to, reason(err))
	}
	s.data.syncDir(filepath.Dir(to))
	return nil
}

// DeleteJSON removes the JSON entry key; an absent entry is NotFound.
func (s *ExtensionStore) DeleteJSON(namespace, table, key string) error {
	return s.deleteEntry(namespace, kvFolder, "JSON entry", table, key)
}

// ListJSONKeys returns the keys of a table's JSON entries, sorted: the
// regular files "<key>.json" whose key is a valid name.
func (s *ExtensionStore) ListJSONKeys(namespace, table string) ([]string, error) {
	dir, err := s.tableDir(namespace, kvFolder, table)
	if err != nil {
		return nil, err
	}
	return s.data.listStoreDir(dir, func(name string, mode fs.FileMode) (string, bool) {
		key, ok := strings.CutSuffix(name, jsonSuffix)
		return key, ok && mode.IsRegular()
	})
}

// ListTables returns the tables of a namespace, sorted: the folders under
// kv/ and blobs/, once each.
func (s *ExtensionStore) ListTables(namespace string) ([]string, error) {
	ns, err := domain.ExtensionStoreName(namespace, "namespace")
	if err != nil {
		return nil, err
	}
	dirs := func(name string, mode fs.FileMode) (string, bool) { return name, mode.IsDir() }
	tables, err := s.data.listStoreDir(filepath.Join(s.root, ns, kvFolder), dirs)
	if err != nil {
		return nil, err
	}
	blobs, err := s.data.listStoreDir(filepath.Join(s.root, ns, blobFolder), dirs)
	if err != nil {
		return nil, err
	}
	tables = append(tables, blobs...)
	slices.Sort(tables)
	return slices.Compact(tables), nil
}

// DeleteTable removes a table: its JSON entries and its blobs. A table
// with neither is NotFound.
func (s *ExtensionStore) DeleteTable(namespace, table string) error {
	removed := false
	for _, kind := range [...]string{kvFolder, blobFolder} {
		dir, err := s.tableDir(namespace, kind, table)
		if err != nil {
			return err
		}
		fi, err := s.data.lstat(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return ioError(err, "Failed to delete extension store table %s: %v", dir, reason(err))
		}
		if !fi.IsDir() {
			return domain.Errorf(domain.KindInternal, domain.CodeExtensionStoreEntryUnreadable,
				"Failed to delete extension store table %s: not a directory", dir)
		}
		// RemoveAll removes a symbolic link inside the table, never what
		// it points to.
		if err := s.data.removeAll(dir); err != nil {
			return ioError(err, "Failed to delete extension store table %s: %v", dir, reason(err))
		}
		s.data.syncDir(filepath.Dir(dir))
		removed = true
	}
	if !removed {
		return domain.Errorf(domain.KindNotFound, domain.CodeExtensionStoreNotFound,
			"Extension store table not found: %s:%s", strings.TrimSpace(namespace), strings.TrimSpace(table))
	}
	return nil
}

// ReadBlob returns the bytes of blob key; an absent blob is NotFound.
func (s *ExtensionStore) ReadBlob(namespace, table, key string) ([]byte, error) {
	path, err := s.entryPath(namespace, blobFolder, table, key)
	if err != nil {
		return nil, err
	}
	data, found, err := s.data.readStoreFile(path, MaxExtensionStoreBlob)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, domain.Errorf(domain.KindNotFound, domain.CodeExtensionStoreNotFound,
			"Extension store blob not found: %s", entryName(namespace, table, key))
	}
	return data, nil
}

// WriteBlob replaces blob key with data.
func (s *ExtensionStore) WriteBlob(namespace, table, key string, data []byte) error {
	path, err := s.entryPath(namespace, blobFolder, table, key)
	if err != nil {
		return err
	}
	return s.data.writeFileAtomic(path, data)
}

// DeleteBlob removes blob key; an absent blob is NotFound.
func (s *ExtensionStore) DeleteBlob(namespace, table, key string) error {
	return s.deleteEntry(namespace, blobFolder, "blob", table, key)
}

// ListBlobKeys returns the keys of a table's blobs, sorted: its regular
// files whose name is a valid key (so never a temporary file, which
// starts with '.').
func (s *ExtensionStore) ListBlobKeys(namespace, table string) ([]string, error) {
	dir, err := s.tableDir(namespace, blobFolder, table)
	if err != nil {
		return nil, err
	}
	return s.data.listStoreDir(dir, func(name string, mode fs.FileMode) (string, bool) {
		return name, mode.IsRegular()
	})
}

func (s *ExtensionStore) deleteEntry(namespace, kind, what, table, key string) error {
	path, err := s.entryPath(namespace, kind, table, key)
	if err != nil {
		return err
	}
	if err := s.data.requireRegular(path, what, namespace, table, key); err != nil {
		return err
	}
	if err := s.data.remove(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return notFound(what, namespace, table, key)
		}
		return ioError(err, "Failed to delete extension store %s %s: %v", what, path, reason(err))
	}
	s.data.syncDir(filepath.Dir(path))
	return nil
}

// requireRegular checks that path is a file (or a link to one) before it
// is renamed or removed: a folder where an entry belongs is damage to
// report, not to clean up. An absent path is NotFound.
func (r dataRoot) requireRegular(path, what, namespace, table, key string) error {
	fi, err := r.stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return notFound(what, namespace, table, key)
	}
	if err != nil {
		return ioError(err, "Failed to read %s: %v", path, reason(err))
	}
	if !fi.Mode().IsRegular() {
		return storeUnreadable("Extension store %s %s is not a regular file", what, path)
	}
	return nil
}

func notFound(what, namespace, table, key string) error {
	return domain.Errorf(domain.KindNotFound, domain.CodeExtensionStoreNotFound,
		"Extension store %s not found: %s", what, entryName(namespace, table, key))
}

// entryName names an entry in messages as upstream's commands log it:
// "<namespace>:<table>/<key>".
func entryName(namespace, table, key string) string {
	return strings.TrimSpace(namespace) + ":" + strings.TrimSpace(table) + "/" + strings.TrimSpace(key)
}

func storeUnreadable(format string, args ...any) error {
	return domain.Errorf(domain.KindInternal, domain.CodeExtensionStoreEntryUnreadable, format, args...)
}

// listStoreDir returns the sorted names that keep accepts among the
// entries of dir (following symbolic links, as upstream's is_file and
// is_dir do), leaving out every name that is not a valid store name. A
// missing folder holds nothing.
func (r dataRoot) listStoreDir(dir string, keep func(name string, mode fs.FileMode) (string, bool)) ([]string, error) {
	entries, err := r.readDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return []string{}, nil
	}
	if err != nil {
		return nil, ioError(err, "Failed to read extension store directory %s: %v", dir, reason(err))
	}
	all := make([]string, len(entries))
	for i, e := range entries {
		all[i] = e.Name()
	}
	names := []string{}
	for i, fi := range r.statEntries(dir, all) {
		if fi == nil {
			continue // a dangling link, or removed since the listing
		}
		name, ok := keep(all[i], fi.Mode())
		if !ok {
			continue
		}
		if valid, err := domain.ExtensionStoreName(name, "key"); err != nil || valid != name {
			continue
		}
		names = append(names, name)
	}
	slices.Sort(names)
	return names, nil
}

// readStoreFile reads an entry with readRegular (a regular file, never
// blocking, at most limit bytes; false when there is none). What it
// refuses is mcp.extension_store_entry_unreadable.
func (r dataRoot) readStoreFile(path string, limit int64) ([]byte, bool, error) {
	data, found, err := r.readRegular(path, limit, "extension store")
	if err != nil {
		e := domain.Errorf(domain.KindInternal, domain.CodeExtensionStoreEntryUnreadable, "%s", err.Error())
		e.Err = err
		return nil, false, e
	}
	return data, found, nil
}

// parseStoreJSON parses one JSON value with its objects' members sorted by
// name (a serde_json::Value's order). It refuses what serde_json refuses:
// invalid UTF-8, lone surrogates, repeated member names (serde_json would
// keep the last one; ttmcp reports the damage instead), nesting deeper
// than MaxExtensionStoreDepth.
func parseStoreJSON(data []byte) (jsonValue, error) {
	if err := checkDepth(data, MaxExtensionStoreDepth); err != nil {
		return jsonValue{}, err
	}
	dec := jsontext.NewDecoder(bytes.NewReader(data))
	v, err := readSorted(dec)
	if err == io.EOF {
		return jsonValue{}, errors.New("EOF while parsing a value")
	}
	if err != nil {
		return jsonValue{}, errors.New(describe(err))
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return jsonValue{}, errors.New("trailing characters after the value")
	}
	return v, nil
}

// checkDepth fails when data nests arrays and objects deeper than max, or
// is not one JSON value, before anything recurses into it.
func checkDepth(data []byte, max int) error {
	dec := jsontext.NewDecoder(bytes.NewReader(data))
	for {
		_, err := dec.ReadToken()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return errors.New(describe(err))
		}
		if dec.StackDepth() > max {
			return errors.New("recursion limit exceeded (more than " + strconv.Itoa(max) + " nested arrays and objects)")
		}
	}
}

// errEntryTooLarge stops a write that outgrows its limit.
var errEntryTooLarge = errors.New("entry too large")

// limitedBuffer collects at most limit bytes.
type limitedBuffer struct {
	b     []byte
	limit int
}

func (w *limitedBuffer) Write(p []byte) (int, error) {
	if len(w.b)+len(p) > w.limit {
		return 0, errEntryTooLarge
	}
	w.b = append(w.b, p...)
	return len(p), nil
}
