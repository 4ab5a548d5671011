//go:build js && wasm

package main

import (
	"syscall/js"

	"github.com/ttmcp/ttmcp/jsapi"
)

// argShape says how a method turns its input into the command's args; the
// transport's stubs (jsapi/bridge-transport.js, shapeArgs) do it by name.
type argShape string

const (
	argsDTO            argShape = "dto"            // {dto: input}, input as-is
	argsNone           argShape = "none"           // {} (the list commands)
	argsRegistrationID argShape = "registrationId" // {dto: {registrationId}} from a string id or an object
	argsOptionalDTO    argShape = "optionalDto"    // {dto: input}, {dto: {}} without one
	argsID             argShape = "id"             // {dto: {id}} from a string id or an object
	// {dto: {registrationId}} from a string id, {dto: input} from an object
	// (the lists' {registrationId, refresh}).
	argsRegistrationIDOrDTO argShape = "registrationIdOrDto"
)

// method maps one api.mcp method onto its command (reference §1.2).
type method struct {
	name    string
	command string
	shape   argShape
}

var serverMethods = [...]method{
	{"list", jsapi.CmdListServers, argsNone},
	{"create", jsapi.CmdCreateServer, argsDTO},
	{"update", jsapi.CmdUpdateServer, argsDTO},
	{"setState", jsapi.CmdSetServerState, argsDTO},
	{"remove", jsapi.CmdRemoveServer, argsRegistrationID},
	{"discover", jsapi.CmdDiscoverTools, argsRegistrationID},
	{"refresh", jsapi.CmdRefreshTools, argsRegistrationID},
	// ttmcp's addition (SPEC §10); signIn is its own method (signin.go).
	{"signOut", jsapi.CmdSignOut, argsRegistrationID},
	// ttmcp's capability allowlist (SPEC §10 "Resources and prompts").
	{"capabilities", jsapi.CmdGetServerCapabilities, argsRegistrationID},
	{"setCapabilities", jsapi.CmdSetServerCapabilities, argsDTO},
}

var toolMethods = [...]method{
	{"setPermission", jsapi.CmdSetToolPermission, argsDTO},
	{"setDescriptionOverride", jsapi.CmdSetToolDescriptionOverride, argsDTO},
}

// auditMethods are ttmcp's addition (SPEC §10): api.mcp.audit.
var auditMethods = [...]method{
	{"list", jsapi.CmdListAuditEntries, argsOptionalDTO},
}

// stdioMethods are ttmcp's addition (SPEC §10): api.mcp.stdio. Only what
// a page may see of a stdio server's process: stdio servers are configured
// on the backend's machine, so there is no method to create or change one.
var stdioMethods = [...]method{
	{"status", jsapi.CmdGetStdioStatus, argsRegistrationID},
}

// connectionMethods are ttmcp's addition (SPEC §10 "Live connections"):
// api.mcp.connections, how each server is connected now (read only).
var connectionMethods = [...]method{
	{"status", jsapi.CmdGetConnectionStatus, argsRegistrationID},
}

// toolSetMethods are ttmcp's addition (SPEC §10): api.mcp.toolSets.
var toolSetMethods = [...]method{
	{"list", jsapi.CmdListToolSets, argsNone},
	{"save", jsapi.CmdSaveToolSet, argsDTO},
	{"remove", jsapi.CmdRemoveToolSet, argsID},
}

// toolSearchMethods are ttmcp's addition (issue 31): api.mcp.toolSearch,
// outside upstream's tools object, whose methods stay upstream's.
var toolSearchMethods = [...]method{
	{"search", jsapi.CmdSearchTools, argsDTO},
}

// appMethods are ttmcp's addition (issue 30): api.mcp.apps, what the
// extension's App host asks for an App (its calls, its interface).
var appMethods = [...]method{
	{"startCall", jsapi.CmdStartAppToolCall, argsDTO},
	{"call", jsapi.CmdCallAppTool, argsDTO},
	{"cancelCall", jsapi.CmdCancelAppToolCall, argsDTO},
	{"readInterface", jsapi.CmdReadAppResource, argsDTO},
}

// resultMethods are ttmcp's addition (SPEC §10): api.mcp.results.
var resultMethods = [...]method{
	{"read", jsapi.CmdReadToolResult, argsDTO},
}

// resourceMethods, promptMethods and completionMethods are ttmcp's
// addition (SPEC §10 "Resources and prompts"): api.mcp.resources,
// api.mcp.prompts, api.mcp.completions.
var resourceMethods = [...]method{
	{"list", jsapi.CmdListResources, argsRegistrationIDOrDTO},
	{"templates", jsapi.CmdListResourceTemplates, argsRegistrationIDOrDTO},
	{"read", jsapi.CmdReadResource, argsDTO},
}

var promptMethods = [...]method{
	{"list", jsapi.CmdListPrompts, argsRegistrationIDOrDTO},
	{"get", jsapi.CmdGetPrompt, argsDTO},
}

var completionMethods = [...]method{
	{"complete", jsapi.CmdCompleteArgument, argsDTO},
}

// publish installs the API on window.__TAURITAVERN__, keeping whatever the
// page already put there: api.mcp (exactly servers and tools),
// invoke.safeInvoke and the mcpBridge status object. api.mcp holds
// upstream's servers and tools, and ttmcp's audit, stdio, connections, elicitation, toolSets,
// results, resources, prompts, completions and toolSearch. The methods of the
// tables above and safeInvoke are the transport's stubs (the data plane,
// transport.go); so is tools.testCall, with Go's behind it (testcall.go).
func publish(b *bridge) {
	tt := ensureObject(global, "__TAURITAVERN__")
	api := ensureObject(tt, "api")

	servers := b.methods(serverMethods[:])
	servers.Set("signIn", guard("servers.signIn", func(args []js.Value) js.Value {
		return b.signIn(arg(args, 0), arg(args, 1))
	}))
	tools := b.methods(toolMethods[:])
	tools.Set("testCall", b.transport.Get("testCall")) // the data plane's, with Go's for the rest (hooks.testCall)
	mcp := jsObject.New()
	mcp.Set("servers", servers)
	mcp.Set("tools", tools)
	mcp.Set("audit", b.methods(auditMethods[:]))
	mcp.Set("stdio", b.methods(stdioMethods[:]))
	mcp.Set("connections", b.methods(connectionMethods[:]))
	elicitation := jsObject.New() // the handler lives in the data plane (jsapi/bridge-transport.js)
	elicitation.Set("setHandler", b.transport.Get("setElicitationHandler"))
	mcp.Set("elicitation", elicitation)
	mcp.Set("toolSets", b.methods(toolSetMethods[:]))
	mcp.Set("results", b.methods(resultMethods[:]))
	mcp.Set("resources", b.methods(resourceMethods[:]))
	mcp.Set("prompts", b.methods(promptMethods[:]))
	mcp.Set("completions", b.methods(completionMethods[:]))
	mcp.Set("toolSearch", b.methods(toolSearchMethods[:]))
	apps := b.methods(appMethods[:])
	apps.Set("setRenderer", b.transport.Get("setAppsRenderer")) // the flag lives in the data plane
	mcp.Set("apps", apps)
	api.Set("mcp", mcp)

	invoke := ensureObject(tt, "invoke")
	invoke.Set("safeInvoke", b.transport.Get("safeInvoke"))

	tt.Set("mcpBridge", b.newStatus())
}

// ensureObject returns parent[key], first setting it to {} unless it is an
// object already.
func ensureObject(parent js.Value, key string) js.Value {
	v := parent.Get(key)
	if !isObject(v) {
		v = jsObject.New()
		parent.Set(key, v)
	}
	return v
}

// methods returns an object of the transport's stubs of ms.
func (b *bridge) methods(ms []method) js.Value {
	o := jsObject.New()
	for _, m := range ms {
		o.Set(m.name, b.method(m))
	}
	return o
}

// method returns the transport's stub of m.
func (b *bridge) method(m method) js.Value {
	return b.transport.Call("method", m.command, string(m.shape))
}

func argsError(err error) js.Value {
	return newError(jsapi.CodeArgsInvalid, jsapi.KindBadRequest,
		jsapi.CodeArgsInvalid+": the arguments cannot be sent as JSON: "+err.Error())
}

// call invokes command and returns a Promise of its value.
func (b *bridge) call(command string, args js.Value) js.Value {
	return b.callProgress(command, args, js.Undefined())
}

// callProgress is call with the call's onProgress function (undefined:
// none): the transport's calls while no socket is open.
func (b *bridge) callProgress(command string, args, progress js.Value) js.Value {
	p, resolve, reject := newPromise()
	b.invokeProgress(command, args, progress, promiseHandler{resolve, reject})
	return p
}

// promiseHandler settles a plain call's Promise: every failure rejects.
type promiseHandler struct{ resolve, reject js.Value }

func (h promiseHandler) resolved(v js.Value)       { h.resolve.Invoke(v) }
func (h promiseHandler) rejected(err js.Value)     { h.reject.Invoke(err) }
func (h promiseHandler) lost(_ bool, err js.Value) { h.reject.Invoke(err) }

// safeInvoke(command, args) sends any command with an upstream-shaped args
// object ({dto: {...}}, or nothing for the list commands). The transport's
// stub sends what it can itself and hands the rest here: invalid input to
// refuse, and calls while no socket is open.
func (b *bridge) safeInvoke(command, args js.Value) js.Value {
	if typeOf(command) != js.TypeString || command.String() == "" {
		return rejected(newError(jsapi.CodeArgsInvalid, jsapi.KindBadRequest,
			jsapi.CodeArgsInvalid+": safeInvoke needs a command name"))
	}
	var text js.Value
	switch {
	case args.IsUndefined() || args.IsNull():
		text = js.ValueOf("{}")
	case typeOf(args) != js.TypeObject || isArray.Invoke(args).Bool():
		return rejected(newError(jsapi.CodeArgsInvalid, jsapi.KindBadRequest,
			jsapi.CodeArgsInvalid+": safeInvoke args must be an object such as {dto: {...}}"))
	default:
		var err error
		if text, err = stringifyJSON(args); err != nil {
			return rejected(argsError(err))
		}
	}
	return b.call(command.String(), text)
}
