package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/backend/service"
	"github.com/ttmcp/ttmcp/jsapi"
)

// Commands maps the command names of SPEC §5.2 to the service. Each
// command decodes its dto strictly (decodeArgs): unknown members, duplicate
// members, members in the wrong case, null where serde has no Option,
// trailing data, invalid UTF-8 and lone surrogates are all BadRequest
// errors, as serde's deny_unknown_fields makes them upstream.
type Commands struct {
	table map[string]handler
	log   *slog.Logger
	// signIn completes a pending sign-in from the callback's query
	// (oauth.go); nil when the service signs in nowhere.
	signIn func(ctx context.Context, q url.Values) (known bool, err error)
	// watch registers a socket for the service's events; nil: none.
	watch func(func(jsapi.Event)) (stop func())
	// appView hands out an MCP App's document once (appview.go).
	appView func(id string) (service.AppView, bool)
}

type handler func(ctx context.Context, args jsontext.Value) (any, error)

// NewCommands wires every command of the contract to svc.
func NewCommands(svc *service.Service, log *slog.Logger) *Commands {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Commands{log: log, table: map[string]handler{
		jsapi.CmdListServers: noArgs(func(ctx context.Context) (encoded, error) {
			return svc.ListEncoded(ctx, encodeResult) // shared while the folder is unchanged
		}),
		jsapi.CmdCreateServer:   withDTO(svc.Create),
		jsapi.CmdUpdateServer:   withDTO(svc.Update),
		jsapi.CmdSetServerState: withDTO(svc.SetState),
		jsapi.CmdRemoveServer: withDTO(func(ctx context.Context, dto jsapi.McpRegistrationIdDto) (any, error) {
			return nil, svc.Remove(ctx, dto)
		}),
		jsapi.CmdDiscoverTools:              withDTO(svc.Discover),
		jsapi.CmdRefreshTools:               withDTO(svc.Refresh),
		jsapi.CmdSetToolPermission:          withDTO(svc.SetPermission),
		jsapi.CmdSetToolDescriptionOverride: withDTO(svc.SetDescriptionOverride),
		jsapi.CmdStartTestCall:              withDTO(svc.StartTestCall),
		jsapi.CmdTestToolCall:               withDTO(svc.TestCall),
		jsapi.CmdCancelTestCall:             withDTO(svc.CancelTestCall),
		jsapi.CmdRunTestCall:                withDTO(svc.RunTestCall), // issue 31: one frame each way
		jsapi.CmdListLegacyTools: optionalDTO(func(ctx context.Context, dto jsapi.ListLegacyMcpToolsDto) (encoded, error) {
			return svc.ListLegacyToolsEncoded(ctx, dto, encodeResult) // shared while nothing changed
		}),
		jsapi.CmdStartLegacyToolCall:  withDTO(svc.StartLegacyCall),
		jsapi.CmdCallLegacyTool:       withDTO(svc.CallLegacyTool),
		jsapi.CmdCancelLegacyToolCall: withDTO(svc.CancelLegacyCall),
		jsapi.CmdListAuditEntries:     withDTO(svc.ListAudit),
		jsapi.CmdSearchTools:          withDTO(svc.SearchTools), // issue 31
		jsapi.CmdLegacyToolsDigest: optionalDTO(func(ctx context.Context, dto jsapi.ListLegacyMcpToolsDto) (jsapi.LegacyToolsDigest, error) {
			return svc.LegacyToolsDigest(ctx, dto, encodeResult)
		}),
		// MCP Apps (issue 30): an App's calls, its interface
		jsapi.CmdStartAppToolCall:  withDTO(svc.StartAppCall),
		jsapi.CmdCallAppTool:       withDTO(svc.CallAppTool),
		jsapi.CmdCancelAppToolCall: withDTO(svc.CancelAppCall),
		jsapi.CmdReadAppResource:   withDTO(svc.ReadAppResource),
		// api.extension.store (args flat, as upstream's; store_commands.go)
		jsapi.CmdGetExtensionStoreJSON:      withArgs(svc.GetExtensionStoreJSON),
		jsapi.CmdTryGetExtensionStoreJSON:   withArgs(svc.TryGetExtensionStoreJSON),
		jsapi.CmdSetExtensionStoreJSON:      withArgs(done(svc.SetExtensionStoreJSON)),
		jsapi.CmdUpdateExtensionStoreJSON:   withArgs(done(svc.UpdateExtensionStoreJSON)),
		jsapi.CmdRenameExtensionStoreKey:    withArgs(done(svc.RenameExtensionStoreKey)),
		jsapi.CmdDeleteExtensionStoreJSON:   withArgs(done(svc.DeleteExtensionStoreJSON)),
		jsapi.CmdListExtensionStoreKeys:     withArgs(svc.ListExtensionStoreKeys),
		jsapi.CmdListExtensionStoreTables:   withArgs(svc.ListExtensionStoreTables),
		jsapi.CmdDeleteExtensionStoreTable:  withArgs(done(svc.DeleteExtensionStoreTable)),
		jsapi.CmdGetExtensionStoreBlob:      withArgs(svc.GetExtensionStoreBlob),
		jsapi.CmdSetExtensionStoreBlob:      withArgs(done(svc.SetExtensionStoreBlob)),
		jsapi.CmdDeleteExtensionStoreBlob:   withArgs(done(svc.DeleteExtensionStoreBlob)),
		jsapi.CmdListExtensionStoreBlobKeys: withArgs(svc.ListExtensionStoreBlobKeys),
		jsapi.CmdStartSignIn:                withDTO(svc.StartSignIn),
		jsapi.CmdFinishSignIn:               withDTO(svc.FinishSignIn),
		jsapi.CmdCancelSignIn:               withDTO(svc.CancelSignIn),
		jsapi.CmdSignOut:                    withDTO(svc.SignOut),
		// ttmcp's stdio servers: their process's status (read only).
		jsapi.CmdGetStdioStatus: withDTO(svc.StdioStatus),
		// how a server is connected (live connections, read only).
		jsapi.CmdGetConnectionStatus: withDTO(svc.ConnectionStatus),
		// ttmcp's tool sets (SPEC §10).
		jsapi.CmdListToolSets: noArgs(svc.ListToolSets),
		jsapi.CmdSaveToolSet:  withDTO(svc.SaveToolSet),
		jsapi.CmdRemoveToolSet: withDTO(func(ctx context.Context, dto jsapi.McpToolSetIdDto) (any, error) {
			return nil, svc.RemoveToolSet(ctx, dto)
		}),
		jsapi.CmdReadToolResult: withDTO(svc.ReadToolResult),
		// ttmcp's resources and prompts (SPEC §10).
		jsapi.CmdListResources:         withDTO(svc.ListResources),
		jsapi.CmdListResourceTemplates: withDTO(svc.ListResourceTemplates),
		jsapi.CmdReadResource:          withDTO(svc.ReadResource),
		jsapi.CmdListPrompts:           withDTO(svc.ListPrompts),
		jsapi.CmdGetPrompt:             withDTO(svc.GetPrompt),
		jsapi.CmdCompleteArgument:      withDTO(svc.CompleteArgument),
		jsapi.CmdGetServerCapabilities: withDTO(svc.ServerCapabilities),
		jsapi.CmdSetServerCapabilities: withDTO(svc.SetServerCapabilities),
	}, signIn: svc.CompleteSignIn}
	c.appView = func(string) (service.AppView, bool) { return service.AppView{}, false }
	if svc != nil {
		c.watch = svc.Watch
		c.appView = svc.TakeAppView
	}
	for name, h := range c.table {
		c.table[name] = refuseStdioMembers(h)
	}
	return c
}

// Invoke runs one command and returns its result as JSON. The result may
// be shared with other calls (list_mcp_servers of an unchanged folder):
// callers must not modify it.
func (c *Commands) Invoke(ctx context.Context, name string, args jsontext.Value) (_ jsontext.Value, err error) {
	h, ok := c.table[name]
	if !ok {
		return nil, errorf(jsapi.KindBadRequest, jsapi.CodeCommandUnknown, "unknown command %q", name)
	}
	defer func() {
		if p := recover(); p != nil {
			c.log.Error("command panicked", "command", name, "panic", p)
			err = errorf(jsapi.KindInternal, jsapi.CodeInternal, "%s failed unexpectedly", name)
		}
	}()
	v, err := h(ctx, args)
	if err != nil {
		if domain.KindOf(err) == domain.KindInternal {
			c.log.Error("command failed", "command", name, "err", err)
		}
		return nil, err
	}
	if e, ok := v.(encoded); ok {
		return jsontext.Value(e), nil
	}
	out, err := encodeResult(v)
	if err != nil {
		return nil, errorf(jsapi.KindInternal, jsapi.CodeInternal, "%s: cannot encode the result: %v", name, err)
	}
	return out, nil
}

// encodeResult encodes a command's result for a result frame.
func encodeResult(v any) ([]byte, error) {
	return json.Marshal(v, jsontext.EscapeForHTML(false), jsontext.EscapeForJS(false), json.Deterministic(true))
}

// encoded is a result already encoded by encodeResult, possibly shared with
// other results: it is written as is and never modified.
type encoded []byte

// noArgs adapts a command without a dto; args may be absent, null or {}.
func noArgs[R any](fn func(context.Context) (R, error)) handler {
	return func(ctx context.Context, args jsontext.Value) (any, error) {
		var empty struct{}
		if len(args) > 0 && string(args) != "null" {
			if err := decodeArgs(args, &empty, ""); err != nil {
				return nil, err
			}
		}
		return fn(ctx)
	}
}

// optionalDTO adapts a command whose dto may be left out: args absent,
// null, {} (upstream's call) or {"dto": D}.
func optionalDTO[D, R any](fn func(context.Context, D) (R, error)) handler {
	return func(ctx context.Context, args jsontext.Value) (any, error) {
		var dto D
		if len(args) > 0 && string(args) != "null" {
			var in struct {
				DTO jsontext.Value `json:"dto" dto:"optional"`
			}
			if err := decodeArgs(args, &in, ""); err != nil {
				return nil, err
			}
			if len(in.DTO) > 0 {
				if err := decodeArgs(in.DTO, &dto, "/dto"); err != nil {
					return nil, err
				}
			}
		}
		return fn(ctx, dto)
	}
}

// withDTO adapts a command whose args are {"dto": D}. Errors name where
// in args the input is wrong ("/dto/endpoint: expected a string, got
// null"), so args are read first, then the dto at "/dto".
func withDTO[D, R any](fn func(context.Context, D) (R, error)) handler {
	return func(ctx context.Context, args jsontext.Value) (any, error) {
		var in struct {
			DTO jsontext.Value `json:"dto"`
		}
		if len(args) == 0 {
			return nil, errorf(jsapi.KindBadRequest, jsapi.CodeArgsInvalid, "args {dto} is required")
		}
		if err := decodeArgs(args, &in, ""); err != nil {
			return nil, err
		}
		if len(in.DTO) == 0 {
			return nil, errorf(jsapi.KindBadRequest, jsapi.CodeArgsInvalid, "args: missing field \"dto\" (args are {dto})")
		}
		var dto D
		if err := decodeArgs(in.DTO, &dto, "/dto"); err != nil {
			return nil, err
		}
		return fn(ctx, dto)
	}
}

// errorf makes a wire error.
func errorf(kind, code, format string, args ...any) error {
	return &wireError{body: jsapi.ErrorBody{Kind: kind, Code: code, Message: code + ": " + fmt.Sprintf(format, args...)}}
}

type wireError struct{ body jsapi.ErrorBody }

func (e *wireError) Error() string { return e.body.Message }

// errorBody projects any error for a result frame.
// Messages may quote what the page sent (a member name, a value), which
// need not be UTF-8: it is replaced, so the body always encodes.
func errorBody(err error) jsapi.ErrorBody {
	var we *wireError
	b := jsapi.ErrorBody{Kind: domain.KindOf(err).String(), Code: domain.CodeOf(err), Message: err.Error()}
	if errors.As(err, &we) {
		b = we.body
	}
	b.Message = strings.ToValidUTF8(b.Message, "\uFFFD")
	return b
}

func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}
