package service

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/jsapi"
)

// Resources and prompts (SPEC §10 "Resources and prompts"): the three
// lists of an Active server, kept in memory (for a 2026 server's ttlMs,
// otherwise until a refresh, a pause, a removal, a connection change or
// the server's own list-changed notification; nothing is fetched in the
// background), reads and gets in the call's vocabulary and in the audit
// log, completions, and the per-server allowlist that turns resources or
// prompts off, refused here, before anything is sent.

// Capabilities keeps the per-server allowlists (storage.Store, ttmcp's
// capabilities/<uuid>.json).
type Capabilities interface {
	// LoadCapabilities returns false when the registration has no file
	// (the default); a file that cannot be loaded is an error.
	LoadCapabilities(id domain.RegistrationID) (domain.Allowlist, bool, error)
	SaveCapabilities(id domain.RegistrationID, a domain.Allowlist) error
	DeleteCapabilities(id domain.RegistrationID) error
	// CapabilitiesFolderStamp changes whenever a file is written or removed.
	CapabilitiesFolderStamp() domain.FileStamp
}

// Codes of the resource and prompt use cases.
const (
	CodeResourcesDisabled        = "mcp.resources_disabled"
	CodePromptsDisabled          = "mcp.prompts_disabled"
	CodeCapabilitiesUnreadable   = "mcp.server_capabilities_unreadable"
	CodeCapabilitiesUnavailable  = "mcp.capabilities_unavailable"
	CodePromptNotFound           = "mcp.prompt_not_found"
	CodeCompletionRefInvalid     = "mcp.completion_ref_invalid"
	CodeCompletionArgumentsLimit = "mcp.completion_arguments_too_large"
)

// primitive is what the allowlist turns on or off.
type primitive int

const (
	primResources primitive = iota
	primPrompts
)

func (p primitive) allowed(a domain.Allowlist) bool {
	if p == primPrompts {
		return a.Prompts
	}
	return a.Resources
}

func (p primitive) refusal(r domain.Registration) error {
	if p == primPrompts {
		return domain.Errorf(domain.KindConflict, CodePromptsDisabled, "prompts of `%s` are turned off (its capabilities in the Manager)", r.DisplayName)
	}
	return domain.Errorf(domain.KindConflict, CodeResourcesDisabled, "resources of `%s` are turned off (its capabilities in the Manager)", r.DisplayName)
}

// allowlist returns what the user allows of r: its file, else the
// default. A file that cannot be read allows nothing (the issue says why).
func (s *Service) allowlist(r domain.Registration) (domain.Allowlist, error) {
	if s.capabilities == nil {
		return domain.DefaultAllowlist, nil
	}
	a, found, err := s.capabilities.LoadCapabilities(r.ID)
	switch {
	case err != nil:
		return domain.Allowlist{}, domain.Errorf(domain.KindUnavailable, CodeCapabilitiesUnreadable,
			"the capability allowlist of `%s` cannot be read (set its capabilities again to replace it): %v", r.DisplayName, err)
	case !found:
		return domain.DefaultAllowlist, nil
	}
	return a, nil
}

// primitiveServer loads registration raw for a use of p: it must exist,
// be Active and allow p.
func (s *Service) primitiveServer(raw string, p primitive, what string) (domain.Registration, error) {
	id, err := domain.ParseRegistrationID(raw)
	if err != nil {
		return domain.Registration{}, err
	}
	r, err := s.activeFor(id, what)
	if err != nil {
		return domain.Registration{}, err
	}
	a, err := s.allowlist(r)
	if err != nil {
		return domain.Registration{}, err
	}
	if !p.allowed(a) {
		return domain.Registration{}, p.refusal(r)
	}
	return r, nil
}

// ---- the lists, kept in memory

// primitiveLists are the lists kept of each registration, for the
// connection they were listed over.
type primitiveLists struct {
	mu    sync.Mutex
	epoch uint64 // counts the drops: a listing that began before one is not kept
	byID  map[domain.RegistrationID]*keptLists
}

type keptLists struct {
	conn      domain.Registration
	resources *kept[domain.Resource]
	templates *kept[domain.ResourceTemplate]
	prompts   *kept[domain.Prompt]
}

// kept is one list as listed at a time.
type kept[T any] struct {
	listing domain.Listing[T]
	at      time.Time
}

// fresh reports whether k may be served at now: always while the server
// gave no ttl (2025), else within it (a ttl of 0 never is).
func (k *kept[T]) fresh(now time.Time) bool {
	return k != nil && (k.listing.TTL == nil || now.Before(k.at.Add(*k.listing.TTL)))
}

// drop forgets every list of id (a pause, a removal, a connection change).
func (c *primitiveLists) drop(id domain.RegistrationID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.epoch++
	delete(c.byID, id)
}

// dropSome forgets the resource lists (resources), the prompt list
// (prompts), or both, of id.
func (c *primitiveLists) dropSome(id domain.RegistrationID, resources, prompts bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.epoch++
	if e := c.byID[id]; e != nil {
		if resources {
			e.resources, e.templates = nil, nil
		}
		if prompts {
			e.prompts = nil
		}
	}
}

// listKept serves a list from memory while it is fresh and refresh is not
// asked, else lists it with fetch and keeps it. fromCache says which.
func listKept[T any](s *Service, ctx context.Context, r domain.Registration, refresh bool, slot func(*keptLists) **kept[T],
	fetch func(context.Context, domain.Registration) (domain.Listing[T], error)) (*kept[T], bool, error) {
	c := &s.lists
	now := s.now()
	c.mu.Lock()
	e := c.byID[r.ID]
	if e != nil && !e.conn.SameConnection(r) {
		delete(c.byID, r.ID)
		e = nil
	}
	if e != nil && !refresh {
		if k := *slot(e); k.fresh(now) {
			c.mu.Unlock()
			return k, true, nil
		}
	}
	epoch := c.epoch
	c.mu.Unlock()
	l, err := fetch(ctx, r)
	if err != nil {
		return nil, false, err
	}
	k := &kept[T]{listing: l, at: s.now()}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.epoch == epoch {
		e := c.byID[r.ID]
		if e == nil || !e.conn.SameConnection(r) {
			e = &keptLists{conn: r.Clone()}
			c.byID[r.ID] = e
		}
		*slot(e) = k
	}
	return k, false, nil
}

func listInfo[T any](k *kept[T], fromCache bool) jsapi.McpListInfo {
	info := jsapi.McpListInfo{ListedAt: k.at.UTC().Format(time.RFC3339), FromCache: fromCache}
	if ttl := k.listing.TTL; ttl != nil {
		exp := k.at.Add(*ttl).UTC().Format(time.RFC3339)
		info.ExpiresAt = &exp
	}
	return info
}

func listDiagnosticsDTO(diags []domain.ListDiagnostic) []jsapi.McpListDiagnostic {
	out := make([]jsapi.McpListDiagnostic, 0, len(diags))
	for _, d := range diags {
		out = append(out, jsapi.McpListDiagnostic{Code: d.Code, Item: d.Item, Message: d.Message})
	}
	return out
}

func annotationsDTO(a *domain.Annotations) *jsapi.McpAnnotations {
	if a == nil {
		return nil
	}
	return &jsapi.McpAnnotations{Audience: a.Audience, Priority: a.Priority, LastModified: a.LastModified}
}

// ListResources lists a server's resources (list_mcp_resources).
func (s *Service) ListResources(ctx context.Context, dto jsapi.McpListDto) (jsapi.McpResourceList, error) {
	r, err := s.primitiveServer(dto.RegistrationID, primResources, "its resources are listed")
	if err != nil {
		return jsapi.McpResourceList{}, err
	}
	k, cached, err := listKept(s, ctx, r, isTrue(dto.Refresh), func(e *keptLists) **kept[domain.Resource] { return &e.resources }, s.gateway.ListResources)
	if err != nil {
		return jsapi.McpResourceList{}, err
	}
	out := jsapi.McpResourceList{RegistrationID: string(r.ID), Items: make([]jsapi.McpResource, 0, len(k.listing.Items)),
		Diagnostics: listDiagnosticsDTO(k.listing.Diagnostics), McpListInfo: listInfo(k, cached)}
	for _, x := range k.listing.Items {
		out.Items = append(out.Items, jsapi.McpResource{URI: x.URI, Name: x.Name, Title: x.Title, Description: x.Description,
			MimeType: x.MimeType, Size: x.Size, Annotations: annotationsDTO(x.Annotations)})
	}
	return out, nil
}

// ListResourceTemplates lists a server's resource templates.
func (s *Service) ListResourceTemplates(ctx context.Context, dto jsapi.McpListDto) (jsapi.McpResourceTemplateList, error) {
	r, err := s.primitiveServer(dto.RegistrationID, primResources, "its resource templates are listed")
	if err != nil {
		return jsapi.McpResourceTemplateList{}, err
	}
	k, cached, err := listKept(s, ctx, r, isTrue(dto.Refresh), func(e *keptLists) **kept[domain.ResourceTemplate] { return &e.templates }, s.gateway.ListResourceTemplates)
	if err != nil {
		return jsapi.McpResourceTemplateList{}, err
	}
	out := jsapi.McpResourceTemplateList{RegistrationID: string(r.ID), Items: make([]jsapi.McpResourceTemplate, 0, len(k.listing.Items)),
		Diagnostics: listDiagnosticsDTO(k.listing.Diagnostics), McpListInfo: listInfo(k, cached)}
	for _, x := range k.listing.Items {
		out.Items = append(out.Items, jsapi.McpResourceTemplate{URITemplate: x.URITemplate, Name: x.Name, Title: x.Title, Description: x.Description,
			MimeType: x.MimeType, Annotations: annotationsDTO(x.Annotations), Variables: orEmpty(x.Variables)})
	}
	return out, nil
}

// ListPrompts lists a server's prompts.
func (s *Service) ListPrompts(ctx context.Context, dto jsapi.McpListDto) (jsapi.McpPromptList, error) {
	r, err := s.primitiveServer(dto.RegistrationID, primPrompts, "its prompts are listed")
	if err != nil {
		return jsapi.McpPromptList{}, err
	}
	k, cached, err := s.prompts(ctx, r, isTrue(dto.Refresh))
	if err != nil {
		return jsapi.McpPromptList{}, err
	}
	out := jsapi.McpPromptList{RegistrationID: string(r.ID), Items: make([]jsapi.McpPrompt, 0, len(k.listing.Items)),
		Diagnostics: listDiagnosticsDTO(k.listing.Diagnostics), McpListInfo: listInfo(k, cached)}
	for _, p := range k.listing.Items {
		dp := jsapi.McpPrompt{Name: p.Name, Title: p.Title, Description: p.Description, Arguments: make([]jsapi.McpPromptArgument, 0, len(p.Arguments))}
		for _, a := range p.Arguments {
			dp.Arguments = append(dp.Arguments, jsapi.McpPromptArgument{Name: a.Name, Title: a.Title, Description: a.Description, Required: a.Required})
		}
		out.Items = append(out.Items, dp)
	}
	return out, nil
}

func (s *Service) prompts(ctx context.Context, r domain.Registration, refresh bool) (*kept[domain.Prompt], bool, error) {
	return listKept(s, ctx, r, refresh, func(e *keptLists) **kept[domain.Prompt] { return &e.prompts }, s.gateway.ListPrompts)
}

// promptNamed returns the definition of prompt name: from the list kept
// (fresh or not: a definition only grows stale through the server's
// list-changed notification, which drops it), else from the server. A
// name the kept list does not hold is looked up once more on the server.
// unsupported: the server does not offer prompts.
func (s *Service) promptNamed(ctx context.Context, r domain.Registration, name string) (p domain.Prompt, unsupported bool, err error) {
	find := func(k *kept[domain.Prompt]) (domain.Prompt, bool) {
		for _, p := range k.listing.Items {
			if p.Name == name {
				return p, true
			}
		}
		return domain.Prompt{}, false
	}
	s.lists.mu.Lock()
	e := s.lists.byID[r.ID]
	var k *kept[domain.Prompt]
	if e != nil && e.conn.SameConnection(r) {
		k = e.prompts
	}
	s.lists.mu.Unlock()
	if k != nil {
		if p, ok := find(k); ok {
			return p, false, nil
		}
	}
	k, _, err = s.prompts(ctx, r, true)
	if err != nil {
		return domain.Prompt{}, false, err
	}
	if p, ok := find(k); ok {
		return p, false, nil
	}
	for _, d := range k.listing.Diagnostics {
		if d.Code == domain.CodePromptsUnsupported {
			return domain.Prompt{}, true, nil
		}
	}
	return domain.Prompt{}, false, domain.Errorf(domain.KindNotFound, CodePromptNotFound, "`%s` lists no prompt named `%s`", r.DisplayName, name)
}

// ---- reads and gets

// ReadResource reads one resource (read_mcp_resource): gates first (the
// registration Active, resources allowed, the URI absolute), each a
// rejection; then one resources/read, whose outcome is the call's. Every
// read, sent or refused, appends one audit record: the URI, the sizes of
// what came back, the outcome; never the content.
func (s *Service) ReadResource(ctx context.Context, dto jsapi.ReadMcpResourceDto) (out jsapi.McpCallOutcome, err error) {
	audit := s.beginAudit(domain.SourcePage, domain.NewRecordID(), "", domain.ApprovalNone)
	audit.rec.Kind, audit.rec.URI = domain.AuditResourceRead, dto.URI
	audit.rec.RegistrationID, _ = domain.ParseRegistrationID(dto.RegistrationID)
	defer func() { audit.finish(out, err) }()
	r, err := s.primitiveServer(dto.RegistrationID, primResources, "a resource is read")
	if err != nil {
		return jsapi.McpCallOutcome{}, err
	}
	audit.server(r)
	if err := domain.ValidateURI(dto.URI); err != nil {
		return jsapi.McpCallOutcome{}, domain.Errorf(domain.KindBadRequest, domain.CodeResourceURIInvalid, "%v", err)
	}
	return readOutcomeDTO(s.gateway.ReadResource(ctx, r, dto.URI)), nil
}

// GetPrompt gets one prompt with its arguments (get_mcp_prompt): gates
// first (Active, prompts allowed, the prompt listed, its arguments as it
// declares them: every required one given, none it does not take), each a
// rejection before anything is sent; then one prompts/get. Audited as a
// read is, with the arguments' size and SHA-256.
func (s *Service) GetPrompt(ctx context.Context, dto jsapi.GetMcpPromptDto) (out jsapi.McpCallOutcome, err error) {
	args := map[string]string{}
	if dto.Arguments != nil && *dto.Arguments != nil {
		args = *dto.Arguments
	}
	argsJSON, _ := json.Marshal(args) // sorted keys: the same arguments, the same digest
	audit := s.beginAudit(domain.SourcePage, domain.NewRecordID(), string(argsJSON), domain.ApprovalNone)
	audit.rec.Kind, audit.rec.PromptName = domain.AuditPromptGet, dto.Name
	audit.rec.RegistrationID, _ = domain.ParseRegistrationID(dto.RegistrationID)
	defer func() { audit.finish(out, err) }()
	r, err := s.primitiveServer(dto.RegistrationID, primPrompts, "a prompt is got")
	if err != nil {
		return jsapi.McpCallOutcome{}, err
	}
	audit.server(r)
	if dto.Name == "" {
		return jsapi.McpCallOutcome{}, domain.Errorf(domain.KindBadRequest, domain.CodePromptNameInvalid, "the prompt's name is empty")
	}
	p, unsupported, err := s.promptNamed(ctx, r, dto.Name)
	if err != nil {
		return jsapi.McpCallOutcome{}, err
	}
	if !unsupported { // else the gateway answers not_sent: nothing to check against
		if err := p.CheckArguments(args); err != nil {
			return jsapi.McpCallOutcome{}, err
		}
	}
	return promptOutcomeDTO(s.gateway.GetPrompt(ctx, r, dto.Name, args)), nil
}

// server records the server a read or get was decided against (no
// permission: those are a tool's).
func (a *callAudit) server(r domain.Registration) {
	a.rec.ServerDisplayName = r.DisplayName
	a.loaded = true
}

// answerDTO projects an answer's outcome; result projects its result.
func answerDTO[T any](a domain.Answer[T], result func(*T) any) jsapi.McpCallOutcome {
	out := jsapi.McpCallOutcome{Outcome: string(a.Outcome), Code: a.Code, Message: a.Message}
	switch {
	case a.Result != nil:
		out.Response = result(a.Result)
	case a.ServerError != nil:
		out.Response = &jsapi.McpServerError{Kind: jsapi.ResponseServerError, Code: a.ServerError.Code, Message: a.ServerError.Message, DataJSON: a.ServerError.DataJSON}
	case a.Unsupported != nil:
		out.Response = &jsapi.McpUnsupportedResponse{Kind: jsapi.ResponseUnsupported, ResponseType: a.Unsupported.ResponseType, Message: a.Unsupported.Message}
	}
	return out
}

func readOutcomeDTO(a domain.Answer[domain.ResourceContents]) jsapi.McpCallOutcome {
	return answerDTO(a, func(c *domain.ResourceContents) any {
		out := &jsapi.McpResourceContents{Kind: jsapi.ResponseResourceContents, URI: c.URI, TotalBytes: c.TotalBytes,
			Contents: make([]jsapi.McpResourceContent, 0, len(c.Contents)), Diagnostics: callDiagnosticsDTO(c.Diagnostics)}
		for _, x := range c.Contents {
			out.Contents = append(out.Contents, contentDTO(x))
		}
		return out
	})
}

func contentDTO(c domain.ResourceContent) jsapi.McpResourceContent {
	t := jsapi.ContentBlob
	if c.IsText {
		t = jsapi.ContentText
	}
	return jsapi.McpResourceContent{Type: t, URI: c.URI, MimeType: c.MimeType, Text: c.Text, Blob: c.Blob, Size: c.Size}
}

func promptOutcomeDTO(a domain.Answer[domain.PromptMessages]) jsapi.McpCallOutcome {
	return answerDTO(a, func(m *domain.PromptMessages) any {
		out := &jsapi.McpPromptMessages{Kind: jsapi.ResponsePromptMessages, Name: m.Name, Description: m.Description,
			Messages: make([]jsapi.McpPromptMessage, 0, len(m.Messages)), Diagnostics: callDiagnosticsDTO(m.Diagnostics)}
		for _, msg := range m.Messages {
			out.Messages = append(out.Messages, jsapi.McpPromptMessage{Role: msg.Role, Content: contentBlockDTO(msg.Content)})
		}
		return out
	})
}

// contentBlockDTO projects a prompt message's content, or a tool result's
// resource block.
func contentBlockDTO(c domain.ContentBlock) jsapi.McpContentBlock {
	b := jsapi.McpContentBlock{Type: c.Type, Text: c.Text, Data: c.Data, MimeType: c.MimeType, URI: c.URI, Name: c.Name,
		Title: c.Title, Description: c.Description, Size: c.Size, Annotations: annotationsDTO(c.Annotations)}
	if c.Resource != nil {
		rc := contentDTO(*c.Resource)
		b.Resource = &rc
	}
	return b
}

func callDiagnosticsDTO(diags []domain.CallDiagnostic) []jsapi.McpCallDiagnostic {
	out := make([]jsapi.McpCallDiagnostic, 0, len(diags))
	for _, d := range diags {
		out = append(out, jsapi.McpCallDiagnostic{Code: d.Code, Message: d.Message, ContentIndex: d.ContentIndex})
	}
	return out
}

// ---- completions

// CompleteArgument asks a server for completions of a prompt's argument
// (ref/prompt, prompts allowed) or a template's variable (ref/resource,
// resources allowed).
func (s *Service) CompleteArgument(ctx context.Context, dto jsapi.CompleteMcpArgumentDto) (jsapi.McpCompletion, error) {
	req := domain.CompletionRequest{RefType: dto.Ref.Type, Argument: dto.Argument.Name, Value: dto.Argument.Value}
	p := primResources
	switch dto.Ref.Type {
	case jsapi.RefPrompt:
		if dto.Ref.Name == nil || *dto.Ref.Name == "" || dto.Ref.URI != nil {
			return jsapi.McpCompletion{}, domain.Errorf(domain.KindBadRequest, CodeCompletionRefInvalid, "a ref/prompt names a prompt (name) and no uri")
		}
		req.RefName, p = *dto.Ref.Name, primPrompts
	case jsapi.RefResource:
		if dto.Ref.URI == nil || dto.Ref.Name != nil {
			return jsapi.McpCompletion{}, domain.Errorf(domain.KindBadRequest, CodeCompletionRefInvalid, "a ref/resource names a template (uri) and no name")
		}
		if _, err := domain.ParseURITemplate(*dto.Ref.URI); err != nil {
			return jsapi.McpCompletion{}, domain.Errorf(domain.KindBadRequest, CodeCompletionRefInvalid, "the ref's uri: %v", err)
		}
		req.RefURI = *dto.Ref.URI
	default:
		return jsapi.McpCompletion{}, domain.Errorf(domain.KindBadRequest, CodeCompletionRefInvalid, "ref.type must be ref/prompt or ref/resource, not `%s`", dto.Ref.Type)
	}
	if dto.Argument.Name == "" {
		return jsapi.McpCompletion{}, domain.Errorf(domain.KindBadRequest, CodeCompletionRefInvalid, "the argument's name is empty")
	}
	if dto.Context != nil && dto.Context.Arguments != nil {
		req.Context = *dto.Context.Arguments
	}
	if size := len(req.Value) + contextBytes(req.Context); size > domain.MaxArgumentsBytes {
		return jsapi.McpCompletion{}, domain.Errorf(domain.KindBadRequest, CodeCompletionArgumentsLimit, "the argument and its context exceed %d bytes", domain.MaxArgumentsBytes)
	}
	r, err := s.primitiveServer(dto.RegistrationID, p, "a completion is asked for")
	if err != nil {
		return jsapi.McpCompletion{}, err
	}
	c, err := s.gateway.Complete(ctx, r, req)
	if err != nil {
		return jsapi.McpCompletion{}, err
	}
	return jsapi.McpCompletion{Values: c.Values, Total: c.Total, HasMore: c.HasMore}, nil
}

func contextBytes(m map[string]string) int {
	n := 0
	for k, v := range m {
		n += len(k) + len(v)
	}
	return n
}

// ---- the allowlist

// ServerCapabilities returns what a server advertised and what the user
// allows (get_mcp_server_capabilities). An Active server whose
// capabilities are not known over its current connection is connected to
// learn them; a paused one answers what is known.
func (s *Service) ServerCapabilities(ctx context.Context, dto jsapi.McpRegistrationIdDto) (jsapi.McpServerCapabilities, error) {
	id, err := domain.ParseRegistrationID(dto.RegistrationID)
	if err != nil {
		return jsapi.McpServerCapabilities{}, err
	}
	r, err := s.load(id)
	if err != nil {
		return jsapi.McpServerCapabilities{}, err
	}
	if _, known := s.gateway.Advertised(r); !known && r.State == domain.StateActive {
		if _, err := s.gateway.Capabilities(ctx, r); err != nil {
			return jsapi.McpServerCapabilities{}, err
		}
	}
	return *s.capabilitiesDTO(r), nil
}

// SetServerCapabilities turns resources or prompts on or off for a
// server (set_mcp_server_capabilities), in ttmcp's allowlist file; the
// registration's own file is not touched. A file that could not be read
// is replaced. Turning a primitive off forgets its lists.
func (s *Service) SetServerCapabilities(ctx context.Context, dto jsapi.SetMcpServerCapabilitiesDto) (jsapi.McpServer, error) {
	id, err := domain.ParseRegistrationID(dto.RegistrationID)
	if err != nil {
		return jsapi.McpServer{}, err
	}
	if s.capabilities == nil {
		return jsapi.McpServer{}, domain.Errorf(domain.KindUnavailable, CodeCapabilitiesUnavailable, "this backend keeps no capability allowlists")
	}
	unlock, err := s.lock(ctx) // beside a removal, which deletes the file
	if err != nil {
		return jsapi.McpServer{}, err
	}
	defer unlock()
	r, err := s.load(id)
	if err != nil {
		return jsapi.McpServer{}, err
	}
	a, found, err := s.capabilities.LoadCapabilities(id)
	if err != nil || !found {
		a = domain.DefaultAllowlist
	}
	if dto.Resources != nil {
		a.Resources = *dto.Resources
	}
	if dto.Prompts != nil {
		a.Prompts = *dto.Prompts
	}
	err = s.capabilities.SaveCapabilities(id, a)
	s.allowGen.Add(1)
	if err != nil {
		return jsapi.McpServer{}, domain.Errorf(domain.KindUnavailable, CodeCapabilitiesUnavailable, "the capability allowlist cannot be saved: %v", err)
	}
	s.lists.dropSome(id, !a.Resources, !a.Prompts)
	return s.serverDTO(ctx, r), nil
}

// forgetCapabilities deletes a removed registration's allowlist; a
// failure is only logged (a leftover allowlist applies to nothing).
func (s *Service) forgetCapabilities(id domain.RegistrationID) {
	if s.capabilities == nil {
		return
	}
	if err := s.capabilities.DeleteCapabilities(id); err != nil {
		s.log.Warn("Failed to remove a removed MCP server's capability allowlist", "registration", id, "err", err)
	}
	s.allowGen.Add(1)
}

// capabilitiesDTO projects r's capabilities: the allowlist (nothing, with
// the issue, when its file cannot be read) and what its server advertised
// over its current connection, when known.
func (s *Service) capabilitiesDTO(r domain.Registration) *jsapi.McpServerCapabilities {
	if s.gateway == nil {
		return nil // the command line's service: no server is reached
	}
	out := &jsapi.McpServerCapabilities{}
	a, err := s.allowlist(r)
	if err != nil {
		msg := err.Error()
		out.Issue = &msg
	} else {
		out.Allowed = jsapi.McpAllowedPrimitives{Resources: a.Resources, Prompts: a.Prompts}
	}
	if c, ok := s.gateway.Advertised(r); ok {
		out.Advertised = &jsapi.McpAdvertisedCapabilities{ProtocolVersion: c.ProtocolVersion, Tools: c.Tools, ToolsListChanged: c.ToolsListChanged,
			Resources: c.Resources, ResourcesSubscribe: c.ResourcesSubscribe, ResourcesListChanged: c.ResourcesListChanged,
			Prompts: c.Prompts, PromptsListChanged: c.PromptsListChanged, Completions: c.Completions, Logging: c.Logging,
			ObservedAt: c.ObservedAt.UTC().Format(time.RFC3339)}
	}
	return out
}

func isTrue(b *bool) bool { return b != nil && *b }

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// promptBytes is what a get's messages hold, as the audit log counts it:
// text bytes, decoded image and audio bytes, embedded resources' sizes.
func promptBytes(m *jsapi.McpPromptMessages) int64 {
	var n int64
	for _, msg := range m.Messages {
		c := msg.Content
		switch {
		case c.Text != nil:
			n += int64(len(*c.Text))
		case c.Data != nil:
			n += int64(base64.StdEncoding.DecodedLen(len(*c.Data)) - strings.Count((*c.Data)[max(0, len(*c.Data)-2):], "="))
		case c.Resource != nil:
			n += c.Resource.Size
		}
	}
	return n
}
