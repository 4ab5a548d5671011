package storage

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/ttmcp/ttmcp/backend/domain"
)

const (
	id1 = "550e8400-e29b-41d4-a716-446655440000"
	id2 = "550e8400-e29b-41d4-a716-446655440001"
	id3 = "550e8400-e29b-41d4-a716-446655440002"
)

func ptr[T any](v T) *T { return &v }

// fixture returns a valid registration with every kind of content.
func fixture(t *testing.T, id string) domain.Registration {
	t.Helper()
	e, err := domain.ParseEndpoint("http://127.0.0.1:3333/mcp")
	if err != nil {
		t.Fatal(err)
	}
	return domain.Registration{
		ID:          domain.RegistrationID(id),
		DisplayName: "Local MCP",
		Endpoint:    e,
		Headers:     map[string]string{"x-api-key": "fixture-secret", "Authorization": "Bearer <t&k>"},
		Protocol:    domain.Protocol20250618,
		State:       domain.StateActive,
		Permissions: map[string]domain.Permission{"search": domain.PermissionAllow, "fetch": domain.PermissionAsk},
		Overrides: map[string]domain.DescriptionOverride{
			"search": {Description: ptr("Search \"local\" files\n\u2028 <b>&</b>\x01\x7f"), Properties: map[string]string{}},
			"fetch":  {Properties: map[string]string{"url": "  The URL  "}},
		},
	}
}

// The file of fixture(id1), byte for byte as upstream's serde_json writes
// it: declaration order, sorted maps, two-space indent, {} for an empty
// map, only '"', '\\' and C0 controls escaped, no final newline.
const fixtureFile = "{\n" +
	"  \"schemaVersion\": 1,\n" +
	"  \"kind\": \"tauritavern.mcpServerRegistration\",\n" +
	"  \"id\": \"550e8400-e29b-41d4-a716-446655440000\",\n" +
	"  \"displayName\": \"Local MCP\",\n" +
	"  \"endpoint\": \"http://127.0.0.1:3333/mcp\",\n" +
	"  \"headers\": {\n" +
	"    \"Authorization\": \"Bearer <t&k>\",\n" +
	"    \"x-api-key\": \"fixture-secret\"\n" +
	"  },\n" +
	"  \"protocolVersion\": \"2025-06-18\",\n" +
	"  \"state\": \"active\",\n" +
	"  \"toolPermissions\": {\n" +
	"    \"fetch\": \"ask\",\n" +
	"    \"search\": \"allow\"\n" +
	"  },\n" +
	"  \"toolDescriptionOverrides\": {\n" +
	"    \"fetch\": {\n" +
	"      \"properties\": {\n" +
	"        \"url\": \"  The URL  \"\n" +
	"      }\n" +
	"    },\n" +
	"    \"search\": {\n" +
	"      \"description\": \"Search \\\"local\\\" files\\n\u2028 <b>&</b>\\u0001\x7f\",\n" +
	"      \"properties\": {}\n" +
	"    }\n" +
	"  }\n" +
	"}"

// minimalFile is a registration with nothing optional: the empty maps are
// left out, protocolVersion is still written.
const minimalFile = `{
  "schemaVersion": 1,
  "kind": "tauritavern.mcpServerRegistration",
  "id": "550e8400-e29b-41d4-a716-446655440001",
  "displayName": "Minimal",
  "endpoint": "https://example.com/mcp",
  "protocolVersion": "auto",
  "state": "paused"
}`

func minimal(t *testing.T) domain.Registration {
	t.Helper()
	e, err := domain.ParseEndpoint("https://example.com/mcp")
	if err != nil {
		t.Fatal(err)
	}
	return domain.Registration{
		ID: id2, DisplayName: "Minimal", Endpoint: e, Protocol: domain.ProtocolAuto, State: domain.StatePaused,
		Headers: map[string]string{}, Permissions: map[string]domain.Permission{}, Overrides: map[string]domain.DescriptionOverride{},
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// roundTrip is the check every file kind's round-trip test starts with:
// save writes v, the file at path is private (0600, outside Windows: it
// may hold secrets), and load gives v back. It returns the file's text.
func roundTrip[T any](t *testing.T, v T, save func(T) error, path string, load func() (T, bool, error)) string {
	t.Helper()
	if err := save(v); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" {
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != fileMode {
			t.Fatalf("mode %v (%v): want %v", fi.Mode().Perm(), err, os.FileMode(fileMode))
		}
	}
	got, found, err := load()
	if err != nil || !found || !reflect.DeepEqual(got, v) {
		t.Fatalf("read back %+v %v %v\nwant %+v", got, found, err, v)
	}
	return string(data)
}

// strictCase is a file's content and what loading it must say; want ""
// means it loads.
type strictCase struct{ name, content, want string }

// checkStrict is the shape of every file kind's strictness test: each
// case's content is written at path and loaded; one with want "" must
// load a value healthy accepts, any other must fail saying want and leave
// the file as it was.
func checkStrict[T any](t *testing.T, path string, cases []strictCase, load func() (T, bool, error), healthy func(T) bool) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			v, found, err := load()
			if tt.want == "" {
				if err != nil || !found || !healthy(v) {
					t.Fatalf("%+v %v %v", v, found, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want %q", err, tt.want)
			}
			if data, _ := os.ReadFile(path); string(data) != tt.content {
				t.Fatal("the damaged file was changed")
			}
		})
	}
}

// tempFiles lists the temporary files left in dir.
func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	var m []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if isTempName(e.Name()) {
			m = append(m, filepath.Join(dir, e.Name()))
		}
	}
	return m
}

func TestSaveWritesUpstreamBytes(t *testing.T) {
	tests := []struct {
		name string
		reg  func(t *testing.T) domain.Registration
		want string
	}{
		{"full", func(t *testing.T) domain.Registration { return fixture(t, id1) }, fixtureFile},
		{"minimal", minimal, minimalFile},
		{"nil maps", func(t *testing.T) domain.Registration {
			r := minimal(t)
			r.Headers, r.Permissions, r.Overrides = nil, nil, nil
			return r
		}, minimalFile},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			s := Open(root)
			r := tt.reg(t)
			if err := s.Save(r); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(root, "_tauritavern", "mcp", "registrations", string(r.ID)+".json")
			if s.RegistrationPath(r.ID) != path {
				t.Errorf("RegistrationPath = %q, want %q", s.RegistrationPath(r.ID), path)
			}
			if got := readFile(t, path); got != tt.want {
				t.Errorf("file =\n%s\nwant\n%s", got, tt.want)
			}
			if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("file mode = %v, %v; want 0600", fi.Mode(), err)
			}
		})
	}
}

func TestRoundTrip(t *testing.T) {
	s := Open(t.TempDir())
	e, err := domain.ParseEndpoint(" HTTPS://Example.COM:443/a/../mcp?tenant=one ")
	if err != nil {
		t.Fatal(err)
	}
	r, err := domain.NewRegistration("  Exa  ", e, map[string]string{" X-Key ": " v ", "": ""}, domain.Protocol20260728)
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(r.SetPermission("search:exact", domain.PermissionAllow))
	must(r.SetPermission("never discovered", domain.PermissionAsk))
	must(r.SetPermission("fetch", domain.PermissionAsk))
	must(r.SetPermission("fetch", domain.PermissionOff))
	must(r.SetOverride("search:exact", &domain.DescriptionOverride{Description: ptr("  Search\tlocal files \n"), Properties: map[string]string{"query": " q ", "": ""}}))
	must(r.SetOverride("props only", &domain.DescriptionOverride{Properties: map[string]string{"a": "b"}}))
	must(r.SetOverride("empty description", &domain.DescriptionOverride{Description: ptr("")}))
	must(s.Save(r))

	got, ok, err := s.Load(r.ID)
	if err != nil || !ok {
		t.Fatalf("Load = %v, %v", ok, err)
	}
	// Load always returns maps, and an override's properties.
	r.Overrides["empty description"] = domain.DescriptionOverride{Description: ptr(""), Properties: map[string]string{}}
	if !reflect.DeepEqual(got, r) {
		t.Fatalf("Load =\n%+v\nwant\n%+v", got, r)
	}
	if got.DisplayName != "Exa" || got.Endpoint.String() != "https://example.com/mcp?tenant=one" {
		t.Errorf("not stored normalised: %q %q", got.DisplayName, got.Endpoint)
	}
	if _, off := got.Permissions["fetch"]; off {
		t.Error("off stored")
	}

	// Saving what was loaded writes the same bytes.
	before := readFile(t, s.RegistrationPath(r.ID))
	must(s.Save(got))
	if after := readFile(t, s.RegistrationPath(r.ID)); after != before {
		t.Errorf("re-save changed the file:\n%s\n%s", before, after)
	}

	regs, issues, err := s.Scan()
	if err != nil || len(issues) != 0 || len(regs) != 1 || !reflect.DeepEqual(regs[0], got) {
		t.Fatalf("Scan = %+v, %+v, %v", regs, issues, err)
	}
}

func TestLoadUpstreamFile(t *testing.T) {
	root := t.TempDir()
	s := Open(root)
	writeFile(t, s.RegistrationPath(id1), fixtureFile)
	got, ok, err := s.Load(id1)
	if err != nil || !ok {
		t.Fatalf("Load = %v, %v", ok, err)
	}
	if want := fixture(t, id1); !reflect.DeepEqual(got, want) {
		t.Fatalf("Load =\n%+v\nwant\n%+v", got, want)
	}
	// Upstream trims the display name and normalises the endpoint when it
	// loads a file; so does Load.
	writeFile(t, s.RegistrationPath(id2), strings.NewReplacer(
		`"Minimal"`, `"  Minimal \n"`,
		`"https://example.com/mcp"`, `" HTTPS://EXAMPLE.com:443/x/../mcp"`,
		"\n", "\r\n",
	).Replace(minimalFile))
	got, ok, err = s.Load(id2)
	if err != nil || !ok {
		t.Fatalf("Load = %v, %v", ok, err)
	}
	if want := minimal(t); !reflect.DeepEqual(got, want) {
		t.Fatalf("Load =\n%+v\nwant\n%+v", got, want)
	}
}

func TestLoadAbsentAndInvalidID(t *testing.T) {
	s := Open(t.TempDir())
	if r, ok, err := s.Load(id1); ok || err != nil || !reflect.DeepEqual(r, domain.Registration{}) {
		t.Fatalf("Load(absent) = %+v, %v, %v", r, ok, err)
	}
	for _, id := range []domain.RegistrationID{"../../etc/passwd", "", domain.RegistrationID(strings.ToUpper(id1))} {
		if _, ok, err := s.Load(id); ok || domain.KindOf(err) != domain.KindBadRequest {
			t.Errorf("Load(%q) = %v, %v; want BadRequest", id, ok, err)
		}
		if err := s.Delete(id); domain.KindOf(err) != domain.KindBadRequest {
			t.Errorf("Delete(%q) = %v", id, err)
		}
		if err := s.DeleteCatalog(id); domain.KindOf(err) != domain.KindBadRequest {
			t.Errorf("DeleteCatalog(%q) = %v", id, err)
		}
	}
	r := fixture(t, id1)
	r.ID = "../escape"
	if err := s.Save(r); domain.CodeOf(err) != "mcp.registration_id_invalid" {
		t.Errorf("Save(bad id) = %v", err)
	}
}

// validFile returns minimalFile for id with the replacements applied.
func validFile(id string, oldnew ...string) string {
	s := strings.Replace(minimalFile, id2, id, 1)
	return strings.NewReplacer(oldnew...).Replace(s)
}

func TestScan(t *testing.T) {
	root := t.TempDir()
	s := Open(root)
	dir := filepath.Join(root, "_tauritavern", "mcp", "registrations")
	p := func(name string) string { return filepath.Join(dir, name) }
	const (
		idA = "00000000-0000-4000-8000-00000000000a"
		idB = "00000000-0000-4000-8000-00000000000b"
		idC = "00000000-0000-4000-8000-00000000000c"
		idD = "00000000-0000-4000-8000-00000000000d"
		idE = "00000000-0000-4000-8000-00000000000e"
	)
	bad := func(n int) string { return fmt.Sprintf("10000000-0000-4000-8000-%012d", n) }

	// Healthy files, which must load whatever else is in the directory.
	writeFile(t, p(idA+".json"), validFile(idA))
	writeFile(t, p(idC+".json"), validFile(idC, `"paused"`, `"active"`))
	// A symbolic link to a healthy file is followed.
	elsewhere := filepath.Join(root, "elsewhere.json")
	writeFile(t, elsewhere, validFile(idD))
	if err := os.Symlink(elsewhere, p(idD+".json")); err != nil {
		t.Fatal(err)
	}

	// Not registration files: ignored.
	writeFile(t, p("README.md"), "not json")
	writeFile(t, p(".tauritavern-0123456789abcdef0123456789abcdef.tmp"), "{")
	writeFile(t, p(".json"), "{")
	writeFile(t, p(idB+".JSON"), "{")
	writeFile(t, p(idB+".json.bak"), "{")

	type want struct{ file, message string }
	var wants []want
	// Named like registrations but not files: issues (upstream skipped
	// them silently; see hostile_unix_test.go for FIFOs and devices).
	if err := os.MkdirAll(p(idB+".json"), 0o755); err != nil { // a directory
		t.Fatal(err)
	}
	wants = append(wants, want{idB + ".json", "Failed to read " + p(idB+".json") + ": it is a directory, not a regular file"})
	if err := os.Symlink(filepath.Join(root, "missing"), p(bad(99)+".json")); err != nil { // dangling
		t.Fatal(err)
	}
	wants = append(wants, want{bad(99) + ".json", "Failed to read " + p(bad(99)+".json") + ": it is a symbolic link to " + filepath.Join(root, "missing") + ", which does not exist"})
	add := func(name, content, message string) {
		t.Helper()
		writeFile(t, p(name), content)
		wants = append(wants, want{name, strings.ReplaceAll(message, "<path>", p(name))})
	}
	add(bad(1)+".json", "{\"a\": \"\xff\"}", "Invalid UTF-8 in <path>: invalid UTF-8 sequence at byte offset 7")
	add(bad(2)+".json", validFile(bad(2), `"state": "paused"`, "\"state\": \"paused\",\n  \"extra\": true"),
		"Invalid JSON in <path>: unknown field `extra` at /extra")
	add(bad(3)+".json", validFile(bad(3), `"state": "paused"`, "\"state\": \"paused\",\n  \"kind\": \"x\""),
		"Invalid JSON in <path>: …duplicate…kind…")
	add(bad(4)+".json", validFile(bad(4))+"\n{}", "Invalid JSON in <path>: …")
	add(bad(5)+".json", validFile(bad(5), `"schemaVersion": 1`, `"schemaVersion": 2`),
		"mcp.registration_schema_unsupported: schemaVersion 2 in <path>")
	add(bad(6)+".json", validFile(bad(6), "tauritavern.mcpServerRegistration", "tauritavern.mcpCatalogSnapshot"),
		"mcp.registration_kind_invalid: kind `tauritavern.mcpCatalogSnapshot` in <path>")
	add(bad(7)+".json", validFile(idA),
		"mcp.registration_id_mismatch: id `"+idA+"` does not match filename `"+bad(7)+"` in <path>")
	add(bad(8)+".json", validFile(bad(8), `"state": "paused"`, "\"state\": \"paused\",\n  \"toolPermissions\": {\"ok\": \"ask\", \"search\": \"off\"}"),
		"mcp.permission_off_not_persisted: `search` must be omitted instead of storing Off")
	add(bad(9)+".json", validFile(bad(9), `"state": "paused"`, "\"state\": \"paused\",\n  \"toolDescriptionOverrides\": {\"search\": {\"properties\": {}}}"),
		"mcp.description_override_empty: `search` must contain a tool or property description")
	add(bad(10)+".json", validFile(bad(10), `"https://example.com/mcp"`, `"https://example.com/mcp#x"`),
		"mcp.endpoint_fragment_forbidden: endpoint cannot contain a fragment")
	add(bad(11)+".json", validFile(bad(11), `"Minimal"`, `" \t "`), "mcp.display_name_empty: display name cannot be empty")
	add(bad(12)+".json", validFile(bad(12), ",\n  \"state\": \"paused\"", ""), "Invalid JSON in <path>: missing field `state`")
	add(bad(13)+".json", validFile(bad(13), `"schemaVersion": 1`, `"schemaVersion": "1"`),
		"Invalid JSON in <path>: …/schemaVersion…")
	add(bad(14)+".json", validFile(bad(14), `"auto"`, `"2024-11-05"`),
		"Invalid JSON in <path>: unsupported protocol version `2024-11-05`, expected one of `auto`, `2026-07-28`, `2025-11-25`, `2025-06-18`, `2025-03-26` at /protocolVersion")
	add(bad(15)+".json", "", "Invalid JSON in <path>: …")
	add(idE+".json", validFile(idE, `"id": "`+idE+`"`, `"id": "`+strings.ToUpper(idE)+`"`),
		"mcp.registration_id_noncanonical: `"+strings.ToUpper(idE)+"` must use lowercase hyphenated UUID form")
	add(bad(17)+".json", validFile(bad(17), `"state": "paused"`, "\"state\": \"paused\",\n  \"headers\": {\"a\": \"1\", \"a\": \"2\"}"),
		"Invalid JSON in <path>: …duplicate…/headers…")
	add(bad(18)+".json", validFile(bad(18), `"state": "paused"`, "\"state\": \"paused\",\n  \"toolDescriptionOverrides\": {\"s\": {\"description\": \"d\", \"title\": \"t\"}}"),
		"Invalid JSON in <path>: unknown field `title` at /toolDescriptionOverrides/s/title")
	add(bad(19)+".json", validFile(bad(19), `"https://example.com/mcp"`, `"file:///tmp/mcp"`),
		"mcp.endpoint_absolute_required: endpoint must be an absolute HTTP(S) URL")
	add(strings.ToUpper(idB)+".json", validFile(strings.ToUpper(idB)),
		"mcp.registration_id_noncanonical: `"+strings.ToUpper(idB)+"` must use lowercase hyphenated UUID form")
	add("notes.json", "{}", "mcp.registration_id_invalid: `notes` is not a canonical UUID")
	add("..json", "{}", "mcp.registration_id_invalid: `.` is not a canonical UUID")
	writeFile(t, p("\xffname\xfe.json"), validFile(idB))
	wants = append(wants, want{"\ufffdname\ufffd.json", "mcp.registration_filename_utf8: filename is not valid UTF-8"})

	regs, issues, err := s.Scan()
	if err != nil {
		t.Fatal(err)
	}
	var ids []domain.RegistrationID
	for _, r := range regs {
		ids = append(ids, r.ID)
	}
	if want := []domain.RegistrationID{idA, idC, idD}; !reflect.DeepEqual(ids, want) {
		t.Errorf("Scan registrations = %v, want %v", ids, want)
	}
	if regs[1].State != domain.StateActive {
		t.Errorf("registration C = %+v", regs[1])
	}
	got := map[string]string{}
	var order []string
	for _, is := range issues {
		got[is.FileName] = is.Message
		order = append(order, is.FileName)
	}
	for _, w := range wants {
		if msg, ok := got[w.file]; !ok {
			t.Errorf("no issue for %q", w.file)
		} else if !matches(msg, w.message) {
			t.Errorf("issue for %q:\n got %q\nwant %q", w.file, msg, w.message)
		}
		delete(got, w.file)
	}
	for f, m := range got {
		t.Errorf("unexpected issue %q: %q", f, m)
	}
	// Issues come in file name order (bytes of the raw name).
	var wantOrder []string
	for _, name := range mustReadDirNames(t, dir) {
		for _, w := range wants {
			if strings.ToValidUTF8(name, "\ufffd") == w.file {
				wantOrder = append(wantOrder, w.file)
			}
		}
	}
	if !reflect.DeepEqual(order, wantOrder) {
		t.Errorf("issue order = %q, want %q", order, wantOrder)
	}

	// Load reports the same problems as errors, never as "absent".
	for _, n := range []int{1, 2, 5, 7, 8} {
		_, ok, err := s.Load(domain.RegistrationID(bad(n)))
		if ok || err == nil || domain.KindOf(err) != domain.KindBadRequest {
			t.Errorf("Load(%s) = %v, %v", bad(n), ok, err)
		}
	}
}

// matches reports whether s is pattern, each "…" of which stands for any
// text: messages are checked by their stable parts.
func matches(s, pattern string) bool {
	parts := strings.Split(pattern, "…")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile(`^(?s)` + strings.Join(parts, ".*") + `$`).MatchString(s)
}

func mustReadDirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestScanEmptyAndBroken(t *testing.T) {
	root := t.TempDir()
	s := Open(root)
	regs, issues, err := s.Scan()
	if err != nil || regs == nil || issues == nil || len(regs)+len(issues) != 0 {
		t.Fatalf("Scan(missing dir) = %v, %v, %v", regs, issues, err)
	}
	// The registrations directory is a file: listing fails, so Scan fails
	// instead of reporting "no registrations".
	writeFile(t, filepath.Join(root, "_tauritavern", "mcp", "registrations"), "x")
	if _, _, err := s.Scan(); err == nil || domain.KindOf(err) != domain.KindInternal {
		t.Fatalf("Scan(dir is a file) = %v", err)
	}
}

// TestReadFailure: a file that cannot be read is an error for Load and an
// issue for Scan, which still lists the others. File modes do not stop
// root, so the failures come from what is at the path instead.
func TestReadFailure(t *testing.T) {
	// A directory at the path: Load fails.
	s := Open(t.TempDir())
	path := s.RegistrationPath(id1)
	if err := os.MkdirAll(path, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.Load(id1); ok || domain.KindOf(err) != domain.KindInternal || !strings.HasPrefix(errText(err), "Failed to read "+path+": ") {
		t.Fatalf("Load(directory) = %v, %v", ok, err)
	}

	// A regular file whose reads fail: Linux's /proc/self/mem fails with
	// EIO at offset 0, for root too.
	const mem = "/proc/self/mem"
	if fi, err := os.Stat(mem); err != nil || !fi.Mode().IsRegular() {
		t.Skipf("no %s: %v", mem, err)
	}
	s = Open(t.TempDir())
	path = s.RegistrationPath(id1)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(mem, path); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(minimal(t)); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.Load(id1); ok || domain.KindOf(err) != domain.KindInternal || !strings.HasPrefix(errText(err), "Failed to read "+path+": ") {
		t.Fatalf("Load(unreadable) = %v, %v", ok, err)
	}
	regs, issues, err := s.Scan()
	if err != nil || len(regs) != 1 || regs[0].ID != id2 || len(issues) != 1 ||
		issues[0].FileName != id1+".json" || !strings.HasPrefix(issues[0].Message, "Failed to read "+path+": ") {
		t.Fatalf("Scan = %v, %+v, %v", regs, issues, err)
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestDelete(t *testing.T) {
	root := t.TempDir()
	s := Open(root)
	// Absent files, absent directories: nothing to do.
	if err := s.Delete(id1); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteCatalog(id1); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(fixture(t, id1)); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(fixture(t, id2)); err != nil {
		t.Fatal(err)
	}
	catalog := filepath.Join(root, "_tauritavern", "mcp", "catalogs", id1+".json")
	if s.CatalogPath(id1) != catalog {
		t.Fatalf("CatalogPath = %q", s.CatalogPath(id1))
	}
	writeFile(t, catalog, "{}")

	// DeleteCatalog keeps the registration.
	if err := s.DeleteCatalog(id1); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(catalog); !os.IsNotExist(err) {
		t.Fatalf("catalog still there: %v", err)
	}
	if _, ok, err := s.Load(id1); !ok || err != nil {
		t.Fatalf("registration gone with its catalog: %v, %v", ok, err)
	}
	// Delete removes only its registration.
	if err := s.Delete(id1); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.Load(id1); ok || err != nil {
		t.Fatalf("Load after Delete = %v, %v", ok, err)
	}
	if _, ok, _ := s.Load(id2); !ok {
		t.Fatal("Delete removed another registration")
	}
	if err := s.Delete(id1); err != nil {
		t.Fatalf("second Delete = %v", err)
	}
}

func TestDeleteCatalogFailureDoesNotBlockDelete(t *testing.T) {
	for _, empty := range []bool{true, false} {
		t.Run(fmt.Sprintf("empty=%v", empty), func(t *testing.T) {
			s := Open(t.TempDir())
			if err := s.Save(fixture(t, id1)); err != nil {
				t.Fatal(err)
			}
			// The catalog path is a directory: it cannot be deleted as a file.
			if err := os.MkdirAll(s.CatalogPath(id1), 0o755); err != nil {
				t.Fatal(err)
			}
			if !empty {
				writeFile(t, filepath.Join(s.CatalogPath(id1), "x"), "x")
			}
			if err := s.DeleteCatalog(id1); err == nil || domain.KindOf(err) != domain.KindInternal {
				t.Fatalf("DeleteCatalog = %v, want an Internal error", err)
			}
			if fi, err := os.Stat(s.CatalogPath(id1)); err != nil || !fi.IsDir() {
				t.Fatal("DeleteCatalog removed the directory")
			}
			if err := s.Delete(id1); err != nil {
				t.Fatal(err)
			}
			if _, ok, err := s.Load(id1); ok || err != nil {
				t.Fatalf("Load after Delete = %v, %v", ok, err)
			}
		})
	}
}

func TestSaveFailureLeavesTargetIntact(t *testing.T) {
	old := validFile(id1, `"Minimal"`, `"Old"`)
	tests := []struct {
		name  string
		setup func(t *testing.T, s *Store)
		reg   func(t *testing.T) domain.Registration
		code  string
		kind  domain.Kind
	}{
		{
			name: "serialization failure",
			reg: func(t *testing.T) domain.Registration {
				r := fixture(t, id1)
				r.Headers["x"] = "bad \xff UTF-8"
				return r
			},
			kind: domain.KindBadRequest,
		},
		{
			name: "invalid registration",
			reg: func(t *testing.T) domain.Registration {
				r := fixture(t, id1)
				r.Permissions["x"] = domain.PermissionOff
				return r
			},
			code: "mcp.permission_off_not_persisted",
			kind: domain.KindBadRequest,
		},
		{
			// The temporary file cannot be created: its name is taken (the
			// random source is fixed, so the name is known). The file in
			// the way is not the writer's to remove.
			name: "temporary file name taken",
			setup: func(t *testing.T, s *Store) {
				uuid.SetRand(zeros{})
				t.Cleanup(func() { uuid.SetRand(nil) })
				id, err := uuid.NewRandomFromReader(zeros{})
				if err != nil {
					t.Fatal(err)
				}
				writeFile(t, filepath.Join(filepath.Dir(s.RegistrationPath(id1)), ".ttmcp-"+hex.EncodeToString(id[:])+".tmp"), "someone else's")
			},
			reg:  func(t *testing.T) domain.Registration { return fixture(t, id1) },
			kind: domain.KindInternal,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Open(t.TempDir())
			path := s.RegistrationPath(id1)
			writeFile(t, path, old)
			if tt.setup != nil {
				tt.setup(t, s)
			}
			before := tempFiles(t, filepath.Dir(path))
			err := s.Save(tt.reg(t))
			if err == nil || domain.KindOf(err) != tt.kind || domain.CodeOf(err) != tt.code {
				t.Fatalf("Save = %v (%v), want kind %v code %q", err, domain.KindOf(err), tt.kind, tt.code)
			}
			if got := readFile(t, path); got != old {
				t.Fatalf("target changed:\n%s", got)
			}
			if tmp := tempFiles(t, filepath.Dir(path)); !slices.Equal(tmp, before) {
				t.Fatalf("temporary files = %v, want %v", tmp, before)
			}
		})
	}
}

// zeros is a random source that is not.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func TestSaveOverDirectoryFails(t *testing.T) {
	s := Open(t.TempDir())
	path := s.RegistrationPath(id1)
	writeFile(t, filepath.Join(path, "keep"), "x") // a directory where the file belongs
	err := s.Save(fixture(t, id1))
	if err == nil || domain.KindOf(err) != domain.KindInternal || !strings.HasPrefix(err.Error(), "Failed to replace "+path) {
		t.Fatalf("Save = %v", err)
	}
	if got := readFile(t, filepath.Join(path, "keep")); got != "x" {
		t.Fatal("directory content changed")
	}
	if tmp := tempFiles(t, filepath.Dir(path)); len(tmp) != 0 {
		t.Fatalf("temporary files left: %v", tmp)
	}
	// The registrations "directory" is a file: nothing can be created.
	s = Open(t.TempDir())
	writeFile(t, filepath.Dir(s.RegistrationPath(id1)), "not a directory")
	if err := s.Save(fixture(t, id1)); err == nil || !strings.HasPrefix(err.Error(), "Failed to create ") {
		t.Fatalf("Save = %v", err)
	}
}

func TestSaveKeepsOldBytesForOpenReaders(t *testing.T) {
	s := Open(t.TempDir())
	r := fixture(t, id1)
	if err := s.Save(r); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(s.RegistrationPath(id1))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r.DisplayName = "Renamed"
	if err := s.Save(r); err != nil {
		t.Fatal(err)
	}
	var old bytes.Buffer
	if _, err := old.ReadFrom(f); err != nil {
		t.Fatal(err)
	}
	if old.String() != fixtureFile {
		t.Fatalf("open handle sees %q", old.String())
	}
	if !strings.Contains(readFile(t, s.RegistrationPath(id1)), `"displayName": "Renamed"`) {
		t.Fatal("new bytes not at the path")
	}
}

func TestConcurrentSaves(t *testing.T) {
	s := Open(t.TempDir())
	const n = 16
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			r := fixture(t, fmt.Sprintf("20000000-0000-4000-8000-%012d", i))
			for j := range 10 {
				r.DisplayName = fmt.Sprintf("server %d v%d", i, j)
				if err := s.Save(r); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	// One registration written and read at once: a reader sees a whole
	// version, old or new, never a torn file.
	base := fixture(t, id3)
	if err := s.Save(base); err != nil {
		t.Fatal(err)
	}
	for w := range 4 {
		wg.Go(func() {
			r := base.Clone()
			for j := range 25 {
				r.DisplayName = fmt.Sprintf("writer %d v%d %s", w, j, strings.Repeat("x", 1000*j))
				if err := s.Save(r); err != nil {
					t.Error(err)
					return
				}
			}
		})
		wg.Go(func() {
			for range 50 {
				if _, ok, err := s.Load(id3); !ok || err != nil {
					t.Errorf("Load during writes = %v, %v", ok, err)
					return
				}
			}
		})
	}
	wg.Wait()
	regs, issues, err := s.Scan()
	if err != nil || len(issues) != 0 || len(regs) != n+1 {
		t.Fatalf("Scan = %d registrations, %+v, %v", len(regs), issues, err)
	}
	for _, r := range regs[:n] {
		if !strings.HasSuffix(r.DisplayName, " v9") {
			t.Errorf("%s: last save lost: %q", r.ID, r.DisplayName)
		}
	}
	if tmp := tempFiles(t, filepath.Dir(s.RegistrationPath(id1))); len(tmp) != 0 {
		t.Fatalf("temporary files left: %v", tmp)
	}
}

// A file removed between the directory's listing and its read is left out
// of the scan, not reported: it is not there (a removal racing the scan).
func TestScanLeavesOutAFileRemovedSinceListed(t *testing.T) {
	root := t.TempDir()
	s := Open(root)
	dir := filepath.Join(root, "_tauritavern", "mcp", "registrations")
	const idA, idB = "00000000-0000-4000-8000-00000000000a", "00000000-0000-4000-8000-00000000000b"
	writeFile(t, filepath.Join(dir, idA+".json"), validFile(idA))
	writeFile(t, filepath.Join(dir, idB+".json"), validFile(idB))
	list := func() ([]domain.StoredFile, error) {
		files, err := s.ListRegistrationFiles()
		if err := os.Remove(filepath.Join(dir, idA+".json")); err != nil {
			t.Fatal(err)
		}
		return files, err
	}
	regs, issues, err := scanFiles(list, s.LoadRegistrationFile)
	if err != nil || len(issues) != 0 || len(regs) != 1 || regs[0].ID != idB {
		t.Fatalf("scan: %+v, issues %+v, %v", regs, issues, err)
	}
}
