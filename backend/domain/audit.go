package domain

import (
	"crypto/sha256"
	"encoding/hex"
	"github.com/google/uuid"
	"time"
)

// CallSource says who asked for a tools/call.
type CallSource string

// The sources (jsapi.AuditSource*).
const (
	// SourceTest: an explicit test call from the Manager.
	SourceTest CallSource = "test"
	// SourceModel: a model's tool call in a generation.
	SourceModel CallSource = "model"
)

// Approval is what let a call through besides its permission.
type Approval string

// The approvals (jsapi.Approval*).
const (
	// ApprovalNone: nobody was asked. An Allow tool, or a caller that asks
	// no one (upstream's Generate hooks, for which Ask behaves as Allow).
	ApprovalNone Approval = "none"
	// ApprovalManual: a test call, the user's own click in the Manager.
	ApprovalManual Approval = "manual"
	// ApprovalOnce and ApprovalAlways: the user answered an Ask prompt
	// "Allow once" or "Always allow".
	ApprovalOnce   Approval = "once"
	ApprovalAlways Approval = "always"
	// ApprovalDenied: the user answered an Ask prompt "Deny" (or closed it,
	// or stopped the generation): the tool is not called.
	ApprovalDenied Approval = "denied"
)

// ParseApproval accepts what a page may send: "once", "always" or
// "denied". "none" and "manual" are the backend's own findings.
func ParseApproval(raw string) (Approval, error) {
	switch a := Approval(raw); a {
	case ApprovalOnce, ApprovalAlways, ApprovalDenied:
		return a, nil
	}
	return "", invalid("mcp.call_approval_invalid", "approval must be once, always or denied, not `%s`", raw)
}

// OutcomeRejected is the outcome an audit record gives a call command
// that failed with an error instead of an outcome (a malformed ToolId, an
// invalid approval): nothing was sent.
const OutcomeRejected Outcome = "rejected"

// AuditKind is what an audit record is of.
type AuditKind string

// The kinds (jsapi.AuditKind*). A record written before kinds existed is a
// tool call.
const (
	AuditToolCall     AuditKind = "tool_call"
	AuditResourceRead AuditKind = "resource_read"
	AuditPromptGet    AuditKind = "prompt_get"
)

// NewRecordID returns a new random id for a record whose request the page
// did not name (a read, a get).
func NewRecordID() string { return uuid.New().String() }

// SourcePage: a resource read or prompt get asked by a page through
// api.mcp (the Manager, a chat attachment, /mcp-prompt).
const SourcePage CallSource = "page"

// SourceApp: a tools/call or resources/read asked by an MCP App (issue
// 30) through its host page; CallRecord.AppTool names the App.
const SourceApp CallSource = "app"

// CallRecord is one line of the audit log: a tools/call, resources/read or
// prompts/get that ttmcp sent or refused. It holds what the request was
// and how it ended, never the arguments themselves (only their size and
// hash) nor the result or the content.
type CallRecord struct {
	// Kind is what was sent; "" reads as AuditToolCall.
	Kind AuditKind
	// Time is when the outcome was known; the log sets it when appending.
	Time time.Time
	// CallID is the page's id of the call (callId or executionCallId).
	CallID            string
	Source            CallSource
	RegistrationID    RegistrationID // empty when the request named none that parses
	ServerDisplayName string         // empty when the registration could not be loaded
	NativeName        string
	// Permission is the tool's permission when the call was decided; empty
	// when the registration could not be loaded.
	Permission Permission
	Approval   Approval
	Outcome    Outcome
	// Code is the not_sent or outcome_unknown code, or the error code of a
	// rejected call; empty for a known response.
	Code string
	// ResponseKind is tool_result, server_error or unsupported_response for
	// a known response; IsError is a tool_result's isError.
	ResponseKind string
	IsError      bool
	Duration     time.Duration
	// ArgumentsBytes and ArgumentsSHA256 describe argumentsJson exactly as
	// the page sent it (UTF-8 bytes; hex SHA-256).
	ArgumentsBytes  int
	ArgumentsSHA256 string
	// ResultID names the readable result kept for a reader when it was too
	// long for the model's prompt (a ttmcp result store id); "" otherwise.
	ResultID ResultID
	// URI is the resource read; PromptName the prompt got (its arguments'
	// JSON is what ArgumentsBytes and ArgumentsSHA256 describe).
	URI        string
	PromptName string
	// ContentBytes and ContentCount describe what a known read or get
	// returned (decoded bytes, contents or messages); HasContent says they
	// were recorded.
	HasContent   bool
	ContentBytes int64
	ContentCount int
	// Rounds and Elicitations: a tools/call whose server asked the user —
	// the requests it took (2026 input_required rounds each count) and each
	// question's mode and answer; never what the user entered. 0 and nil
	// for a call that asked nothing.
	Rounds       int
	Elicitations []ElicitRecord
	// ProgressUpdates and ProgressMessage: a tools/call whose server
	// reported progress — how many notifications came and the last
	// message one carried. 0 and "" for a call without progress.
	ProgressUpdates int
	ProgressMessage string
	// AppTool names the App a SourceApp request came from: the tool (of
	// the same registration) whose interface it is. "" for other sources.
	AppTool string
}

// DigestArguments returns the size and hex SHA-256 of argumentsJson.
func DigestArguments(argumentsJSON string) (int, string) {
	sum := sha256.Sum256([]byte(argumentsJSON))
	return len(argumentsJSON), hex.EncodeToString(sum[:])
}

// AuditTimeLayout is how audit times are written: RFC 3339 in UTC with all
// nine fraction digits, so every time has the same length and times sort
// as text.
const AuditTimeLayout = "2006-01-02T15:04:05.000000000Z"

// AuditQuery selects records of the audit log, newest first.
type AuditQuery struct {
	// RegistrationID, when not empty, keeps only that registration's calls.
	RegistrationID RegistrationID
	// Before, when not zero, keeps only records older than it.
	Before time.Time
	// Limit is the most records returned (≥ 1).
	Limit int
}
