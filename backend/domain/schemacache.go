package domain

import (
	"container/list"
	"crypto/sha256"
	"encoding/json"
	"sync"
	"sync/atomic"
)

// SchemaCache remembers whether schemas compile, so a refresh of a server
// whose tools did not change compiles nothing (compilation is nearly all of
// validation's cost). It keeps the verdict, not the compiled schema:
// nothing validates arguments against a schema (calls send them byte for
// byte), and a verdict takes a few bytes where a compiled schema takes
// kilobytes.
//
// Entries are keyed by the SHA-256 of the schema's bytes; callers pass
// canonical bytes (the gateway re-encodes what the server sent: sorted
// keys, no insignificant space), so formatting cannot defeat the cache,
// and any bytes get the right verdict. At most max entries are kept, the
// least recently used go first. Safe for concurrent use; concurrent
// requests for one schema compile it once.
type SchemaCache struct {
	mu    sync.Mutex
	max   int
	byKey map[[sha256.Size]byte]*list.Element // of *verdict
	lru   *list.List                          // most recently used first
	// compiled counts compilations (what the cache is there to save).
	compiled atomic.Int64
}

type verdict struct {
	key  [sha256.Size]byte
	done chan struct{} // closed once err is set
	err  error
}

// NewSchemaCache returns a cache of at most max verdicts.
func NewSchemaCache(max int) *SchemaCache {
	return &SchemaCache{max: max, byKey: map[[sha256.Size]byte]*list.Element{}, lru: list.New()}
}

// Compile is CompileSchema, remembered.
func (c *SchemaCache) Compile(raw json.RawMessage) error {
	key := sha256.Sum256(raw)
	c.mu.Lock()
	if e, ok := c.byKey[key]; ok {
		c.lru.MoveToFront(e)
		v := e.Value.(*verdict)
		c.mu.Unlock()
		<-v.done
		return v.err
	}
	v := &verdict{key: key, done: make(chan struct{})}
	c.byKey[key] = c.lru.PushFront(v)
	for c.lru.Len() > c.max {
		old := c.lru.Remove(c.lru.Back()).(*verdict)
		delete(c.byKey, old.key)
	}
	c.mu.Unlock()
	c.compiled.Add(1)
	v.err = CompileSchema(raw)
	close(v.done)
	return v.err
}

// Compilations is how many schemas the cache has compiled.
func (c *SchemaCache) Compilations() int64 { return c.compiled.Load() }

// Len is the number of verdicts kept.
func (c *SchemaCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}
