package service

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/backend/gateway"
	"github.com/ttmcp/ttmcp/backend/internal/benchpair"
	"github.com/ttmcp/ttmcp/backend/storage"
	"github.com/ttmcp/ttmcp/backend/storage/storagetest"
	"github.com/ttmcp/ttmcp/jsapi"
)

// bigCatalogWorld registers a server whose catalog is just under 8 MiB
// (36 tools of ~220 KiB) and discovers it once, so it is in memory and on
// disk.
func bigCatalogWorld(b *testing.B) (*Service, *storage.Store, string) {
	s := mcp.NewServer(&mcp.Implementation{Name: "big", Version: "1"}, &mcp.ServerOptions{PageSize: 12})
	filler := strings.Repeat("lorem ipsum ", 220<<10/12)
	for i := range 36 {
		s.AddTool(&mcp.Tool{Name: fmt.Sprintf("tool_%02d", i), Description: filler,
			InputSchema: json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{"q%d":{"type":"string"}}}`, i))},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
	}
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true}))
	b.Cleanup(ts.Close)
	store := storage.Open(b.TempDir())
	svc := New(Config{Registrations: store, Catalogs: store, Gateway: gateway.New(gateway.Config{ListTimeout: time.Minute})})
	ctx := context.Background()
	srv, err := svc.Create(ctx, jsapi.CreateMcpServerDto{DisplayName: "big", Endpoint: ts.URL})
	if err != nil {
		b.Fatal(err)
	}
	svc.SetState(ctx, jsapi.SetMcpServerStateDto{RegistrationID: srv.ID, State: jsapi.StateActive})
	res, err := svc.Discover(ctx, jsapi.McpRegistrationIdDto{RegistrationID: srv.ID})
	if err != nil || len(res.Tools) != 36 {
		b.Fatalf("%d tools, %v", len(res.Tools), err)
	}
	return svc, store, srv.ID
}

// BenchmarkDiscoverMemoryHit8MiB is discover served from memory: the
// registration is read from disk, the catalog projected for the page. The
// baseline is encoding the same result to JSON as the command server does
// for every answer: a memory hit should cost a small part of that.
func BenchmarkDiscoverMemoryHit8MiB(b *testing.B) {
	svc, _, id := bigCatalogWorld(b)
	ctx := context.Background()
	dto := jsapi.McpRegistrationIdDto{RegistrationID: id}
	res, _ := svc.Discover(ctx, dto)
	benchpair.Run(b, "encode", func() error {
		_, err := svc.Discover(ctx, dto)
		return err
	}, func() error {
		_, err := jsonv2.Marshal(res)
		return err
	})
}

// BenchmarkDiscoverDiskHit8MiB is discover in a fresh process: the strict
// catalog file is read, decoded, re-validated and published. The baseline
// is reading the file and checking it is JSON.
func BenchmarkDiscoverDiskHit8MiB(b *testing.B) {
	_, store, id := bigCatalogWorld(b)
	ctx := context.Background()
	dto := jsapi.McpRegistrationIdDto{RegistrationID: id}
	path := store.CatalogPath(domain.RegistrationID(id))
	benchpair.Run(b, "read+valid", func() error {
		svc := New(Config{Registrations: store, Catalogs: store, Gateway: gateway.New(gateway.Config{StartupTimeout: time.Millisecond})})
		_, err := svc.Discover(ctx, dto) // a network attempt would fail: the startup timeout is 1 ms
		return err
	}, func() error {
		data, err := os.ReadFile(path)
		if err == nil && !json.Valid(data) {
			err = fmt.Errorf("invalid")
		}
		return err
	})
}

// BenchmarkListLegacyTools50x100 is the backend's part of preparing a root
// generation for a user with 50 active servers of 100 allowed tools each,
// their catalogs cached (discovered once): list_legacy_mcp_tools as the
// command server answers it (the registrations revalidated against their
// folder, the listing served from what the service keeps, its encoding
// shared). The baseline is parsing those 50 catalog files' JSON
// (encoding/json into any), what a host without a snapshot in memory would
// do at the least.
func BenchmarkListLegacyTools50x100(b *testing.B) {
	svc, files := legacyWorld(b, 50, 100)
	ctx := context.Background()
	benchpair.Run(b, "parse", func() error {
		_, err := svc.ListLegacyToolsEncoded(ctx, jsapi.ListLegacyMcpToolsDto{}, encodeBench)
		return err
	}, parseAll(files))
}

// BenchmarkListLegacyTools3x20 is the same for 3 servers of 20 tools.
func BenchmarkListLegacyTools3x20(b *testing.B) {
	svc, files := legacyWorld(b, 3, 20)
	ctx := context.Background()
	benchpair.Run(b, "parse", func() error {
		_, err := svc.ListLegacyToolsEncoded(ctx, jsapi.ListLegacyMcpToolsDto{}, encodeBench)
		return err
	}, parseAll(files))
}

// BenchmarkListLegacyTools50x100Set3x20 is a root whose chat has a tool
// set of 3 of those 50 servers (60 tools): what it costs is what the set
// offers. The baseline parses the 3 servers' catalog files.
func BenchmarkListLegacyTools50x100Set3x20(b *testing.B) {
	svc, files := legacyWorld(b, 50, 100)
	ctx := context.Background()
	var tools []string
	var ids []string
	for _, r := range svc.view.built.regs[:3] {
		ids = append(ids, string(r.ID))
		for i := range 20 {
			tools = append(tools, fmt.Sprintf("mcp/%s:tool.%03d", r.ID, i))
		}
	}
	set, err := svc.SaveToolSet(ctx, jsapi.SaveMcpToolSetDto{Name: "three", Tools: tools})
	if err != nil {
		b.Fatal(err)
	}
	dto := jsapi.ListLegacyMcpToolsDto{ToolSetID: &set.ID}
	if l, err := svc.ListLegacyTools(ctx, dto); err != nil || len(l.Tools) != 60 || len(l.Diagnostics) != 0 {
		b.Fatalf("%d tools, %+v, %v (servers %v)", len(l.Tools), l.Diagnostics, err, ids)
	}
	var three [][]byte
	for _, f := range files {
		for _, id := range ids {
			if strings.Contains(string(f[:200]), id) {
				three = append(three, f)
			}
		}
	}
	benchpair.Run(b, "parse", func() error {
		_, err := svc.ListLegacyToolsEncoded(ctx, dto, encodeBench)
		return err
	}, parseAll(three))
}

func encodeBench(v any) ([]byte, error) { return jsonv2.Marshal(v) }

// legacyWorld registers n active servers of tools allowed tools each
// (storagetest.Servers), discovers each once (a disk hit: now in memory)
// and returns the service with the catalog files' bytes. The view's clock
// is past the "racy" window of the files just written, as it is for files
// written more than 3 s before.
func legacyWorld(b *testing.B, n, tools int) (*Service, [][]byte) {
	store := storage.Open(b.TempDir())
	ids, err := storagetest.Servers(store, n, tools)
	if err != nil {
		b.Fatal(err)
	}
	svc := New(Config{Registrations: store, Catalogs: store, ToolSets: store, Gateway: gateway.New(gateway.Config{StartupTimeout: time.Millisecond})})
	svc.view.now = func() time.Time { return time.Now().Add(time.Minute) }
	ctx := context.Background()
	var files [][]byte
	for _, id := range ids {
		if _, err := svc.Discover(ctx, jsapi.McpRegistrationIdDto{RegistrationID: string(id)}); err != nil {
			b.Fatal(err)
		}
		data, err := os.ReadFile(store.CatalogPath(id))
		if err != nil {
			b.Fatal(err)
		}
		files = append(files, data)
	}
	if l, err := svc.ListLegacyTools(ctx, jsapi.ListLegacyMcpToolsDto{}); err != nil || len(l.Tools) != n*tools || len(l.Diagnostics) != 0 {
		b.Fatalf("%d tools, %d diagnostics, %v", len(l.Tools), len(l.Diagnostics), err)
	}
	return svc, files
}

func parseAll(files [][]byte) func() error {
	return func() error {
		for _, f := range files {
			var v any
			if err := json.Unmarshal(f, &v); err != nil {
				return err
			}
		}
		return nil
	}
}
