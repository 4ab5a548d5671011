package domain

import (
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"strings"
	"time"
	"unicode/utf8"
)

// What a model reads of a tool call (SPEC §10 "Tool sets", reference §7's
// Agent projection, brought to SillyTavern's generation): the result as
// text a model reads well instead of ttmcp's outcome envelope, and a
// result too long for the prompt replaced by a note with a preview, the
// whole kept aside for a reader tool. The call's outcome itself is never
// changed: this is a view of it.

// ToolLabel names a tool for the model: by its title (else its native
// name) and its server, never by its ToolId.
type ToolLabel struct {
	Title  string
	Server string // "" when unknown
	// ToolID, when known, is replaced by the title in messages that quote it.
	ToolID ToolID
}

func (l ToolLabel) String() string {
	if l.Server == "" {
		return "`" + l.Title + "`"
	}
	return "`" + l.Title + "` (" + l.Server + ")"
}

// Readable is the text a model reads of one call.
type Readable struct {
	Text    string
	IsError bool
}

// Codes a readable text names for an error the model can act on.
const (
	CodeToolError           = "mcp.tool_error"
	CodeServerError         = "mcp.server_error"
	CodeUnsupportedResponse = "mcp.unsupported_response"
	// codeCallMetadataUnsupported is left out of the notes (reference
	// §7): it says nothing about the result.
	codeCallMetadataUnsupported = "mcp.call_metadata_unsupported"
)

// EmptyResultText is what the model reads of a result without content.
const EmptyResultText = "The MCP tool completed without content."

// ProjectReadable returns the text a model reads of o (reference §7):
//
//   - a tool result: its text blocks, joined by blank lines and trimmed,
//     unless they are only a serialisation of the structured content (the
//     same JSON value); the structured content as a "## Details" section
//     in Markdown; the diagnostics as "## Notes"; an empty result as one
//     plain sentence. A result with isError starts with a sentence naming
//     the tool and mcp.tool_error;
//   - a server error: a sentence with mcp.server_error, the JSON-RPC code
//     and message, and its data as "## Error details";
//   - an unsupported response, not_sent and outcome_unknown: one sentence
//     naming the tool and the code the model can act on.
//
// When the server asked the user during the call, a "## The user was
// asked" section says what the user decided, for every question the user
// did not simply accept (the model learns why the tool did less).
func ProjectReadable(o CallOutcome, tool ToolLabel) Readable {
	r := projectReadable(o, tool)
	if asked := askedNote(o.Elicitations); asked != "" {
		r.Text += "\n\n" + asked
	}
	return r
}

// askedNote says how the user answered the server's questions, when one
// was not accepted; "" when every answer was accept (the result tells).
func askedNote(recs []ElicitRecord) string {
	var lines []string
	declined := false
	for _, rec := range recs {
		what := "to fill in a form"
		if rec.Mode == ElicitURL {
			what = "to open a page"
		}
		var decided string
		switch rec.Action {
		case ElicitAccept:
			decided = "the user answered"
		case ElicitDecline:
			decided, declined = "the user declined", true
		case ElicitCancel:
			decided, declined = "the user dismissed it without answering", true
		case ElicitTimedOut:
			decided, declined = "the user did not answer in time", true
		case ElicitLimited:
			what = "more questions"
			decided, declined = "ttmcp answered them cancel without asking, as the server had asked too many", true
		default:
			decided, declined = "ttmcp could not put it to the user", true
		}
		lines = append(lines, fmt.Sprintf("- The server asked the user %s; %s.", what, decided))
	}
	if !declined {
		return ""
	}
	return "## The user was asked\n\n" + strings.Join(lines, "\n")
}

func projectReadable(o CallOutcome, tool ToolLabel) Readable {
	switch {
	case o.Outcome == OutcomeNotSent:
		return Readable{Text: fmt.Sprintf("The MCP tool %s was not called (%s): %s", tool, o.Code, sentence(tool.rename(o.Message))), IsError: true}
	case o.Outcome == OutcomeUnknown:
		return Readable{Text: fmt.Sprintf("The MCP tool %s may have run, but its result is unknown (%s): %s It was not retried; check what it does before calling it again.",
			tool, o.Code, sentence(tool.rename(o.Message))), IsError: true}
	case o.ServerError != nil:
		e := o.ServerError
		text := fmt.Sprintf("The MCP server answered the call of %s with an error (%s, JSON-RPC %d): %s", tool, CodeServerError, e.Code, e.Message)
		if e.DataJSON != nil {
			if details := renderJSON(*e.DataJSON); details != "" {
				text += "\n\n## Error details\n\n" + details
			}
		}
		return Readable{Text: text, IsError: true}
	case o.Unsupported != nil:
		return Readable{Text: fmt.Sprintf("The MCP tool %s answered with a response ttmcp cannot pass on (%s, %s): %s",
			tool, CodeUnsupportedResponse, o.Unsupported.ResponseType, o.Unsupported.Message), IsError: true}
	case o.Result != nil:
		return projectResult(*o.Result, tool)
	}
	return Readable{Text: fmt.Sprintf("The MCP tool %s returned nothing ttmcp can read (%s).", tool, o.Outcome), IsError: true}
}

func projectResult(r ToolResult, tool ToolLabel) Readable {
	var sections []string
	texts := make([]string, 0, len(r.TextBlocks))
	for _, b := range r.TextBlocks {
		texts = append(texts, b.Text)
	}
	text := strings.TrimSpace(strings.Join(texts, "\n\n"))
	if text != "" && !(r.StructuredJSON != nil && sameJSON(text, *r.StructuredJSON)) {
		sections = append(sections, text)
	}
	if r.StructuredJSON != nil {
		if details := renderJSON(*r.StructuredJSON); details != "" {
			sections = append(sections, "## Details\n\n"+details)
		}
	}
	shown := map[int]bool{}
	if res := resourcesSection(r.Resources); res != "" {
		sections = append(sections, res)
		for _, x := range r.Resources {
			shown[x.Index] = true
		}
	}
	var notes []string
	for _, d := range r.Diagnostics {
		if d.Code != codeCallMetadataUnsupported && (d.ContentIndex == nil || !shown[*d.ContentIndex]) {
			notes = append(notes, "- "+d.Message)
		}
	}
	if len(notes) > 0 {
		sections = append(sections, "## Notes\n\n"+strings.Join(notes, "\n"))
	}
	if r.IsError {
		head := fmt.Sprintf("The MCP tool %s reported an error (%s).", tool, CodeToolError)
		return Readable{Text: strings.Join(append([]string{head}, sections...), "\n\n"), IsError: true}
	}
	if len(sections) == 0 {
		return Readable{Text: EmptyResultText}
	}
	return Readable{Text: strings.Join(sections, "\n\n")}
}

// resourcesSection renders a result's resource links and embedded
// resources: a link by its name, URI, type and size (the model cannot
// read it; the user may attach it), an embedded text resource with its
// text, an embedded blob by its URI, type and size.
func resourcesSection(rs []ResultResource) string {
	if len(rs) == 0 {
		return ""
	}
	var lines, embedded []string
	for _, x := range rs {
		b := x.Block
		switch {
		case b.Type == BlockResourceLink && b.URI != nil && b.Name != nil:
			line := fmt.Sprintf("- %s <%s>", *b.Name, *b.URI)
			if b.Title != nil && *b.Title != "" && *b.Title != *b.Name {
				line = fmt.Sprintf("- %s (%s) <%s>", *b.Title, *b.Name, *b.URI)
			}
			lines = append(lines, line+kindAndSize(b.MimeType, b.Size)+describe(b.Description))
		case b.Type == BlockResource && b.Resource != nil && b.Resource.Text != nil:
			embedded = append(embedded, fmt.Sprintf("### %s%s\n\n%s", b.Resource.URI, kindAndSize(b.Resource.MimeType, nil), *b.Resource.Text))
		case b.Type == BlockResource && b.Resource != nil:
			size := b.Resource.Size
			lines = append(lines, fmt.Sprintf("- %s%s, embedded, not shown", b.Resource.URI, kindAndSize(b.Resource.MimeType, &size)))
		}
	}
	var out []string
	if len(lines) > 0 {
		out = append(out, "## Resources\n\n"+strings.Join(lines, "\n"))
	}
	if len(embedded) > 0 {
		out = append(out, "## Embedded resources\n\n"+strings.Join(embedded, "\n\n"))
	}
	return strings.Join(out, "\n\n")
}

func kindAndSize(mime *string, size *int64) string {
	var parts []string
	if mime != nil && *mime != "" {
		parts = append(parts, *mime)
	}
	if size != nil {
		parts = append(parts, fmt.Sprintf("%d bytes", *size))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

func describe(d *string) string {
	if d == nil || strings.TrimSpace(*d) == "" {
		return ""
	}
	return ": " + strings.TrimSpace(*d)
}

// rename replaces the ToolId in a message by the tool's title.
func (l ToolLabel) rename(msg string) string {
	if l.ToolID == "" {
		return msg
	}
	return strings.ReplaceAll(msg, string(l.ToolID), l.Title)
}

// sentence ends s with a full stop unless it ends a sentence already.
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || strings.HasSuffix(s, ".") || strings.HasSuffix(s, "!") || strings.HasSuffix(s, "?") {
		return s
	}
	return s + "."
}

// ---------------------------------------------------------------- JSON as Markdown

// jsonValue is a decoded JSON value that keeps its members' order: an
// object is members, an array elements, a scalar its JSON text.
type jsonValue struct {
	kind     byte // '{', '[', 's' string, 'n' number, 'b' true/false, '0' null
	scalar   string
	members  []jsonMember
	elements []jsonValue
}

type jsonMember struct {
	name  string
	value jsonValue
}

func decodeOrdered(text string) (jsonValue, bool) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	v, err := readValue(dec)
	if err != nil {
		return jsonValue{}, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return jsonValue{}, false // more than one value
	}
	return v, true
}

func readValue(dec *json.Decoder) (jsonValue, error) {
	tok, err := dec.Token()
	if err != nil {
		return jsonValue{}, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			v := jsonValue{kind: '{'}
			for dec.More() {
				name, err := dec.Token()
				if err != nil {
					return jsonValue{}, err
				}
				child, err := readValue(dec)
				if err != nil {
					return jsonValue{}, err
				}
				v.members = append(v.members, jsonMember{name: name.(string), value: child})
			}
			_, err := dec.Token()
			return v, err
		case '[':
			v := jsonValue{kind: '['}
			for dec.More() {
				child, err := readValue(dec)
				if err != nil {
					return jsonValue{}, err
				}
				v.elements = append(v.elements, child)
			}
			_, err := dec.Token()
			return v, err
		}
		return jsonValue{}, fmt.Errorf("unexpected %v", t)
	case string:
		return jsonValue{kind: 's', scalar: t}, nil
	case json.Number:
		return jsonValue{kind: 'n', scalar: t.String()}, nil
	case bool:
		return jsonValue{kind: 'b', scalar: fmt.Sprint(t)}, nil
	case nil:
		return jsonValue{kind: '0', scalar: "null"}, nil
	}
	return jsonValue{}, fmt.Errorf("unexpected %T", tok)
}

// renderJSON renders JSON text as Markdown: an object as a list of
// "- **name**: value", an array as a list of its elements, nested values
// indented below their name, a scalar as itself. Text that is not JSON is
// returned trimmed, as it is.
func renderJSON(text string) string {
	v, ok := decodeOrdered(text)
	if !ok {
		return strings.TrimSpace(text)
	}
	var b strings.Builder
	switch v.kind {
	case '{', '[':
		renderContainer(&b, v, "")
	default:
		b.WriteString(scalarText(v, ""))
	}
	return strings.TrimRight(b.String(), "\n")
}

func renderContainer(b *strings.Builder, v jsonValue, indent string) {
	item := func(label string, child jsonValue) {
		b.WriteString(indent + "- " + label)
		switch {
		case child.kind == '{' && len(child.members) == 0:
			b.WriteString(emptyLabel(label) + "(empty)\n")
		case child.kind == '[' && len(child.elements) == 0:
			b.WriteString(emptyLabel(label) + "(none)\n")
		case child.kind == '{' || child.kind == '[':
			b.WriteString("\n")
			renderContainer(b, child, indent+"  ")
		default:
			if label != "" {
				b.WriteString(" ")
			}
			b.WriteString(scalarText(child, indent+"  ") + "\n")
		}
	}
	if v.kind == '{' {
		for _, m := range v.members {
			item("**"+m.name+"**:", m.value)
		}
		return
	}
	for i, e := range v.elements {
		if e.kind == '{' || e.kind == '[' {
			item(fmt.Sprintf("**%d**:", i+1), e) // a nested value under its number
		} else {
			item("", e)
		}
	}
}

func emptyLabel(label string) string {
	if label == "" {
		return ""
	}
	return " "
}

// scalarText is a scalar as the model reads it: a string as itself (its
// later lines indented under its item), anything else as its JSON text.
func scalarText(v jsonValue, indent string) string {
	if v.kind != 's' {
		return v.scalar
	}
	return strings.ReplaceAll(v.scalar, "\n", "\n"+indent)
}

// sameJSON reports whether text is a serialisation of the JSON value in
// structured: the same value, numbers compared by value.
func sameJSON(text, structured string) bool {
	a, ok := decodeOrdered(text)
	if !ok {
		return false
	}
	b, ok := decodeOrdered(structured)
	return ok && equalJSON(a, b)
}

func equalJSON(a, b jsonValue) bool {
	if a.kind != b.kind {
		return false
	}
	switch a.kind {
	case '{':
		if len(a.members) != len(b.members) {
			return false
		}
		bm := make(map[string]jsonValue, len(b.members))
		for _, m := range b.members {
			bm[m.name] = m.value
		}
		for _, m := range a.members {
			o, ok := bm[m.name]
			if !ok || !equalJSON(m.value, o) {
				return false
			}
		}
		return true
	case '[':
		if len(a.elements) != len(b.elements) {
			return false
		}
		for i := range a.elements {
			if !equalJSON(a.elements[i], b.elements[i]) {
				return false
			}
		}
		return true
	case 'n':
		x, okx := new(big.Float).SetString(a.scalar)
		y, oky := new(big.Float).SetString(b.scalar)
		return okx && oky && x.Cmp(y) == 0
	}
	return a.scalar == b.scalar
}

// ---------------------------------------------------------------- long results

// Long-result rules (reference §7).
const (
	// PreviewChars is the prefix of a long result the model reads.
	PreviewChars = 3000
	// WrapChars is where a stored result's lines are wrapped for reading.
	WrapChars = 3000
	// ReaderToolName is the built-in tool that reads a stored result.
	ReaderToolName = "ttmcp_read_result"
)

// CountChars counts a text's Unicode characters (code points), as
// upstream's TextMetrics does.
func CountChars(s string) int { return utf8.RuneCountInString(s) }

// prefix returns the first n characters of s.
func prefix(s string, n int) string {
	i := 0
	for k := 0; k < n && i < len(s); k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i]
}

// StoredNote is what the model reads instead of a result of chars
// characters over limit: the counts, where the whole result is kept, how
// to read it (with the reader tool, when the model has it) and a prefix
// preview. resultID is empty when the result could not be kept (why says
// why).
func StoredNote(text string, chars, limit int, resultID string, readerTool bool, why string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "This MCP result is too large to include here (%d characters; inline limit %d).", chars, limit)
	switch {
	case resultID == "":
		fmt.Fprintf(&b, " ttmcp could not keep the complete result (%s): only the preview below is available.", why)
	case readerTool:
		fmt.Fprintf(&b, " The complete readable result is kept by ttmcp as result `%s`. Read it with the `%s` tool: "+
			`{"resultId": "%s", "startLine": 1}; each answer ends with the call that reads on. `+
			"Lines longer than %d characters are wrapped. Read only the parts you need.", resultID, ReaderToolName, resultID, WrapChars)
	default:
		fmt.Fprintf(&b, " The complete readable result is kept by ttmcp as result `%s`; no tool to read it is offered here, "+
			"but the user can open it from Recent calls in the MCP Manager.", resultID)
	}
	fmt.Fprintf(&b, "\n\n## Prefix preview\n\nThe first %d characters, cut without regard to lines or words; the rest is not shown here:\n\n%s",
		PreviewChars, prefix(text, PreviewChars))
	return b.String()
}

// WrapLines splits a stored result into the lines a reader reads: at each
// newline, and every WrapChars characters within a longer line.
func WrapLines(text string) []string {
	var out []string
	for line := range strings.SplitSeq(text, "\n") {
		for CountChars(line) > WrapChars {
			head := prefix(line, WrapChars)
			out = append(out, head)
			line = line[len(head):]
		}
		out = append(out, line)
	}
	return out
}

// ResultID names a stored result: a canonical UUID, also its file name.
type ResultID string

// NewResultID returns a new random id.
func NewResultID() ResultID { return ResultID(NewRegistrationID()) }

// ParseResultID accepts exactly the canonical form.
func ParseResultID(raw string) (ResultID, error) {
	if _, err := ParseRegistrationID(raw); err != nil {
		return "", invalid("mcp.result_id_invalid", "`%s` is not a stored result's id (a lowercase hyphenated UUID)", raw)
	}
	return ResultID(raw), nil
}

// StoredResult is a readable result kept for a reader (the model's
// ttmcp_read_result, the user's Recent calls).
type StoredResult struct {
	ID             ResultID
	RegistrationID RegistrationID
	Text           string
	Time           time.Time // when it was kept
}
