package domain

import (
	"strings"

	wuerrors "github.com/nlnwa/whatwg-url/errors"
	wuurl "github.com/nlnwa/whatwg-url/url"
)

// Endpoint is the normalised URL of an MCP server's Streamable HTTP
// endpoint. The zero Endpoint is invalid; valid ones come from
// ParseEndpoint, and two Endpoints are equal (==) exactly when their
// normalised URLs are.
type Endpoint struct {
	url string
}

// urlParser is a WHATWG URL parser (the algorithm of Rust's url crate,
// which upstream uses). It keeps no state between parses.
var urlParser = wuurl.NewParser()

// ParseEndpoint trims raw and parses it as a WHATWG URL, then checks, in
// upstream's order: an absolute URL with a host
// (mcp.endpoint_absolute_required), no fragment, not even an empty one
// (mcp.endpoint_fragment_forbidden), and the http or https scheme
// (mcp.endpoint_scheme_invalid). The endpoint is the URL's serialisation:
// scheme and host lowercased, IDN hosts in punycode, IP addresses in
// canonical form, default port dropped, dot segments resolved, an empty
// path as "/", percent-encoding as a browser writes it; userinfo and query
// are kept.
//
// Parse failures are mcp.endpoint_invalid with the text Rust's url crate
// gives the same failure ("relative URL without a base", "empty host", ...),
// so messages read as upstream's.
func ParseEndpoint(raw string) (Endpoint, error) {
	u, err := urlParser.Parse(strings.TrimSpace(raw))
	if err != nil {
		return Endpoint{}, invalid("mcp.endpoint_invalid", "%s", urlErrorText(err))
	}
	// A file: URL has the empty host, which upstream's parser reports as no
	// host at all: file:///tmp/mcp fails here, before the scheme check.
	if u.OpaquePath() || u.Hostname() == "" {
		return Endpoint{}, invalid("mcp.endpoint_absolute_required", "endpoint must be an absolute HTTP(S) URL")
	}
	// Hash() is "" for both no fragment and an empty one ("http://x/#");
	// only the serialisation tells them apart.
	if u.Href(true) != u.Href(false) {
		return Endpoint{}, invalid("mcp.endpoint_fragment_forbidden", "endpoint cannot contain a fragment")
	}
	if s := u.Scheme(); s != "http" && s != "https" {
		return Endpoint{}, invalid("mcp.endpoint_scheme_invalid", "endpoint must use HTTP or HTTPS")
	}
	return Endpoint{url: u.Href(false)}, nil
}

// String returns the normalised URL, "" for the zero Endpoint.
func (e Endpoint) String() string { return e.url }

// IsZero reports whether e is the zero Endpoint.
func (e Endpoint) IsZero() bool { return e.url == "" }

// urlErrorText maps a WHATWG parse failure to the message Rust's url crate
// (url::ParseError's Display) gives it.
func urlErrorText(err error) string {
	switch t := wuerrors.Type(err); t {
	case wuerrors.MissingSchemeNonRelativeURL:
		return "relative URL without a base"
	case wuerrors.HostMissing, wuerrors.InvalidCredentials:
		// "http://", "http://:80/", "http://user@/".
		return "empty host"
	case wuerrors.PortInvalid, wuerrors.PortOutOfRange, wuerrors.PortMissing:
		return "invalid port number"
	case wuerrors.DomainToASCII, wuerrors.DomainInvalidCodePoint:
		// url ≥ 2.5 leaves forbidden code points to IDNA's URL deny list.
		return "invalid international domain name"
	case wuerrors.HostInvalidCodePoint:
		return "invalid domain character"
	case wuerrors.IPv4EmptyPart, wuerrors.IPv4TooManyParts, wuerrors.IPv4NonNumericPart,
		wuerrors.IPv4NonDecimalPart, wuerrors.IPv4OutOfRangePart:
		return "invalid IPv4 address"
	case wuerrors.IPv6Unclosed, wuerrors.IPv6InvalidCompression, wuerrors.IPv6TooManyPieces,
		wuerrors.IPv6MultipleCompression, wuerrors.IPv6InvalidCodePoint, wuerrors.IPv6TooFewPieces,
		wuerrors.IPv4InIPv6TooManyPieces, wuerrors.IPv4InIPv6InvalidCodePoint,
		wuerrors.IPv4InIPv6OutOfRangePart, wuerrors.IPv4InIPv6TooFewParts:
		return "invalid IPv6 address"
	case "":
		return err.Error()
	default:
		return strings.ToLower(string(t[:1])) + string(t[1:])
	}
}
