// Command ttmcp-conformance is ttmcp's client for the MCP conformance suite
// (@modelcontextprotocol/conformance, client scenarios). The suite's runner
// starts a scenario server and runs
//
//	ttmcp-conformance <server-url>
//
// with MCP_CONFORMANCE_SCENARIO naming the scenario and, depending on the
// runner's version, MCP_CONFORMANCE_PROTOCOL_VERSION and
// MCP_CONFORMANCE_CONTEXT (JSON) set. The runner judges the scenario by what
// its server saw; the exit status and output only explain.
//
// The client is ttmcp's own gateway (backend/gateway), driven as the backend
// drives it: a registration with an endpoint and a protocol preference,
// Gateway.Discover and Gateway.Call (each on its own short-lived session).
// Nothing here talks MCP by itself, so every check the suite makes is a
// check of the gateway. Authorization scenarios are played with the
// gateway's sign-in (see authorized). Scenarios ttmcp by design does not
// play (machine-to-machine grants, elicitation, multi-round-trip, SSE
// resumption) exit non-zero with the reason; they are listed in expected-failures-*.yml beside this file. Which
// version the client offers is the registration's preference: auto unless
// TTMCP_CONFORMANCE_PROTOCOL names another one (auto, 2026-07-28,
// 2025-11-25, 2025-06-18, 2025-03-26). The catalog and every call outcome
// are printed to stdout as JSON.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/backend/gateway"
	"github.com/ttmcp/ttmcp/backend/storage"
)

// Exit statuses: 0 the scenario was played, 1 the gateway failed (or a call
// had no known response), 2 misuse, 4 what ttmcp does not do by design.
const (
	exitFailed   = 1
	exitUsage    = 2
	exitByDesign = 4
)

// env is what the runner told the client.
type env struct {
	url      string
	scenario string
	version  string // MCP_CONFORMANCE_PROTOCOL_VERSION, "" when unset
	// context is MCP_CONFORMANCE_CONTEXT, nil when unset; http-custom-headers
	// puts the tool calls to make in it ({"toolCalls":[{name,arguments}]}).
	context json.RawMessage
	reg     domain.Registration
	gw      *gateway.Gateway
	// schemas are the input schemas of the tools discovered so far: a call
	// passes its tool's, as ttmcp's service passes the catalog's.
	schemas map[string]json.RawMessage
	stdout  io.Writer
	log     *slog.Logger
}

// scenarioError ends a scenario with an exit status and a reason.
type scenarioError struct {
	status int
	msg    string
}

func (e *scenarioError) Error() string { return e.msg }

// A play runs one scenario.
type play func(ctx context.Context, e env) error

// discoverOnly plays scenarios that only need startup and tools/list.
func discoverOnly(ctx context.Context, e env) error {
	_, err := discover(ctx, e)
	return err
}

// toolsCall calls add_numbers once.
func toolsCall(ctx context.Context, e env) error {
	_, err := call(ctx, e, "add_numbers", map[string]any{"a": 5, "b": 3})
	return err
}

// schemaPreservation echoes the focal tool's input schema, as the catalog
// holds it, back through json_schema_echo: the server compares what
// survived discovery.
func schemaPreservation(ctx context.Context, e env) error {
	cat, err := discover(ctx, e)
	if err != nil {
		return err
	}
	const focal = "json_schema_2020_12_tool"
	i := slices.IndexFunc(cat.Tools, func(t domain.Tool) bool { return t.NativeName == focal })
	if i < 0 {
		return fmt.Errorf("tool %s is not in the catalog", focal)
	}
	_, err = call(ctx, e, "json_schema_echo", map[string]any{"schema": cat.Tools[i].InputSchema})
	return err
}

// standardHeaders discovers and calls the first tool: the server checks
// Mcp-Method/Mcp-Name on every request (ttmcp sends no resources/* or
// prompts/*; those checks are skipped).
func standardHeaders(ctx context.Context, e env) error {
	cat, err := discover(ctx, e)
	if err != nil || len(cat.Tools) == 0 {
		return err
	}
	_, err = call(ctx, e, cat.Tools[0].NativeName, map[string]any{})
	return err
}

// customHeaders discovers, as a user of ttmcp does before calling, then
// makes the calls the runner lists in the context; the server checks the
// Mcp-Param-* headers the gateway derives from the catalog's x-mcp-header
// parameters.
func customHeaders(ctx context.Context, e env) error {
	if _, err := discover(ctx, e); err != nil {
		return err
	}
	var c struct {
		ToolCalls []struct {
			Name      string         `json:"name"`
			Arguments map[string]any `json:"arguments"`
		} `json:"toolCalls"`
	}
	if len(e.context) > 0 {
		if err := json.Unmarshal(e.context, &c); err != nil {
			return fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
	}
	if len(c.ToolCalls) == 0 {
		return errors.New("MCP_CONFORMANCE_CONTEXT lists no toolCalls")
	}
	var errs []error
	for _, tc := range c.ToolCalls {
		if tc.Arguments == nil {
			tc.Arguments = map[string]any{}
		}
		if _, err := call(ctx, e, tc.Name, tc.Arguments); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// invalidToolHeaders discovers (the tools with invalid x-mcp-header
// annotations are left out, with a diagnostic each) and calls every tool
// the catalog kept.
func invalidToolHeaders(ctx context.Context, e env) error {
	cat, err := discover(ctx, e)
	if err != nil {
		return err
	}
	var errs []error
	for _, t := range cat.Tools {
		if _, err := call(ctx, e, t.NativeName, map[string]any{"region": "us-west1"}); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// byDesign plays what ttmcp does of a scenario (discovery and, if given,
// one call of each tool, whose outcomes show what the gateway made of the
// part it does not play) and then stops with why ttmcp does not do the rest.
func byDesign(why string, tools ...string) play {
	return func(ctx context.Context, e env) error {
		if _, err := discover(ctx, e); err != nil {
			return fmt.Errorf("%w (and in any case: %s)", err, why)
		}
		for _, tool := range tools {
			call(ctx, e, tool, map[string]any{}) // the outcome is printed; the scenario fails anyway
		}
		return &scenarioError{exitByDesign, fmt.Sprintf("scenario %s is not played: %s", e.scenario, why)}
	}
}

// authorized plays an authorization scenario as a person using ttmcp
// would: discover; when the server asks for authorization
// (mcp.auth_required), sign in and discover again; then call test-tool,
// signing in again whenever the server asks for more (step-up, a new
// authorization server). A scenario gets at most maxSignIns sign-ins:
// ttmcp never re-sends anything by itself, so the limit on authorization
// loops is the user's, who gives up. The sign-in is the
// gateway's (go-sdk's authorization code flow); the user's browser is a
// headless GET of the authorization URL, whose redirect to the callback
// (the suite's authorization servers answer at once) is read, not
// followed. The tokens are kept in a temporary data root's auth files.
func authorized(ctx context.Context, e env) error {
	signIns := 0
	signIn := func() error {
		if signIns == maxSignIns {
			return fmt.Errorf("gave up after %d sign-ins", maxSignIns)
		}
		signIns++
		a, err := e.gw.SignIn(ctx, e.reg, domain.SignInRequest{RedirectURL: redirectURL, Client: preregistered(e.context), Authorize: headless})
		if err != nil {
			return fmt.Errorf("sign-in %d: %w", signIns, err)
		}
		e.log.Info("signed in", "scopes", strings.Join(a.Token.Scopes, " "), "refreshable", a.Token.RefreshToken != "")
		return nil
	}
	attempt := func(op func() error) error {
		err := op()
		for domain.CodeOf(err) == gateway.CodeAuthRequired {
			if serr := signIn(); serr != nil {
				return fmt.Errorf("%w (then %v)", err, serr)
			}
			err = op()
		}
		return err
	}
	if err := attempt(func() error { _, err := discover(ctx, e); return err }); err != nil {
		return err
	}
	return attempt(func() error {
		out, err := call(ctx, e, "test-tool", map[string]any{})
		if out.Code == gateway.CodeAuthRequired {
			return domain.Errorf(domain.KindUnavailable, out.Code, "%s", out.Message)
		}
		return err
	})
}

// maxSignIns bounds the sign-ins of one scenario (the suite allows three
// authorization attempts in auth/scope-retry-limit).
const maxSignIns = 3

// redirectURL is the redirect URI the conformance client registers: the
// backend's callback, which the headless browser never needs to reach.
const redirectURL = "http://127.0.0.1:7878/oauth/callback"

// preregistered returns the client the runner names in the scenario's
// context (auth/pre-registration), as a user would enter it.
func preregistered(raw json.RawMessage) *domain.OAuthClient {
	var c struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &c) != nil || c.ClientID == "" {
		return nil
	}
	return &domain.OAuthClient{ID: c.ClientID, Secret: domain.Secret(c.ClientSecret)}
}

// headless is the user's browser: it opens the authorization URL and
// reads where the authorization server sends it back.
func headless(ctx context.Context, authURL string) (domain.AuthorizationResponse, error) {
	c := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return domain.AuthorizationResponse{}, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return domain.AuthorizationResponse{}, err
	}
	resp.Body.Close()
	back, err := resp.Location()
	if err != nil {
		return domain.AuthorizationResponse{}, fmt.Errorf("the authorization endpoint answered HTTP %d without a redirect", resp.StatusCode)
	}
	if !strings.HasPrefix(back.String(), redirectURL+"?") {
		return domain.AuthorizationResponse{}, fmt.Errorf("the authorization server sent the browser to %s, not to the redirect URI", back.Redacted())
	}
	q := back.Query()
	if e := q.Get("error"); e != "" {
		return domain.AuthorizationResponse{}, fmt.Errorf("the authorization server answered %s", e)
	}
	return domain.AuthorizationResponse{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
}

// notUserSignIn stops the authorization scenarios that are not a person
// signing in: machine-to-machine grants and the auth extensions.
func notUserSignIn(ctx context.Context, e env) error {
	return &scenarioError{exitByDesign, fmt.Sprintf("scenario %s is not played: ttmcp signs people in with the authorization code flow; "+
		"client credentials, JWT bearer, token exchange and DPoP grants are not offered", e.scenario)}
}

// scenarios maps the suite's client scenarios to how they are played. An
// unknown scenario fails, so a new one in a newer suite shows up as an
// unexpected failure instead of passing unseen.
var scenarios = map[string]play{
	// Startup and tools/list: what discovery does.
	"initialize":               discoverOnly,
	"request-metadata":         discoverOnly,
	"json-schema-ref-no-deref": discoverOnly,

	// tools/call.
	"tools_call":                       toolsCall,
	"json-schema-2020-12-preservation": schemaPreservation,
	"http-standard-headers":            standardHeaders,
	"http-custom-headers":              customHeaders,
	"http-invalid-tool-headers":        invalidToolHeaders,

	// Elicitation (SPEC §10): 2025 — its server asks on the standalone
	// GET stream during the call, and checks the defaults were applied;
	// 2026 — input_required rounds (MRTR), the requestState echoed.
	"elicitation-sep1034-client-defaults": callTools("test_client_elicitation_defaults"),
	"sep-2322-client-request-state": callTools("test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_unrelated",
		"test_mrtr_no_result_type"),

	// Not part of ttmcp (SPEC §6: no retries).
	"sse-retry": byDesign("ttmcp never reconnects an SSE stream (no retries of any kind)",
		"test_reconnection"),
}

// machineGrants are the authorization scenarios of grants without a user
// (and of the auth extensions built on them).
var machineGrants = []string{"auth/client-credentials-", "auth/cross-app-access-", "auth/enterprise-managed-authorization",
	"auth/dpop", "auth/wif-jwt-bearer"}

func lookup(scenario string) (play, bool) {
	if p, ok := scenarios[scenario]; ok {
		return p, true
	}
	if strings.HasPrefix(scenario, "auth/") {
		for _, prefix := range machineGrants {
			if strings.HasPrefix(scenario, prefix) {
				return notUserSignIn, true
			}
		}
		return authorized, true
	}
	return nil, false
}

// discover runs one gateway discovery of the scenario server and prints
// what it found.
func discover(ctx context.Context, e env) (domain.Catalog, error) {
	cat, err := e.gw.Discover(ctx, e.reg)
	if err != nil {
		return domain.Catalog{}, fmt.Errorf("discovery failed: %w", err)
	}
	report(e.stdout, cat)
	for _, t := range cat.Tools {
		e.schemas[t.NativeName] = t.InputSchema
	}
	if e.version != "" && cat.ProtocolVersion != e.version {
		e.log.Warn("negotiated version differs from the runner's", "negotiated", cat.ProtocolVersion, "runner", e.version)
	}
	return cat, nil
}

// acceptingUser answers every question accept: a form with no values of
// its own (the defaults apply), a page as agreed.
func acceptingUser(_ context.Context, req domain.ElicitRequest) (domain.ElicitResponse, error) {
	resp := domain.ElicitResponse{Action: domain.ElicitAccept}
	if req.Mode == domain.ElicitForm {
		resp.Content = json.RawMessage(`{}`)
	}
	return resp, nil
}

// callTools discovers and calls each of tools: a scenario whose checks are
// in what the server sees of the calls.
func callTools(tools ...string) play {
	return func(ctx context.Context, e env) error {
		if _, err := discover(ctx, e); err != nil {
			return err
		}
		var errs []error
		for _, tool := range tools {
			if _, err := call(ctx, e, tool, map[string]any{}); err != nil {
				errs = append(errs, err)
			}
		}
		return errors.Join(errs...)
	}
}

// call makes one gateway call of tool with args, prints the outcome, and
// fails unless the server's answer is known (a result or a JSON-RPC
// error).
func call(ctx context.Context, e env, tool string, args any) (domain.CallOutcome, error) {
	raw, err := json.Marshal(args)
	if err != nil {
		return domain.CallOutcome{}, err
	}
	// The scenarios' servers may ask the user: the runner is a user who
	// accepts every form with its defaults (elicitation scenarios check
	// that the client applies them) and agrees to every page.
	out := e.gw.Call(ctx, e.reg, domain.ToolCall{NativeName: tool, Arguments: raw, InputSchema: e.schemas[tool], Elicit: acceptingUser})
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	enc.Encode(struct {
		Call    string
		Outcome domain.CallOutcome
	}{tool, out})
	if out.Outcome != domain.OutcomeKnownResponse {
		return out, fmt.Errorf("call %s: %s %s: %s", tool, out.Outcome, out.Code, out.Message)
	}
	return out, nil
}

// report prints a catalog as one JSON object: the runner keeps it in the
// scenario's stdout.txt.
func report(w io.Writer, c domain.Catalog) {
	type diag struct {
		Code, Tool, Message string
	}
	out := struct {
		ProtocolVersion string
		ServerName      string
		ServerVersion   string
		Tools           []string
		Diagnostics     []diag
	}{ProtocolVersion: c.ProtocolVersion}
	if c.ServerName != nil {
		out.ServerName = *c.ServerName
	}
	if c.ServerVersion != nil {
		out.ServerVersion = *c.ServerVersion
	}
	for _, t := range c.Tools {
		out.Tools = append(out.Tools, t.NativeName)
	}
	for _, d := range c.Diagnostics {
		x := diag{Code: d.Code, Message: d.Message}
		if d.NativeName != nil {
			x.Tool = *d.NativeName
		}
		out.Diagnostics = append(out.Diagnostics, x)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(out)
}

func main() {
	os.Exit(run(os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

func run(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fail := func(status int, format string, a ...any) int {
		fmt.Fprintf(stderr, "ttmcp-conformance: "+format+"\n", a...)
		return status
	}
	if len(args) == 0 {
		return fail(exitUsage, "usage: ttmcp-conformance <server-url> (with MCP_CONFORMANCE_SCENARIO set)")
	}
	e := env{
		schemas:  map[string]json.RawMessage{},
		url:      args[len(args)-1],
		scenario: getenv("MCP_CONFORMANCE_SCENARIO"),
		version:  getenv("MCP_CONFORMANCE_PROTOCOL_VERSION"),
		stdout:   stdout,
		log:      slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo})),
	}
	if raw := getenv("MCP_CONFORMANCE_CONTEXT"); raw != "" {
		e.context = json.RawMessage(raw)
	}
	protocol := domain.ProtocolAuto
	if p := getenv("TTMCP_CONFORMANCE_PROTOCOL"); p != "" {
		parsed, err := domain.ParseProtocol(p)
		if err != nil {
			return fail(exitUsage, "TTMCP_CONFORMANCE_PROTOCOL: %v", err)
		}
		protocol = parsed
	}
	ep, err := domain.ParseEndpoint(e.url)
	if err != nil {
		return fail(exitUsage, "server URL: %v", err)
	}
	if e.reg, err = domain.NewRegistration("conformance", ep, nil, protocol); err != nil {
		return fail(exitUsage, "%v", err)
	}
	e.reg.State = domain.StateActive
	root, err := os.MkdirTemp("", "ttmcp-conformance-")
	if err != nil {
		return fail(exitFailed, "%v", err)
	}
	defer os.RemoveAll(root)
	e.gw = gateway.New(gateway.Config{
		Auths:          storage.Open(root),
		ConnectTimeout: 5 * time.Second,
		StartupTimeout: 10 * time.Second,
		ListTimeout:    10 * time.Second,
		CallWait:       10 * time.Second,
		CloseTimeout:   2 * time.Second,
		ClientName:     "ttmcp-conformance",
		ClientVersion:  "dev",
		Log:            e.log,
	})
	defer e.gw.Close() // sessions are closed in the background: end them before exiting
	p, ok := lookup(e.scenario)
	if !ok {
		known := slices.Sorted(maps.Keys(scenarios))
		return fail(exitUsage, "unknown scenario %q; known: %s and auth/*", e.scenario, strings.Join(known, ", "))
	}
	e.log.Info("scenario", "name", e.scenario, "url", e.url, "preference", protocol, "runnerVersion", e.version)
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	if err := p(ctx, e); err != nil {
		var se *scenarioError
		if errors.As(err, &se) {
			return fail(se.status, "%s", se.msg)
		}
		return fail(exitFailed, "%s: %v", e.scenario, err)
	}
	return 0
}
