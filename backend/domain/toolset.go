package domain

import (
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
)

// A tool set (SPEC §10, "Tool sets") is the MCP part of the seeds' Agent
// Profile, for SillyTavern's generation: a named selection of tools, by
// ToolId or whole servers, with description overrides that win over the
// registration's (reference §5.2) and the inline size limit of results.
// Selecting a tool never grants it: a selected tool that is Off or on a
// paused server is not offered (the resolver says why).

// ToolSetID identifies a tool set: a canonical UUID, also its file name.
type ToolSetID string

// NewToolSetID returns a new random (version 4) id.
func NewToolSetID() ToolSetID { return ToolSetID(uuid.New().String()) }

// ParseToolSetID accepts exactly the canonical form (see
// ParseRegistrationID: two spellings would name two files).
func ParseToolSetID(raw string) (ToolSetID, error) {
	if _, err := ParseRegistrationID(raw); err != nil {
		return "", invalid("mcp.tool_set_id_invalid", "`%s` is not a canonical tool set id (a lowercase hyphenated UUID)", raw)
	}
	return ToolSetID(raw), nil
}

// Tool set rules.
const (
	// DefaultResultInlineCharLimit is the inline limit of a result when
	// nothing sets another (upstream's Profile default).
	DefaultResultInlineCharLimit = 50_000
	// MaxResultInlineCharLimit bounds the limit: a response body is at
	// most 4 MiB, so a larger limit would only mean "never".
	MaxResultInlineCharLimit = 16 << 20
	// MaxToolSetNameChars bounds a set's name (it is shown in a menu).
	MaxToolSetNameChars = 100
	// MaxToolSetTools bounds a set's selection: four times the most tools
	// a catalog may hold.
	MaxToolSetTools = 2048
)

// AllTools is the native-name part of a selector that takes a whole
// server: "mcp/<uuid>:*". A tool whose native name is "*" itself can
// therefore only be selected with its server (docs/DECISIONS.md).
const AllTools = "*"

// ToolSelector is one entry of a set's selection: one tool, or every
// permitted tool of a server (All).
type ToolSelector struct {
	Registration RegistrationID
	NativeName   string // AllTools when All
	All          bool
}

// ParseToolSelector accepts a ToolId or "mcp/<uuid>:*".
func ParseToolSelector(raw string) (ToolSelector, error) {
	if rest, ok := strings.CutSuffix(raw, ":"+AllTools); ok {
		if id, found := strings.CutPrefix(rest, providerPrefix); found {
			if rid, err := ParseRegistrationID(id); err == nil {
				return ToolSelector{Registration: rid, NativeName: AllTools, All: true}, nil
			}
		}
	}
	id, name, err := ParseToolID(raw)
	if err != nil {
		return ToolSelector{}, err
	}
	return ToolSelector{Registration: id, NativeName: name}, nil
}

// String returns the selector as written.
func (s ToolSelector) String() string { return s.Registration.ProviderID() + ":" + s.NativeName }

// ToolSet is a named selection of tools (see above).
type ToolSet struct {
	ID   ToolSetID
	Name string
	// Tools in the user's order: it decides which tools are left out when
	// a provider's tool limit is reached (docs/DECISIONS.md).
	Tools []ToolSelector
	// Overrides are keyed by ToolId; each applies after the registration's.
	Overrides             map[ToolID]DescriptionOverride
	ResultInlineCharLimit int
	// ReaderTool offers ttmcp_read_result with the set's tools, so the
	// model can read a result too long to include.
	ReaderTool bool
	// Search says how the set's tools reach the model (issue 31): every
	// schema, or a small constant set that searches them. Its zero value
	// is "every schema", so files written before it read as they did.
	Search ToolSearchSettings
}

// ToolMode is how a set's tools reach the model (issue 31).
type ToolMode string

// The tool modes. The zero value is ToolModeAll (files written before
// issue 31 have no mode and mean it).
const (
	// ToolModeAll offers every schema, as before issue 31.
	ToolModeAll ToolMode = ""
	// ToolModeSearch offers the constant set: search, details, call, the
	// reader, and the pinned tools.
	ToolModeSearch ToolMode = "search"
	// ToolModeAutomatic offers every schema until they pass the budget
	// (MaxTools, or ContextPercent of the model's context), then searches.
	ToolModeAutomatic ToolMode = "automatic"
)

// Bounds and defaults of the search settings. The defaults follow the
// MCP client best-practices' "a small share of the context" and VS Code's
// grouping above 64 tools: 40 tools or 10 % of the context.
const (
	DefaultSearchMaxTools       = 40
	DefaultSearchContextPercent = 10
	MaxPinnedTools              = 32
)

// ToolSearchSettings is the search part of a set. Zero budgets mean the
// defaults (and are what the file keeps for them, so a set that never
// touched search writes no search member at all).
type ToolSearchSettings struct {
	Mode ToolMode
	// MaxTools: automatic mode searches once more tools than this would be
	// offered; 0 is DefaultSearchMaxTools.
	MaxTools int
	// ContextPercent: automatic mode searches once the schemas' estimated
	// tokens pass this share of the model's context; 0 is the default.
	ContextPercent int
	// Pinned tools are offered with the constant set in search mode, in
	// this order; each must be one the set selects.
	Pinned []ToolID
}

// ParseToolMode accepts "all", "search", "automatic" (and "" for all).
func ParseToolMode(raw string) (ToolMode, error) {
	switch raw {
	case "", "all":
		return ToolModeAll, nil
	case string(ToolModeSearch), string(ToolModeAutomatic):
		return ToolMode(raw), nil
	}
	return "", invalid("mcp.tool_set_mode_invalid", "toolMode must be all, search or automatic, not `%s`", raw)
}

// String returns the mode as the page names it ("all" for the zero value).
func (m ToolMode) String() string {
	if m == ToolModeAll {
		return "all"
	}
	return string(m)
}

// EffectiveMaxTools and EffectiveContextPercent resolve the defaults.
func (s ToolSearchSettings) EffectiveMaxTools() int {
	if s.MaxTools == 0 {
		return DefaultSearchMaxTools
	}
	return s.MaxTools
}

// EffectiveContextPercent: see EffectiveMaxTools.
func (s ToolSearchSettings) EffectiveContextPercent() int {
	if s.ContextPercent == 0 {
		return DefaultSearchContextPercent
	}
	return s.ContextPercent
}

// Normalized stores a default budget as zero, so that writing the
// defaults writes nothing.
func (s ToolSearchSettings) Normalized() ToolSearchSettings {
	if s.MaxTools == DefaultSearchMaxTools {
		s.MaxTools = 0
	}
	if s.ContextPercent == DefaultSearchContextPercent {
		s.ContextPercent = 0
	}
	return s
}

// validate checks the settings against the set that holds them.
func (s ToolSearchSettings) validate(ts ToolSet) error {
	if _, err := ParseToolMode(string(s.Mode)); err != nil || s.Mode == "all" {
		return invalid("mcp.tool_set_mode_invalid", "toolMode must be all, search or automatic, not `%s`", s.Mode)
	}
	if s.MaxTools < 0 || s.MaxTools > MaxToolSetTools {
		return invalid("mcp.tool_set_search_budget_invalid", "searchMaxTools must be 1 to %d, not %d", MaxToolSetTools, s.MaxTools)
	}
	if s.ContextPercent < 0 || s.ContextPercent > 100 {
		return invalid("mcp.tool_set_search_budget_invalid", "searchContextPercent must be 1 to 100, not %d", s.ContextPercent)
	}
	if len(s.Pinned) > MaxPinnedTools {
		return invalid("mcp.tool_set_pinned_invalid", "a tool set pins at most %d tools, not %d", MaxPinnedTools, len(s.Pinned))
	}
	seen := make(map[ToolID]bool, len(s.Pinned))
	for _, id := range s.Pinned {
		if _, name, err := ParseToolID(string(id)); err != nil {
			return err
		} else if name == AllTools {
			return invalid("mcp.tool_set_pinned_invalid", "`%s` names a whole server; pins are per tool", id)
		}
		if seen[id] {
			return invalid("mcp.tool_set_pinned_invalid", "`%s` is pinned twice", id)
		}
		seen[id] = true
		if !ts.Selects(id) {
			return invalid("mcp.tool_set_pinned_invalid", "`%s` is pinned but the set does not select it", id)
		}
	}
	return nil
}

// ParseToolSetName trims a name and checks it.
func ParseToolSetName(raw string) (string, error) {
	name := strings.TrimSpace(raw)
	switch {
	case name == "":
		return "", invalid("mcp.tool_set_name_empty", "a tool set needs a name")
	case utf8.RuneCountInString(name) > MaxToolSetNameChars:
		return "", invalid("mcp.tool_set_name_too_long", "a tool set's name is at most %d characters", MaxToolSetNameChars)
	}
	return name, nil
}

// ParseToolSelection checks a selection: ToolIds or whole servers, each
// once, at most MaxToolSetTools.
func ParseToolSelection(raw []string) ([]ToolSelector, error) {
	if len(raw) > MaxToolSetTools {
		return nil, invalid("mcp.tool_set_too_many_tools", "a tool set selects at most %d tools or servers, not %d", MaxToolSetTools, len(raw))
	}
	out := make([]ToolSelector, 0, len(raw))
	seen := make(map[string]bool, len(raw))
	for _, s := range raw {
		sel, err := ParseToolSelector(s)
		if err != nil {
			return nil, err
		}
		if seen[s] {
			return nil, invalid("mcp.tool_set_tool_duplicate", "`%s` is selected twice", s)
		}
		seen[s] = true
		out = append(out, sel)
	}
	return out, nil
}

// Selects reports whether the set's selection names id, by itself or
// with its whole server.
func (ts ToolSet) Selects(id ToolID) bool {
	rid, name, err := ParseToolID(string(id))
	if err != nil {
		return false
	}
	for _, s := range ts.Tools {
		if s.Registration == rid && (s.All || s.NativeName == name) {
			return true
		}
	}
	return false
}

// Validate checks every rule of a set: id, name, selection, overrides (a
// ToolId the set selects, overriding something), the limit (> 0, as
// upstream's agent.profile_mcp_result_inline_char_limit_invalid). Storage
// runs it on every file it loads.
func (ts ToolSet) Validate() error {
	if _, err := ParseToolSetID(string(ts.ID)); err != nil {
		return err
	}
	if name, err := ParseToolSetName(ts.Name); err != nil {
		return err
	} else if name != ts.Name {
		return invalid("mcp.tool_set_name_untrimmed", "the name `%s` has white space around it", ts.Name)
	}
	raw := make([]string, len(ts.Tools))
	for i, s := range ts.Tools {
		raw[i] = s.String()
	}
	if _, err := ParseToolSelection(raw); err != nil {
		return err
	}
	for _, id := range slices.Sorted(maps.Keys(ts.Overrides)) {
		_, name, err := ParseToolID(string(id))
		if err != nil {
			return err
		}
		if name == AllTools {
			return invalid("mcp.tool_set_override_unselected", "`%s` names a whole server; overrides are per tool", id)
		}
		if !ts.Selects(id) {
			return invalid("mcp.tool_set_override_unselected", "`%s` has a description override but the set does not select it", id)
		}
		if err := ts.Overrides[id].Validate(string(id)); err != nil {
			return err
		}
	}
	if err := ts.Search.validate(ts); err != nil {
		return err
	}
	return ValidateResultInlineCharLimit(ts.ResultInlineCharLimit)
}

// ValidateResultInlineCharLimit checks an inline limit: 1 to
// MaxResultInlineCharLimit characters.
func ValidateResultInlineCharLimit(limit int) error {
	if limit <= 0 || limit > MaxResultInlineCharLimit {
		return invalid("mcp.tool_set_result_inline_char_limit_invalid",
			"resultInlineCharLimit must be greater than 0 and at most %d, not %d", MaxResultInlineCharLimit, limit)
	}
	return nil
}

// Clone returns a deep copy of ts.
func (ts ToolSet) Clone() ToolSet {
	c := ts
	c.Tools = slices.Clone(ts.Tools)
	c.Search.Pinned = slices.Clone(ts.Search.Pinned)
	if ts.Overrides != nil {
		c.Overrides = make(map[ToolID]DescriptionOverride, len(ts.Overrides))
		for id, o := range ts.Overrides {
			c.Overrides[id] = o.clone()
		}
	}
	return c
}
