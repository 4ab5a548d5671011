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
// drives it: a registration with an endpoint and a protocol preference, and
// a discovery. Nothing here talks MCP by itself, so every check the suite
// makes is a check of the gateway. Scenarios the gateway cannot play yet
// (tools/call) or by design never will (OAuth, elicitation, multi-round-trip,
// SSE resumption) exit non-zero with the reason; they are listed in
// expected-failures-*.yml beside this file. Which version the client offers
// is the registration's preference: auto unless TTMCP_CONFORMANCE_PROTOCOL
// names another one (auto, 2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/backend/gateway"
)

// Exit statuses: 0 the scenario was played, 1 the gateway failed, 2 misuse,
// 3 the scenario needs what the gateway cannot do yet, 4 what ttmcp does
// not do by design.
const (
	exitFailed      = 1
	exitUsage       = 2
	exitUnavailable = 3
	exitByDesign    = 4
)

// env is what the runner told the client.
type env struct {
	url      string
	scenario string
	version  string          // MCP_CONFORMANCE_PROTOCOL_VERSION, "" when unset
	context  json.RawMessage // MCP_CONFORMANCE_CONTEXT, nil when unset
	protocol domain.Protocol
	stdout   io.Writer
	log      *slog.Logger
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

// needsCall discovers (so the server sees startup and tools/list) and then
// stops: the scenario goes on with tools/call, which the gateway does not
// offer yet.
func needsCall(ctx context.Context, e env) error {
	if _, err := discover(ctx, e); err != nil {
		return err
	}
	return &scenarioError{exitUnavailable, fmt.Sprintf(
		"scenario %s needs tools/call, which the gateway does not offer yet (Gateway.Call); discovery succeeded", e.scenario)}
}

// byDesign discovers and then stops with why ttmcp does not play the rest.
func byDesign(why string) play {
	return func(ctx context.Context, e env) error {
		if _, err := discover(ctx, e); err != nil {
			return fmt.Errorf("%w (and in any case: %s)", err, why)
		}
		return &scenarioError{exitByDesign, fmt.Sprintf("scenario %s is not played: %s", e.scenario, why)}
	}
}

// oauth plays an authorization scenario as ttmcp meets such a server: with
// the registration's static headers (none here) and no OAuth flow, so
// startup fails on the server's 401.
func oauth(ctx context.Context, e env) error {
	if _, err := discover(ctx, e); err != nil {
		return &scenarioError{exitByDesign, fmt.Sprintf("OAuth is out of scope for ttmcp (registrations carry static headers only): %v", err)}
	}
	return nil
}

// scenarios maps the suite's client scenarios to how they are played. An
// unknown scenario fails, so a new one in a newer suite shows up as an
// unexpected failure instead of passing unseen.
var scenarios = map[string]play{
	// Startup and tools/list: what discovery does.
	"initialize":                discoverOnly,
	"request-metadata":          discoverOnly,
	"json-schema-ref-no-deref":  discoverOnly,
	"http-invalid-tool-headers": discoverOnly,

	// tools/call.
	"tools_call":                       needsCall,
	"json-schema-2020-12-preservation": needsCall,
	"http-standard-headers":            needsCall,
	"http-custom-headers":              needsCall,

	// Not part of ttmcp (SPEC §6: no client capabilities, no retries).
	"elicitation-sep1034-client-defaults": byDesign("ttmcp declares no client capabilities and answers no elicitation"),
	"sep-2322-client-request-state":       byDesign("multi-round-trip is disabled: a tools/call is never sent twice"),
	"sse-retry":                           byDesign("ttmcp never reconnects an SSE stream (no retries of any kind)"),
}

func lookup(scenario string) (play, bool) {
	if p, ok := scenarios[scenario]; ok {
		return p, true
	}
	if strings.HasPrefix(scenario, "auth/") {
		return oauth, true
	}
	return nil, false
}

// discover runs one gateway discovery of the scenario server and prints
// what it found.
func discover(ctx context.Context, e env) (domain.Catalog, error) {
	ep, err := domain.ParseEndpoint(e.url)
	if err != nil {
		return domain.Catalog{}, err
	}
	r, err := domain.NewRegistration("conformance "+e.scenario, ep, nil, e.protocol)
	if err != nil {
		return domain.Catalog{}, err
	}
	r.State = domain.StateActive
	g := gateway.New(gateway.Config{
		ConnectTimeout: 5 * time.Second,
		StartupTimeout: 15 * time.Second,
		ListTimeout:    15 * time.Second,
		CloseTimeout:   2 * time.Second,
		ClientName:     "ttmcp-conformance",
		ClientVersion:  "dev",
		Log:            e.log,
	})
	cat, err := g.Discover(ctx, r)
	if err != nil {
		return domain.Catalog{}, fmt.Errorf("discovery failed: %w", err)
	}
	report(e.stdout, cat)
	if e.version != "" && cat.ProtocolVersion != e.version {
		e.log.Warn("negotiated version differs from the runner's", "negotiated", cat.ProtocolVersion, "runner", e.version)
	}
	return cat, nil
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
		url:      args[len(args)-1],
		scenario: getenv("MCP_CONFORMANCE_SCENARIO"),
		version:  getenv("MCP_CONFORMANCE_PROTOCOL_VERSION"),
		protocol: domain.ProtocolAuto,
		stdout:   stdout,
		log:      slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo})),
	}
	if raw := getenv("MCP_CONFORMANCE_CONTEXT"); raw != "" {
		e.context = json.RawMessage(raw)
	}
	if p := getenv("TTMCP_CONFORMANCE_PROTOCOL"); p != "" {
		parsed, err := domain.ParseProtocol(p)
		if err != nil {
			return fail(exitUsage, "TTMCP_CONFORMANCE_PROTOCOL: %v", err)
		}
		e.protocol = parsed
	}
	p, ok := lookup(e.scenario)
	if !ok {
		known := slices.Sorted(maps.Keys(scenarios))
		return fail(exitUsage, "unknown scenario %q; known: %s and auth/*", e.scenario, strings.Join(known, ", "))
	}
	e.log.Info("scenario", "name", e.scenario, "url", e.url, "preference", e.protocol, "runnerVersion", e.version)
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
