package webtest

// The page-level fuzz of the hostile-input suite (issue 9): testdata/fuzz.js
// drives the host API, safeInvoke and a raw WebSocket of the page with
// random inputs, in batches, for a bounded time. After each batch: the
// backend still answers, no file outside the data root changed, and every
// write the page saw acknowledged is on disk.
//
//	TTMCP_FUZZ_SEED=n      replays a run (the seed is printed on failure)
//	TTMCP_FUZZ_TIME=20s    runs longer (default 4s)

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/backend/service"
	"github.com/ttmcp/ttmcp/backend/storage"
	"github.com/ttmcp/ttmcp/internal/hostile"
	"github.com/ttmcp/ttmcp/jsapi"
)

func TestPageFuzz(t *testing.T) {
	seed64, budget := hostile.Run(t, 4*time.Second)
	seed := uint32(seed64)
	b := newBackend(t)
	// Beside the data root: files the backend must never touch.
	hostile.Plant(t, t.TempDir())
	parent := filepath.Dir(b.root)
	before := hostile.Digest(t, parent, b.root)
	p := b.openHost(t)

	failed := func(batch int, format string, args ...any) {
		t.Helper()
		t.Fatalf("seed %d, batch %d: %s\n(replay: TTMCP_FUZZ_SEED=%d go test -run TestPageFuzz ./webtest)",
			seed, batch, fmt.Sprintf(format, args...), seed)
	}
	expected := map[string]*jsapi.McpServer{} // acknowledged; nil: removed
	type result struct {
		Writes   string
		Problems []string
	}
	deadline := time.Now().Add(budget)
	calls := 0
	for batch := 0; time.Now().Before(deadline); batch++ {
		ids := []string{}
		for id, s := range expected {
			if s != nil {
				ids = append(ids, id)
			}
		}
		slices.Sort(ids)
		r := evalJS[result](p, `
			const { runBatch } = await import('/webtest/fuzz.js');
			return await runBatch(%s, %s, %s, %s);`, seed, batch, 30, ids)
		calls += 30
		if len(r.Problems) > 0 {
			failed(batch, "%d problems, the first: %s", len(r.Problems), r.Problems[0])
		}
		var writes [][]json.RawMessage
		if err := json.Unmarshal([]byte(r.Writes), &writes); err != nil {
			failed(batch, "writes %s: %v", r.Writes, err)
		}
		for _, w := range writes {
			var method string
			json.Unmarshal(w[0], &method)
			switch method {
			case "remove":
				var id string
				json.Unmarshal(w[1], &id)
				expected[id] = nil
			case "invoke:" + jsapi.CmdRemoveServer:
				var text string
				json.Unmarshal(w[2], &text)
				var args struct {
					DTO jsapi.McpRegistrationIdDto `json:"dto"`
				}
				json.Unmarshal([]byte(text), &args)
				expected[args.DTO.RegistrationID] = nil
			default:
				var s jsapi.McpServer
				if err := json.Unmarshal(w[1], &s); err != nil || s.ID == "" {
					failed(batch, "%s acknowledged %s (%v)", method, w[1], err)
				}
				expected[s.ID] = &s
			}
		}

		// The backend answers; nothing outside the data root changed; every
		// acknowledged write is on disk.
		list := evalJS[jsapi.McpServerList](p, `return await tt.mcp.servers.list();`)
		if after := hostile.Digest(t, parent, b.root); after != before {
			failed(batch, "files outside the data root changed")
		}
		live := 0
		store := storage.Open(b.root)
		for id, want := range expected {
			reg, ok, err := store.Load(domain.RegistrationID(id))
			switch {
			case want == nil && (ok || err != nil):
				failed(batch, "removed registration %s: on disk %v, %v", id, ok, err)
			case want != nil && (!ok || err != nil):
				failed(batch, "acknowledged registration %s is not on disk (%v)", id, err)
			case want != nil:
				live++
				got, _ := json.Marshal(service.ServerDTO(reg))
				acked := *want
				acked.Auth = nil         // the sign-in state is not in the registration file
				acked.Capabilities = nil // nor the capabilities (ttmcp's own file)
				exp, _ := json.Marshal(acked)
				if string(got) != string(exp) {
					failed(batch, "registration %s on disk:\n%s\nacknowledged:\n%s", id, got, exp)
				}
			}
		}
		if len(list.Servers) != live {
			failed(batch, "list has %d servers; %d were acknowledged and not removed", len(list.Servers), live)
		}
	}
	t.Logf("seed %d: %d calls and frames, %d registrations acknowledged", seed, calls, len(expected))
}
