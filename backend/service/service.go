// Package service holds the use cases of the MCP platform: it turns the
// page's DTOs into domain values, keeps the rules of reference §1.4, and
// drives the adapters it consumes through the small interfaces below.
//
// Every mutation is serialised: two concurrent updates of one registration
// cannot interleave their read-modify-write, and a list never sees a file
// half way through a change.
package service

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/jsapi"
)

// Registrations is the registration storage the service needs.
type Registrations interface {
	// RegistrationsFolderStamp stats the folder of the registration files
	// (unknown when it cannot be stated).
	RegistrationsFolderStamp() domain.FileStamp
	// ListRegistrationFiles lists the registration files, in file name
	// order, with a stamp of each, without reading them.
	ListRegistrationFiles() ([]domain.StoredFile, error)
	// LoadRegistrationFile loads one listed file: its registration, or the
	// storage issue saying why it cannot be loaded, and the stamp of what
	// was read; found is false when it was removed since it was listed.
	LoadRegistrationFile(name string) (reg domain.Registration, issue *jsapi.StorageIssue, stamp domain.FileStamp, found bool)
	// Load returns false when the registration does not exist.
	Load(id domain.RegistrationID) (domain.Registration, bool, error)
	// Save writes a registration atomically.
	Save(r domain.Registration) error
	// Delete removes a registration file; an absent file is not an error.
	Delete(id domain.RegistrationID) error
	// DeleteCatalog removes a registration's catalog snapshot; an absent
	// snapshot is not an error.
	DeleteCatalog(id domain.RegistrationID) error
}

// Catalogs is the catalog snapshot storage the service needs.
type Catalogs interface {
	// LoadCatalog returns false when there is no snapshot. A snapshot is
	// bound to its registration's id and endpoint; a mismatch is an error.
	LoadCatalog(id domain.RegistrationID, endpoint domain.Endpoint) (domain.Catalog, bool, error)
	// SaveCatalog writes a snapshot atomically.
	SaveCatalog(id domain.RegistrationID, endpoint domain.Endpoint, c domain.Catalog) error
}

// Gateway reaches MCP servers.
type Gateway interface {
	// Discover lists and validates a server's tools over a fresh session.
	Discover(ctx context.Context, r domain.Registration) (domain.Catalog, error)
	// Call makes exactly one tools/call; its arguments are sent byte for
	// byte.
	Call(ctx context.Context, r domain.Registration, call domain.ToolCall) domain.CallOutcome
	// AuthState returns what is kept of r's authorization (never
	// refreshing it).
	AuthState(r domain.Registration) (domain.Auth, error)
	// SignIn runs the authorization code flow for r and keeps the tokens.
	SignIn(ctx context.Context, r domain.Registration, req domain.SignInRequest) (domain.Auth, error)
	// SignOut forgets a registration's sign-in and challenge.
	SignOut(ctx context.Context, id domain.RegistrationID) error
	// AuthGeneration changes whenever a sign-in state may have changed.
	AuthGeneration() uint64
	// Disconnect closes the kept connection of a remote registration (it
	// was paused, removed or changed); the next use opens a new one.
	Disconnect(id domain.RegistrationID)
	// Status says how r is connected now, without connecting.
	Status(r domain.Registration) domain.ConnectionStatus

	// Resources and prompts (resources.go). The lists are whole and
	// validated, or an error; a read's and a get's answer is judged as a
	// call is.
	ListResources(ctx context.Context, r domain.Registration) (domain.Listing[domain.Resource], error)
	ListResourceTemplates(ctx context.Context, r domain.Registration) (domain.Listing[domain.ResourceTemplate], error)
	ListPrompts(ctx context.Context, r domain.Registration) (domain.Listing[domain.Prompt], error)
	ReadResource(ctx context.Context, r domain.Registration, uri string) domain.Answer[domain.ResourceContents]
	GetPrompt(ctx context.Context, r domain.Registration, name string, args map[string]string) domain.Answer[domain.PromptMessages]
	Complete(ctx context.Context, r domain.Registration, req domain.CompletionRequest) (domain.Completion, error)
	// Capabilities connects to r's server when needed and returns what it
	// advertises; Advertised returns what it advertised last over r's
	// current connection, without connecting; CapabilitiesGeneration
	// changes whenever that changed.
	Capabilities(ctx context.Context, r domain.Registration) (domain.ServerCapabilities, error)
	Advertised(r domain.Registration) (domain.ServerCapabilities, bool)
	CapabilitiesGeneration() uint64
}

// Config wires a Service to its adapters.
type Config struct {
	Registrations Registrations
	Catalogs      Catalogs
	Gateway       Gateway
	Audit         AuditLog // nil records nothing
	// ExtensionStore keeps api.extension.store; nil answers its commands
	// with mcp.extension_store_unavailable.
	ExtensionStore ExtensionStoreFiles
	// Processes supervises the stdio servers' processes; nil: none (the CLI).
	Processes Processes
	// ToolSets keeps the tool sets (SPEC §10); nil answers their commands
	// with mcp.tool_sets_unavailable.
	ToolSets ToolSets
	// Results keeps the readable results too long for a model's prompt;
	// nil keeps none (the note says so).
	Results Results
	// Capabilities keeps the per-server allowlists of resources and
	// prompts; nil allows both everywhere and refuses to change it.
	Capabilities Capabilities
	Log          *slog.Logger // nil discards
	// RedirectURL is the backend's sign-in callback
	// (http://127.0.0.1:<port>/oauth/callback); empty: no sign-in.
	RedirectURL string
	// SignInTimeout bounds a pending sign-in, default 10 minutes.
	SignInTimeout time.Duration
	// ElicitTimeout bounds the wait for the user's answer to a server's
	// question, default DefaultElicitTimeout (10 minutes).
	ElicitTimeout time.Duration
	// ProgressInterval is the least time between two progress frames of
	// one call, default DefaultProgressInterval (progress.go).
	ProgressInterval time.Duration
}

// Service implements the commands of the MCP platform.
type Service struct {
	regs      Registrations
	catalogs  Catalogs
	gateway   Gateway
	audit     AuditLog
	pending   pendingWrites // audit records written after their call's answer (later.go)
	processes Processes
	toolSets  ToolSets
	search    toolSearchCache // issue 31: the kept index of the upstream listing
	results   Results
	log       *slog.Logger
	// capabilities keeps the allowlists; allowGen counts their changes
	// made here (the list's encoding is rebuilt on one); lists keeps the
	// resource and prompt lists (resources.go).
	capabilities Capabilities
	allowGen     atomic.Uint64
	lists        primitiveLists
	now          func() time.Time
	// mu serialises mutations. It is a channel so that a caller whose
	// context ends while waiting gives up instead of queueing forever.
	mu chan struct{}
	// cache holds the published catalog snapshots in memory.
	cache snapshots
	// view holds the registrations as listed, revalidated by every list.
	view *listView
	// models keeps the model-tool listing's work (modeltools.go).
	models modelTools
	// calls are the prepared test calls; legacyCalls the model tool calls.
	calls       calls
	legacyCalls calls
	// appCalls are the tools/calls MCP Apps asked for (apps.go); views
	// their documents waiting for their sandbox (appviews.go).
	appCalls calls
	views    appViews
	// store serves api.extension.store (extension_store.go).
	store extensionStore
	// toolSetsMu serialises the tool sets' saves and removals.
	toolSetsMu chan struct{}
	// watchers hear the events (events.go).
	watchers watchers
	// signIns are the pending sign-ins (auth.go).
	signIns       *signIns
	redirectURL   string
	signInTimeout time.Duration
	elicitTimeout time.Duration
	// progressInterval: Config.ProgressInterval (progress.go).
	progressInterval time.Duration
}

// New returns a Service over the adapters of cfg.
func New(cfg Config) *Service {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.SignInTimeout <= 0 {
		cfg.SignInTimeout = 10 * time.Minute
	}
	if cfg.ElicitTimeout <= 0 {
		cfg.ElicitTimeout = DefaultElicitTimeout
	}
	return &Service{
		regs:          cfg.Registrations,
		catalogs:      cfg.Catalogs,
		gateway:       cfg.Gateway,
		audit:         cfg.Audit,
		processes:     cfg.Processes,
		toolSets:      cfg.ToolSets,
		results:       cfg.Results,
		capabilities:  cfg.Capabilities,
		lists:         primitiveLists{byID: map[domain.RegistrationID]*keptLists{}},
		now:           time.Now,
		toolSetsMu:    make(chan struct{}, 1),
		log:           cfg.Log,
		mu:            make(chan struct{}, 1),
		cache:         snapshots{byID: map[domain.RegistrationID]*snapshot{}},
		view:          newListView(cfg.Registrations),
		calls:         calls{byID: map[string]*preparedCall{}},
		legacyCalls:   calls{byID: map[string]*preparedCall{}},
		appCalls:      calls{byID: map[string]*preparedCall{}},
		store:         extensionStore{files: cfg.ExtensionStore, tables: map[string]*tableLock{}},
		signIns:       newSignIns(),
		redirectURL:   cfg.RedirectURL,
		signInTimeout: cfg.SignInTimeout,
		elicitTimeout: cfg.ElicitTimeout,

		progressInterval: cfg.ProgressInterval,
	}
}

// lock takes the mutation lock or fails when ctx ends first.
func (s *Service) lock(ctx context.Context) (unlock func(), err error) {
	return acquire(ctx, s.mu)
}

// acquire takes a channel lock or fails when ctx ends first.
func acquire(ctx context.Context, lock chan struct{}) (unlock func(), err error) {
	select {
	case lock <- struct{}{}:
		return func() { <-lock }, nil
	case <-ctx.Done():
		return nil, domain.Errorf(domain.KindUnavailable, jsapi.CodeRequestCancelled, "the request was cancelled before it ran: %v", context.Cause(ctx))
	}
}
