package service

import (
	"context"
	"time"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/jsapi"
)

// AuditLog keeps a record of every tools/call the service sends or
// refuses (SPEC §10, seed 001 §7).
type AuditLog interface {
	// Append writes r as the newest record, setting its time (to r.Time
	// when it is set and later than the newest record's).
	Append(r domain.CallRecord) (domain.CallRecord, error)
	// List returns the records q selects, newest first, and how many lines
	// read were not records.
	List(q domain.AuditQuery) ([]domain.CallRecord, int, error)
}

// Audit limits of list_mcp_audit_entries.
const (
	DefaultAuditLimit = 50
	MaxAuditLimit     = 1000
)

// Codes of the audit and approval rules.
const (
	CodeCallDeniedByUser   = "mcp.call_denied_by_user"
	CodeAuditLimitInvalid  = "mcp.audit_limit_invalid"
	CodeAuditBeforeInvalid = "mcp.audit_before_invalid"
)

// callAudit gathers the record of one call command while it runs; finish
// appends it. Every call command that decoded appends exactly one record,
// whatever its end: an outcome, or an error (OutcomeRejected).
type callAudit struct {
	s      *Service
	rec    domain.CallRecord
	start  time.Time
	loaded bool // rec holds the registration's name and permission
	// ctx, when set, is the command's: the record is written after its
	// answer (later), when it leaves work for then.
	ctx context.Context
}

// afterAnswer writes the record after the command of ctx has answered
// (WithLater), its time still when the outcome was known.
func (a *callAudit) afterAnswer(ctx context.Context) { a.ctx = ctx }

func (s *Service) beginAudit(source domain.CallSource, callID, argumentsJSON string, approval domain.Approval) *callAudit {
	n, sum := domain.DigestArguments(argumentsJSON)
	return &callAudit{s: s, start: time.Now(), rec: domain.CallRecord{
		CallID: callID, Source: source, Approval: approval, ArgumentsBytes: n, ArgumentsSHA256: sum,
	}}
}

// tool names the tool called.
func (a *callAudit) tool(id domain.RegistrationID, nativeName string) {
	a.rec.RegistrationID, a.rec.NativeName = id, nativeName
}

// registration records the registration the call was decided against.
func (a *callAudit) registration(r domain.Registration) {
	a.rec.ServerDisplayName = r.DisplayName
	a.rec.Permission = r.PermissionFor(a.rec.NativeName)
	a.loaded = true
}

// finish appends the record of the call's end. A record that cannot be
// written is logged: the call already happened (or was refused), and
// hiding its outcome from the page would be worse than a gap in the log.
func (a *callAudit) finish(out jsapi.McpCallOutcome, err error) {
	a.rec.Duration = time.Since(a.start)
	if !a.loaded && a.rec.RegistrationID != "" {
		// A gate before the registration was loaded refused the call:
		// name the server anyway, if it can be read.
		if r, ok, lerr := a.s.regs.Load(a.rec.RegistrationID); lerr == nil && ok {
			if a.rec.Kind == "" || a.rec.Kind == domain.AuditToolCall {
				a.registration(r)
			} else {
				a.server(r) // a read or a get has no tool, so no permission
			}
		}
	}
	switch {
	case err != nil:
		a.rec.Outcome, a.rec.Code = domain.OutcomeRejected, domain.CodeOf(err)
	default:
		a.rec.Outcome, a.rec.Code = domain.Outcome(out.Outcome), out.Code
		if out.Rounds != nil {
			a.rec.Rounds = *out.Rounds
			for _, e := range out.Elicitations {
				a.rec.Elicitations = append(a.rec.Elicitations, domain.ElicitRecord{Mode: e.Mode, Action: e.Action})
			}
		}
		switch r := out.Response.(type) {
		case *jsapi.McpToolResult:
			a.rec.ResponseKind, a.rec.IsError = r.Kind, r.IsError
		case *jsapi.McpServerError:
			a.rec.ResponseKind = r.Kind
		case *jsapi.McpUnsupportedResponse:
			a.rec.ResponseKind = r.Kind
		case *jsapi.McpResourceContents:
			a.rec.ResponseKind, a.rec.HasContent = r.Kind, true
			a.rec.ContentBytes, a.rec.ContentCount = r.TotalBytes, len(r.Contents)
		case *jsapi.McpPromptMessages:
			a.rec.ResponseKind, a.rec.HasContent = r.Kind, true
			a.rec.ContentCount = len(r.Messages)
			a.rec.ContentBytes = promptBytes(r)
		}
	}
	if a.s.audit == nil {
		return
	}
	if a.ctx == nil {
		a.append()
		return
	}
	a.rec.Time = time.Now() // when the outcome was known, not when written
	n := a.s.pending.issue()
	later(a.ctx, func() {
		defer a.s.pending.done(n)
		a.append()
	})
}

func (a *callAudit) append() {
	if _, err := a.s.audit.Append(a.rec); err != nil {
		a.s.log.Error("cannot record a tool call in the audit log", "callId", a.rec.CallID,
			"registrationId", a.rec.RegistrationID, "nativeName", a.rec.NativeName, "outcome", a.rec.Outcome, "err", err)
	}
}

// ListAudit lists the audit records, newest first (list_mcp_audit_entries).
func (s *Service) ListAudit(_ context.Context, dto jsapi.McpAuditListDto) (jsapi.McpAuditList, error) {
	q := domain.AuditQuery{Limit: DefaultAuditLimit}
	if dto.RegistrationID != nil {
		id, err := domain.ParseRegistrationID(*dto.RegistrationID)
		if err != nil {
			return jsapi.McpAuditList{}, err
		}
		q.RegistrationID = id
	}
	if dto.Limit != nil {
		if *dto.Limit < 1 || *dto.Limit > MaxAuditLimit {
			return jsapi.McpAuditList{}, domain.Errorf(domain.KindBadRequest, CodeAuditLimitInvalid, "limit must be 1 to %d, not %d", MaxAuditLimit, *dto.Limit)
		}
		q.Limit = *dto.Limit
	}
	if dto.Before != nil {
		t, err := time.Parse(time.RFC3339Nano, *dto.Before)
		if err != nil {
			return jsapi.McpAuditList{}, domain.Errorf(domain.KindBadRequest, CodeAuditBeforeInvalid, "before must be an RFC 3339 time such as a record's time: %v", err)
		}
		q.Before = t
	}
	out := jsapi.McpAuditList{Entries: []jsapi.McpAuditEntry{}}
	if s.audit == nil {
		return out, nil
	}
	s.pending.wait() // the records of the calls answered before this list
	recs, skipped, err := s.audit.List(q)
	if err != nil {
		return jsapi.McpAuditList{}, err
	}
	out.SkippedLines = skipped
	for _, r := range recs {
		out.Entries = append(out.Entries, AuditEntryDTO(r))
	}
	return out, nil
}

// AuditEntryDTO projects an audit record for the page.
func AuditEntryDTO(r domain.CallRecord) jsapi.McpAuditEntry {
	e := jsapi.McpAuditEntry{
		Time:              r.Time.UTC().Format(domain.AuditTimeLayout),
		CallID:            r.CallID,
		Source:            string(r.Source),
		RegistrationID:    string(r.RegistrationID),
		ServerDisplayName: r.ServerDisplayName,
		NativeName:        r.NativeName,
		Permission:        string(r.Permission),
		Approval:          string(r.Approval),
		Outcome:           string(r.Outcome),
		Code:              r.Code,
		ResponseKind:      r.ResponseKind,
		IsError:           r.IsError,
		DurationMs:        float64(r.Duration.Microseconds()) / 1000,
		ArgumentsBytes:    r.ArgumentsBytes,
		ArgumentsSHA256:   r.ArgumentsSHA256,
	}
	if r.ResultID != "" {
		id := string(r.ResultID)
		e.ResultID = &id
	}
	e.Kind = string(r.Kind)
	if e.Kind == "" {
		e.Kind = jsapi.AuditKindToolCall
	}
	if r.URI != "" {
		e.URI = &r.URI
	}
	if r.PromptName != "" {
		e.PromptName = &r.PromptName
	}
	if r.HasContent {
		e.ContentBytes, e.ContentCount = &r.ContentBytes, &r.ContentCount
	}
	if r.AppTool != "" {
		e.AppTool = &r.AppTool
	}
	if r.Rounds > 0 {
		rounds := r.Rounds
		e.Rounds = &rounds
		for _, q := range r.Elicitations {
			e.Elicitations = append(e.Elicitations, jsapi.McpElicitationRecord{Mode: q.Mode, Action: q.Action})
		}
	}
	if r.ProgressUpdates > 0 {
		n := r.ProgressUpdates
		e.ProgressUpdates = &n
	}
	if r.ProgressMessage != "" {
		m := r.ProgressMessage
		e.ProgressMessage = &m
	}
	return e
}
