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
// their catalogs cached in memory (discovered once): list_legacy_mcp_tools
// as the command server answers it (the registrations scanned from disk,
// the tools projected, the result encoded to JSON). The baseline is
// parsing those 50 catalog files' JSON (encoding/json into any).
func BenchmarkListLegacyTools50x100(b *testing.B) {
	store := storage.Open(b.TempDir())
	ids, err := storagetest.Servers(store, 50, 100)
	if err != nil {
		b.Fatal(err)
	}
	svc := New(Config{Registrations: store, Catalogs: store, Gateway: gateway.New(gateway.Config{StartupTimeout: time.Millisecond})})
	ctx := context.Background()
	var files [][]byte
	for _, id := range ids {
		if _, err := svc.Discover(ctx, jsapi.McpRegistrationIdDto{RegistrationID: string(id)}); err != nil { // disk hit → memory
			b.Fatal(err)
		}
		data, err := os.ReadFile(store.CatalogPath(id))
		if err != nil {
			b.Fatal(err)
		}
		files = append(files, data)
	}
	if l, err := svc.ListLegacyTools(ctx, jsapi.ListLegacyMcpToolsDto{}); err != nil || len(l.Tools) != 5000 || len(l.Diagnostics) != 0 {
		b.Fatalf("%d tools, %d diagnostics, %v", len(l.Tools), len(l.Diagnostics), err)
	}
	benchpair.Run(b, "parse", func() error {
		l, err := svc.ListLegacyTools(ctx, jsapi.ListLegacyMcpToolsDto{})
		if err == nil {
			_, err = jsonv2.Marshal(l)
		}
		return err
	}, func() error {
		for _, f := range files {
			var v any
			if err := json.Unmarshal(f, &v); err != nil {
				return err
			}
		}
		return nil
	})
}
