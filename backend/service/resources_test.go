package service

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/backend/gateway"
	"github.com/ttmcp/ttmcp/backend/storage"
	"github.com/ttmcp/ttmcp/jsapi"
)

// primitivesServer is a real go-sdk server with tools, resources, a
// template, prompts and completions, counting the methods it receives.
// ttlMs, when not nil, is what its lists say (served statelessly on
// 2026); without it a stateful 2025 server.
type primitivesServer struct {
	URL string
	mu  sync.Mutex
	got map[string]int
}

func (p *primitivesServer) count(method string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.got[method]
}

const secretText = "the resource's secret text"

func newPrimitivesServer(t *testing.T, ttlMs *int) *primitivesServer {
	t.Helper()
	p := &primitivesServer{got: map[string]int{}}
	opts := &mcp.ServerOptions{CompletionHandler: func(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
		return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{req.Params.Ref.Type + " " + req.Params.Argument.Name + "=" + req.Params.Argument.Value + "x"}}}, nil
	}}
	if ttlMs != nil {
		opts.SetCacheable = func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) { c.TTLMs = *ttlMs }
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "primitives", Version: "1"}, opts)
	s.AddTool(&mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	})
	s.AddResource(&mcp.Resource{URI: "test://doc", Name: "doc", MIMEType: "text/plain"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: secretText},
			{URI: req.Params.URI + "#b", Blob: []byte{1, 2, 3}}}}, nil
	})
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "test://doc/{id}", Name: "docs"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "doc " + req.Params.URI}}}, nil
	})
	s.AddPrompt(&mcp.Prompt{Name: "summarize", Arguments: []*mcp.PromptArgument{{Name: "topic", Required: true}, {Name: "style"}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "Summarize " + req.Params.Arguments["topic"]}}}}, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: ttlMs != nil, JSONResponse: true})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var m struct {
			Method string `json:"method"`
		}
		if json.Unmarshal(body, &m) == nil && m.Method != "" {
			p.mu.Lock()
			p.got[m.Method]++
			p.mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	p.URL = ts.URL
	return p
}

// primitivesWorld is a service over a real store, audit log and gateway.
func primitivesWorld(t *testing.T) (*Service, *storage.Store, *storage.AuditLog, string) {
	t.Helper()
	root := t.TempDir()
	store := storage.Open(root)
	audit := storage.OpenAuditLog(root, storage.AuditOptions{})
	gw := gateway.New(gateway.Config{StartupTimeout: 5 * time.Second, ListTimeout: 5 * time.Second, CallWait: 5 * time.Second, CloseTimeout: time.Second})
	t.Cleanup(func() { gw.Close() })
	return New(Config{Registrations: store, Catalogs: store, Gateway: gw, Audit: audit, Capabilities: store}), store, audit, root
}

func activeServer(t *testing.T, s *Service, endpoint string) string {
	t.Helper()
	ctx := context.Background()
	srv, err := s.Create(ctx, jsapi.CreateMcpServerDto{DisplayName: "primitives", Endpoint: endpoint})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetState(ctx, jsapi.SetMcpServerStateDto{RegistrationID: srv.ID, State: jsapi.StateActive}); err != nil {
		t.Fatal(err)
	}
	return srv.ID
}

func yes() *bool { v := true; return &v }
func no() *bool  { v := false; return &v }

// The lists are served from memory until a refresh (a 2025 server gives
// no ttl); reads and gets answer in the call's vocabulary and each leaves
// an audit record of its sizes and outcome, never its content; a get is
// refused before anything is sent when a required argument is missing or
// one is unknown; completions reach the server.
func TestResourcesAndPromptsUseCases(t *testing.T) {
	p := newPrimitivesServer(t, nil)
	s, _, audit, root := primitivesWorld(t)
	id := activeServer(t, s, p.URL)
	ctx := context.Background()

	res, err := s.ListResources(ctx, jsapi.McpListDto{RegistrationID: id})
	if err != nil || len(res.Items) != 1 || res.Items[0].URI != "test://doc" || res.FromCache || res.ExpiresAt != nil {
		t.Fatalf("list %+v %v", res, err)
	}
	again, err := s.ListResources(ctx, jsapi.McpListDto{RegistrationID: id})
	if err != nil || !again.FromCache || again.ListedAt != res.ListedAt || p.count("resources/list") != 1 {
		t.Fatalf("second list %+v %v (%d lists sent)", again, err, p.count("resources/list"))
	}
	fresh, err := s.ListResources(ctx, jsapi.McpListDto{RegistrationID: id, Refresh: yes()})
	if err != nil || fresh.FromCache || p.count("resources/list") != 2 {
		t.Fatalf("refresh %+v %v", fresh, err)
	}
	tpl, err := s.ListResourceTemplates(ctx, jsapi.McpListDto{RegistrationID: id})
	if err != nil || len(tpl.Items) != 1 || !slices.Equal(tpl.Items[0].Variables, []string{"id"}) {
		t.Fatalf("templates %+v %v", tpl, err)
	}

	read, err := s.ReadResource(ctx, jsapi.ReadMcpResourceDto{RegistrationID: id, URI: "test://doc"})
	rc, _ := read.Response.(*jsapi.McpResourceContents)
	if err != nil || read.Outcome != jsapi.OutcomeKnownResponse || rc == nil || len(rc.Contents) != 2 || *rc.Contents[0].Text != secretText ||
		rc.Contents[1].Type != jsapi.ContentBlob || *rc.Contents[1].Blob != "AQID" || rc.TotalBytes != int64(len(secretText))+3 {
		t.Fatalf("read %+v %v", read, err)
	}
	if _, err := s.ReadResource(ctx, jsapi.ReadMcpResourceDto{RegistrationID: id, URI: "relative/path"}); domain.CodeOf(err) != domain.CodeResourceURIInvalid {
		t.Fatalf("relative URI: %v", err)
	}

	got, err := s.GetPrompt(ctx, jsapi.GetMcpPromptDto{RegistrationID: id, Name: "summarize", Arguments: &map[string]string{"topic": "MCP"}})
	pm, _ := got.Response.(*jsapi.McpPromptMessages)
	if err != nil || pm == nil || len(pm.Messages) != 1 || *pm.Messages[0].Content.Text != "Summarize MCP" || p.count("prompts/list") != 1 {
		t.Fatalf("get %+v %v", got, err)
	}
	for _, tt := range []struct {
		args map[string]string
		code string
	}{
		{map[string]string{"style": "brief"}, domain.CodePromptArgumentMissing},
		{nil, domain.CodePromptArgumentMissing},
		{map[string]string{"topic": "x", "tone": "y"}, domain.CodePromptArgumentUnknown},
	} {
		args := tt.args
		if _, err := s.GetPrompt(ctx, jsapi.GetMcpPromptDto{RegistrationID: id, Name: "summarize", Arguments: &args}); domain.CodeOf(err) != tt.code || domain.KindOf(err) != domain.KindBadRequest {
			t.Errorf("%v: %v, want %s", tt.args, err, tt.code)
		}
	}
	if _, err := s.GetPrompt(ctx, jsapi.GetMcpPromptDto{RegistrationID: id, Name: "nope"}); domain.CodeOf(err) != CodePromptNotFound {
		t.Errorf("unknown prompt: %v", err)
	}
	if n := p.count("prompts/get"); n != 1 {
		t.Errorf("%d prompts/get sent, want 1: refused arguments were sent", n)
	}

	c, err := s.CompleteArgument(ctx, jsapi.CompleteMcpArgumentDto{RegistrationID: id, Ref: jsapi.McpCompletionRef{Type: jsapi.RefPrompt, Name: new("summarize")},
		Argument: jsapi.McpCompletionArgument{Name: "topic", Value: "a"}})
	if err != nil || !slices.Equal(c.Values, []string{"ref/prompt topic=ax"}) {
		t.Fatalf("completion %+v %v", c, err)
	}
	c, err = s.CompleteArgument(ctx, jsapi.CompleteMcpArgumentDto{RegistrationID: id, Ref: jsapi.McpCompletionRef{Type: jsapi.RefResource, URI: new("test://doc/{id}")},
		Argument: jsapi.McpCompletionArgument{Name: "id", Value: "7"}})
	if err != nil || !slices.Equal(c.Values, []string{"ref/resource id=7x"}) {
		t.Fatalf("template completion %+v %v", c, err)
	}
	for _, bad := range []jsapi.McpCompletionRef{{Type: "ref/tool", Name: new("x")}, {Type: jsapi.RefPrompt}, {Type: jsapi.RefResource, URI: new("no scheme {x}")},
		{Type: jsapi.RefPrompt, Name: new("p"), URI: new("test://x")}} {
		if _, err := s.CompleteArgument(ctx, jsapi.CompleteMcpArgumentDto{RegistrationID: id, Ref: bad, Argument: jsapi.McpCompletionArgument{Name: "a"}}); domain.CodeOf(err) != CodeCompletionRefInvalid {
			t.Errorf("ref %+v: %v", bad, err)
		}
	}

	// The audit log: one record per read and get, sent or refused, with
	// sizes and outcomes and never the content.
	recs, _, err := audit.List(domain.AuditQuery{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, r := range recs {
		lines = append(lines, string(r.Kind)+" "+r.URI+r.PromptName+" "+string(r.Outcome)+" "+r.Code+" "+r.ResponseKind)
	}
	want := []string{
		"prompt_get nope rejected " + CodePromptNotFound + " ",
		"prompt_get summarize rejected " + domain.CodePromptArgumentUnknown + " ",
		"prompt_get summarize rejected " + domain.CodePromptArgumentMissing + " ",
		"prompt_get summarize rejected " + domain.CodePromptArgumentMissing + " ",
		"prompt_get summarize known_response  prompt_messages",
		"resource_read relative/path rejected " + domain.CodeResourceURIInvalid + " ",
		"resource_read test://doc known_response  resource_contents",
	}
	if !slices.Equal(lines, want) {
		t.Fatalf("audit:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	r := recs[len(recs)-1]
	if !r.HasContent || r.ContentBytes != int64(len(secretText))+3 || r.ContentCount != 2 || r.Source != domain.SourcePage || r.ServerDisplayName != "primitives" || r.CallID == "" {
		t.Errorf("read record %+v", r)
	}
	g := recs[len(recs)-3]
	if n, sum := domain.DigestArguments(`{"topic":"MCP"}`); g.ArgumentsBytes != n || g.ArgumentsSHA256 != sum || g.ContentBytes != int64(len("Summarize MCP")) || g.ContentCount != 1 {
		t.Errorf("get record %+v", g)
	}
	if entries, err := s.ListAudit(ctx, jsapi.McpAuditListDto{}); err != nil || entries.Entries[0].Kind != jsapi.AuditKindPromptGet || *entries.Entries[0].PromptName != "nope" {
		t.Errorf("entries %+v %v", entries, err)
	}
	filepath.WalkDir(filepath.Join(root, "_tauritavern", "mcp", "audit"), func(path string, d fs.DirEntry, err error) error {
		if data, _ := os.ReadFile(path); bytes.Contains(data, []byte(secretText)) || bytes.Contains(data, []byte("Summarize MCP")) {
			t.Errorf("%s holds content", path)
		}
		return nil
	})
}

// A list is fresh for a 2026 server's ttlMs (0: never), then asked again;
// the server's list-changed notification, a pause and a connection change
// forget it.
func TestListsFollowTheirTTL(t *testing.T) {
	minute := 60000
	p := newPrimitivesServer(t, &minute)
	s, _, _, _ := primitivesWorld(t)
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	s.now = func() time.Time { return now }
	id := activeServer(t, s, p.URL)
	ctx := context.Background()
	list := func() jsapi.McpPromptList {
		t.Helper()
		l, err := s.ListPrompts(ctx, jsapi.McpListDto{RegistrationID: id})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	first := list()
	if first.FromCache || first.ExpiresAt == nil || *first.ExpiresAt != "2026-12-01T12:01:00Z" {
		t.Fatalf("first %+v", first)
	}
	now = now.Add(59 * time.Second)
	if !list().FromCache || p.count("prompts/list") != 1 {
		t.Fatal("not served within its ttl")
	}
	now = now.Add(time.Second)
	if list().FromCache || p.count("prompts/list") != 2 {
		t.Fatal("served after its ttl")
	}
	s.ListChanged(domain.ListChange{RegistrationID: domain.RegistrationID(id), Prompts: true})
	if list().FromCache || p.count("prompts/list") != 3 {
		t.Fatal("served after the server announced a change")
	}
	s.SetState(ctx, jsapi.SetMcpServerStateDto{RegistrationID: id, State: jsapi.StatePaused})
	if _, err := s.ListPrompts(ctx, jsapi.McpListDto{RegistrationID: id}); domain.CodeOf(err) != CodeServerPaused {
		t.Fatalf("paused: %v", err)
	}
	s.SetState(ctx, jsapi.SetMcpServerStateDto{RegistrationID: id, State: jsapi.StateActive})
	if list().FromCache || p.count("prompts/list") != 4 {
		t.Fatal("served after a pause")
	}

	zero := 0
	p0 := newPrimitivesServer(t, &zero)
	id0 := activeServer(t, s, p0.URL)
	for range 2 {
		if l, err := s.ListResources(ctx, jsapi.McpListDto{RegistrationID: id0}); err != nil || l.FromCache {
			t.Fatalf("ttl 0: %+v %v", l, err)
		}
	}
	if n := p0.count("resources/list"); n != 2 {
		t.Fatalf("ttl 0: %d lists sent", n)
	}
}

// The allowlist: a primitive turned off is refused by the backend with
// its code (lists, reads, gets, completions), kept in ttmcp's own file,
// shown on the server; a damaged file refuses both and is replaced by the
// next change; a removal deletes it.
func TestCapabilityAllowlist(t *testing.T) {
	p := newPrimitivesServer(t, nil)
	s, store, _, _ := primitivesWorld(t)
	id := activeServer(t, s, p.URL)
	ctx := context.Background()
	rid := domain.RegistrationID(id)

	caps, err := s.ServerCapabilities(ctx, jsapi.McpRegistrationIdDto{RegistrationID: id})
	if err != nil || !caps.Allowed.Resources || !caps.Allowed.Prompts || caps.Advertised == nil || !caps.Advertised.Resources ||
		!caps.Advertised.Prompts || !caps.Advertised.Completions || !caps.Advertised.Tools || caps.Advertised.ProtocolVersion == "" {
		t.Fatalf("capabilities %+v %v", caps, err)
	}
	listed := func() jsapi.McpServerCapabilities {
		t.Helper()
		l, err := s.List(ctx)
		if err != nil || len(l.Servers) != 1 || l.Servers[0].Capabilities == nil {
			t.Fatalf("list %+v %v", l, err)
		}
		return *l.Servers[0].Capabilities
	}
	if c := listed(); c.Advertised == nil || !c.Allowed.Prompts {
		t.Fatalf("listed %+v", c)
	}

	srv, err := s.SetServerCapabilities(ctx, jsapi.SetMcpServerCapabilitiesDto{RegistrationID: id, Prompts: no()})
	if err != nil || srv.Capabilities == nil || srv.Capabilities.Allowed.Prompts || !srv.Capabilities.Allowed.Resources {
		t.Fatalf("set %+v %v", srv, err)
	}
	if c := listed(); c.Allowed.Prompts || !c.Allowed.Resources {
		t.Fatalf("the list did not follow: %+v", c)
	}
	if a, found, err := store.LoadCapabilities(rid); err != nil || !found || a != (domain.Allowlist{Resources: true}) {
		t.Fatalf("file %+v %v %v", a, found, err)
	}
	refused := func(err error, code string) {
		t.Helper()
		if domain.CodeOf(err) != code || domain.KindOf(err) != domain.KindConflict {
			t.Errorf("%v, want %s", err, code)
		}
	}
	_, err = s.ListPrompts(ctx, jsapi.McpListDto{RegistrationID: id})
	refused(err, CodePromptsDisabled)
	_, err = s.GetPrompt(ctx, jsapi.GetMcpPromptDto{RegistrationID: id, Name: "summarize", Arguments: &map[string]string{"topic": "x"}})
	refused(err, CodePromptsDisabled)
	_, err = s.CompleteArgument(ctx, jsapi.CompleteMcpArgumentDto{RegistrationID: id, Ref: jsapi.McpCompletionRef{Type: jsapi.RefPrompt, Name: new("summarize")},
		Argument: jsapi.McpCompletionArgument{Name: "topic"}})
	refused(err, CodePromptsDisabled)
	if _, err := s.ListResources(ctx, jsapi.McpListDto{RegistrationID: id}); err != nil {
		t.Fatalf("resources stay on: %v", err)
	}
	s.SetServerCapabilities(ctx, jsapi.SetMcpServerCapabilitiesDto{RegistrationID: id, Resources: no(), Prompts: yes()})
	_, err = s.ListResources(ctx, jsapi.McpListDto{RegistrationID: id})
	refused(err, CodeResourcesDisabled)
	_, err = s.ListResourceTemplates(ctx, jsapi.McpListDto{RegistrationID: id})
	refused(err, CodeResourcesDisabled)
	_, err = s.ReadResource(ctx, jsapi.ReadMcpResourceDto{RegistrationID: id, URI: "test://doc"})
	refused(err, CodeResourcesDisabled)
	// The refused get and read are audited with their server and no
	// permission (that is a tool's), as a get or read that went through.
	two := 2
	if l, err := s.ListAudit(ctx, jsapi.McpAuditListDto{Limit: &two}); err != nil || len(l.Entries) != 2 {
		t.Fatalf("audit %+v %v", l, err)
	} else {
		for _, e := range l.Entries {
			if e.Permission != "" || e.ServerDisplayName != "primitives" || e.Code == "" {
				t.Errorf("a refused %s is audited %+v", e.Kind, e)
			}
		}
	}
	if p.count("prompts/get") != 0 || p.count("resources/read") != 0 || p.count("completion/complete") != 0 {
		t.Fatal("a refused request reached the server")
	}

	// A damaged file refuses both, and says why; the next change replaces it.
	if err := os.WriteFile(store.CapabilitiesPath(rid), []byte(`{"resources":true}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if c := listed(); c.Issue == nil || c.Allowed.Resources || c.Allowed.Prompts {
		t.Fatalf("damaged: %+v", c)
	}
	_, err = s.ListPrompts(ctx, jsapi.McpListDto{RegistrationID: id})
	if domain.CodeOf(err) != CodeCapabilitiesUnreadable {
		t.Fatalf("damaged file: %v", err)
	}
	if srv, err := s.SetServerCapabilities(ctx, jsapi.SetMcpServerCapabilitiesDto{RegistrationID: id, Resources: yes()}); err != nil ||
		srv.Capabilities.Issue != nil || !srv.Capabilities.Allowed.Resources || !srv.Capabilities.Allowed.Prompts {
		t.Fatalf("repaired %+v %v", srv.Capabilities, err)
	}

	if err := s.Remove(ctx, jsapi.McpRegistrationIdDto{RegistrationID: id}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(store.CapabilitiesPath(rid)); !os.IsNotExist(err) {
		t.Fatalf("the allowlist outlived its server: %v", err)
	}
}

// TauriTavern's registration and catalog files are byte-identical before
// and after every operation of resources and prompts.
func TestTauriTavernFilesUntouched(t *testing.T) {
	p := newPrimitivesServer(t, nil)
	s, _, _, root := primitivesWorld(t)
	id := activeServer(t, s, p.URL)
	ctx := context.Background()
	if _, err := s.Discover(ctx, jsapi.McpRegistrationIdDto{RegistrationID: id}); err != nil {
		t.Fatal(err)
	}
	snapshot := func() map[string]string {
		files := map[string]string{}
		for _, dir := range []string{"registrations", "catalogs"} {
			entries, _ := os.ReadDir(filepath.Join(root, "_tauritavern", "mcp", dir))
			for _, e := range entries {
				data, err := os.ReadFile(filepath.Join(root, "_tauritavern", "mcp", dir, e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				fi, _ := e.Info()
				files[dir+"/"+e.Name()] = string(data) + fi.ModTime().String()
			}
		}
		return files
	}
	before := snapshot()
	if len(before) != 2 {
		t.Fatalf("files %v", before)
	}
	dto := jsapi.McpListDto{RegistrationID: id, Refresh: yes()}
	steps := []func() error{
		func() error { _, err := s.ListResources(ctx, dto); return err },
		func() error { _, err := s.ListResourceTemplates(ctx, dto); return err },
		func() error { _, err := s.ListPrompts(ctx, dto); return err },
		func() error {
			_, err := s.ReadResource(ctx, jsapi.ReadMcpResourceDto{RegistrationID: id, URI: "test://doc"})
			return err
		},
		func() error {
			_, err := s.GetPrompt(ctx, jsapi.GetMcpPromptDto{RegistrationID: id, Name: "summarize", Arguments: &map[string]string{"topic": "x"}})
			return err
		},
		func() error {
			_, err := s.CompleteArgument(ctx, jsapi.CompleteMcpArgumentDto{RegistrationID: id, Ref: jsapi.McpCompletionRef{Type: jsapi.RefPrompt, Name: new("summarize")},
				Argument: jsapi.McpCompletionArgument{Name: "topic"}})
			return err
		},
		func() error {
			_, err := s.ServerCapabilities(ctx, jsapi.McpRegistrationIdDto{RegistrationID: id})
			return err
		},
		func() error {
			_, err := s.SetServerCapabilities(ctx, jsapi.SetMcpServerCapabilitiesDto{RegistrationID: id, Prompts: no()})
			return err
		},
		func() error { _, err := s.List(ctx); return err },
		func() error {
			_, err := s.SetServerCapabilities(ctx, jsapi.SetMcpServerCapabilitiesDto{RegistrationID: id, Prompts: yes()})
			return err
		},
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if after := snapshot(); !maps.Equal(after, before) {
			t.Fatalf("step %d changed TauriTavern's files", i)
		}
	}
}
