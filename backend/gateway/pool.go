package gateway

import (
	"container/list"
	"crypto/sha256"
	"crypto/tls"
	"maps"
	"net"
	"net/http"
	"slices"
	"sync"
)

// The connection pool: sessions are short-lived (one per operation), but
// the HTTP connections under them are kept, so a warm operation pays only
// the protocol's round trips and no TCP or TLS handshake.
//
// A connection may carry state beyond its address: a proxy tunnel and the
// proxy's credentials, the TLS session (client certificate, resumption
// tickets), and for servers that authenticate a connection rather than a
// request (NTLM, Negotiate, some gateways) the identity its first request
// presented. So sessions share connections only when everything that
// could differ between them is equal: the profile below. Requests stay
// per session: the headers, the response cap and the sent/unknown trace
// are added by each session's own RoundTripper (transport.go).

// Pool bounds.
const (
	maxProfiles        = 32 // kept transports; the least recently used is dropped beyond
	maxIdlePerHost     = 4  // kept idle connections per server address and profile
	maxIdlePerProfile  = 16 // over all addresses of a profile
	tlsSessionsPerPool = 64 // TLS resumption tickets per profile
)

// profile is what a connection's state may depend on besides its address
// (which http.Transport keys itself, with the proxy URL). A registration's
// headers are part of it, and so is its sign-in (the registration that
// holds the bearer token: stable across refreshes, distinct between
// registrations); a future per-registration proxy or TLS client
// certificate must be added here.
type profile struct {
	headers  [sha256.Size]byte // digest of the registration's compiled headers
	identity string            // the signed-in registration's id, "" without a bearer token
}

// profileOf returns the profile of a session sending headers.
func profileOf(headers http.Header) profile {
	h := sha256.New()
	for _, name := range slices.Sorted(maps.Keys(headers)) {
		for _, v := range headers[name] {
			h.Write([]byte(name))
			h.Write([]byte{0})
			h.Write([]byte(v))
			h.Write([]byte{0})
		}
	}
	var p profile
	h.Sum(p.headers[:0])
	return p
}

// pool keeps one http.Transport per profile, at most maxProfiles of them.
type pool struct {
	cfg   Config
	mu    sync.Mutex
	byKey map[profile]*list.Element // of *pooled
	lru   *list.List                // most recently used first
}

type pooled struct {
	key profile
	t   *http.Transport
}

func newPool(cfg Config) *pool {
	return &pool{cfg: cfg, byKey: map[profile]*list.Element{}, lru: list.New()}
}

// transport returns the kept transport of p, creating it when needed.
func (p *pool) transport(key profile) *http.Transport {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e, ok := p.byKey[key]; ok {
		p.lru.MoveToFront(e)
		return e.Value.(*pooled).t
	}
	t := p.newTransport()
	p.byKey[key] = p.lru.PushFront(&pooled{key, t})
	for p.lru.Len() > maxProfiles {
		old := p.lru.Remove(p.lru.Back()).(*pooled)
		delete(p.byKey, old.key)
		// Connections in use finish their exchange; once idle, the idle
		// timeout closes them.
		old.t.CloseIdleConnections()
	}
	return t
}

// newTransport is the HTTP profile of SPEC §6 with kept connections: the
// connect timeout, the proxy from the environment, HTTP/2 where the server
// offers it (parallel sessions multiplex over one connection), TLS session
// resumption, and a bounded idle pool. No ResponseHeaderTimeout: a go-sdk
// server sends its headers with the first event, so it would cap how long
// a tool may run; deadlines come from contexts instead.
func (p *pool) newTransport() *http.Transport {
	tlsConfig := p.cfg.TLS.Clone()
	if tlsConfig == nil {
		tlsConfig = &tls.Config{}
	}
	tlsConfig.ClientSessionCache = tls.NewLRUClientSessionCache(tlsSessionsPerPool)
	return &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         (&net.Dialer{Timeout: p.cfg.ConnectTimeout}).DialContext,
		TLSClientConfig:     tlsConfig,
		TLSHandshakeTimeout: p.cfg.ConnectTimeout,
		ForceAttemptHTTP2:   true,
		MaxIdleConns:        maxIdlePerProfile,
		MaxIdleConnsPerHost: maxIdlePerHost,
		IdleConnTimeout:     p.cfg.IdleTimeout,
	}
}

// closeIdle closes every kept idle connection; the transports stay usable.
func (p *pool) closeIdle() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for e := p.lru.Front(); e != nil; e = e.Next() {
		e.Value.(*pooled).t.CloseIdleConnections()
	}
}

// size is the number of kept transports.
func (p *pool) size() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lru.Len()
}
