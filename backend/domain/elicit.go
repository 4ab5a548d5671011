package domain

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/mail"
	"net/url"
	"slices"
	"time"
	"unicode/utf8"
)

// Elicitation (SPEC §10): during a call a server asks the user something —
// a form to fill (form mode) or a page to open (URL mode). The page that
// made the call answers; the gateway carries the question and the answer.

// ElicitRequest is a server's question, as sent.
type ElicitRequest struct {
	Mode            string          // ElicitForm or ElicitURL
	Message         string          // what the server says to the user
	RequestedSchema json.RawMessage // form mode: the requested schema, as sent
	URL             string          // URL mode
	ElicitationID   string          // URL mode: the server's id of it
	// Error says why the previous answer to this same question was
	// refused (it did not fit the schema): the user is asked again.
	Error string
	// Resend marks a page the server wants the user to finish before it
	// takes the call at all (URL elicitation required, -32042): accept
	// says the user is done there, and the call is then sent once more.
	Resend bool
}

// Elicitation modes.
const (
	ElicitForm = "form"
	ElicitURL  = "url"
)

// ElicitResponse is the user's answer.
type ElicitResponse struct {
	Action  string          // ElicitAccept, ElicitDecline or ElicitCancel
	Content json.RawMessage // accept in form mode: an object matching the schema
}

// Elicitation actions.
const (
	ElicitAccept  = "accept"
	ElicitDecline = "decline"
	ElicitCancel  = "cancel"
)

// ErrElicitTimedOut is what an ElicitFunc returns when the user did not
// answer in time: the question is answered cancel, and recorded so.
var ErrElicitTimedOut = errors.New("the user did not answer in time")

// ElicitFunc asks the user a server's question and returns the answer. It
// is set on a call only when the page that made it has a handler.
type ElicitFunc func(ctx context.Context, req ElicitRequest) (ElicitResponse, error)

// ElicitRecord is one question of a call, for the audit log: its mode and
// how it ended (an action, or ElicitTimedOut / ElicitInvalid when the
// backend answered cancel itself). Never what the user entered.
type ElicitRecord struct {
	Mode   string
	Action string
}

// What the backend answered for the user.
const (
	ElicitTimedOut = "timeout" // the user did not answer in time
	ElicitInvalid  = "invalid" // the question or the answers did not fit the schema subset
	// ElicitLimited: the call, or its server within the last minute, had
	// asked as many questions as ttmcp puts to a user; this one and every
	// later one of the call were answered cancel without asking (one
	// record stands for them all).
	ElicitLimited = "limited"
)

// Bounds of one question as sent, checked before anything that recurses
// decodes it (go-sdk's decoder gives up at 1,000 levels and takes the
// whole message with it; DECISIONS "Elicitation"). A form within the
// specification's subset nests 7 levels (params, requestedSchema,
// properties, a property, items, anyOf, an option) and a large one is a
// few KiB.
const (
	MaxElicitParamsBytes = 64 << 10
	MaxElicitDepth       = 16
)

// CheckElicitParams reports why a question's params (or a requested
// schema) are beyond the bounds, or nil. It does not recurse.
func CheckElicitParams(raw []byte) error {
	if len(raw) > MaxElicitParamsBytes {
		return fmt.Errorf("the question is larger than %d KiB", MaxElicitParamsBytes>>10)
	}
	if DepthOver(raw, MaxElicitDepth) {
		return fmt.Errorf("the question nests more than %d levels deep", MaxElicitDepth)
	}
	return nil
}

// ElicitSchema is a requested schema as ttmcp renders and checks it: a flat
// object of primitive properties (the specification's subset).
type ElicitSchema struct {
	Properties map[string]ElicitProperty
	Required   []string
}

// ElicitProperty is one field of a form.
type ElicitProperty struct {
	Type      string // string, number, integer, boolean, or array (multi-select)
	Format    string // strings: email, uri, date, date-time
	MinLength *int
	MaxLength *int
	Minimum   *float64
	Maximum   *float64
	Enum      []string // single-select (enum, or oneOf of const) or the items of a multi-select
	MinItems  *int
	MaxItems  *int
}

// ParseElicitSchema checks a requested schema: a JSON object with
// "type":"object" and "properties" of primitive types, as the
// specification restricts it (no nesting, no references).
func ParseElicitSchema(raw json.RawMessage) (ElicitSchema, error) {
	if err := CheckElicitParams(raw); err != nil {
		return ElicitSchema{}, err
	}
	var top struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if err := json.Unmarshal(raw, &top); err != nil || top.Type != "object" {
		return ElicitSchema{}, fmt.Errorf("the requested schema is not an object schema")
	}
	s := ElicitSchema{Properties: map[string]ElicitProperty{}, Required: top.Required}
	for name, prop := range top.Properties {
		p, err := parseElicitProperty(prop)
		if err != nil {
			return ElicitSchema{}, fmt.Errorf("property %q: %v", name, err)
		}
		s.Properties[name] = p
	}
	for _, r := range s.Required {
		if _, ok := s.Properties[r]; !ok {
			return ElicitSchema{}, fmt.Errorf("required property %q is not defined", r)
		}
	}
	return s, nil
}

func parseElicitProperty(raw json.RawMessage) (ElicitProperty, error) {
	var p struct {
		Type      string   `json:"type"`
		Format    string   `json:"format"`
		MinLength *int     `json:"minLength"`
		MaxLength *int     `json:"maxLength"`
		Minimum   *float64 `json:"minimum"`
		Maximum   *float64 `json:"maximum"`
		Enum      []string `json:"enum"`
		OneOf     []struct {
			Const *string `json:"const"`
		} `json:"oneOf"`
		MinItems *int `json:"minItems"`
		MaxItems *int `json:"maxItems"`
		Items    *struct {
			Type  string   `json:"type"`
			Enum  []string `json:"enum"`
			AnyOf []struct {
				Const *string `json:"const"`
			} `json:"anyOf"`
		} `json:"items"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return ElicitProperty{}, fmt.Errorf("not a property schema")
	}
	out := ElicitProperty{Type: p.Type, Format: p.Format, MinLength: p.MinLength, MaxLength: p.MaxLength,
		Minimum: p.Minimum, Maximum: p.Maximum, MinItems: p.MinItems, MaxItems: p.MaxItems}
	switch p.Type {
	case "string":
		out.Enum = p.Enum
		for _, o := range p.OneOf {
			if o.Const == nil {
				return ElicitProperty{}, fmt.Errorf("a oneOf option without const")
			}
			out.Enum = append(out.Enum, *o.Const)
		}
		switch p.Format {
		case "", "email", "uri", "date", "date-time":
		default:
			return ElicitProperty{}, fmt.Errorf("format %q is not one of email, uri, date, date-time", p.Format)
		}
	case "number", "integer", "boolean":
	case "array":
		if p.Items == nil || p.Items.Type != "string" && p.Items.Type != "" {
			return ElicitProperty{}, fmt.Errorf("a multi-select's items must be string enums")
		}
		out.Enum = p.Items.Enum
		for _, o := range p.Items.AnyOf {
			if o.Const == nil {
				return ElicitProperty{}, fmt.Errorf("an anyOf option without const")
			}
			out.Enum = append(out.Enum, *o.Const)
		}
		if len(out.Enum) == 0 {
			return ElicitProperty{}, fmt.Errorf("a multi-select without options")
		}
	default:
		return ElicitProperty{}, fmt.Errorf("type %q is not string, number, integer, boolean or a multi-select array", p.Type)
	}
	return out, nil
}

// Check reports why content does not fit s, or nil: an object with only
// the properties s defines, every required one present, each value of its
// type and within its bounds, options among the enum.
func (s ElicitSchema) Check(content json.RawMessage) error {
	var values map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(content))
	dec.UseNumber()
	if err := dec.Decode(&values); err != nil || values == nil {
		return fmt.Errorf("the answer is not an object")
	}
	for _, r := range s.Required {
		if v, ok := values[r]; !ok || string(v) == "null" {
			return fmt.Errorf("%s is required", r)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(values)) {
		p, ok := s.Properties[name]
		if !ok {
			return fmt.Errorf("%s is not a field of this form", name)
		}
		if err := p.check(values[name]); err != nil {
			return fmt.Errorf("%s: %v", name, err)
		}
	}
	return nil
}

func (p ElicitProperty) check(raw json.RawMessage) error {
	switch p.Type {
	case "string":
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return fmt.Errorf("expected text")
		}
		n := utf8.RuneCountInString(s)
		if p.MinLength != nil && n < *p.MinLength {
			return fmt.Errorf("at least %d characters", *p.MinLength)
		}
		if p.MaxLength != nil && n > *p.MaxLength {
			return fmt.Errorf("at most %d characters", *p.MaxLength)
		}
		if len(p.Enum) > 0 && !slices.Contains(p.Enum, s) {
			return fmt.Errorf("%q is not one of the options", s)
		}
		return checkFormat(p.Format, s)
	case "number", "integer":
		var n json.Number
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if dec.Decode(&n) != nil {
			return fmt.Errorf("expected a number")
		}
		f, err := n.Float64()
		if err != nil || math.IsInf(f, 0) {
			return fmt.Errorf("expected a number")
		}
		if p.Type == "integer" && f != math.Trunc(f) {
			return fmt.Errorf("expected a whole number")
		}
		if p.Minimum != nil && f < *p.Minimum {
			return fmt.Errorf("at least %v", *p.Minimum)
		}
		if p.Maximum != nil && f > *p.Maximum {
			return fmt.Errorf("at most %v", *p.Maximum)
		}
	case "boolean":
		var b bool
		if json.Unmarshal(raw, &b) != nil {
			return fmt.Errorf("expected true or false")
		}
	case "array":
		var items []string
		if json.Unmarshal(raw, &items) != nil {
			return fmt.Errorf("expected a list of options")
		}
		for _, it := range items {
			if !slices.Contains(p.Enum, it) {
				return fmt.Errorf("%q is not one of the options", it)
			}
		}
		if p.MinItems != nil && len(items) < *p.MinItems {
			return fmt.Errorf("choose at least %d", *p.MinItems)
		}
		if p.MaxItems != nil && len(items) > *p.MaxItems {
			return fmt.Errorf("choose at most %d", *p.MaxItems)
		}
	}
	return nil
}

func checkFormat(format, s string) error {
	switch format {
	case "email":
		if a, err := mail.ParseAddress(s); err != nil || a.Address != s {
			return fmt.Errorf("expected an e-mail address")
		}
	case "uri":
		if u, err := url.Parse(s); err != nil || u.Scheme == "" {
			return fmt.Errorf("expected an absolute URI")
		}
	case "date":
		if _, err := time.Parse(time.DateOnly, s); err != nil {
			return fmt.Errorf("expected a date (YYYY-MM-DD)")
		}
	case "date-time":
		if _, err := time.Parse(time.RFC3339, s); err != nil {
			return fmt.Errorf("expected a date and time (RFC 3339)")
		}
	}
	return nil
}
