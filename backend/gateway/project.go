package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// projectTyped projects a result go-sdk decoded, through its JSON: one
// projection for every path.
func projectTyped(res *mcp.CallToolResult) *domain.ToolResult {
	raw, err := json.Marshal(res)
	if err == nil {
		if out, ok := projectRaw(raw); ok && out.Result != nil {
			return out.Result
		}
	}
	return &domain.ToolResult{IsError: res.IsError, TextBlocks: []domain.TextBlock{}, Diagnostics: []domain.CallDiagnostic{}}
}

// projectRaw projects a tools/call result (reference §4.4): text blocks
// with their indexes; a diagnostic for every block of another kind and for
// result metadata; the structured content as deterministic JSON. Results
// that ask for more (input_required, a task) or are not tool results are
// unsupported responses: the host does not drive them further.
func projectRaw(result json.RawMessage) (domain.CallOutcome, bool) {
	var r struct {
		ResultType        *string           `json:"resultType"`
		Content           []json.RawMessage `json:"content"`
		StructuredContent json.RawMessage   `json:"structuredContent"`
		IsError           *bool             `json:"isError"`
		Meta              json.RawMessage   `json:"_meta"`
		Task              json.RawMessage   `json:"task"`
	}
	if err := json.Unmarshal(result, &r); err != nil {
		return unsupported("other", "The server returned a response type that ttmcp does not support"), true
	}
	switch {
	case r.ResultType != nil && *r.ResultType == "input_required":
		return unsupported("input_required", "The server requested additional input; ttmcp did not continue the call"), true
	case present(r.Task) || r.ResultType != nil && *r.ResultType == "task":
		return unsupported("task", "The server created a task; ttmcp did not poll or continue it"), true
	case r.ResultType != nil && *r.ResultType != "complete", r.Content == nil:
		return unsupported("other", "The server returned a response type that ttmcp does not support"), true
	}
	out := &domain.ToolResult{TextBlocks: []domain.TextBlock{}, Diagnostics: []domain.CallDiagnostic{}}
	if r.IsError != nil {
		out.IsError = *r.IsError
	}
	for i, raw := range r.Content {
		var b struct {
			Type     string  `json:"type"`
			Text     *string `json:"text"`
			MIMEType string  `json:"mimeType"`
			Data     string  `json:"data"`
			Size     *int64  `json:"size"`
			Resource *struct {
				Text *string `json:"text"`
				Blob *string `json:"blob"`
			} `json:"resource"`
		}
		json.Unmarshal(raw, &b) // a block that is not an object is an unknown one
		unsupportedBlock := func(format string, args ...any) {
			index := i
			out.Diagnostics = append(out.Diagnostics, domain.CallDiagnostic{Code: CodeCallContentUnsupported, Message: fmt.Sprintf(format, args...), ContentIndex: &index})
		}
		if b.Type == "resource" || b.Type == "resource_link" {
			// Shown to the user (ttmcp's addition); the diagnostic below
			// stays as upstream reports the block.
			var w wireBlock
			if json.Unmarshal(raw, &w) == nil {
				if res, ok := domain.ProjectResultResource(i, w.domain()); ok {
					out.Resources = append(out.Resources, res)
				}
			}
		}
		switch b.Type {
		case "text":
			if b.Text == nil {
				unsupportedBlock("Unknown content type is not supported")
				continue
			}
			out.TextBlocks = append(out.TextBlocks, domain.TextBlock{Index: i, Text: *b.Text})
		case "image":
			unsupportedBlock("Image content (%s, %d encoded bytes) is not supported", b.MIMEType, len(b.Data))
		case "audio":
			unsupportedBlock("Audio content (%s, %d encoded bytes) is not supported", b.MIMEType, len(b.Data))
		case "resource":
			switch {
			case b.Resource != nil && b.Resource.Text != nil:
				unsupportedBlock("Embedded resource content (%d encoded bytes) is not supported", len(*b.Resource.Text))
			case b.Resource != nil && b.Resource.Blob != nil:
				unsupportedBlock("Embedded resource content (%d encoded bytes) is not supported", len(*b.Resource.Blob))
			default:
				unsupportedBlock("Embedded resource content is not supported")
			}
		case "resource_link":
			if b.Size != nil {
				unsupportedBlock("Resource link (%d bytes) is not supported", *b.Size)
			} else {
				unsupportedBlock("Resource link content is not supported")
			}
		default:
			unsupportedBlock("Unknown content type is not supported")
		}
	}
	if toolMeta(r.Meta) {
		out.Diagnostics = append(out.Diagnostics, domain.CallDiagnostic{Code: CodeCallMetadataUnsupported, Message: "Result metadata is not supported"})
	}
	if present(r.StructuredContent) {
		s, err := deterministicJSON(r.StructuredContent)
		if err == nil {
			out.StructuredJSON = &s
		}
	}
	return domain.CallOutcome{Outcome: domain.OutcomeKnownResponse, Result: out}, true
}

func unsupported(responseType, message string) domain.CallOutcome {
	return domain.CallOutcome{Outcome: domain.OutcomeKnownResponse, Unsupported: &domain.UnsupportedResponse{ResponseType: responseType, Message: message}}
}

// toolMeta reports whether a result carries metadata of the tool's own.
// The keys under io.modelcontextprotocol/ belong to the protocol (a 2026
// server annotates every result with its serverInfo there) and are not the
// tool's result metadata.
func toolMeta(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return present(raw)
	}
	for k := range m {
		if !strings.HasPrefix(k, "io.modelcontextprotocol/") {
			return true
		}
	}
	return false
}

// present reports whether a raw member was sent with a non-null value.
func present(raw json.RawMessage) bool {
	b := bytes.TrimSpace(raw)
	return len(b) > 0 && string(b) != "null"
}

// deterministicJSON re-encodes JSON with object keys sorted and a 2-space
// indent, keeping numbers exactly as sent and <, >, & unescaped.
func deterministicJSON(raw json.RawMessage) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return string(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), nil
}
