//go:build linux || darwin

package gateway

// Tests against an independent peer: @modelcontextprotocol/server-everything
// (the TypeScript SDK's reference server, Streamable HTTP, stateful
// sessions, protocol versions up to 2025-11-25), pinned in tools/node and
// installed by `make node-tools`. The Makefile's peers target points
// TTMCP_NODE_TOOLS at that folder; without it (a plain `go test ./...`)
// these tests skip.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ttmcp/ttmcp/backend/domain"
)

const nodeToolsEnv = "TTMCP_NODE_TOOLS"

// everythingTools are the tools server-everything 2026.8.31 lists to a
// client that declares elicitation (a list is made as a client that can
// ask: discover.go) and no roots, sampling or tasks (so get-roots-list,
// the trigger-sampling tools and the tasks-based elicitation stay out), in
// native-name order; URL-mode elicitation exists from 2025-11-25.
func everythingTools(version string) []string {
	tools := []string{
		"echo",
		"get-annotated-message",
		"get-env",
		"get-resource-links",
		"get-resource-reference",
		"get-structured-content",
		"get-sum",
		"get-tiny-image",
		"gzip-file-as-resource",
		"simulate-research-query", // registered after initialize whatever the client declares
		"toggle-simulated-logging",
		"toggle-subscriber-updates",
		"trigger-elicitation-request",
		"trigger-long-running-operation",
	}
	if version >= "2025-11-25" {
		tools = append(tools, "trigger-url-elicitation")
	}
	return tools
}

// everythingDiagnostics are the diagnostics discovery reports for it: none,
// every tool is healthy.
var everythingDiagnostics []string

// syncBuffer collects a child process's output.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startEverything runs `server-everything streamableHttp` under the pinned
// Node on a free port, waits until the port accepts connections, and
// returns the MCP endpoint. The process group is killed when the test ends.
func startEverything(t *testing.T) string {
	t.Helper()
	dir := os.Getenv(nodeToolsEnv)
	if dir == "" {
		t.Skipf("%s is unset: run `make peers` (or `make test`) to run the tests against @modelcontextprotocol/server-everything", nodeToolsEnv)
	}
	node := filepath.Join(dir, "node_modules", ".bin", "node")
	script := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	for _, f := range []string{node, script} {
		if _, err := os.Stat(f); err != nil {
			t.Fatalf("%s=%s but %v (run `make node-tools`)", nodeToolsEnv, dir, err)
		}
	}

	port := freePort(t)
	out := &syncBuffer{}
	cmd := exec.Command(node, script, "streamableHttp")
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
		if t.Failed() {
			t.Logf("server-everything output:\n%s", out.String())
		}
	})

	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			break
		}
		select {
		case err := <-exited:
			exited <- err // for the cleanup
			t.Fatalf("server-everything exited before listening (%v):\n%s", err, out.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("server-everything did not listen on %s within 30 s:\n%s", addr, out.String())
		}
	}
	return fmt.Sprintf("http://%s/mcp", addr)
}

func peerGateway(t testing.TB) *Gateway {
	return newGateway(t, Config{ConnectTimeout: 5 * time.Second, StartupTimeout: 20 * time.Second, ListTimeout: 20 * time.Second, CloseTimeout: time.Second})
}

// TestPeerEverythingDiscovery discovers server-everything with each legacy
// preference and auto: each fixed version is negotiated as asked, auto
// falls back from server/discover to initialize and gets 2025-11-25, and
// the catalog holds exactly the known tools, each with a compiling schema.
func TestPeerEverythingDiscovery(t *testing.T) {
	endpoint := startEverything(t)
	for _, tt := range []struct {
		pref domain.Protocol
		want string
	}{
		{domain.Protocol20251125, "2025-11-25"},
		{domain.Protocol20250618, "2025-06-18"},
		{domain.Protocol20250326, "2025-03-26"},
		{domain.ProtocolAuto, "2025-11-25"},
	} {
		t.Run(string(tt.pref), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cat, err := peerGateway(t).Discover(ctx, registration(t, endpoint, tt.pref, nil))
			if err != nil {
				t.Fatal(err)
			}
			if cat.ProtocolVersion != tt.want {
				t.Fatalf("negotiated %s, want %s", cat.ProtocolVersion, tt.want)
			}
			if cat.ServerName == nil || *cat.ServerName != "mcp-servers/everything" || cat.ServerVersion == nil || *cat.ServerVersion != "2.0.0" {
				t.Fatalf("server %v %v, want mcp-servers/everything 2.0.0", deref(cat.ServerName), deref(cat.ServerVersion))
			}
			if got, want := names(cat), everythingTools(tt.want); !slices.Equal(got, want) {
				t.Fatalf("tools\n got %q\nwant %q", got, want)
			}
			if got := codes(cat); !slices.Equal(got, everythingDiagnostics) {
				t.Fatalf("diagnostics %+v, want codes %q", cat.Diagnostics, everythingDiagnostics)
			}
			for _, tool := range cat.Tools {
				if err := domain.CompileSchema(tool.InputSchema); err != nil {
					t.Errorf("%s: input schema: %v", tool.NativeName, err)
				}
				if tool.OutputSchema != nil {
					if err := domain.CompileSchema(tool.OutputSchema); err != nil {
						t.Errorf("%s: output schema: %v", tool.NativeName, err)
					}
				}
				if tool.Description == nil || *tool.Description == "" {
					t.Errorf("%s: no description", tool.NativeName)
				}
			}
			sum := toolNamed(t, cat, "get-sum")
			if !bytes.Contains(sum.InputSchema, []byte(`"a"`)) || !bytes.Contains(sum.InputSchema, []byte(`"b"`)) {
				t.Errorf("get-sum input schema lacks a and b: %s", sum.InputSchema)
			}
			if toolNamed(t, cat, "get-structured-content").OutputSchema == nil {
				t.Error("get-structured-content has no output schema")
			}
		})
	}
}

// TestPeerEverythingCalls makes test calls against the independent peer on
// each 2025 version: a text result, structured content, resource links
// (reported, not projected) and a server-side validation error.
func TestPeerEverythingCalls(t *testing.T) {
	endpoint := startEverything(t)
	for _, pref := range []domain.Protocol{domain.Protocol20251125, domain.Protocol20250618, domain.Protocol20250326} {
		t.Run(string(pref), func(t *testing.T) {
			r := registration(t, endpoint, pref, nil)
			call := func(name, args string) domain.CallOutcome {
				t.Helper()
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				o := peerGateway(t).Call(ctx, r, domain.ToolCall{NativeName: name, Arguments: json.RawMessage(args)})
				if o.Outcome != domain.OutcomeKnownResponse {
					t.Fatalf("%s: %+v", name, o)
				}
				return o
			}
			sum := call("get-sum", `{"a":2,"b":3}`).Result
			if sum == nil || sum.IsError || len(sum.TextBlocks) != 1 || sum.TextBlocks[0].Text != "The sum of 2 and 3 is 5." {
				t.Fatalf("get-sum: %+v", sum)
			}
			weather := call("get-structured-content", `{"location":"Chicago"}`).Result
			if weather == nil || weather.StructuredJSON == nil || !strings.Contains(*weather.StructuredJSON, `"temperature"`) ||
				!strings.HasPrefix(*weather.StructuredJSON, "{\n  \"conditions\"") {
				t.Fatalf("get-structured-content: %+v", weather)
			}
			links := call("get-resource-links", `{"count":2}`).Result
			if links == nil || len(links.TextBlocks) != 1 || len(links.Diagnostics) != 2 ||
				links.Diagnostics[0].Code != CodeCallContentUnsupported || *links.Diagnostics[1].ContentIndex != 2 ||
				len(links.Resources) != 2 || links.Resources[0].Block.Type != domain.BlockResourceLink || domain.ValidateURI(*links.Resources[0].Block.URI) != nil {
				t.Fatalf("get-resource-links: %+v", links)
			}
			bad := call("get-sum", `{"a":"two"}`)
			if (bad.Result == nil || !bad.Result.IsError) && bad.ServerError == nil {
				t.Fatalf("invalid arguments: %+v", bad)
			}
		})
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// TestPeerEverythingResources browses the independent peer's resources,
// templates and prompts on each 2025 version: every listed resource reads
// as its listed type, a template expands to a text and a blob resource,
// an unknown URI is the server's error, prompts with arguments render
// (an embedded resource included), and completions answer a prompt's
// argument (with the context of another) and a template's variable.
func TestPeerEverythingResources(t *testing.T) {
	endpoint := startEverything(t)
	for _, pref := range []domain.Protocol{domain.Protocol20251125, domain.Protocol20250618, domain.Protocol20250326} {
		t.Run(string(pref), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			g := peerGateway(t)
			r := registration(t, endpoint, pref, nil)
			res, err := g.ListResources(ctx, r)
			if err != nil || len(res.Items) < 5 || len(res.Diagnostics) != 0 {
				t.Fatalf("resources %+v %v", res, err)
			}
			for _, x := range res.Items {
				a := g.ReadResource(ctx, r, x.URI)
				if a.Outcome != domain.OutcomeKnownResponse || a.Result == nil || len(a.Result.Contents) == 0 {
					t.Fatalf("read %s: %+v", x.URI, a)
				}
				c := a.Result.Contents[0]
				if c.URI != x.URI || deref(c.MimeType) != deref(x.MimeType) || c.Text == nil || c.Size == 0 || len(a.Result.Diagnostics) != 0 {
					t.Errorf("read %s: %+v %+v", x.URI, c, a.Result.Diagnostics)
				}
			}
			tpl, err := g.ListResourceTemplates(ctx, r)
			var templates []string
			for _, x := range tpl.Items {
				templates = append(templates, x.URITemplate+" "+strings.Join(x.Variables, ","))
			}
			if err != nil || !slices.Equal(templates, []string{"demo://resource/dynamic/text/{resourceId} resourceId", "demo://resource/dynamic/blob/{resourceId} resourceId"}) {
				t.Fatalf("templates %q %v", templates, err)
			}
			text := g.ReadResource(ctx, r, "demo://resource/dynamic/text/3").Result
			if text == nil || !strings.HasPrefix(deref(text.Contents[0].Text), "Resource 3: ") {
				t.Fatalf("dynamic text %+v", text)
			}
			blob := g.ReadResource(ctx, r, "demo://resource/dynamic/blob/2").Result
			if blob == nil || blob.Contents[0].Blob == nil || blob.Contents[0].Text != nil || blob.Contents[0].Size == 0 {
				t.Fatalf("dynamic blob %+v", blob)
			}
			if a := g.ReadResource(ctx, r, "demo://resource/nothing"); a.ServerError == nil {
				t.Fatalf("unknown URI %+v", a)
			}

			prompts, err := g.ListPrompts(ctx, r)
			if err != nil || len(prompts.Items) < 3 {
				t.Fatalf("prompts %+v %v", prompts, err)
			}
			args := slices.IndexFunc(prompts.Items, func(p domain.Prompt) bool { return p.Name == "args-prompt" })
			if args < 0 || !prompts.Items[args].Arguments[0].Required || prompts.Items[args].Arguments[0].Name != "city" {
				t.Fatalf("args-prompt %+v", prompts.Items)
			}
			got := g.GetPrompt(ctx, r, "args-prompt", map[string]string{"city": "Paris", "state": "TX"}).Result
			if got == nil || len(got.Messages) != 1 || got.Messages[0].Role != "user" || deref(got.Messages[0].Content.Text) != "What's weather in Paris, TX?" {
				t.Fatalf("args-prompt %+v", got)
			}
			embedded := g.GetPrompt(ctx, r, "resource-prompt", map[string]string{"resourceType": "Text", "resourceId": "2"}).Result
			if embedded == nil || len(embedded.Messages) != 2 || embedded.Messages[1].Content.Type != domain.BlockResource ||
				!strings.HasPrefix(embedded.Messages[1].Content.Resource.URI, "demo://resource/dynamic/text/2") || len(embedded.Diagnostics) != 0 {
				t.Fatalf("resource-prompt %+v", embedded)
			}

			dept, err := g.Complete(ctx, r, domain.CompletionRequest{RefType: domain.RefPrompt, RefName: "completable-prompt", Argument: "department", Value: "E"})
			if err != nil || !slices.Equal(dept.Values, []string{"Engineering"}) {
				t.Fatalf("department %+v %v", dept, err)
			}
			people, err := g.Complete(ctx, r, domain.CompletionRequest{RefType: domain.RefPrompt, RefName: "completable-prompt", Argument: "name",
				Context: map[string]string{"department": "Engineering"}})
			if err != nil || !slices.Equal(people.Values, []string{"Alice", "Bob", "Charlie"}) {
				t.Fatalf("names %+v %v", people, err)
			}
			id, err := g.Complete(ctx, r, domain.CompletionRequest{RefType: domain.RefResource, RefURI: "demo://resource/dynamic/text/{resourceId}", Argument: "resourceId", Value: "1"})
			if err != nil || !slices.Contains(id.Values, "1") {
				t.Fatalf("resourceId %+v %v", id, err)
			}
			caps, ok := g.Advertised(r)
			if !ok || !caps.Resources || !caps.Prompts || !caps.Completions || !caps.ResourcesSubscribe || caps.ProtocolVersion != string(pref) {
				t.Fatalf("advertised %+v", caps)
			}
		})
	}
}

// TestPeerEverythingElicitation answers the independent peer's questions:
// its form (every field kind of the requested-schema subset) filled with
// values it then reports, an answer that does not fit the schema asked
// again with the reason and never sent, a decline, a URL-mode question
// (2025-11-25) whose URL reaches the user as sent, and its refusal of a
// call until the user is done on a page (-32042), sent once more after it.
func TestPeerEverythingElicitation(t *testing.T) {
	endpoint := startEverything(t)
	for _, pref := range []domain.Protocol{domain.Protocol20251125, domain.Protocol20250618} {
		t.Run(string(pref), func(t *testing.T) {
			r := registration(t, endpoint, pref, nil)
			g := peerGateway(t)
			call := func(name, args string, elicit domain.ElicitFunc) domain.CallOutcome {
				t.Helper()
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				o := g.Call(ctx, r, domain.ToolCall{NativeName: name, Arguments: json.RawMessage(args), Elicit: elicit})
				if o.Outcome != domain.OutcomeKnownResponse || o.Result == nil || o.Result.IsError {
					t.Fatalf("%s: %+v %+v", name, o, o.Result)
				}
				return o
			}
			text := func(o domain.CallOutcome) string {
				var b strings.Builder
				for _, tb := range o.Result.TextBlocks {
					b.WriteString(tb.Text + "\n")
				}
				return b.String()
			}

			var asked []domain.ElicitRequest
			o := call("trigger-elicitation-request", `{}`, func(_ context.Context, req domain.ElicitRequest) (domain.ElicitResponse, error) {
				asked = append(asked, req)
				if len(asked) == 1 { // over the integer's maximum of 100
					return domain.ElicitResponse{Action: domain.ElicitAccept, Content: json.RawMessage(`{"name":"Ada","integer":500}`)}, nil
				}
				return domain.ElicitResponse{Action: domain.ElicitAccept, Content: json.RawMessage(
					`{"name":"Ada Lovelace","check":true,"email":"ada@example.com","birthdate":"1815-12-10","integer":7,"number":2.5,` +
						`"untitledSingleSelectEnum":"Ross","untitledMultipleSelectEnum":["Piano","Violin"],"titledSingleSelectEnum":"hero-3",` +
						`"titledMultipleSelectEnum":["fish-2"],"legacyTitledEnum":"pet-2"}`)}, nil
			})
			if len(asked) != 2 || asked[0].Mode != domain.ElicitForm || asked[0].Error != "" || asked[1].Error == "" ||
				!bytes.Contains(asked[0].RequestedSchema, []byte(`"titledMultipleSelectEnum"`)) {
				t.Fatalf("asked %+v", asked)
			}
			got := text(o)
			if !strings.Contains(got, "- Name: Ada Lovelace") || !strings.Contains(got, "- Favorite Integer: 7") || strings.Contains(got, "500") {
				t.Fatalf("accepted form: %s", got)
			}
			if len(o.Elicitations) != 1 || o.Elicitations[0] != (domain.ElicitRecord{Mode: domain.ElicitForm, Action: domain.ElicitAccept}) || o.Rounds != 1 {
				t.Fatalf("records %+v, rounds %d", o.Elicitations, o.Rounds)
			}

			o = call("trigger-elicitation-request", `{}`, func(context.Context, domain.ElicitRequest) (domain.ElicitResponse, error) {
				return domain.ElicitResponse{Action: domain.ElicitDecline}, nil
			})
			if got := text(o); !strings.Contains(got, "User declined") {
				t.Fatalf("declined: %s", got)
			}

			if pref != domain.Protocol20251125 {
				return
			}
			var url domain.ElicitRequest
			o = call("trigger-url-elicitation", `{"url":"https://pay.example.com/checkout?id=42","message":"Pay here"}`,
				func(_ context.Context, req domain.ElicitRequest) (domain.ElicitResponse, error) {
					url = req
					return domain.ElicitResponse{Action: domain.ElicitAccept}, nil
				})
			if url.Mode != domain.ElicitURL || url.URL != "https://pay.example.com/checkout?id=42" || url.Message != "Pay here" || url.ElicitationID == "" {
				t.Fatalf("URL question %+v", url)
			}
			if got := text(o); !strings.Contains(got, "completed the URL elicitation flow") {
				t.Fatalf("URL accepted: %s", got)
			}

			// The error path: the peer refuses the call (-32042) with a page
			// to visit first; once the user is done there, the call goes once
			// more — on the same session, which is how the peer tells it is the
			// same call — and the peer then asks its own URL question.
			var pages []domain.ElicitRequest
			o = call("trigger-url-elicitation", `{"url":"https://pay.example.com/checkout?id=43","message":"Pay here","errorPath":true}`,
				func(_ context.Context, req domain.ElicitRequest) (domain.ElicitResponse, error) {
					pages = append(pages, req)
					return domain.ElicitResponse{Action: domain.ElicitAccept}, nil
				})
			if len(pages) != 2 || !pages[0].Resend || pages[0].Mode != domain.ElicitURL || pages[0].ElicitationID == "" ||
				pages[1].Resend || pages[1].URL != "https://pay.example.com/checkout?id=43" {
				t.Fatalf("asked %+v", pages)
			}
			if got := text(o); !strings.Contains(got, "completed the URL elicitation flow") || o.Rounds != 2 || len(o.Elicitations) != 2 {
				t.Fatalf("after the page: %s (rounds %d, %+v)", got, o.Rounds, o.Elicitations)
			}
		})
	}
}
