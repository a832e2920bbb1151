package manifests

import (
	"container/list"
	"context"
	"sync"
	"time"
)

// DefaultMemoryBytes is NewMemory's size when given zero.
const DefaultMemoryBytes = 256 << 20

// Memory is an in-process Cache bounded by bytes (least recently used
// entries go first) and by age.
type Memory struct {
	maxBytes int64
	ttl      time.Duration
	now      func() time.Time // replaced in tests

	mu    sync.Mutex
	order *list.List // of *memEntry, most recently used first
	byKey map[string]*list.Element
	bytes int64
}

type memEntry struct {
	key     string
	val     []byte
	expires time.Time // zero: never
}

func (e *memEntry) size() int64 { return int64(len(e.key) + len(e.val)) }

// NewMemory returns a cache holding at most maxBytes of keys and values
// (DefaultMemoryBytes when zero or less) for at most ttl each (forever when
// zero or less).
func NewMemory(maxBytes int64, ttl time.Duration) *Memory {
	if maxBytes <= 0 {
		maxBytes = DefaultMemoryBytes
	}
	return &Memory{maxBytes: maxBytes, ttl: ttl, now: time.Now, order: list.New(), byKey: map[string]*list.Element{}}
}

func (m *Memory) Get(_ context.Context, key string) ([]byte, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	el, ok := m.byKey[key]
	if !ok {
		return nil, false
	}
	e := el.Value.(*memEntry)
	if !e.expires.IsZero() && !m.now().Before(e.expires) {
		m.removeLocked(el)
		return nil, false
	}
	m.order.MoveToFront(el)
	return e.val, true
}

// Put stores val, evicting the least recently used entries to make room; a
// value larger than the whole cache is not stored.
func (m *Memory) Put(_ context.Context, key string, val []byte) {
	e := &memEntry{key: key, val: val}
	if m.ttl > 0 {
		e.expires = m.now().Add(m.ttl)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if el, ok := m.byKey[key]; ok {
		m.removeLocked(el)
	}
	if e.size() > m.maxBytes {
		return
	}
	m.byKey[key] = m.order.PushFront(e)
	m.bytes += e.size()
	for m.bytes > m.maxBytes {
		m.removeLocked(m.order.Back())
	}
}

// Len and Bytes report the cache's size, for metrics and tests.
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.order.Len()
}

func (m *Memory) Bytes() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.bytes
}

func (m *Memory) removeLocked(el *list.Element) {
	e := m.order.Remove(el).(*memEntry)
	delete(m.byKey, e.key)
	m.bytes -= e.size()
}
