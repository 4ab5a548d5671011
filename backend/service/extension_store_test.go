package service

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/backend/storage"
	"github.com/ttmcp/ttmcp/jsapi"
)

func newStoreService(t *testing.T) (*Service, string) {
	t.Helper()
	root := t.TempDir()
	return New(Config{ExtensionStore: storage.OpenExtensionStore(root)}), root
}

func entry(ns, key string, table *string) jsapi.ExtensionStoreEntryArgs {
	return jsapi.ExtensionStoreEntryArgs{Namespace: ns, Key: key, Table: table}
}

func setArgs(ns, key, value string) jsapi.ExtensionStoreSetJSONArgs {
	return jsapi.ExtensionStoreSetJSONArgs{Namespace: ns, Key: key, Value: jsapi.JSONValue(value)}
}

func mustErr(t *testing.T, err error, code string, kind domain.Kind) {
	t.Helper()
	if err == nil || domain.CodeOf(err) != code || domain.KindOf(err) != kind {
		t.Fatalf("error %v (code %q, kind %v), want %s %v", err, domain.CodeOf(err), domain.KindOf(err), code, kind)
	}
}

func getJSON(t *testing.T, s *Service, ns, key string) string {
	t.Helper()
	v, err := s.GetExtensionStoreJSON(context.Background(), entry(ns, key, nil))
	if err != nil {
		t.Fatal(err)
	}
	return string(v)
}

func TestExtensionStoreJSONMethods(t *testing.T) {
	s, _ := newStoreService(t)
	ctx := context.Background()
	ns := "tauritavern.mcp-manager"
	key := "exa-search-recommendation-handled"

	_, err := s.GetExtensionStoreJSON(ctx, entry(ns, key, nil))
	mustErr(t, err, domain.CodeExtensionStoreNotFound, domain.KindNotFound)
	if found, err := s.TryGetExtensionStoreJSON(ctx, entry(ns, key, nil)); err != nil || found.Found || found.Value != nil {
		t.Fatalf("tryGet of nothing: %+v %v", found, err)
	}
	if err := s.SetExtensionStoreJSON(ctx, setArgs(ns, key, "true")); err != nil {
		t.Fatal(err)
	}
	if found, err := s.TryGetExtensionStoreJSON(ctx, entry(ns, key, nil)); err != nil || !found.Found || string(found.Value) != "true" {
		t.Fatalf("tryGet: %+v %v", found, err)
	}
	// null is a value: found
	if err := s.SetExtensionStoreJSON(ctx, setArgs(ns, "nothing", "null")); err != nil {
		t.Fatal(err)
	}
	if found, _ := s.TryGetExtensionStoreJSON(ctx, entry(ns, "nothing", nil)); !found.Found || string(found.Value) != "null" {
		t.Fatalf("stored null: %+v", found)
	}
	// a missing value is refused
	err = s.SetExtensionStoreJSON(ctx, jsapi.ExtensionStoreSetJSONArgs{Namespace: ns, Key: "k"})
	mustErr(t, err, jsapi.CodeArgsInvalid, domain.KindBadRequest)

	// the table defaults to main: absent, empty and blank are all main
	for _, table := range []*string{nil, ptr(""), ptr("  "), ptr(" main ")} {
		if got, err := s.GetExtensionStoreJSON(ctx, entry(ns, key, table)); err != nil || string(got) != "true" {
			t.Errorf("table %v: %s %v", table, got, err)
		}
	}
	keys, err := s.ListExtensionStoreKeys(ctx, jsapi.ExtensionStoreTableArgs{Namespace: ns})
	if err != nil || !slices.Equal(keys, []string{key, "nothing"}) {
		t.Errorf("keys %v %v", keys, err)
	}

	// rename, delete
	rename := jsapi.ExtensionStoreRenameArgs{Namespace: ns, Key: "nothing", NewKey: "renamed"}
	if err := s.RenameExtensionStoreKey(ctx, rename); err != nil {
		t.Fatal(err)
	}
	mustErr(t, s.RenameExtensionStoreKey(ctx, rename), domain.CodeExtensionStoreNotFound, domain.KindNotFound)
	mustErr(t, s.RenameExtensionStoreKey(ctx, jsapi.ExtensionStoreRenameArgs{Namespace: ns, Key: key, NewKey: "renamed"}),
		domain.CodeExtensionStoreKeyExists, domain.KindConflict)
	mustErr(t, s.RenameExtensionStoreKey(ctx, jsapi.ExtensionStoreRenameArgs{Namespace: ns, Key: key, NewKey: "../x"}),
		domain.CodeExtensionStoreNameInvalid, domain.KindBadRequest)
	if err := s.DeleteExtensionStoreJSON(ctx, entry(ns, "renamed", nil)); err != nil {
		t.Fatal(err)
	}
	mustErr(t, s.DeleteExtensionStoreJSON(ctx, entry(ns, "renamed", nil)), domain.CodeExtensionStoreNotFound, domain.KindNotFound)

	// tables
	if err := s.SetExtensionStoreJSON(ctx, jsapi.ExtensionStoreSetJSONArgs{Namespace: ns, Key: "k", Table: ptr("extra"), Value: jsapi.JSONValue("1")}); err != nil {
		t.Fatal(err)
	}
	tables, err := s.ListExtensionStoreTables(ctx, jsapi.ExtensionStoreNamespaceArgs{Namespace: ns})
	if err != nil || !slices.Equal(tables, []string{"extra", "main"}) {
		t.Errorf("tables %v %v", tables, err)
	}
	if err := s.DeleteExtensionStoreTable(ctx, jsapi.ExtensionStoreDeleteTableArgs{Namespace: ns, Table: "extra"}); err != nil {
		t.Fatal(err)
	}
	mustErr(t, s.DeleteExtensionStoreTable(ctx, jsapi.ExtensionStoreDeleteTableArgs{Namespace: ns, Table: "extra"}),
		domain.CodeExtensionStoreNotFound, domain.KindNotFound)
	// delete_extension_store_table needs its table: blank is not main
	mustErr(t, s.DeleteExtensionStoreTable(ctx, jsapi.ExtensionStoreDeleteTableArgs{Namespace: ns, Table: " "}),
		domain.CodeExtensionStoreNameInvalid, domain.KindBadRequest)

	// names are checked before anything else
	for _, args := range []jsapi.ExtensionStoreEntryArgs{entry("", key, nil), entry(ns, "", nil), entry(ns, key, ptr("../main")), entry("..", key, nil)} {
		_, err := s.TryGetExtensionStoreJSON(ctx, args)
		mustErr(t, err, domain.CodeExtensionStoreNameInvalid, domain.KindBadRequest)
	}
	_, err = s.ListExtensionStoreTables(ctx, jsapi.ExtensionStoreNamespaceArgs{Namespace: "a/b"})
	mustErr(t, err, domain.CodeExtensionStoreNameInvalid, domain.KindBadRequest)
}

// updateJson merges as upstream's merge_json_value: objects member by
// member, recursively; anything else replaces; a missing entry is the
// value.
func TestExtensionStoreUpdateMerges(t *testing.T) {
	tests := []struct {
		name, current, update, want string
	}{
		{"missing entry", "", `{"a":1}`, `{"a":1}`},
		{"objects merge deeply", `{"a":1,"nested":{"x":1,"keep":[1]}}`, `{"b":2,"nested":{"y":2,"keep":[2]}}`, `{"a":1,"b":2,"nested":{"keep":[2],"x":1,"y":2}}`},
		{"null replaces a member", `{"a":{"x":1}}`, `{"a":null}`, `{"a":null}`},
		{"scalar replaced by object", `1`, `{"a":1}`, `{"a":1}`},
		{"object replaced by array", `{"a":1}`, `[1]`, `[1]`},
		{"arrays are not merged", `[1,2]`, `[3]`, `[3]`},
		{"empty object changes nothing", `{"a":1}`, `{}`, `{"a":1}`},
		{"null entry", `null`, `{"a":1}`, `{"a":1}`},
		{"big integers stay exact", `{"n":1}`, `{"n":18446744073709551615,"m":9007199254740993}`, `{"m":9007199254740993,"n":18446744073709551615}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := newStoreService(t)
			ctx := context.Background()
			if tt.current != "" {
				if err := s.SetExtensionStoreJSON(ctx, setArgs("ns", "k", tt.current)); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.UpdateExtensionStoreJSON(ctx, setArgs("ns", "k", tt.update)); err != nil {
				t.Fatal(err)
			}
			if got := getJSON(t, s, "ns", "k"); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

// Concurrent writes to one key are serialised: every updateJson of 64
// racing goroutines lands (none overwrites another's merge), sets and
// updates of other keys and tables go on beside them, and the lock table
// is empty afterwards.
func TestExtensionStoreConcurrentWrites(t *testing.T) {
	s, root := newStoreService(t)
	ctx := context.Background()
	const n = 64
	var wg sync.WaitGroup
	errs := make(chan error, 3*n)
	for i := range n {
		wg.Add(3)
		go func() {
			defer wg.Done()
			errs <- s.UpdateExtensionStoreJSON(ctx, setArgs("ns", "shared", fmt.Sprintf(`{"m%02d":%d,"nested":{"n%02d":true}}`, i, i, i)))
		}()
		go func() {
			defer wg.Done()
			errs <- s.SetExtensionStoreJSON(ctx, jsapi.ExtensionStoreSetJSONArgs{Namespace: "ns", Table: ptr("t" + strconv.Itoa(i%4)), Key: "k" + strconv.Itoa(i), Value: jsapi.JSONValue(strconv.Itoa(i))})
		}()
		go func() {
			defer wg.Done()
			_, err := s.TryGetExtensionStoreJSON(ctx, entry("ns", "shared", nil))
			errs <- err // a read sees a whole file, before or after a write
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	var got struct {
		Nested map[string]bool `json:"nested"`
	}
	var members map[string]json.RawMessage
	raw := getJSON(t, s, "ns", "shared")
	if err := json.Unmarshal([]byte(raw), &members); err != nil {
		t.Fatal(err)
	}
	json.Unmarshal([]byte(raw), &got)
	if len(members) != n+1 || len(got.Nested) != n {
		t.Errorf("%d members, %d nested: updates were lost", len(members), len(got.Nested))
	}
	for i := range 4 {
		keys, _ := s.ListExtensionStoreKeys(ctx, jsapi.ExtensionStoreTableArgs{Namespace: "ns", Table: ptr("t" + strconv.Itoa(i))})
		if len(keys) != n/4 {
			t.Errorf("table t%d: %v", i, keys)
		}
	}
	if len(s.store.tables) != 0 {
		t.Errorf("%d table locks left", len(s.store.tables))
	}
	// no temporary files left
	filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err == nil && filepath.Ext(path) == ".tmp" {
			t.Errorf("left %s", path)
		}
		return nil
	})
}

// A write waiting for its table's lock gives up when its request is
// cancelled (the page's socket closed) and changes nothing.
func TestExtensionStoreWriteCancelledWhileWaiting(t *testing.T) {
	s, _ := newStoreService(t)
	unlock, err := s.store.lockTable(context.Background(), "ns", "main")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	err = s.SetExtensionStoreJSON(ctx, setArgs("ns", "k", "1"))
	mustErr(t, err, jsapi.CodeRequestCancelled, domain.KindUnavailable)
	unlock()
	if found, _ := s.TryGetExtensionStoreJSON(context.Background(), entry("ns", "k", nil)); found.Found {
		t.Error("the cancelled write happened")
	}
	if len(s.store.tables) != 0 {
		t.Errorf("%d table locks left", len(s.store.tables))
	}
}

func TestExtensionStoreBlobs(t *testing.T) {
	s, root := newStoreService(t)
	ctx := context.Background()
	data := []byte{0x89, 'P', 'N', 'G', 0, 0xff}
	set := jsapi.ExtensionStoreSetBlobArgs{Namespace: "ns", Key: "icon.PNG", DataBase64: "  " + base64.StdEncoding.EncodeToString(data) + "\n"}
	if err := s.SetExtensionStoreBlob(ctx, set); err != nil {
		t.Fatal(err)
	}
	if got := readBytes(t, filepath.Join(root, "_tauritavern", "extension-store", "ns", "blobs", "main", "icon.PNG")); string(got) != string(data) {
		t.Fatalf("file %q", got)
	}
	blob, err := s.GetExtensionStoreBlob(ctx, entry("ns", "icon.PNG", nil))
	if err != nil || blob.ContentBase64 != base64.StdEncoding.EncodeToString(data) || blob.MimeType != "image/png" {
		t.Fatalf("blob %+v %v", blob, err)
	}
	keys, err := s.ListExtensionStoreBlobKeys(ctx, jsapi.ExtensionStoreTableArgs{Namespace: "ns"})
	if err != nil || !slices.Equal(keys, []string{"icon.PNG"}) {
		t.Errorf("keys %v %v", keys, err)
	}
	// a table holding only blobs is a table
	if tables, _ := s.ListExtensionStoreTables(ctx, jsapi.ExtensionStoreNamespaceArgs{Namespace: "ns"}); !slices.Equal(tables, []string{"main"}) {
		t.Errorf("tables %v", tables)
	}
	if err := s.DeleteExtensionStoreBlob(ctx, entry("ns", "icon.PNG", nil)); err != nil {
		t.Fatal(err)
	}
	_, err = s.GetExtensionStoreBlob(ctx, entry("ns", "icon.PNG", nil))
	mustErr(t, err, domain.CodeExtensionStoreNotFound, domain.KindNotFound)

	for _, bad := range []string{"", "   ", "AAA", "AA==AA==", "AAA=\nAAA=", "A A=", "AB==" /* trailing bits */, "-_8="} {
		set.DataBase64 = bad
		mustErr(t, s.SetExtensionStoreBlob(ctx, set), domain.CodeExtensionStoreBlobInvalid, domain.KindBadRequest)
	}
	for key, want := range map[string]string{"a.png": "image/png", "a.JPG": "image/jpeg", "a.js": "text/javascript", "a": "application/octet-stream", "a.unknown": "application/octet-stream", "a.tar.gz": "application/gzip"} {
		if got := blobMimeType(key); got != want {
			t.Errorf("%s: %s, want %s", key, got, want)
		}
	}
}

func readBytes(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Without a store every command answers mcp.extension_store_unavailable.
func TestExtensionStoreUnavailable(t *testing.T) {
	s := New(Config{})
	_, err := s.TryGetExtensionStoreJSON(context.Background(), entry("ns", "k", nil))
	mustErr(t, err, domain.CodeExtensionStoreUnavailable, domain.KindUnavailable)
	mustErr(t, s.SetExtensionStoreBlob(context.Background(), jsapi.ExtensionStoreSetBlobArgs{Namespace: "ns", Key: "k", DataBase64: "AA=="}),
		domain.CodeExtensionStoreUnavailable, domain.KindUnavailable)
}
