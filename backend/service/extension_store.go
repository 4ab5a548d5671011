package service

import (
	"context"
	"encoding/base64"
	"strings"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/jsapi"
)

// ExtensionStoreFiles is the extension store storage the service needs
// (storage.ExtensionStore). Names reach it trimmed and validated; it
// validates them again before they become paths.
type ExtensionStoreFiles interface {
	// ReadJSON returns an entry as compact JSON text, or false when there
	// is none.
	ReadJSON(namespace, table, key string) ([]byte, bool, error)
	// WriteJSON replaces an entry atomically with one JSON value.
	WriteJSON(namespace, table, key string, value []byte) error
	// RenameJSON moves an entry within its table; NotFound when it does
	// not exist, Conflict when newKey does.
	RenameJSON(namespace, table, key, newKey string) error
	// DeleteJSON removes an entry; NotFound when it does not exist.
	DeleteJSON(namespace, table, key string) error
	ListJSONKeys(namespace, table string) ([]string, error)
	ListTables(namespace string) ([]string, error)
	// DeleteTable removes a table's entries and blobs; NotFound when it
	// has neither.
	DeleteTable(namespace, table string) error
	// ReadBlob returns a blob's bytes; NotFound when it does not exist.
	ReadBlob(namespace, table, key string) ([]byte, error)
	WriteBlob(namespace, table, key string, data []byte) error
	DeleteBlob(namespace, table, key string) error
	ListBlobKeys(namespace, table string) ([]string, error)
}

// extensionStore serialises the writes of each table: set, update,
// rename and delete of its entries and blobs, and deleting the table, run
// one at a time. So concurrent updateJson calls on one key all take
// effect, each merged into the result of the one before (in the order the
// backend receives them), and nothing is lost; a set between two updates
// replaces what the first merged. Reads take no lock: every write replaces
// a whole file atomically, so a read sees an entry before or after a
// write, never during it.
type extensionStore struct {
	files ExtensionStoreFiles

	mu     sync.Mutex
	tables map[string]*tableLock // by namespace + "\x00" + table, while held or awaited
}

type tableLock struct {
	ch   chan struct{}
	refs int
}

// lockTable takes the write lock of a table, or fails when ctx ends first.
func (st *extensionStore) lockTable(ctx context.Context, namespace, table string) (unlock func(), err error) {
	name := namespace + "\x00" + table
	st.mu.Lock()
	l := st.tables[name]
	if l == nil {
		l = &tableLock{ch: make(chan struct{}, 1)}
		st.tables[name] = l
	}
	l.refs++
	st.mu.Unlock()
	release := func() {
		st.mu.Lock()
		if l.refs--; l.refs == 0 {
			delete(st.tables, name)
		}
		st.mu.Unlock()
	}
	held, err := acquire(ctx, l.ch)
	if err != nil {
		release()
		return nil, err
	}
	return func() {
		held()
		release()
	}, nil
}

// storeFiles returns the store, or an error when the backend has none.
func (s *Service) storeFiles() (*extensionStore, error) {
	if s.store.files == nil {
		return nil, domain.Errorf(domain.KindUnavailable, domain.CodeExtensionStoreUnavailable,
			"this ttmcp backend has no extension store")
	}
	return &s.store, nil
}

// storeEntry resolves the store and the names of one entry.
func (s *Service) storeEntry(namespace string, table *string, key string) (st *extensionStore, ns, t, k string, err error) {
	if st, err = s.storeFiles(); err != nil {
		return
	}
	if ns, err = domain.ExtensionStoreName(namespace, "namespace"); err != nil {
		return
	}
	if t, err = domain.ExtensionStoreTable(table); err != nil {
		return
	}
	k, err = domain.ExtensionStoreName(key, "key")
	return
}

// storeTable resolves the names of one table.
func storeTable(namespace string, table *string) (ns, t string, err error) {
	if ns, err = domain.ExtensionStoreName(namespace, "namespace"); err != nil {
		return
	}
	t, err = domain.ExtensionStoreTable(table)
	return
}

// GetExtensionStoreJSON returns an entry; NotFound when there is none.
func (s *Service) GetExtensionStoreJSON(ctx context.Context, args jsapi.ExtensionStoreEntryArgs) (jsapi.JSONValue, error) {
	found, err := s.TryGetExtensionStoreJSON(ctx, args)
	if err != nil {
		return nil, err
	}
	if !found.Found {
		_, ns, t, k, _ := s.storeEntry(args.Namespace, args.Table, args.Key)
		return nil, domain.Errorf(domain.KindNotFound, domain.CodeExtensionStoreNotFound,
			"Extension store JSON entry not found: %s:%s/%s", ns, t, k)
	}
	return found.Value, nil
}

// TryGetExtensionStoreJSON returns {found: false} when there is no entry,
// else {found: true, value} (a stored null is found).
func (s *Service) TryGetExtensionStoreJSON(_ context.Context, args jsapi.ExtensionStoreEntryArgs) (jsapi.ExtensionStoreJSONLookup, error) {
	st, ns, t, k, err := s.storeEntry(args.Namespace, args.Table, args.Key)
	if err != nil {
		return jsapi.ExtensionStoreJSONLookup{}, err
	}
	v, found, err := st.files.ReadJSON(ns, t, k)
	if err != nil || !found {
		return jsapi.ExtensionStoreJSONLookup{}, err
	}
	return jsapi.ExtensionStoreJSONLookup{Found: true, Value: v}, nil
}

// SetExtensionStoreJSON replaces an entry with args.Value (required; null
// is a value).
func (s *Service) SetExtensionStoreJSON(ctx context.Context, args jsapi.ExtensionStoreSetJSONArgs) error {
	return s.writeStoreJSON(ctx, args, false)
}

// UpdateExtensionStoreJSON merges args.Value into an entry as upstream
// does: where both the entry and the value are objects, each member of
// the value is merged into the entry's member of that name (or added);
// anywhere else the value replaces what was there. A missing entry is
// created with the value. The read, merge and write run under the table's
// lock (see extensionStore).
func (s *Service) UpdateExtensionStoreJSON(ctx context.Context, args jsapi.ExtensionStoreSetJSONArgs) error {
	return s.writeStoreJSON(ctx, args, true)
}

// writeStoreJSON writes args.Value, merged into the current entry when
// merge is set, under the table's lock.
func (s *Service) writeStoreJSON(ctx context.Context, args jsapi.ExtensionStoreSetJSONArgs, merge bool) error {
	st, ns, t, k, err := s.storeEntry(args.Namespace, args.Table, args.Key)
	if err != nil {
		return err
	}
	if args.Value == nil {
		return domain.Errorf(domain.KindBadRequest, jsapi.CodeArgsInvalid, "missing field `value`")
	}
	return st.locked(ctx, ns, t, func() error {
		value := []byte(args.Value)
		if merge {
			current, found, err := st.files.ReadJSON(ns, t, k)
			if err != nil {
				return err
			}
			if found {
				if value, err = mergeJSON(current, value); err != nil {
					return err
				}
			}
		}
		return st.files.WriteJSON(ns, t, k, value)
	})
}

// mergeJSON merges update into current (both JSON text) as
// serde_json-based upstream does (see UpdateExtensionStoreJSON).
func mergeJSON(current, update []byte) ([]byte, error) {
	if jsontext.Value(current).Kind() != '{' || jsontext.Value(update).Kind() != '{' {
		return update, nil
	}
	var cur, upd map[string]jsontext.Value
	if err := json.Unmarshal(current, &cur); err != nil {
		return nil, domain.Errorf(domain.KindInternal, "", "cannot merge into the stored entry: %v", err)
	}
	if err := json.Unmarshal(update, &upd); err != nil {
		return nil, domain.Errorf(domain.KindBadRequest, jsapi.CodeArgsInvalid, "cannot merge the value: %v", err)
	}
	for name, v := range upd {
		if c, ok := cur[name]; ok {
			m, err := mergeJSON(c, v)
			if err != nil {
				return nil, err
			}
			v = m
		}
		cur[name] = v
	}
	// The storage sorts the members when it writes.
	return json.Marshal(cur, jsontext.EscapeForHTML(false), jsontext.EscapeForJS(false))
}

// RenameExtensionStoreKey moves an entry to args.NewKey in its table;
// NotFound when it does not exist, Conflict when the new key does.
func (s *Service) RenameExtensionStoreKey(ctx context.Context, args jsapi.ExtensionStoreRenameArgs) error {
	st, ns, t, k, err := s.storeEntry(args.Namespace, args.Table, args.Key)
	if err != nil {
		return err
	}
	newKey, err := domain.ExtensionStoreName(args.NewKey, "newKey")
	if err != nil {
		return err
	}
	return st.locked(ctx, ns, t, func() error { return st.files.RenameJSON(ns, t, k, newKey) })
}

// DeleteExtensionStoreJSON removes an entry; NotFound when there is none.
func (s *Service) DeleteExtensionStoreJSON(ctx context.Context, args jsapi.ExtensionStoreEntryArgs) error {
	return s.storeEntryWrite(ctx, args, func(st *extensionStore, ns, t, k string) error { return st.files.DeleteJSON(ns, t, k) })
}

// ListExtensionStoreKeys returns a table's JSON keys, sorted.
func (s *Service) ListExtensionStoreKeys(_ context.Context, args jsapi.ExtensionStoreTableArgs) ([]string, error) {
	return s.storeList(args, func(st *extensionStore, ns, t string) ([]string, error) { return st.files.ListJSONKeys(ns, t) })
}

// ListExtensionStoreBlobKeys returns a table's blob keys, sorted.
func (s *Service) ListExtensionStoreBlobKeys(_ context.Context, args jsapi.ExtensionStoreTableArgs) ([]string, error) {
	return s.storeList(args, func(st *extensionStore, ns, t string) ([]string, error) { return st.files.ListBlobKeys(ns, t) })
}

// ListExtensionStoreTables returns a namespace's tables, sorted.
func (s *Service) ListExtensionStoreTables(_ context.Context, args jsapi.ExtensionStoreNamespaceArgs) ([]string, error) {
	st, err := s.storeFiles()
	if err != nil {
		return nil, err
	}
	ns, err := domain.ExtensionStoreName(args.Namespace, "namespace")
	if err != nil {
		return nil, err
	}
	return st.files.ListTables(ns)
}

// DeleteExtensionStoreTable removes a table (its table is required, as
// upstream's); NotFound when it has neither entries nor blobs.
func (s *Service) DeleteExtensionStoreTable(ctx context.Context, args jsapi.ExtensionStoreDeleteTableArgs) error {
	st, err := s.storeFiles()
	if err != nil {
		return err
	}
	ns, err := domain.ExtensionStoreName(args.Namespace, "namespace")
	if err != nil {
		return err
	}
	t, err := domain.ExtensionStoreName(args.Table, "table")
	if err != nil {
		return err
	}
	return st.locked(ctx, ns, t, func() error { return st.files.DeleteTable(ns, t) })
}

// GetExtensionStoreBlob returns a blob in base64 with the MIME type its
// key's extension suggests; NotFound when there is none.
func (s *Service) GetExtensionStoreBlob(_ context.Context, args jsapi.ExtensionStoreEntryArgs) (jsapi.ExtensionStoreBlob, error) {
	st, ns, t, k, err := s.storeEntry(args.Namespace, args.Table, args.Key)
	if err != nil {
		return jsapi.ExtensionStoreBlob{}, err
	}
	data, err := st.files.ReadBlob(ns, t, k)
	if err != nil {
		return jsapi.ExtensionStoreBlob{}, err
	}
	return jsapi.ExtensionStoreBlob{ContentBase64: base64.StdEncoding.EncodeToString(data), MimeType: blobMimeType(k)}, nil
}

// SetExtensionStoreBlob replaces a blob with the bytes of
// args.DataBase64: standard, padded base64 (RFC 4648 §4), surrounding
// whitespace ignored, nothing else tolerated.
func (s *Service) SetExtensionStoreBlob(ctx context.Context, args jsapi.ExtensionStoreSetBlobArgs) error {
	st, ns, t, k, err := s.storeEntry(args.Namespace, args.Table, args.Key)
	if err != nil {
		return err
	}
	data, err := decodeBlob(args.DataBase64)
	if err != nil {
		return err
	}
	return st.locked(ctx, ns, t, func() error { return st.files.WriteBlob(ns, t, k, data) })
}

// DeleteExtensionStoreBlob removes a blob; NotFound when there is none.
func (s *Service) DeleteExtensionStoreBlob(ctx context.Context, args jsapi.ExtensionStoreEntryArgs) error {
	return s.storeEntryWrite(ctx, args, func(st *extensionStore, ns, t, k string) error { return st.files.DeleteBlob(ns, t, k) })
}

func decodeBlob(text string) ([]byte, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, domain.Errorf(domain.KindBadRequest, domain.CodeExtensionStoreBlobInvalid, "No blob data specified")
	}
	// The standard decoder skips line breaks anywhere; upstream's does not.
	if i := strings.IndexAny(text, "\r\n"); i >= 0 {
		return nil, domain.Errorf(domain.KindBadRequest, domain.CodeExtensionStoreBlobInvalid,
			"Invalid base64: illegal line break at input byte %d", i)
	}
	data, err := base64.StdEncoding.Strict().DecodeString(text)
	if err != nil {
		return nil, domain.Errorf(domain.KindBadRequest, domain.CodeExtensionStoreBlobInvalid, "Invalid base64: %v", err)
	}
	return data, nil
}

// locked runs fn under the table's write lock.
func (st *extensionStore) locked(ctx context.Context, namespace, table string, fn func() error) error {
	unlock, err := st.lockTable(ctx, namespace, table)
	if err != nil {
		return err
	}
	defer unlock()
	return fn()
}

// storeEntryWrite resolves an entry's names and runs fn under its table's
// lock.
func (s *Service) storeEntryWrite(ctx context.Context, args jsapi.ExtensionStoreEntryArgs, fn func(st *extensionStore, ns, t, k string) error) error {
	st, ns, t, k, err := s.storeEntry(args.Namespace, args.Table, args.Key)
	if err != nil {
		return err
	}
	return st.locked(ctx, ns, t, func() error { return fn(st, ns, t, k) })
}

// storeList resolves a table's names and lists it.
func (s *Service) storeList(args jsapi.ExtensionStoreTableArgs, fn func(st *extensionStore, ns, t string) ([]string, error)) ([]string, error) {
	st, err := s.storeFiles()
	if err != nil {
		return nil, err
	}
	ns, t, err := storeTable(args.Namespace, args.Table)
	if err != nil {
		return nil, err
	}
	return fn(st, ns, t)
}

// blobMimeTypes maps a key's extension (lowercase) to the type upstream's
// mime_guess gives first, for the common kinds of blob; any other
// extension is application/octet-stream.
var blobMimeTypes = map[string]string{
	"avif": "image/avif", "bmp": "image/bmp", "gif": "image/gif", "ico": "image/x-icon",
	"jpeg": "image/jpeg", "jpg": "image/jpeg", "png": "image/png", "svg": "image/svg+xml",
	"webp": "image/webp", "tif": "image/tiff", "tiff": "image/tiff",
	"mp3": "audio/mpeg", "wav": "audio/wav", "ogg": "audio/ogg", "flac": "audio/flac",
	"m4a": "audio/m4a", "mp4": "video/mp4", "webm": "video/webm",
	"json": "application/json", "pdf": "application/pdf", "zip": "application/zip",
	"wasm": "application/wasm", "gz": "application/gzip",
	"txt": "text/plain", "md": "text/markdown", "csv": "text/csv", "html": "text/html",
	"htm": "text/html", "css": "text/css", "js": "text/javascript", "mjs": "text/javascript",
	"xml": "text/xml", "yaml": "text/x-yaml", "yml": "text/x-yaml",
	"woff": "font/woff", "woff2": "font/woff2", "ttf": "font/ttf", "otf": "font/otf",
}

// blobMimeType guesses a blob's type from its key's extension.
func blobMimeType(key string) string {
	if i := strings.LastIndexByte(key, '.'); i > 0 {
		if t, ok := blobMimeTypes[strings.ToLower(key[i+1:])]; ok {
			return t
		}
	}
	return "application/octet-stream"
}
