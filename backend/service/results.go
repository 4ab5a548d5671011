package service

import (
	"context"
	"strings"
	"time"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/jsapi"
)

// Results keeps the readable results too long for a model's prompt
// (storage.ResultStore).
type Results interface {
	// Put keeps a result of a registration; the store applies its
	// retention rules.
	Put(reg domain.RegistrationID, text string) (domain.StoredResult, error)
	// Get returns false when the result is not kept (never, or no more).
	Get(id domain.ResultID) (domain.StoredResult, bool, error)
	// DeleteRegistration removes every result of a registration.
	DeleteRegistration(reg domain.RegistrationID) error
}

// Codes of the readable results.
const (
	CodeResultsUnavailable   = "mcp.results_unavailable"
	CodeResultNotFound       = "mcp.result_not_found"
	CodeResultReadInvalid    = "mcp.result_read_invalid"
	CodeResultLineOutOfRange = "mcp.result_line_out_of_range"
)

// Reads of a stored result (read_mcp_tool_result).
const (
	DefaultResultLines    = 200
	MaxResultLines        = 5000
	DefaultResultChars    = 20_000
	MinResultChars        = domain.WrapChars
	MaxResultCharsPerRead = 1_000_000
)

type readableOptions struct {
	limit  int
	reader bool
}

func parseReadable(o jsapi.McpReadableOptions) (readableOptions, error) {
	opt := readableOptions{limit: domain.DefaultResultInlineCharLimit, reader: true}
	if o.InlineCharLimit != nil {
		if err := domain.ValidateResultInlineCharLimit(*o.InlineCharLimit); err != nil {
			return readableOptions{}, err
		}
		opt.limit = *o.InlineCharLimit
	}
	if o.ReaderTool != nil {
		opt.reader = *o.ReaderTool
	}
	return opt, nil
}

// readable is what the model reads of o (domain.ProjectReadable). A known
// response longer than the inline limit is kept in the result store (its
// id goes to the call's audit record) and replaced by the note with its
// preview; not_sent and unknown outcomes are single sentences, always
// included.
func (s *Service) readable(o domain.CallOutcome, r *domain.Registration, toolID string, opt readableOptions, audit *callAudit) *jsapi.McpReadableResult {
	named := r
	if named == nil { // refused before its registration was loaded: name it all the same
		named = s.loaded(toolID)
	}
	rd := domain.ProjectReadable(o, s.toolLabel(named, toolID))
	out := &jsapi.McpReadableResult{Text: rd.Text, IsError: rd.IsError}
	n := domain.CountChars(rd.Text)
	if o.Outcome != domain.OutcomeKnownResponse || r == nil || n <= opt.limit {
		return out
	}
	out.Stored = &jsapi.McpStoredResultRef{CharCount: n, CharLimit: opt.limit}
	var id, why string
	switch {
	case s.results == nil:
		why = "this backend keeps no results"
	default:
		kept, err := s.results.Put(r.ID, rd.Text)
		if err != nil {
			s.log.Error("cannot keep a long tool result", "registrationId", r.ID, "err", err)
			why = err.Error()
			break
		}
		id = string(kept.ID)
		out.Stored.ResultID = &id
		audit.rec.ResultID = kept.ID
	}
	out.Text = domain.StoredNote(rd.Text, n, opt.limit, id, opt.reader, why)
	return out
}

// toolLabel names the tool of toolID for the model: its title in the
// registration's published catalog, else its native name, and the
// registration's name.
func (s *Service) toolLabel(r *domain.Registration, toolID string) domain.ToolLabel {
	_, name, err := domain.ParseToolID(toolID)
	if err != nil {
		name = toolID
	}
	label := domain.ToolLabel{Title: name, ToolID: domain.ToolID(toolID)}
	if r == nil {
		return label
	}
	label.Server = r.DisplayName
	if cat, _, err := s.publishedCatalog(*r); err == nil && cat != nil {
		for _, t := range cat.Tools {
			if t.NativeName == name && t.Title != nil && strings.TrimSpace(*t.Title) != "" {
				label.Title = *t.Title
				break
			}
		}
	}
	return label
}

// ReadToolResult reads a stored result by lines (the model's
// ttmcp_read_result, the user's Recent calls): the lines are the result's,
// wrapped every 3,000 characters; a read ends before the line that would
// take it past maxChars, but always holds one line.
func (s *Service) ReadToolResult(_ context.Context, dto jsapi.ReadMcpToolResultDto) (jsapi.McpToolResultPage, error) {
	if s.results == nil {
		return jsapi.McpToolResultPage{}, domain.Errorf(domain.KindUnavailable, CodeResultsUnavailable, "this backend keeps no results")
	}
	id, err := domain.ParseResultID(dto.ResultID)
	if err != nil {
		return jsapi.McpToolResultPage{}, err
	}
	start, lines, chars := 1, DefaultResultLines, DefaultResultChars
	for _, p := range []struct {
		name     string
		v        *int
		to       *int
		min, max int
	}{
		{"startLine", dto.StartLine, &start, 1, 1 << 30},
		{"lineCount", dto.LineCount, &lines, 1, MaxResultLines},
		{"maxChars", dto.MaxChars, &chars, MinResultChars, MaxResultCharsPerRead},
	} {
		if p.v == nil {
			continue
		}
		if *p.v < p.min || *p.v > p.max {
			return jsapi.McpToolResultPage{}, domain.Errorf(domain.KindBadRequest, CodeResultReadInvalid, "%s must be %d to %d, not %d", p.name, p.min, p.max, *p.v)
		}
		*p.to = *p.v
	}
	kept, ok, err := s.results.Get(id)
	switch {
	case err != nil:
		return jsapi.McpToolResultPage{}, internal("cannot read the result", err)
	case !ok:
		return jsapi.McpToolResultPage{}, domain.Errorf(domain.KindNotFound, CodeResultNotFound,
			"result `%s` is not kept (results are kept for 7 days, and go with their server)", id)
	}
	all := domain.WrapLines(kept.Text)
	if start > len(all) {
		return jsapi.McpToolResultPage{}, domain.Errorf(domain.KindBadRequest, CodeResultLineOutOfRange,
			"startLine %d is past the end of result `%s`, which has %d lines", start, id, len(all))
	}
	end, used := start-1, 0
	for end < len(all) && end-start+1 < lines {
		n := domain.CountChars(all[end]) + 1
		if end >= start && used+n > chars {
			break
		}
		used += n
		end++
	}
	page := jsapi.McpToolResultPage{
		ResultID: string(id), RegistrationID: string(kept.RegistrationID), StoredAt: kept.Time.UTC().Format(time.RFC3339),
		CharCount: domain.CountChars(kept.Text), TotalLines: len(all), StartLine: start, EndLine: end,
		Text: strings.Join(all[start-1:end], "\n"),
	}
	if end < len(all) {
		next := end + 1
		page.NextStartLine = &next
	}
	return page, nil
}
